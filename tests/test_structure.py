"""Deck and lab structure: the conventions a presenter and a reader rely on (each is listed, with
why, in docs/maintaining.md)."""
from __future__ import annotations

import re

import pytest

from workshop.config import CODE_COLUMNS, CODE_LINES
from workshop.tools import notebooks as nbs
from workshop.tools import paths, talk

DECKS = nbs.decks()
ALL = nbs.all_notebooks() + sorted(paths.EXERCISES.glob("*.ipynb"))
RISE_KEYS = {"width", "height", "scroll", "slideNumber", "footer"}


def test_the_kit_has_its_notebooks():
    assert [p.stem for p in DECKS][:1] == ["01-run-it-first"]
    assert [p.stem for p in nbs.lab_sources()][:1] == ["J1-trace-read-raw"]


@pytest.mark.parametrize("path", ALL, ids=lambda p: paths.short(p))
def test_committed_clean_no_outputs_normalised(path):
    nb = nbs.read(path)
    for i, cell in enumerate(nb.cells):
        assert not cell.get("outputs") and not cell.get("execution_count"), f"cell {i}"
    assert path.read_text(encoding="utf-8") == nbs.normalised(nb), \
        "not normalised: run .venv/bin/python -m workshop fmt"


def test_a_jupyterlab_save_of_an_unchanged_notebook_changes_no_byte(tmp_path):
    # what Ctrl-S does: jupyter_server's contents manager reads the notebook and writes it back
    import shutil

    from jupyter_server.services.contents.filemanager import FileContentsManager
    cm = FileContentsManager(root_dir=str(tmp_path))
    for path in ALL:
        copy = tmp_path / path.name
        shutil.copy(path, copy)
        cm.save(cm.get(path.name), path.name)
        assert copy.read_bytes() == path.read_bytes(), f"a save rewrites {paths.short(path)}"


@pytest.mark.parametrize("path", ALL, ids=lambda p: paths.short(p))
def test_setup_cell_first_and_known_tags(path):
    nb = nbs.read(path)
    s = nbs.setup_index(nb)
    assert "setup" in nbs.tags(nb.cells[s])
    assert nb.cells[s].source.strip() == "import workshop; workshop.setup()"
    for i, cell in enumerate(nb.cells):
        assert set(nbs.tags(cell)) <= nbs.TAGS, f"cell {i}: unknown tag {nbs.tags(cell)}"
        if "check" in nbs.tags(cell):
            assert cell.cell_type == "code"
    assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("path", ALL, ids=lambda p: paths.short(p))
def test_nothing_for_the_author_reaches_the_audience(path):
    assert nbs.audience_problems(nbs.read(path)) == []   # the rule the build enforces


def test_the_audience_rule_names_a_cell_without_a_slide_type():
    nb = nbs.read(DECKS[0])
    del nb.cells[3].metadata["slideshow"]
    nb.cells[5].metadata["tags"] = ["chek"]
    got = nbs.audience_problems(nb)
    assert len(got) == 2 and got[0].startswith("cell 3 has no slide type")
    assert "unknown tag(s) ['chek']" in got[1]


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_every_cell_has_a_slide_type(deck):
    for i, cell in enumerate(nbs.read(deck).cells):
        assert nbs.slide_type(cell) in nbs.SLIDE_TYPES, f"cell {i}: {nbs.slide_type(cell)!r}"
        if "check" in nbs.tags(cell):
            assert nbs.slide_type(cell) == "skip", f"cell {i}: a check cell must be hidden"


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_metadata_title_and_closing_slides(deck):
    nb = nbs.read(deck)
    w = nb.metadata.workshop
    assert deck.stem.startswith(f"{w.phase:02d}-")
    assert w.title and w.minutes > 0 and len(w.objectives) >= 3 and len(w.key_points) >= 3
    assert RISE_KEYS <= set(nb.metadata.rise)
    assert w.title in nb.metadata.rise.footer
    title = nb.cells[0]
    assert nbs.slide_type(title) == "slide" and title.source.startswith(f"# {w.title}")
    assert f"{w.minutes} minutes" in title.source
    for o in w.objectives:
        assert o in title.source, f"objective missing from the title slide: {o}"
    closing = talk.talk_sections(nb)[-1]     # the talk's last section; the appendix follows
    text = nb.cells[closing.start].source
    assert closing.title == "Key points"
    for k in w.key_points:
        assert k in text, f"key point missing from the closing slide: {k}"
    assert f"lab {w.lab}" in text


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_every_slide_has_speaker_notes(deck):
    nb = nbs.read(deck)
    starts = [i for i, c in enumerate(nb.cells) if nbs.slide_type(c) in ("slide", "subslide")]
    for a, b in zip(starts, starts[1:] + [len(nb.cells)]):
        kinds = [nbs.slide_type(c) for c in nb.cells[a:b]]
        assert "notes" in kinds, f"slide “{nbs.title_at(nb, a)}” (cell {a}) has no notes"


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_sections_and_slide_sized_cells(deck):
    nb = nbs.read(deck)
    secs = nbs.sections(nb)
    assert len(secs) >= 4
    assert secs[0].start > nbs.setup_index(nb), "the setup cell comes before every section"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and nbs.slide_type(cell) != "skip":
            lines = cell.source.split("\n")
            assert len(lines) <= CODE_LINES, (
                f"cell {i}: {len(lines)} lines (a slide holds {CODE_LINES})")
            assert max(map(len, lines)) <= CODE_COLUMNS, (
                f"cell {i}: wider than {CODE_COLUMNS} columns")
        if cell.cell_type == "markdown":
            assert "$" not in cell.source, f"cell {i}: math in Unicode, not TeX"


@pytest.mark.parametrize("path", nbs.lab_sources(), ids=lambda p: p.stem)
def test_lab_source_has_tasks_with_solutions(path):
    nb = nbs.read(path)
    blocks = [c for c in nb.cells if "### BEGIN SOLUTION" in c.source]
    checks = [c for c in nb.cells if c.cell_type == "code" and ".check(" in c.source
              and "check" not in nbs.tags(c)]
    assert 3 <= len(blocks) <= 5 and len(checks) == len(blocks)


@pytest.mark.parametrize("path", nbs.lab_sources(), ids=lambda p: p.stem)
def test_a_lab_says_how_many_tasks_and_minutes_its_metadata_says(path):
    import re
    nb = nbs.read(path)
    m = re.search(r"(\w+) tasks, about (\d+) minutes", nb.cells[0].source)
    words = {"Three": 3, "Four": 4, "Five": 5}
    tasks = sum("### BEGIN SOLUTION" in c.source for c in nb.cells)
    assert m and words.get(m.group(1)) == tasks, (m and m.group(0), tasks)
    assert int(m.group(2)) == nb.metadata.workshop.minutes, (m.group(0), nb.metadata.workshop)


def test_readme_table_matches_the_notebooks_metadata():
    readme = (paths.ROOT / "README.md").read_text()
    for deck in DECKS:
        w = nbs.read(deck).metadata.workshop
        lab = next(p for p in nbs.lab_sources() if p.stem.startswith(w.lab + "-"))
        lw = nbs.read(lab).metadata.workshop
        row = (f"| {w.phase} | [{w.title}](decks/{deck.name}) | {w.minutes} | "
               f"[{w.lab} {lw.title}](exercises/{lab.name}) | {lw.minutes} |")
        assert row in readme, f"README row for {deck.name} should be: {row}"


def test_what_the_kit_derives_from_the_metadata_is_current():
    # the phases the map draws, the README's table and the guide's timings: `fmt` writes them
    from workshop.phases import PHASES
    from workshop.tools.authoring import derived
    assert derived.write(check=True) == [], "stale: run .venv/bin/python -m workshop fmt"
    assert [(p, t) for p, t, _ in PHASES] == [
        (nbs.read(d).metadata.workshop.phase, nbs.read(d).metadata.workshop.title) for d in DECKS]


def test_the_guides_say_no_count_of_decks_or_labs_a_new_one_would_make_false():
    # "six decks" was written in the README, the guide and the schedule: the schedule now
    # counts them (phasemap.count_word), the guides say "the decks"
    counts = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    for doc in ("README.md", "decks/README.md", "docs/maintaining.md", "CONTRIBUTING.md"):
        text = (paths.ROOT / doc).read_text(encoding="utf-8")
        said = re.findall(rf"\b(?:{counts})(?: RISE slide)? (?:decks|labs)\b", text, re.I)
        assert said == [], f"{doc} says {said}: write it without the count"


def test_a_derived_table_without_its_markers_is_one_line(tmp_path):
    from workshop.tools import errors
    from workshop.tools.authoring import derived
    with pytest.raises(errors.KitError, match="no generated table"):
        derived._between("# A README\n\n| a | b |\n", ["| a |"], tmp_path / "README.md")
    text = f"x\n{derived.BEGIN}\n| old |\n{derived.END}\ny\n"
    assert derived._between(text, ["| new |"], tmp_path) == \
        f"x\n{derived.BEGIN}\n| new |\n{derived.END}\ny\n"


# A deck is a talk first (workshop/tools/talk.py): its talk path fits its minutes by the kit's
# estimate, the depth is in an appendix after the closing slide, the plan on the title slide's
# notes is current, and each note starts with the sentence to say.
@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_the_talk_path_fits_the_decks_minutes(deck):
    assert talk.over_minutes(nbs.read(deck)) is None, talk.over_minutes(nbs.read(deck))


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_the_appendix_follows_the_closing_slide_behind_a_divider(deck):
    assert talk.problems(nbs.read(deck)) == []


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_the_title_notes_carry_the_current_plan(deck):
    nb = nbs.read(deck)
    i = talk.plan_cell_index(nb)
    assert i is not None, "no plan in the title slide's notes: run python -m workshop fmt"
    assert talk.PRESENTER in nbs.tags(nb.cells[i])
    assert nb.cells[i].source == talk.plan_text(nb), "stale plan: run python -m workshop fmt"


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_each_note_starts_with_the_sentence_to_say(deck):
    # one sentence a slide: a slide's later notes cell (its code's result) goes on without one
    import re
    nb = nbs.read(deck)
    first_of_slide = True
    for i, c in enumerate(nb.cells):
        if nbs.slide_type(c) in ("slide", "subslide"):
            first_of_slide = True
        if nbs.slide_type(c) != "notes" or talk.PRESENTER in nbs.tags(c):
            continue
        first = re.split(r"\n\s*\n", c.source.strip())[0]
        bold = re.match(r"\*\*[^*\s][^*]*\*\*", first)
        assert bold if first_of_slide else not bold, (
            f"cell {i} (“{nbs.title_at(nb, i)}”): a slide's notes start with the sentence to "
            f"say, in bold, and have one: “{first[:60]}”")
        first_of_slide = False
    for s in talk.talk_sections(nb)[:-1]:
        notes = " ".join(c.source for c in nb.cells[s.start:s.stop]
                         if nbs.slide_type(c) == "notes")
        assert "**Q:**" in notes, f"section “{s.title}” names no likely question (**Q:** …)"


# a chart's plotting code on a talk slide: pyplot, a figure or axes call, matplotlib by name
PLOTTING = re.compile(r"\b(?:plt|matplotlib|pyplot)\b|\b(?:ax|axes|fig)\.\w+\(")


def chart_problems(nb) -> list[str]:
    """Talk-path code cells that would show plotting code to the room, and hidden-code cells
    the presenter could not run: a chart's cell hides its code (metadata.jupyter.source_hidden)
    and must be RISE's choice of cell on its slide or fragment, the first code cell there, for
    Ctrl-Enter to reach it with nothing to click into."""
    out, stop = [], talk.talk_stop(nb)
    first_of_step: set[int] = set()   # the first visible code cell of each slide or fragment
    open_step = True
    for i, cell in enumerate(nb.cells):
        if nbs.slide_type(cell) in ("slide", "subslide", "fragment"):
            open_step = True
        if talk.is_visible_code(cell) and open_step:
            first_of_step.add(i)
            open_step = False
        if nbs.slide_type(cell) == "fragment" and cell.cell_type == "code":
            first_of_step.add(i)
    for i, cell in enumerate(nb.cells):
        title = nbs.title_at(nb, i)
        if i < stop and talk.is_visible_code(cell) and PLOTTING.search(cell.source) \
                and not nbs.code_hidden(cell):
            out.append(f"cell {i} ({title}) shows plotting code on a talk slide: hide it "
                       "(metadata.jupyter.source_hidden)")
        if nbs.code_hidden(cell) and talk.is_visible_code(cell) and i not in first_of_step:
            out.append(f"cell {i} ({title}) hides its code but is not the first code cell of "
                       "its slide or fragment: Ctrl-Enter cannot reach it")
    return out


@pytest.mark.parametrize("path", DECKS, ids=lambda p: p.stem)
def test_no_talk_slide_shows_plotting_code(path):
    assert chart_problems(nbs.read(path)) == []


def test_a_chart_shown_with_its_code_or_out_of_reach_is_caught():
    import nbformat
    nb = nbs.read(nbs.decks()[3])   # deck 04: its per-example chart
    chart = next(i for i, c in enumerate(nb.cells) if nbs.code_hidden(c))
    assert chart < talk.talk_stop(nb)
    shown = nbformat.from_dict(nbformat.reads(nbformat.writes(nb), as_version=4))
    del shown.cells[chart].metadata["jupyter"]
    assert any("shows plotting code" in p for p in chart_problems(shown))
    late = nbformat.reads(nbformat.writes(nb), as_version=4)
    late.cells.insert(chart, nbformat.v4.new_code_cell("x = 1", metadata={
        "slideshow": {"slide_type": "-"}}))
    assert any("cannot reach it" in p for p in chart_problems(late))
