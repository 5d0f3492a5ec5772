"""The talk path, the appendix and the talk-time estimate (workshop/tools/talk.py), and what of the
notes the attendee's reading handout leaves out."""
from __future__ import annotations

import copy

import nbformat
import pytest

from workshop.tools import notebooks as nbs
from workshop.tools import paths, talk
from workshop.tools.builder import render


def _md(text, kind, **meta):
    c = nbformat.v4.new_markdown_cell(text)
    c.metadata = {"slideshow": {"slide_type": kind}, **meta}
    return c


def _code(text, kind="-", tags=()):
    c = nbformat.v4.new_code_cell(text)
    c.metadata = {"slideshow": {"slide_type": kind}, "tags": list(tags)}
    return c


def _deck(minutes=10, appendix=True):
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"workshop": {"title": "T", "minutes": minutes, "phase": 1},
                   "rise": {"width": 1280}}
    cells = [_md("# T", "slide"), _code("import workshop; workshop.setup()", tags=["setup"]),
             _md("**Say this.**", "notes"),
             _md("## One", "slide"), _code("x = 1"), _code("assert x", "skip", ["check"]),
             _md("**One.**\n\n→ Point at x.\n\nx is one.", "notes"),
             _md("### Sub", "subslide"), _md("**Sub.**", "notes"),
             _md("## Key points", "slide"), _md("**Done.**", "notes")]
    if appendix:
        cells += [_md("## Appendix", "slide", workshop={"appendix": True}),
                  _md("**For readers.**", "notes"),
                  _md("## Deep", "slide", workshop={"appendix": True}), _code("y = 2"),
                  _md("**Deep words " + "w " * 500 + "**", "notes")]
    nb.cells = cells
    return nb


def test_the_estimate_is_the_kits_formula():
    # 130 words of notes, one visible code cell, one slide: (130/130 × 1.2 + 25/60 + 5/60) × 1.15
    cells = [_md("## S", "slide"), _code("x"), _code("assert x", "skip", ["check"]),
             _md(" ".join(["word"] * 130), "notes")]
    e = talk.estimate("S", cells)
    assert (e.words, e.code_cells, e.slides) == (130, 1, 1)
    assert e.minutes == pytest.approx((1.2 + 25 / 60 + 5 / 60) * 1.15)
    # the plan is not spoken, so not counted
    plan = _md("→ Plan: " + "w " * 300, "notes", tags=["presenter"])
    assert talk.estimate("S", cells + [plan]).words == 130


def test_the_talk_path_stops_at_the_appendix_and_the_appendix_is_not_timed():
    nb = _deck()
    assert [s.title for s in talk.talk_sections(nb)] == ["One", "Key points"]
    assert [s.title for s in talk.appendix_sections(nb)] == ["Appendix", "Deep"]
    assert [e.title for e in talk.talk_estimates(nb)] == ["Title and setup", "One",
                                                         "Key points"]
    assert talk.talk_minutes(nb) == pytest.approx(talk.talk_minutes(_deck(appendix=False)))
    assert talk.problems(nb) == []


def test_a_padded_talk_path_fails_the_fit_and_the_same_words_in_the_appendix_do_not():
    deck = nbs.read(nbs.select(["01"])[0])
    assert talk.over_minutes(deck) is None
    padded = copy.deepcopy(deck)
    first = talk.talk_sections(padded)[0]
    words = int(padded.metadata.workshop.minutes * talk.WORDS_PER_MINUTE)
    padded.cells.insert(first.start + 1, _md("**Pad.** " + "word " * words, "notes"))
    why = talk.over_minutes(padded)
    assert why and f"over the deck's {deck.metadata.workshop.minutes}" in why
    assert first.title in why                        # the longest section is named
    small = _deck(minutes=3)                          # the same words in the appendix: fits
    assert talk.over_minutes(small) is None
    small.cells.append(_md("**Pad.** " + "word " * words, "notes"))
    assert talk.over_minutes(small) is None
    small.cells.insert(7, _md("**Pad.** " + "word " * words, "notes"))   # in “One”: over
    assert "“One”" in talk.over_minutes(small)


def test_the_shape_is_checked():
    nb = _deck()
    nb.cells[11].metadata["workshop"] = {}          # no divider: "Deep" starts the appendix
    assert any("needs a divider" in p for p in talk.problems(nb))
    nb = _deck()
    nb.cells.append(_md("## Late", "slide"))       # a talk section after the appendix
    assert any("“Late” after the appendix divider" in p for p in talk.problems(nb))
    nb = _deck()
    nb.cells[9:11] = []                             # the appendix does not follow Key points
    assert any("right after the closing" in p for p in talk.problems(nb))
    nb = _deck()
    nb.cells[4].metadata["workshop"] = {"appendix": True}   # a mark on a cell that is no section
    assert any("cell 4 is marked appendix" in p for p in talk.problems(nb))


def test_the_plan_follows_the_sections_and_fmt_writes_it():
    nb = _deck()
    assert talk.with_plan(nb) and not talk.with_plan(nb)      # written once, then current
    i = talk.plan_cell_index(nb)
    assert i == 3 and talk.PRESENTER in nbs.tags(nb.cells[i])  # after the title's notes
    text = nb.cells[i].source
    assert "10 minutes" in text and "| One |" in text and "Deep" in text
    assert "| Deep |" not in text                               # the appendix is not timed
    nb.cells[7].source += " more words" * 200     # the notes of “One”, after the plan
    assert talk.with_plan(nb) and nb.cells[i].source != text


def test_the_reading_handout_leaves_out_what_is_for_the_presenter():
    nb = _deck()
    talk.with_plan(nb)
    page = render.reading_html(nb, "T")
    assert "x is one." in page and "One." in page
    assert "Point at x" not in page and "Plan:" not in page
    assert page.index("## Appendix".lstrip("# ")) > page.index("Key points")
    assert "Deep words" in page


def test_the_slides_pdf_is_the_talk():
    nb = _deck()
    page = render.slides_html(nb, "T")
    assert "Key points" in page and "Appendix" not in page and "y = 2" not in page
    assert page.count("class='slide'") == 4      # title, One, Sub, Key points


def test_the_report_shows_the_talk_time_per_deck_and_section():
    from workshop.tools.builder import report
    deck = nbs.select(["01"])[0]
    text = report.talk_time([deck])
    nb = nbs.read(deck)
    total = talk.talk_minutes(nb)
    assert f"| {deck.stem} | {nb.metadata.workshop.minutes} | {total:.1f} |" in text
    for s in talk.talk_sections(nb):
        assert f"| {s.title} |" in text
    for s in talk.appendix_sections(nb):
        assert f"| {s.title} |" not in text


def test_the_report_lists_talk_cells_over_the_stage_budget_only(tmp_path):
    from workshop.tools.builder import report
    from workshop.tools.builder.execute import Result
    nb = _deck()
    path = tmp_path / "01-t.ipynb"
    nbformat.write(nb, path)
    times = [0.0] * len(nb.cells)
    times[1] = 3.0      # the setup cell imports JAX: not a pause on stage
    times[4] = 1.6      # "x = 1", on the talk path: listed
    times[5] = 9.0      # a hidden check: the room never waits for it
    times[14] = 9.0     # "y = 2", in the appendix: not on stage
    got = report.slow_on_stage([Result(name=paths.short(path), times=times)], [path])
    assert len(got) == 1 and "cell 4 “One” took 1.60 s" in got[0]
    times[4] = 1.5      # at the budget: fine
    assert report.slow_on_stage([Result(name=paths.short(path), times=times)], [path]) == []


def test_the_report_takes_a_copy_that_states_no_minutes(tmp_path):
    from workshop.tools.builder import report
    nb = _deck()
    del nb.metadata["workshop"]["minutes"]
    path = tmp_path / "talk.ipynb"
    nbformat.write(nb, path)
    assert "| talk | |" in report.talk_time([path]) and "no minutes stated" in \
        report.talk_time([path])
