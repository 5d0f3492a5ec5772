"""`workshop new deck`: the guide's steps, followed literally in a scratch copy of the kit, give
a deck the structure tests accept and that runs green, whole and section by section."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from workshop.tools import notebooks as nbs
from workshop.tools import paths
from workshop.tools.builder import execute


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    root = tmp_path_factory.mktemp("kit")
    for d in ("workshop", "decks", "exercises", "tests", "environment", "docs"):
        shutil.copytree(paths.ROOT / d, root / d, ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("README.md", "pyproject.toml"):
        shutil.copy(paths.ROOT / f, root / f)
    return root


def wk(root, *args):
    return subprocess.run([sys.executable, "-m", "workshop", *args], cwd=root, text=True,
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})


def test_a_new_deck_passes_the_structure_tests_and_runs(scratch, tmp_path):
    p = wk(scratch, "new", "deck", "7", "Shapes and sizes", "--lab", "J1", "--minutes", "30")
    assert p.returncode == 0, p.stderr
    deck = scratch / "decks" / "07-shapes-and-sizes.ipynb"
    assert deck.is_file() and (scratch / "decks" / "07-shapes-and-sizes.css").is_file()
    row = next(line for line in p.stdout.splitlines() if "add this row" in line)
    row = row.split("table: ", 1)[1]
    assert row.startswith("| 7 | [Shapes and sizes](decks/07-shapes-and-sizes.ipynb) | 30 |")
    readme = scratch / "README.md"
    readme.write_text(readme.read_text().replace(
        "| 6 | [Devices]", row + "\n| 6 | [Devices]"))
    t = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/test_structure.py", "-k", "07 or readme or kit_has"],
                       cwd=scratch, text=True, capture_output=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(scratch)})
    assert t.returncode == 0 and " passed" in t.stdout, t.stdout[-2000:]
    assert "07-shapes" in subprocess.run(  # the tests did see the new deck
        [sys.executable, "-c", "from workshop.tools import notebooks as n; print(n.decks())"],
        cwd=scratch, text=True, capture_output=True,
        env={**os.environ, "PYTHONPATH": str(scratch)}).stdout
    nb = nbs.read(deck)
    result, ran = execute.execute(nb, deck.name, tmp_path, allow_errors=True,
                                  sections_alone=True)
    assert result.ok, result.failure
    for sec in nbs.sections(ran):   # each section with only the setup cell's names
        assert execute.section_result(result, ran, sec).ok, sec.title


def test_a_new_lab_passes_the_lab_tests_both_ways(scratch):
    p = wk(scratch, "new", "lab", "X9", "Slopes", "--deck", "04-transforms")
    assert p.returncode == 0, p.stderr
    for f in ("exercises/solutions/X9-slopes.ipynb", "exercises/X9-slopes.ipynb",
              "workshop/labs/x9.py", "tests/wrong_answers/x9.py"):
        assert (scratch / f).is_file(), f
    assert "BEGIN SOLUTION" not in (scratch / "exercises/X9-slopes.ipynb").read_text()
    env = {**os.environ, "PYTHONPATH": f"{scratch}{os.pathsep}{scratch / 'tests'}"}
    t = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/test_labs.py", "tests/test_lab_answers.py",
                        "tests/test_lab_solutions.py", "tests/test_structure.py", "-k",
                        "X9 or x9 or checks_module or attendee_copies_are_current"],
                       cwd=scratch, text=True, capture_output=True, timeout=600, env=env)
    tail = t.stdout[-3000:]
    assert t.returncode == 0, tail
    n = int(re.search(r"(\d+) passed", tail).group(1))
    assert n >= 10 * 3 + 2 * 3 + 2, tail   # every wrong and right answer ran, and the solution
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "workshop/labs/x9.py",
                           "tests/wrong_answers/x9.py", "exercises/solutions/X9-slopes.ipynb"],
                          cwd=scratch, text=True, capture_output=True, timeout=120)
    assert lint.returncode == 0, lint.stdout
    again = wk(scratch, "new", "lab", "X9", "Slopes", "--deck", "04-transforms")
    assert again.returncode == 2 and "X9 exists (nothing written)" in again.stderr


@pytest.mark.parametrize("args, says", [
    (["3", "Again", "--lab", "J2"], "phase 03 is taken by decks/03-jit-and-the-cache.ipynb"),
    (["0", "Zero", "--lab", "J2"], "phase 0: pick a number from 1 to 99"),
    (["9", "Bad lab", "--lab", "lab9"], "a lab id such as J5"),
])
def test_bad_input_is_one_line_and_writes_nothing(scratch, args, says):
    before = sorted(p.name for p in (scratch / "decks").iterdir())
    p = wk(scratch, "new", "deck", *args)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and says in p.stderr, p.stderr
    assert sorted(p.name for p in (scratch / "decks").iterdir()) == before
