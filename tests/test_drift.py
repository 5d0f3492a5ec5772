"""drift: on the pinned JAX it reports nothing; a planted wrong claim is reported as exactly
that slide and cell, with how it broke; bad input gets one line."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import nbformat
import pytest
from conftest import JOBS, tiny

from workshop.tools import drift, paths
from workshop.tools import notebooks as nbs


def wk(*args):
    return subprocess.run([sys.executable, "-m", "workshop", "drift", *args],
                          capture_output=True, text=True, timeout=600, cwd=paths.ROOT)


WHOLE = [p for p, sec in JOBS if sec is None]


@pytest.mark.parametrize("path", WHOLE, ids=lambda p: p.stem)
def test_the_pinned_jax_breaks_nothing(runs, path):
    result, text = runs[(path, None)]
    nb = nbformat.reads(text, as_version=4)
    assert len(nb.cells) == len(nbs.read(path).cells), "the preamble cell was taken out again"
    assert result.stopped == "" and drift.breaks_in(path, nb) == []


def _first(nb, pred):
    return next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and pred(c))


def _section_with(nb, i):
    sec = next(s for s in nbs.sections(nb) if s.start <= i < s.stop)
    sub = nbs.section_notebook(nb, sec)
    return sub, next(k for k, c in enumerate(sub.cells) if c.source == nb.cells[i].source)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Two notebooks with what a future JAX could do to them, run to the end by the CLI."""
    tmp = tmp_path_factory.mktemp("planted")
    deck = nbs.read(nbs.decks()[0])
    want = {}
    # 1. one check cell's claim made wrong: an integer it compares with, plus one
    i = _first(deck, lambda c: "check" in nbs.tags(c) and re.search(r"== \d+\b", c.source))
    sub, j = _section_with(deck, i)
    sub.cells[j].source = re.sub(r"== (\d+)\b", lambda m: f"== {int(m.group(1)) + 1}",
                                 sub.cells[j].source, count=1)
    want["wrong-check"] = [(j, "check", nbs.title_at(sub, j))]
    nbformat.write(sub, tmp / "wrong-check.ipynb")
    # 2. a lab solution its own check rejects (J1's first answer, off by one), and in the same
    # notebook an error demo that no longer raises and a show_source anchor the source lacks
    lab = nbs.read(nbs.lab_sources()[0])
    s = _first(lab, lambda c: "### BEGIN SOLUTION" in c.source)
    head, sol = lab.cells[s].source.split("### BEGIN SOLUTION", 1)
    sol = re.sub(r"\b(\d+)\b", lambda m: str(int(m.group(1)) + 1), sol, count=1)
    lab.cells[s].source = head + "### BEGIN SOLUTION" + sol
    c = _first(lab, lambda c: "check" in nbs.tags(c) and ".check(" in c.source)
    lab.cells += [
        nbformat.v4.new_code_cell("from workshop import refuses\n"
                                  "with refuses(TypeError, match='refused'):\n"
                                  "    pass   # the JAX of the future no longer raises"),
        nbformat.v4.new_code_cell(
            'from workshop import show_source\n'
            'show_source("jax._src.core.Primitive.bind", start="no such line in JAX")')]
    n = len(lab.cells)
    want["J1-planted"] = [(c, "lab", nbs.title_at(lab, c)),
                          (n - 2, "refuses", nbs.title_at(lab, n - 2)),
                          (n - 1, "anchor", nbs.title_at(lab, n - 1))]
    nbformat.write(lab, tmp / "J1-planted.ipynb")
    report = tmp / "report"
    args = [a for name in want for a in ("--only", str(tmp / f"{name}.ipynb"))]
    # and all that while a build runs (it holds the build lock; drift takes none and writes
    # only its report): the build waits in a cell until drift is done, then ends as ever
    flag = tmp / "drift-done"
    tiny(tmp / "alongside.ipynb",
         f"import os, time\nwhile not os.path.exists({str(flag)!r}): time.sleep(0.2)\n"
         "print('after drift')")
    build = subprocess.Popen([sys.executable, "-m", "workshop", "build", "--no-pdf",
                              str(tmp / "alongside.ipynb")], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, cwd=paths.ROOT)
    try:
        line = build.stdout.readline()   # (another test's build may hold the lock first)
        while line.startswith("build: waiting for the build of pid"):
            line = build.stdout.readline()
        assert line.startswith("build: executing 1 notebook(s)"), line
        ran = wk("--python", sys.executable, "--report", str(report), *args)
        assert build.poll() is None, "the build waits for drift's end"
    finally:
        flag.write_text("done")
        built = build.communicate(timeout=120)[0]
    RAN_ALONGSIDE.update(build=(build.returncode, built), report=report)
    return want, report, ran


RAN_ALONGSIDE: dict = {}


# drift's own proofs on planted claims (a run of drift beside a build, 11 s): the maintainer's
# tool, under -m thorough as CI runs it; the quick run keeps drift's verdict on the pinned JAX
@pytest.mark.thorough
def test_drift_and_a_build_at_once_each_do_their_own(planted):
    code, out = RAN_ALONGSIDE["build"]
    assert code == 0 and "FAILED" not in out, out
    assert sorted(p.name for p in RAN_ALONGSIDE["report"].iterdir()) == \
        [f"jax-{drift_jax()}.json", f"jax-{drift_jax()}.md"]   # drift's report, nothing else


@pytest.mark.thorough
def test_a_planted_wrong_claim_is_reported_as_exactly_that_slide_and_cell(planted):
    want, out, p = planted
    assert p.returncode == 1, p.stdout + p.stderr
    report = json.loads((out / f"jax-{drift_jax()}.json").read_text())
    got = {nb["path"].rsplit("/", 1)[-1].removesuffix(".ipynb"):
           sorted((b["cell"], b["kind"], b["title"]) for b in nb["breaks"])
           for nb in report["notebooks"]}
    assert got == want
    # the terminal says the same, with how each broke
    for breaks in want.values():
        for cell, kind, title in breaks:
            assert f"cell {cell:>3} · “{title}” · {kind}:" in p.stdout
    wrong = next(b for nb in report["notebooks"] for b in nb["breaks"] if b["kind"] == "check")
    assert re.search(r"assert .*\d+ == \d+", wrong["detail"]), "the values it saw"
    assert "nothing was raised" in p.stdout
    assert "no such line in JAX" in p.stdout
    assert "its own check rejects the solution: ✗ Not yet" in p.stdout
    assert "2 notebook(s), 4 cell(s) broke in 2" in p.stdout
    assert (out / f"jax-{drift_jax()}.md").read_text().strip() in p.stdout


def drift_jax():
    import jax
    return jax.__version__


@pytest.mark.parametrize("args, says", [
    (["0.x"], "'0.x' is not a JAX version"),
    (["--python", "/nonexistent/python"], "is not a Python with jax and nbclient"),
    ([], "name a JAX version"),
    (["0.12.0.1", "--only", "nonesuch"], "'nonesuch' is not a notebook"),
])
def test_bad_input_gets_one_line(args, says):
    p = wk(*args)
    assert p.returncode == 2 and says in p.stderr, p.stderr
    assert len(p.stderr.strip().split("\n")) == 1
