"""Every notebook runs top to bottom in a fresh kernel; every deck section runs with only the
setup cell's names (its deck's run resets them before it; `scripts/test --full`: alone, in a
fresh kernel); every refuses demo raised what it claims, and one that stops raising fails."""
from __future__ import annotations

import re

import nbformat
import pytest
from conftest import JOBS, job_id

from workshop.tools import notebooks as nbs
from workshop.tools.builder import execute


@pytest.mark.parametrize("job", JOBS, ids=[job_id(j) for j in JOBS])
def test_runs_in_a_fresh_kernel(runs, job):
    result, _ = runs[job]
    assert result.ok, f"{result.name}: {result.failure}"


REFUSES = re.compile(r"refuses\(\s*([\w.]+)")


@pytest.mark.parametrize("deck", nbs.decks(), ids=lambda p: p.stem)
def test_every_refuses_demo_raised_what_it_claims(runs, deck):
    _, text = runs[(deck, None)]
    nb = nbformat.reads(text, as_version=4)
    demos = 0
    for i, cell in enumerate(nb.cells):
        claimed = REFUSES.findall(cell.source) if cell.cell_type == "code" else []
        printed = "".join(o.get("text", "") for o in cell.get("outputs", []))
        for name in claimed:
            demos += 1
            short = name.split(".")[-1]
            assert f"✗ refused — {short}" in printed, f"cell {i}: no {short} shown"
    assert demos >= 1, "every deck shows at least one refusal: expected its demos to be found"


def _first_refuses_cell(nb):
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "with refuses(" in cell.source:
            return i
    raise AssertionError("no refuses demo")


def test_a_demo_that_stops_raising_fails_the_run(tmp_path):
    deck = nbs.decks()[0]
    nb = nbs.read(deck)
    i = _first_refuses_cell(nb)
    sec = next(s for s in nbs.sections(nb) if s.start <= i < s.stop)
    sub = nbs.section_notebook(nb, sec)
    j = next(k for k, c in enumerate(sub.cells) if c.source == nb.cells[i].source)
    # the JAX of the future: the body no longer raises
    lines = sub.cells[j].source.split("\n")
    w = next(k for k, line in enumerate(lines) if line.startswith("with refuses("))
    sub.cells[j].source = "\n".join(lines[: w + 1] + ["    pass"])
    result, _ = execute.execute(sub, "mutated", deck.parent)
    assert not result.ok
    assert result.failure.cell == j
    assert result.failure.title == nbs.title_at(sub, j) != ""
    assert "ClaimFailed" in result.failure.error and "nothing was raised" in result.failure.error


# one deck's export in the quick run (the exporter and the show_* outputs are the same for all),
# every deck's under -m thorough
@pytest.mark.parametrize("deck", [pytest.param(d, marks=[pytest.mark.thorough] if i else [])
                                  for i, d in enumerate(nbs.decks())], ids=lambda p: p.stem)
def test_html_export_keeps_source_highlighting_and_no_terminal_codes(runs, deck):
    from nbconvert import HTMLExporter
    _, text = runs[(deck, None)]
    html, _ = HTMLExporter().from_notebook_node(nbformat.reads(text, as_version=4))
    shown = html.replace('"', "'").split("class='workshop-shown'")
    assert len(shown) > 3, "the deck's show_* outputs are in the export"
    assert all("[34;1m" not in part.split("</pre>")[0] for part in shown[1:])
    assert "jax/_src/" in html and "<span style=" in html


def test_only_sections_the_whole_run_repeats_are_left_out():
    nb = nbs.read(nbs.decks()[0])
    sections = nbs.sections(nb)
    covered = [nbs.covered_by_whole_run(nb, s) for s in sections]
    # the first section is the top of the run; a section with no code of its own (the appendix
    # divider) runs only the setup; every other section runs code the whole run reaches later
    own = [any(c.cell_type == "code" for c in nb.cells[s.start:s.stop]) for s in sections]
    assert covered[0] and not all(own[1:]), (covered, own)
    assert covered[1:] == [not o for o in own[1:]], (covered, own)
    # a code cell added before the first section means section 0 alone runs other code
    extra = nbformat.v4.new_code_cell("x = 1")
    nb.cells.insert(nbs.setup_index(nb) + 1, extra)
    assert not nbs.covered_by_whole_run(nb, nbs.sections(nb)[0])


@pytest.mark.parametrize("code, says", [
    ("import time; time.sleep(30)", "timed out: the cell ran past 3 s"),
    ("import os; os._exit(3)", "the kernel died while the cell ran"),
])
@pytest.mark.robust
def test_a_hung_cell_times_out_and_a_dead_kernel_is_named(monkeypatch, tmp_path, code, says):
    import time

    from workshop.tools import drift
    monkeypatch.setattr(execute, "CELL_TIMEOUT", 3)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## A slide"), nbformat.v4.new_code_cell("1"),
                nbformat.v4.new_code_cell(code), nbformat.v4.new_code_cell("2")]
    t0 = time.perf_counter()
    result, ran = execute.execute(nb, "hangs", tmp_path, allow_errors=True)
    assert time.perf_counter() - t0 < 25, "the timeout was enforced"
    assert result.stopped == says and not result.ok
    assert result.failure.cell == 2 and result.failure.title == "A slide"
    # drift names it as the cell where the run stopped
    (b,) = drift.breaks_in(tmp_path / "hangs.ipynb", ran, result.stopped, result.failure.cell)
    assert (b.cell, b.kind, b.title, b.detail) == (2, "stopped", "A slide", says)


@pytest.mark.parametrize("code", [
    "for i in range(500_000): print('x' * 99)",      # 50 MB in many writes
    "import sys; sys.stdout.write('y' * 50_000_000)",  # and in one
    "from IPython.display import Image, display\n"   # a 20 MB picture
    "display(Image(data=b'\\x89PNG' + bytes(20_000_000), format='png'))",
])
def test_an_output_of_50_mb_is_cut_and_fails_the_run_in_seconds(tmp_path, code):
    # a print of 50 MB kept the build busy for over 10 minutes: now the cell is stopped at
    # OUTPUT_CAP bytes, what it made first is kept (up to the cap), and the next cells run
    import time
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Big"), nbformat.v4.new_code_cell(code),
                nbformat.v4.new_code_cell("print('next')")]
    t0 = time.perf_counter()
    result, ran = execute.execute(nb, "big", tmp_path, allow_errors=True)
    assert time.perf_counter() - t0 < 60
    assert result.failure.cell == 1 and result.failure.title == "Big"
    assert result.failure.error.startswith(f"{execute.OUTPUT_TOO_BIG}: the cell's output "
                                           "passed 4 MB"), result.failure
    kept = sum(len(o.get("text", "")) for o in ran.cells[1].outputs)
    assert kept <= execute.OUTPUT_CAP and [o.output_type for o in ran.cells[1].outputs][-1:] \
        == ["error"]
    if "print" in code or "write" in code:
        assert kept == execute.OUTPUT_CAP
    assert not any(o.get("ename") == "KeyboardInterrupt" for c in ran.cells[1:] for o in c.outputs)
    assert [o.get("text") for o in ran.cells[2].outputs] == ["next\n"]


def test_the_cap_interrupts_a_cell_that_would_never_stop_even_under_gc(tmp_path):
    # the interrupt is an asyncio task, which the event loop holds only weakly: the client keeps
    # it until it is done (a task collected mid-way never interrupts, and this cell would then
    # print until the 120 s timeout). Collections after every allocation give it every chance
    # to be lost.
    import gc
    import time
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Forever"),
                nbformat.v4.new_code_cell("while True: print('x' * 99)")]
    old = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    try:
        t0 = time.perf_counter()
        result, _ = execute.execute(nb, "forever", tmp_path, allow_errors=True)
        took = time.perf_counter() - t0
    finally:
        gc.set_threshold(*old)
    assert result.failure and result.failure.error.startswith(execute.OUTPUT_TOO_BIG), result
    assert took < 60, f"the interrupt came after {took:.0f} s"


@pytest.mark.parametrize("code, left", [
    ("import tempfile; folder = tempfile.mkdtemp()", 1),        # deck 03 did, on every run
    ("import tempfile; f = tempfile.NamedTemporaryFile(delete=False); f.write(b'x'); f.close()",
     1),
    ("import atexit, shutil, tempfile; folder = tempfile.mkdtemp()\n"   # its fix: gone when
     "atexit.register(shutil.rmtree, folder, ignore_errors=True)", 0),   # the kernel ends
    ("import tempfile\nwith tempfile.TemporaryDirectory() as d: open(f'{d}/x', 'w').close()",
     0),
])
def test_a_run_that_leaves_files_in_its_temp_folder_fails_and_they_go(tmp_path, code, left,
                                                                       monkeypatch):
    # every kernel's TMPDIR is a folder of its run's own: what is left there once the kernel
    # ended (its atexit handlers ran) fails the run, and the folder goes anyway
    import os
    import tempfile
    mine = tmp_path / "tmp"   # this process's temp folder, for the run's folder to be made in
    mine.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(mine))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Scratch"), nbformat.v4.new_code_cell(code),
                nbformat.v4.new_code_cell("print('done')")]
    result, ran = execute.execute(nb, "scratch", tmp_path)
    if left:
        assert result.failure.error.startswith(
            f"LeftBehind: the run left {left} file(s) in its temporary folder when its kernel "
            "ended (tmp"), result.failure
        assert result.failure.title == "Scratch"
    else:
        assert result.failure is None, result.failure
    assert [o.get("text") for o in ran.cells[2].outputs] == ["done\n"]
    assert os.listdir(mine) == []   # the run's folder, and what was left in it, are gone


@pytest.mark.robust
def test_a_long_traceback_and_a_500_cell_notebook_run_whole(tmp_path):
    # nbclient takes about 9 ms a cell here (a 5 000-cell notebook ran in 47 s): 500 prove the
    # same in a tenth of the time
    import time
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Many")] + \
        [nbformat.v4.new_code_cell(f"x{i} = {i}") for i in range(500)] + \
        [nbformat.v4.new_code_cell(   # (a recursion 12 000 deep takes IPython 17 s to format)
            "raise ValueError('\\n'.join(f'line {i}' for i in range(10_000)))")]
    t0 = time.perf_counter()
    result, ran = execute.execute(nb, "many", tmp_path, allow_errors=True)
    assert time.perf_counter() - t0 < 60
    assert result.failure.cell == 501 and result.failure.error == "ValueError: line 0"
    assert "line 9999" in "\n".join(ran.cells[-1].outputs[0].traceback)   # kept whole
    assert all(c.execution_count for c in ran.cells if c.cell_type == "code")


def _deck(*sections):
    """A small deck: a setup cell, then `## ` sections of code cells."""
    nb = nbformat.v4.new_notebook()
    slide = lambda text: nbformat.v4.new_markdown_cell(text, metadata={
        "slideshow": {"slide_type": "slide"}})
    nb.cells = [slide("# A deck"), nbformat.v4.new_code_cell("SETUP = 1")]
    for title, *codes in sections:
        nb.cells += [slide(f"## {title}")] + [nbformat.v4.new_code_cell(c) for c in codes]
    return nb


def test_a_section_that_needs_an_earlier_sections_name_fails_alone(tmp_path):
    # the default suite's section check: the whole run forgets every name before each section
    # and reruns the setup, so a section that leans on an earlier one fails as its copy alone
    # would, while the top-to-bottom order and its outputs stay the deck's own
    nb = _deck(("First", "x = 41", "x + 1"), ("Second", "SETUP + 1"), ("Third", "x + 1"),
               ("Fourth", "y = SETUP + 2", "y"))
    result, ran = execute.execute(nb, "deck", tmp_path, allow_errors=True, sections_alone=True)
    assert len(ran.cells) == len(nb.cells) == 12, "the reset cells are taken out again"
    assert ran.cells[4].outputs[0]["data"]["text/plain"] == "42"
    verdicts = {s.title: execute.section_result(result, ran, s) for s in nbs.sections(ran)}
    assert [t for t, r in verdicts.items() if not r.ok] == ["Third"]
    third = verdicts["Third"].failure
    assert third.cell == 8 and "NameError" in third.error and "'x'" in third.error
    assert not result.ok and result.failure.cell == 8   # the whole run fails there too
    assert ran.cells[11].outputs[0]["data"]["text/plain"] == "3"   # and went on past it
    # without the resets the same deck runs clean: the check is the reset, not the deck
    plain, _ = execute.execute(_deck(("First", "x = 41"), ("Third", "x + 1")), "deck", tmp_path)
    assert plain.ok


def test_a_setup_that_fails_when_rerun_is_the_sections_failure(tmp_path):
    nb = _deck(("First", "1"), ("Second", "2"))
    nb.cells[1].source = "assert 'ran' not in dir(__import__('builtins')); " \
                         "__import__('builtins').ran = 1"
    result, ran = execute.execute(nb, "deck", tmp_path, allow_errors=True, sections_alone=True)
    first, second = (execute.section_result(result, ran, s) for s in nbs.sections(ran))
    assert first.ok and not second.ok
    assert "the setup cell, run alone" in second.failure.error
    assert "AssertionError" in second.failure.error and not result.ok
    assert result.failure.title == "Second"   # the whole run names the section too


@pytest.mark.parametrize("deck", nbs.decks(), ids=lambda p: p.stem)
def test_the_colours_a_note_names_are_drawn_on_its_slide(runs, deck):
    # "the red line" under a chart the palette draws orange (tests/test_notes.py says how a
    # colour is named)
    from test_notes import colour_problems
    _, text = runs[(deck, None)]
    problems = colour_problems(nbformat.reads(text, as_version=4))
    assert problems == [], "\n".join(problems)


def test_a_huge_file_or_a_fifo_is_no_notebook_and_is_not_read(tmp_path):
    # probe 8: `present talks/huge.ipynb`, 3 GiB, was read whole (6.3 GB of memory, or a
    # MemoryError traceback) before it was found to be no notebook; every command reads here
    import os

    from workshop.tools import errors
    huge = tmp_path / "huge.ipynb"
    with open(huge, "wb") as f:
        f.truncate(3 << 30)   # sparse
    with pytest.raises(errors.KitError, match=r"huge\.ipynb: not a notebook of the kit's: "
                       r"3072 MiB \(a notebook here is under 64 MiB\)$"):
        nbs.read(huge)
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)
    with pytest.raises(errors.KitError, match=r"fifo\.ipynb: not a notebook: not a file$"):
        nbs.read(fifo)
    # probe 10: JSON nested deeper than Python's recursion limit, 400 kB, was a 30-line
    # RecursionError traceback from every command that reads a notebook
    for name, text in (("deep", "[" * 200_000 + "]" * 200_000),
                       ("deep2", '{"cells": ' + "[" * 3000 + "]" * 3000 + "}")):
        (tmp_path / f"{name}.ipynb").write_text(text)
        with pytest.raises(errors.KitError, match=rf"{name}\.ipynb: not a notebook: JSON "
                           r"nested too deeply$"):
            nbs.read(tmp_path / f"{name}.ipynb")
    # probe 11: a number of 5 000 digits, past Python's limit for reading one, was a traceback
    (tmp_path / "long.ipynb").write_text('{"cells": [], "metadata": {}, "x": ' + "1" * 5000 + "}")
    for read in (nbs.read, nbs.metadata):
        with pytest.raises(errors.KitError, match=r"long\.ipynb: not a notebook: Exceeds the "
                           r"limit \(4300 digits\) for integer string conversion"):
            read(tmp_path / "long.ipynb")


def test_the_metadata_alone_is_read_as_json_and_what_is_no_notebook_is_one_line(tmp_path):
    # present checks a deck's RISE settings before its server starts, from the JSON alone
    # (nbformat's import and validation, half a second, run beside the server's start)
    from workshop.tools import errors
    deck = nbs.decks()[0]
    assert nbs.metadata(deck) == dict(nbs.read(deck).metadata)
    for text, says in (("[1, 2]", "not a valid notebook (no metadata)"),
                       ('{"metadata": 3}', "not a valid notebook (no metadata)"),
                       ('{"cells": [', "not a notebook: invalid JSON at line 1")):
        (tmp_path / "x.ipynb").write_text(text)
        with pytest.raises(errors.KitError, match=re.escape(f"x.ipynb: {says}")):
            nbs.metadata(tmp_path / "x.ipynb")
