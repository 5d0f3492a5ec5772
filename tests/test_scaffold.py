"""Adding a deck and a lab by docs/maintaining.md, followed literally in a scratch copy of the kit:
a seventh deck and its lab, deck 01's slide that names every phase, the build; then the quick
run's tests of the new deck, the new lab and deck 01 pass there, and what changed is exactly the
guide's table of the files a deck and its lab touch."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import GIT_WHO as WHO

from workshop.tools import paths

DECK, LAB, MOD = "07-shapes-and-sizes", "X9-slopes", "x9"


def run(root, *cmd, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), cwd=root, text=True, capture_output=True, timeout=timeout,
                          env={**os.environ, **WHO, "PYTHONPATH": f"{root}{os.pathsep}"
                                                                  f"{root / 'tests'}"})


def wk(root, *args, timeout=600) -> subprocess.CompletedProcess:
    return run(root, sys.executable, "-m", "workshop", *args, timeout=timeout)


@pytest.fixture(scope="module")
def scratch(kit_copy):
    return kit_copy


def guide_table(root) -> set[str]:
    """docs/maintaining.md's table of what a deck and its lab touch, for deck 07 and lab X9."""
    text = (root / "docs" / "maintaining.md").read_text(encoding="utf-8")
    table = text.split("### What a deck and its lab touch", 1)[1].split("\n#", 1)[0]
    files = set()
    for line in table.splitlines():
        if line.startswith("| `"):
            files |= set(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return {f.replace("NN-name", DECK).replace("ID-name", LAB).replace("/id.py", f"/{MOD}.py")
            for f in files}


# the maintainer's guide's own proof (a build of four notebooks and a nested pytest, 90 s of one
# worker): under -m thorough with the maintainer's other tools, as CI runs it; a maintainer who
# adds a deck runs the quick run on the real one
@pytest.mark.thorough
def test_a_deck_and_a_lab_added_by_the_guide_pass_the_quick_runs_tests(scratch):
    # 1. the deck, then its lab (the guide's first steps)
    p = wk(scratch, "new", "deck", "7", "Shapes and sizes", "--lab", "X9", "--minutes", "30")
    assert p.returncode == 0, p.stderr
    assert "X9 (not written yet)" in (scratch / "README.md").read_text()
    assert '"Six phases, one record" names every phase: make it say seven' in p.stdout, p.stdout
    p = wk(scratch, "new", "lab", "X9", "Slopes", "--deck", DECK)
    assert p.returncode == 0, p.stderr
    assert f"[X9 Slopes](exercises/{LAB}.ipynb) | 30 |" in (scratch / "README.md").read_text()
    again = wk(scratch, "new", "lab", "X9", "Slopes", "--deck", DECK)
    assert again.returncode == 2 and "X9 exists (nothing written)" in again.stderr
    # 2. deck 01's slide that names every phase: its heading, its notes, its check
    one = scratch / "decks" / "01-run-it-first.ipynb"
    text = one.read_text(encoding="utf-8")
    for old, new in [("### Six phases, one record", "### Seven phases, one record"),
                     ("in six phases;", "in seven phases;"),
                     ("**Six phases, one record:", "**Seven phases, one record:"),
                     ("splits the program over.", "splits the program over. Phase 7: shapes."),
                     ("== [1, 2, 3, 4, 5, 6], ", "== [1, 2, 3, 4, 5, 6, 7], ")]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    one.write_text(text, encoding="utf-8")
    assert wk(scratch, "fmt").returncode == 0
    # 3. the build: what changed runs and is printed, and the schedule
    p = wk(scratch, "build", timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "executing 4 notebook(s)" in p.stdout and "wrote handouts/schedule.pdf" in p.stdout
    # deck 01 ran clean, its check of every phase included (a failed cell fails the build):
    # the proof the nested run below does not make again
    assert re.search(r"^\| decks/01-run-it-first\.ipynb \|.*\| ok \|$", p.stdout, re.M), \
        p.stdout[-3000:]
    assert "seven decks" in (scratch / "docs" / "schedule.md").read_text()
    # 4. what changed is the guide's table, no more, no less
    status = run(scratch, "git", "status", "--porcelain", "--untracked-files=all").stdout
    changed = {line[3:] for line in status.splitlines()}
    assert changed == guide_table(scratch), (sorted(changed - guide_table(scratch)),
                                             sorted(guide_table(scratch) - changed))
    # 5. the quick run's tests of the new deck, the new lab and deck 01, and those about the
    # whole kit that a deck or a lab changes: its structure, its package, its schedule and
    # tables, the handouts' index, the labs' copies and modules (the executor's, the printer's
    # and the other notebooks' tests are the outer quick run's; deck 01's run is the build's, so
    # its tests that read a run of their own, which would run it a third time, are left out)
    about = [DECK, LAB.split("-")[0], MOD,
             "(01-run-it-first and not fresh_kernel and not html_export and not refuses_demo "
             "and not colours_a_note and not shows_the_end)",
             "test_structure", "package_map",
             "import_cycle", "60_lines", "committed_schedule", "metadata_minutes",
             "guides_timings", "index", "attendee_copies", "every_lab_source"]
    t = run(scratch, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-v",
            "-m", "not robust and not hub and not thorough", "-k", " or ".join(about),
            "tests/test_structure.py", "tests/test_meta.py", "tests/test_schedule.py",
            "tests/test_labs.py", "tests/test_lab_answers.py", "tests/test_lab_solutions.py",
            "tests/test_notebooks.py", "tests/test_handouts.py", timeout=900)
    tail = t.stdout[-4000:]
    assert t.returncode == 0, tail
    passed = set(re.findall(r"^(\S+) PASSED", t.stdout, re.M))
    for want in (f"test_runs_in_a_fresh_kernel[{DECK}]", "test_committed_handouts_are_current[01-",
                 f"test_slides_pdf_has_a_page_per_slide_with_titles_and_code[{DECK}]",
                 f"test_page_one_is_not_blank[{DECK}.pdf]", f"[{LAB}.solutions.pdf]",
                 f"test_no_talk_slide_overflows_its_printed_page[{DECK}]",
                 "test_the_package_map_in_maintaining_lists_every_module_in_its_layer",
                 "test_the_committed_schedule_is_current_and_printed",
                 "test_what_the_kit_derives_from_the_metadata_is_current",
                 "'X9'-'q1'", f"test_metadata_title_and_closing_slides[{DECK}]",
                 "test_handouts_index_lists_every_pdf_with_its_pages",
                 "test_every_lab_source_has_its_checks_module_and_wrong_answers"):
        assert any(want in name for name in passed), f"{want} did not run and pass:\n{tail}"
    lint = run(scratch, sys.executable, "-m", "ruff", "check", f"workshop/labs/{MOD}.py",
               f"tests/wrong_answers/{MOD}.py", f"exercises/solutions/{LAB}.ipynb",
               "workshop/phases.py")
    assert lint.returncode == 0, lint.stdout


@pytest.mark.parametrize("args, says", [
    (["3", "Again", "--lab", "J2"], "phase 03 is taken by decks/03-jit-and-the-cache.ipynb"),
    (["0", "Zero", "--lab", "J2"], "phase 0: pick a number from 1 to 99"),
    (["9", "Bad lab", "--lab", "lab9"], "a lab id such as J5"),
    (["9", "two\nlines", "--lab", "J9"], "the title has a line break"),
])
def test_bad_input_is_one_line_and_writes_nothing(args, says):
    before = sorted((p.name, p.stat().st_mtime_ns) for p in paths.DECKS.iterdir())
    p = wk(paths.ROOT, "new", "deck", *args)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and says in p.stderr, p.stderr
    assert sorted((p.name, p.stat().st_mtime_ns) for p in paths.DECKS.iterdir()) == before


def test_a_titles_markup_is_shown_as_typed_and_present_takes_the_deck():
    # probe 17 (low): `new deck` wrote a title's markup into the footer as markup (present then
    # refused the deck), and into the README's table (a | or a line break split its row)
    from workshop.tools.authoring import derived, scaffold
    from workshop.tools.present.server import markup_problem
    title = "Tips <img src=x onerror=alert(1)> & [links] | *stars*"
    nb = scaffold.deck(9, title, "J9")
    assert markup_problem({"metadata": nb.metadata}) is None
    assert nb.metadata["rise"]["footer"].endswith(
        "09 Tips &lt;img src=x onerror=alert(1)&gt; &amp; [links] | *stars*</span>")
    assert nb.cells[0].source.startswith(
        "# Tips &lt;img src=x onerror=alert(1)&gt; &amp; \\[links\\] | \\*stars\\*\n")
    phase = derived.Phase(9, title, ["a", "b"], 45, paths.DECKS / "09-tips.ipynb", "J9", None)
    row = derived.readme_rows([phase])[-1]
    assert row.count(" | ") == 4 and "<img" not in row and "\\|" in row, row
