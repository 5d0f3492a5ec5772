"""The presenter's pack (handouts/presenter/): a one-page card per deck that says what the deck's
metadata and the talk-time estimate say (the plan, the cuts and expansions with their minutes,
the key points, the lab), and a debrief per lab naming five of its own wrong answers with what
the lab's check says to each, run at build time; both current, listed in the index, and never
in the attendee's sheet."""
from __future__ import annotations

import importlib
import re

import pytest
from conftest import pdf_pages

from workshop.config import DEBRIEF
from workshop.tools import errors, paths
from workshop.tools import notebooks as nbs
from workshop.tools.builder import debrief, handouts, pdfinfo, presenter, render
from workshop.tools.present import pacing, rehearse

DECKS, LABS = nbs.decks(), nbs.lab_sources()


def _flat(text: str) -> str:
    """Text without spaces or line breaks, as a PDF's text layer and HTML compare."""
    import unicodedata
    text = "".join(unicodedata.normalize("NFKC", c) if "\ufb00" <= c <= "\ufb06" else c
                   for c in text)
    return re.sub(r"\s+", "", nbs.plain(text).replace("`", ""))


def card_facts(deck) -> list[str]:
    """What a deck's card must say, from its metadata and the plan, never from the card."""
    nb = nbs.read(deck)
    w = nb.metadata.workshop
    slides = rehearse.plan(nb)
    cuts, adds, _ = pacing.resolve(nb, slides)
    facts = [w.title, f"{w.minutes} minutes", *w.key_points]
    for sec in dict.fromkeys(s.section for s in slides if not s.appendix):
        mine = [s for s in slides if s.section == sec and not s.appendix]
        facts.append(f"{sec} {mine[0].number}–{mine[-1].number} "
                     f"{sum(s.seconds for s in mine) / 60:.0f} {mine[0].at / 60:.0f}")
    facts += [f"{c.start + 1} “{c.frm}” {c.stop + 1} “{c.to}” {pacing.minutes(c.saves)} min"
              for c in cuts]
    facts += [f"“{e.section}” {e.at + 1} {pacing.minutes(e.adds)} min" for e in adds]
    lab, meta = presenter.lab_of(nb)
    facts.append(f"Lab {meta['lab']} · {meta.get('title', '')}: {meta.get('minutes')} minutes"
                 if lab else f"Lab {meta['lab']} (not written yet)")
    return facts


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_a_card_says_the_plan_the_cuts_the_expansions_the_key_points_and_the_lab(deck):
    page = _flat(re.sub(r"<[^>]+>", " ", presenter.card_html(nbs.read(deck), deck.stem[:2])))
    import html
    page = html.unescape(page)
    for fact in card_facts(deck):
        assert _flat(fact) in page, fact


@pytest.mark.parametrize("src", DECKS + LABS, ids=lambda p: p.stem)
def test_the_committed_pack_is_current_and_says_what_the_metadata_says(src):
    pdf = presenter.targets([src])[0]
    assert pdf.parent == handouts.HANDOUTS / "presenter"
    assert pdf.exists(), f"{paths.short(pdf)} is missing: run scripts/build {src.stem[:2]}"
    assert pdfinfo.stamp_of(pdf) == presenter.digest(src), (
        f"{paths.short(pdf)} is stale for {paths.short(src)}: run scripts/build {src.stem[:2]}")
    text = _flat("".join(pdf_pages(pdf)))
    if src in DECKS:
        assert pdfinfo.pages_of(pdf) == 1, "a card is one page"
        for fact in card_facts(src):
            assert _flat(fact) in text, fact
    else:
        d = debrief.read(src)
        w = nbs.read(src).metadata.workshop
        for fact in [f"Lab {w.lab}", f"{w.minutes} minutes", f"{DEBRIEF} minutes of debrief",
                     *(m.what for m in d.mistakes)]:
            assert _flat(fact) in text, fact


def test_the_index_lists_the_pack_and_the_build_knows_its_files():
    index = (handouts.HANDOUTS / "README.md").read_text(encoding="utf-8")
    for pdf in presenter.targets():
        name = f"presenter/{pdf.name}"
        assert f"| [{name}]({name}) | {pdfinfo.pages_of(pdf)} |" in index, name
    assert not set(presenter.targets()) & set(handouts.strays(presenter.targets()))


def test_a_card_is_stale_when_its_labs_minutes_move(monkeypatch):
    deck = DECKS[0]
    before = presenter.digest(deck)
    lab, meta = presenter.lab_of(nbs.read(deck))
    monkeypatch.setattr(presenter, "lab_of", lambda nb: (lab, {**meta, "minutes": 99}))
    assert presenter.digest(deck) != before


# ---- the debriefs

def _answers(lab):
    return importlib.import_module(f"wrong_answers.{lab.stem.split('-')[0].lower()}")


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_every_lab_has_a_debrief_naming_five_of_its_own_wrong_answers(lab):
    d = debrief.read(lab)
    assert len(d.mistakes) == 5 and d.say.strip()
    tasks = {name for name in dir(importlib.import_module(
        f"workshop.labs.{lab.stem.split('-')[0].lower()}")) if re.fullmatch(r"q\d", name)}
    for m in d.mistakes:
        w = debrief.find(_answers(lab), m)
        assert not isinstance(w, str), w
        assert m.task in tasks and w in _answers(lab).WRONG[m.task]
    assert d.source.parent == paths.SOLUTIONS   # the presenter's side: the hub never copies it


@pytest.mark.slow   # (a lab's in the quick run; every lab's under -m thorough: test_lab_answers
@pytest.mark.parametrize("lab", [   # holds each check's words in-process)
    pytest.param(lab, marks=[pytest.mark.thorough] * bool(i)) for i, lab in enumerate(LABS)],
    ids=lambda p: p.stem)
def test_the_debrief_gets_each_message_from_the_check_itself(lab):
    # run as the build runs it (a fresh Python): each answer rejected, in the words the lab's
    # wrong-answer test holds its check to
    d = debrief.read(lab)
    said = debrief.said(lab, d)
    for m, s in zip(d.mistakes, said):
        w = debrief.find(_answers(lab), m)
        assert not s["ok"] and s["hint"] and w.says.lower() in s["message"].lower(), (m, s)
    page = presenter.debrief_html(lab, d, said)
    for s in said:
        assert render.clean(s["message"].split("\n")[0]) in __import__("html").unescape(page)


def _lab_with(tmp_path, text: str):
    lab = tmp_path / "J2-the-recompile-hunt.ipynb"
    (tmp_path / "J2-the-recompile-hunt.debrief.md").write_text(text, encoding="utf-8")
    return lab


GOOD = (paths.SOLUTIONS / "J2-the-recompile-hunt.debrief.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("change, says", [
    (lambda t: t.replace("## What to say", "## Afterwards"), "no “## What to say” section"),
    (lambda t: re.sub(r"\n- q3 `train_jnp_asarray`:[^\n]*\n[^\n]*", "", t), "4 common mistakes"),
    (lambda t: t.replace("- q1 `_no_unregister`:", "- q1 _no_unregister:"), "is not “- qN"),
])
def test_a_malformed_debrief_is_one_clear_line(tmp_path, change, says):
    with pytest.raises(errors.KitError, match=re.escape(says)):
        debrief.read(_lab_with(tmp_path, change(GOOD)))


@pytest.mark.parametrize("mistake, says", [
    (debrief.Mistake("q1", "no_such_answer", "", "x"), "no wrong answer of that task"),
    (debrief.Mistake("q2", "", "not this set", "x"), "wrong answers of that task; name one"),
    (debrief.Mistake("q9", "CAUSES_NO_STATIC", "", "x"), "q9 is not a task"),
    (debrief.Mistake("q1", "CAUSES_NO_STATIC", "", "x"), "no wrong answer of that task"),
])
def test_a_mistake_that_names_no_single_wrong_answer_is_refused(mistake, says):
    got = debrief.find(_answers(paths.SOLUTIONS / "J2-the-recompile-hunt.ipynb"), mistake)
    assert isinstance(got, str) and says in got, got


def test_a_value_written_out_names_a_wrong_answer():
    j1 = _answers(paths.SOLUTIONS / "J1-trace-read-raw.ipynb")
    assert debrief.find(j1, debrief.Mistake("q1", "7", "", "x")).answer == 7
    assert isinstance(debrief.find(j1, debrief.Mistake("q1", "7.0", "", "x")), str)


def test_the_attendee_never_gets_the_debrief():
    # the attendee copies (what the hub hands out) hold no debrief text, and the sheet's PDF is
    # made from the lab's notebooks only
    from workshop.tools.authoring import labgen
    for lab in LABS:
        d = debrief.read(lab)
        copy = labgen.target(lab).read_text(encoding="utf-8")
        assert _flat(d.mistakes[0].what) not in _flat(copy)
        assert all(t.parent == handouts.HANDOUTS for t in handouts.targets(lab))
