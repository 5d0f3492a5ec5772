"""Each lab solution as the session's fresh kernel ran it (tests/conftest.py's `runs`, the run
test_notebooks and test_drift read too): every visible check printed a verdict that says correct."""
from __future__ import annotations

import re

import nbformat
import pytest
from test_labs import CHECK_CALL, LABS, _tasks

from workshop.tools import notebooks as nbs
from workshop.tools.authoring import scaffold


@pytest.mark.parametrize("source", nbs.lab_sources(), ids=lambda p: p.stem.split("-")[0])
def test_solution_passes_every_check_it_shows(runs, source):
    # the solution as the session's fresh kernel ran it (tests/conftest.py's `runs`, the run
    # test_notebooks and test_drift read too): every task's visible qN.check(...) cell printed
    # a Verdict that says correct. Its hidden `assert _.ok` cells (the verdict just printed)
    # failing would fail that run (and drift would name them, kind "lab").
    module, _ = LABS[source.stem.split("-")[0]]
    _, text = runs[(source, None)]
    verdicts = {}
    for cell in nbformat.reads(text, as_version=4).cells:
        m = CHECK_CALL.match(cell.source.strip())
        if cell.cell_type == "code" and m and "check" not in nbs.tags(cell):
            verdicts[m.group(1)] = "".join(o.get("data", {}).get("text/plain", "")
                                           for o in cell.get("outputs", []))
    assert set(verdicts) == _tasks(module)
    for q, v in verdicts.items():
        assert re.match(r"✓ Correct: \S", v), f"{q}: {v!r}"


VERDICT_ABOVE = scaffold.VERDICT   # (a new lab's template writes the same cells)


@pytest.mark.parametrize("source", nbs.lab_sources(), ids=lambda p: p.stem.split("-")[0])
def test_each_task_is_checked_once_and_its_printed_verdict_asserted(source):
    # A check runs the answer on many inputs (J3's compiles a dozen programs): the build and
    # the tests run each task's check once, in the cell the attendee sees, and the hidden cell
    # after it asserts that printed verdict (IPython's `_`), never a second check. `_` follows
    # the last printed value only while no cell binds the name itself, so none does.
    import ast
    cells = [c for c in nbs.read(source).cells if c.cell_type == "code"]
    for before, cell in zip(cells, cells[1:]):
        if CHECK_CALL.match(before.source.strip()) and "check" not in nbs.tags(before):
            assert "check" in nbs.tags(cell), before.source
            assert cell.source.splitlines()[0] == VERDICT_ABOVE.format(before.source.strip())
    for cell in cells:
        text = "\n".join(ln for ln in cell.source.splitlines() if not ln.startswith(("%", "!")))
        targets = [t for node in ast.parse(text).body for t in (
            node.targets if isinstance(node, ast.Assign) else
            [node.target] if isinstance(node, (ast.For, ast.AugAssign, ast.AnnAssign)) else
            [i.optional_vars for i in node.items if i.optional_vars]
            if isinstance(node, ast.With) else [])]
        bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        assert "_" not in bound, f"a cell binds `_` at the top level: {cell.source[:80]!r}"
