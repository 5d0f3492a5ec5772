"""`workshop compose`: a talk from sections of several decks. The sections are picked by reading
the decks (their titles move as the decks are edited): the first talk section of decks 01 and
02 that shows code."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import nbformat
import pytest

from workshop.tools import notebooks as nbs
from workshop.tools import paths, talk
from workshop.tools.authoring import compose


def _first_code_section(deck: str):
    path = nbs.select([deck], among=nbs.decks())[0]
    nb = nbs.read(path)
    for s in talk.talk_sections(nb):
        if any(talk.is_visible_code(c) for c in nb.cells[s.start:s.stop]):
            return path, nb, s
    raise AssertionError(f"deck {deck} has no talk section with code")


def _compose(out, *specs, title="A talk from two decks"):
    return subprocess.run([sys.executable, "-m", "workshop", "compose", str(out), "--title",
                           title, *specs], capture_output=True, text=True, cwd=paths.ROOT,
                          timeout=120)


@pytest.fixture(scope="module")
def composed(tmp_path_factory):
    picks = [_first_code_section("01"), _first_code_section("02")]
    out = tmp_path_factory.mktemp("talk") / "talk.ipynb"
    p = _compose(out, *(f"{path.stem[:2]}:{s.title}" for path, _, s in picks))
    assert p.returncode == 0, p.stderr
    return out, picks, p.stdout


def test_the_composed_deck_has_title_setup_sections_and_closing(composed):
    out, picks, stdout = composed
    nb = nbs.read(out)
    assert talk.problems(nb) == [] and nbs.audience_problems(nb) == []
    w = nb.metadata.workshop
    # the title slide: the title, the talk's minutes (its own estimate, rounded up), objectives
    est = talk.talk_minutes(nb)
    assert w.minutes == math.ceil(est)
    title = nb.cells[0].source
    assert title.startswith("# A talk from two decks") and f"{w.minutes} minutes" in title
    assert w.objectives == [compose.lead(src, s) for _, src, s in picks]
    for o in w.objectives:
        assert f"- {o}" in title
    # the setup cell, then the plan, then the sections in order, then the closing
    setup = nb.cells[nbs.setup_index(nb)]
    assert "setup" in nbs.tags(setup) and "workshop.setup()" in setup.source
    assert talk.plan_cell_index(nb) is not None
    titles = [s.title for s in nbs.sections(nb)]
    assert titles == [s.title for _, _, s in picks] + ["Key points"]
    for (_, src, s), sec in zip(picks, nbs.sections(nb)):
        copied = [c.source for c in nb.cells[sec.start:sec.stop]]
        assert copied == [c.source for c in src.cells[s.start:s.stop]]
    # fresh ids: unique, and none taken from the decks
    ids = [c["id"] for c in nb.cells]
    deck_ids = {c.get("id") for _, src, _ in picks for c in src.cells}
    assert len(set(ids)) == len(ids) and not set(ids) & deck_ids
    assert (out.parent / "rise.css").is_file() and out.with_suffix(".css").is_file()
    assert f"talk-time estimate {est:.1f} minutes" in stdout


def test_it_lists_every_cell_that_points_outside_the_talk(composed):
    out, picks, stdout = composed
    nb = nbs.read(out)
    flagged = {c["id"] for c in nb.cells[2:-2] if c.cell_type == "markdown"
               and "presenter" not in nbs.tags(c) and compose.REFERENCE.search(c.source)}
    for i in flagged:
        assert f"cell {i})" in stdout, i
    listed = stdout.count("\n  slide ")
    assert listed == len(flagged), stdout


@pytest.mark.parametrize("text,hit", [
    ("as deck 03 shows", True), ("Lab J2 asks for it", True), ("lab J2's first task", True),
    ("in phase 3", True), ("two slides on", True), ("the next slide", True),
    ("we saw with the caches", True), ("decks 02 and 04", True),
    ("the slide shows the jaxpr", False), ("a decorator, a deckhand", False),
    ("grad(f)(3.0)", False)])
def test_what_counts_as_a_reference_outside_the_talk(text, hit):
    assert bool(compose.REFERENCE.search(text)) is hit


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    path, nb, s = _first_code_section("01")
    out = tmp_path / "t.ipynb"
    for specs, says in [
        (["99:x"], "'99' is not a deck of the kit"),
        ([f"01:{s.title}x-no-such"], "is not a section of 01-"),
        ([f"01:{s.title}", f"1:{s.title}"], "is named twice"),
        (["01"], "name a section as DECK:TITLE"),
        (["01:Key points"], "own closing or divider")]:
        p = _compose(out, *specs)
        assert p.returncode == 2 and p.stdout == "", (specs, p.stdout)
        assert p.stderr.strip().count("\n") == 0 and says in p.stderr, (specs, p.stderr)
        assert not out.exists()


@pytest.mark.slow
def test_the_composed_deck_runs(composed, tmp_path):
    # what `scripts/build OUT.ipynb` does, without printing: every cell in a fresh kernel
    out, _, _ = composed
    from workshop.tools.builder import execute
    [(result, text)] = execute.run_many([(out, None)])
    assert result.ok, str(result.failure)
    ran = nbformat.reads(text, as_version=4)
    assert any(o.get("output_type") for c in ran.cells if c.cell_type == "code"
               for o in c.get("outputs", [])), json.dumps(ran.cells[1].get("outputs"))[:200]
