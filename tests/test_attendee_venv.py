"""An attendee's own kernel: a plain venv that followed the README's "Following along" (JAX from
the package index, then `pip install -e .`, nothing else) runs every lab's attendee copy top to
bottom with no traceback from the kit: only the starters' own NotImplementedError, and a verdict
from every check. This is what catches a package the labs import but pyproject.toml does not
declare (J3's matplotlib, J4's rich were). It runs the attendee copies of the decks too, each
section after the setup cell alone (under -m thorough; CI's newer Pythons run this file whole),
and finds every module any copy imports."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from workshop import PINNED_JAX
from workshop.tools import lockfile, paths
from workshop.tools import notebooks as nbs
from workshop.tools.builder import execute

# the README's "or just" line: JAX, and the lock's ml-dtypes (0.7.0's import adds a second to
# the setup cell); tests/test_meta.py checks that the README names these versions
ML_DTYPES = lockfile.pins()["ml-dtypes"]


def _install(venv, *args):
    """`pip install ARGS` in that venv, done by the lock's uv (the same resolution from the
    package index, in a fraction of the time). Without compiling every module's bytecode, as
    pip would: the kernel compiles the modules it imports (28 CPU-s down to 6)."""
    uv = Path(sys.executable).with_name("uv")
    scratch = venv.parent / "uv-tmp"   # (its build backend's lock, 0666, went to /tmp)
    scratch.mkdir(exist_ok=True)
    return subprocess.run([str(uv), "pip", "install", "-q", "--python",
                           str(venv / "bin" / "python"), *args],
                          capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, TMPDIR=str(scratch)))


@pytest.fixture(scope="module")
def plain_kernel(tmp_path_factory):
    """A venv made the README's way, registered as a kernel spec of its own."""
    root = tmp_path_factory.mktemp("plain")
    venv = root / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    jax = _install(venv, f"jax=={PINNED_JAX}", f"jaxlib=={PINNED_JAX}", f"ml-dtypes=={ML_DTYPES}")
    if jax.returncode and not os.environ.get("CI"):
        pytest.skip(f"no package index here: {jax.stderr.strip().splitlines()[-1:]}")
    assert jax.returncode == 0, jax.stderr
    kit = _install(venv, "-e", str(paths.ROOT))
    assert kit.returncode == 0, kit.stderr
    PLAIN["python"] = venv / "bin" / "python"
    spec = root / "share" / "jupyter" / "kernels" / "plain-venv"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f",
                 "{connection_file}"], "display_name": "plain venv", "language": "python"}))
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(root / "share" / "jupyter")
    yield "plain-venv"
    if old is None:
        os.environ.pop("JUPYTER_PATH")
    else:
        os.environ["JUPYTER_PATH"] = old


PLAIN: dict = {}   # the plain venv's python, once made
SHEETS = sorted(paths.EXERCISES.glob("*.ipynb"))


@pytest.fixture(scope="module")
def plain_runs(plain_kernel):
    """Every attendee copy run to the end in the plain venv's kernel: {sheet: (why the run
    stopped before the sheet's end, or "", the sheet as it ran)}. One kernel for the six, every
    name forgotten before each sheet (IPython's %reset, as a section's run does), so each sheet
    runs with its own names only, without six JAX start-ups; the packages a sheet imports are
    the plain venv's either way, which is what this file proves."""
    whole, bounds = nbformat.v4.new_notebook(), []
    for sheet in SHEETS:
        if whole.cells:
            whole.cells.append(nbformat.v4.new_code_cell(execute.RESET))
        start = len(whole.cells)
        whole.cells += nbs.read(sheet).cells
        bounds.append((sheet, start, len(whole.cells)))
    result, ran = execute.execute(whole, "the attendee copies", paths.EXERCISES,
                                  allow_errors=True, kernel_name=plain_kernel)
    return {sheet: (result.stopped if result.stopped and result.failure.cell < stop else "",
                    nbformat.v4.new_notebook(cells=ran.cells[start:stop]))
            for sheet, start, stop in bounds}


@pytest.mark.slow
@pytest.mark.parametrize("lab", SHEETS, ids=lambda p: p.stem)
def test_attendee_copy_runs_in_a_plain_venv(plain_runs, lab):
    stopped, ran = plain_runs[lab]
    assert not stopped, stopped
    problems, verdicts = [], 0
    for i, cell in enumerate(ran.cells):
        if cell.cell_type != "code":
            continue
        text = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
                       for o in cell.get("outputs", []))
        for o in cell.get("outputs", []):
            if o.get("output_type") != "error":
                continue
            # a starter's own `raise NotImplementedError()`, here or in a cell that calls it
            tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(o.get("traceback", [])))
            starter = "raise NotImplementedError()" in tb and "workshop/" not in tb
            if not (starter and o["ename"] == "NotImplementedError"):
                problems.append(f"cell {i}: {o['ename']}: {o['evalue'][:120]}")
        if re.search(r"^q\d\.check\(", cell.source, re.M):
            verdicts += 1
            if not text.strip():
                problems.append(f"cell {i}: {cell.source.strip()} printed no verdict")
    assert not problems, f"{lab.name} in a plain venv:\n" + "\n".join(problems)
    assert verdicts >= 3, f"{lab.name}: only {verdicts} check cells ran"
    assert "8 CPU devices" in "".join(
        o.get("text", "") for o in ran.cells[nbs.setup_index(ran)].get("outputs", []))


@pytest.mark.slow
def test_the_kernel_is_the_plain_venv(plain_kernel, tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import sys, workshop; print(sys.prefix); print(workshop.__file__)")])
    _, ran = execute.execute(nb, "probe", tmp_path, kernel_name=plain_kernel)
    prefix, where = ran.cells[0].outputs[0]["text"].split()[:2]
    assert prefix != sys.prefix and prefix.endswith("venv"), prefix
    assert where.startswith(str(paths.ROOT)), where   # the README's editable install


# ---------------------------------------------------------------------------- the decks' copies

COPIES = sorted(paths.ATTENDEE_DECKS.glob("*.ipynb"))


def with_resets(nb) -> list:
    """`nb`'s cells with a cell that forgets every name and runs the setup cell again before
    each section (as execute.with_section_resets, but kept in what the run gives back)."""
    setup = nb.cells[nbs.setup_index(nb)].source
    starts = {sec.start for sec in nbs.sections(nb)[1:]}
    return [cell for i, c in enumerate(nb.cells) for cell in (
        [nbformat.v4.new_code_cell(execute.RESET + setup), c] if i in starts else [c])]


@pytest.fixture(scope="module")
def plain_deck_runs(plain_kernel):
    """{copy: (why the run stopped early, or "", its cells as they ran)}: every deck's copy, the
    first time one is asked for. One kernel for them all, every name forgotten and the setup
    cell run again before each section, so each section runs with the setup cell's names only."""
    done = {}

    def run(copy):
        if copy not in done:
            group = COPIES
            whole, bounds = nbformat.v4.new_notebook(), []
            for c in group:
                if whole.cells:
                    whole.cells.append(nbformat.v4.new_code_cell(execute.RESET))
                start = len(whole.cells)
                whole.cells += with_resets(nbs.read(c))
                bounds.append((c, start, len(whole.cells)))
            result, ran = execute.execute(whole, "the attendee copies of the decks",
                                          paths.ATTENDEE_DECKS, allow_errors=True,
                                          kernel_name=plain_kernel)
            for c, start, stop in bounds:
                stopped = result.stopped if result.stopped and result.failure.cell < stop else ""
                done[c] = (stopped, ran.cells[start:stop])
        return done[copy]
    return run


@pytest.mark.slow
@pytest.mark.thorough
@pytest.mark.parametrize("copy", COPIES, ids=lambda p: p.stem)
def test_a_decks_attendee_copy_runs_in_a_plain_venv(plain_deck_runs, copy):
    stopped, cells = plain_deck_runs(copy)
    assert not stopped, stopped
    code = [c for c in cells if c.cell_type == "code"]
    errors = [f"{c.source.splitlines()[0][:60]!r}: {o['ename']}: {o['evalue'][:120]}"
              for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == [], f"{copy.name} in a plain venv:\n" + "\n".join(errors)
    assert all(c.execution_count for c in code), "a cell did not run"
    setups = [c for c in code if c.source.endswith("workshop.setup()")]
    assert len(setups) == len(nbs.sections(nbs.read(copy))), "a section without its reset"
    assert all("8 CPU devices" in "".join(o.get("text", "") for o in c.get("outputs", []))
               for c in setups)


def top_modules(source: str) -> set[str]:
    """The top-level packages a cell imports (`from jax.sharding import P`: jax)."""
    import ast
    text = "\n".join(line for line in source.split("\n")
                     if not line.lstrip().startswith(("%", "!")))
    return {name.split(".")[0] for n in ast.walk(ast.parse(text))
            for name in ([a.name for a in n.names] if isinstance(n, ast.Import) else
                         [n.module] if isinstance(n, ast.ImportFrom) and n.level == 0 else [])}


@pytest.mark.slow
def test_every_module_a_decks_copy_imports_is_in_the_plain_venv(plain_kernel):
    modules = sorted({m for copy in COPIES for c in nbs.read(copy).cells if c.cell_type == "code"
                      for m in top_modules(c.source)})
    assert {"jax", "workshop"} <= set(modules)
    p = subprocess.run([str(PLAIN["python"]), "-c", "import importlib.util, sys; print(' '.join("
                        "m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))",
                        *modules], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.split() == [], p.stdout + p.stderr
