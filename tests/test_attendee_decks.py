"""The attendee copies of the decks (attendee/decks/, written by `python -m workshop fmt` from
decks/): current, the talk and nothing for the presenter, and every cell left runs as it does
in the deck (a check cell binds no name a later cell reads). That they run in a plain venv is
tests/test_attendee_venv.py's."""
from __future__ import annotations

import pytest

from workshop.tools import notebooks as nbs
from workshop.tools import paths
from workshop.tools.authoring import derived, labgen

DECKS = nbs.decks()


def test_every_deck_has_a_current_copy_and_no_copy_is_left_over():
    stale = [p for p in derived.write(check=True) if p.startswith("attendee/")]
    assert stale == [], f"stale: {stale}; run python -m workshop fmt"
    assert sorted(p.name for p in paths.ATTENDEE_DECKS.glob("*.ipynb")) == \
        sorted(p.name for p in DECKS)


def test_fmt_rewrites_a_stale_copy_and_removes_a_gone_decks(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "ATTENDEE_DECKS", tmp_path)
    for target, text in labgen.deck_copies().items():
        (tmp_path / target.name).write_text(text, encoding="utf-8")
    edited = tmp_path / DECKS[2].name
    edited.write_text(edited.read_text(encoding="utf-8").replace("jit", "JIT", 1),
                      encoding="utf-8")
    gone = tmp_path / "07-a-deck-renamed.ipynb"
    gone.write_text("{}", encoding="utf-8")
    stale = [p for p in derived.write(check=True) if "07-a-deck" in p or DECKS[2].stem in p]
    assert len(stale) == 2, stale
    assert gone.exists() and "JIT" in edited.read_text(encoding="utf-8")   # (check: nothing)
    derived.write()
    assert not gone.exists()
    assert edited.read_text(encoding="utf-8") == labgen.deck_copies()[
        labgen.deck_target(DECKS[2])]


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_a_copy_is_the_talk_and_nothing_for_the_presenter(deck):
    nb, copy = nbs.read(deck), nbs.read(labgen.deck_target(deck))
    kept = [c for c in nb.cells
            if "check" not in nbs.tags(c) and nbs.slide_type(c) != "notes"]
    # every cell of the slides and the reading text, in order, and one note after the title
    assert [c.source for c in copy.cells] == [kept[0].source, copy.cells[1].source] + \
        [c.source for c in kept[1:]]
    assert copy.cells[1].id == "attendee-copy" and f"decks/{deck.name}" in copy.cells[1].source
    assert "rise" not in copy.metadata and copy.metadata.workshop == {
        "title": nb.metadata.workshop.title, "generated_from": f"decks/{deck.name}"}
    left_out = {c.source for c in nb.cells
                if "check" in nbs.tags(c) or nbs.slide_type(c) == "notes"}
    assert not left_out & {c.source for c in copy.cells}   # no check cell, no speaker note
    lines = [line for c in copy.cells for line in c.source.splitlines()]
    assert not [line for line in lines if line.startswith("→")], "a stage direction"
    assert not [line for line in lines if line.startswith("| section | min |")], "the plan"
    assert sum(c.cell_type == "code" for c in copy.cells) >= 20


def check_only_reads(nb) -> list[str]:
    """The names a cell the copy keeps reads that, at that point of its section, only a check
    cell made: the copy leaves the check cells out, so that cell would fail in the attendee's
    kernel. (A section starts with the setup cell's names only: the deck's own test run
    forgets the others before each one.)"""
    setup = nbs.setup_index(nb)
    starts = {sec.start for sec in nbs.sections(nb)}
    talk, checks, problems = set(), set(), []
    for i, cell in enumerate(nb.cells):
        if i in starts or i == setup:
            talk, checks = set(nbs.code_names(nb.cells[setup].source).binds), set()
        if cell.cell_type != "code" or i == setup:
            continue
        names = nbs.code_names(cell.source)
        if "check" in nbs.tags(cell):
            checks |= names.binds
            continue
        free = names.reads - names.binds - names.local   # (not its own, nor an argument)
        problems += [f"cell {i} reads {n}, which only a check cell above made"
                     for n in sorted(free & checks - talk)]
        talk |= names.binds
    return problems


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_no_cell_of_a_copy_reads_a_name_only_a_check_cell_made(deck):
    assert check_only_reads(nbs.read(deck)) == []


def test_a_name_only_a_check_cell_made_is_found():
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in (
        "import workshop; workshop.setup()", "n = 3", "assert (k := n + 1) == 4\nm = 2",
        "print(k, n)", "m = 5", "print(m)")])
    nb.cells[2].metadata["tags"] = ["check"]
    assert check_only_reads(nb) == ["cell 3 reads k, which only a check cell above made"]
