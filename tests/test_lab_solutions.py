"""Each lab solution as the session's fresh kernel ran it (tests/conftest.py's `runs`, the run
test_notebooks and test_drift read too): every visible check printed a verdict that says correct."""
from __future__ import annotations

import re

import nbformat
import pytest
from test_labs import CHECK_CALL, LABS, _tasks

from workshop.tools import notebooks as nbs


@pytest.mark.parametrize("source", nbs.lab_sources(), ids=lambda p: p.stem.split("-")[0])
def test_solution_passes_every_check_it_shows(runs, source):
    # the solution as the session's fresh kernel ran it (tests/conftest.py's `runs`, the run
    # test_notebooks and test_drift read too): every task's visible qN.check(...) cell printed
    # a Verdict that says correct. Its hidden `assert qN.check(...).ok` cells failing would
    # fail that run (and drift would name them, kind "lab").
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
