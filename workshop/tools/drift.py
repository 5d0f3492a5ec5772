"""`python -m workshop drift VERSION`: which slide's claim another JAX breaks, and how.

Every deck and lab solution runs to the end (errors allowed) in a side environment that holds
that JAX and jaxlib and the rest of the lock (`build/drift/jax-VERSION/`, apart from `.venv`,
reused by the next run), or in an interpreter the maintainer names (`--python`). Each cell that
broke is reported under its notebook and slide title, as one of:

  check     a hidden `check` cell's assertion failed (with the values it saw)
  lab       a lab solution that its own check rejects (with the check's verdict)
  refuses   an error demo that no longer raises, or raises another error
  anchor    a `show_source` anchor (start, stop, mark, or the name) the source no longer has
  stopped   a cell that timed out or killed the kernel: the rest of that notebook did not run
  error     any other exception

The report goes to the terminal and to `build/drift/jax-VERSION.md`; exit 0 only when nothing
broke.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from . import errors, paths
from . import notebooks as nbs

DRIFT = paths.BUILD / "drift"
_VERSION = re.compile(r"^\d+(\.\d+){1,3}$")
_JAX_PIN = re.compile(r"^(jax|jaxlib)==")

# Run in each kernel before the notebook: a check cell's failed assert then says what it saw
# (pytest's assertion rewriting, as in a test), not a bare AssertionError.
PREAMBLE = """\
def _explain_asserts():
    import ast
    try:
        from _pytest.assertion.rewrite import rewrite_asserts
    except ImportError:
        return

    class ExplainAsserts(ast.NodeTransformer):
        # only the cell's top-level asserts, each rewritten on its own: the rest of the cell
        # compiles exactly as written
        def visit(self, node):
            body = []
            for stmt in node.body:
                if isinstance(stmt, ast.Assert):
                    one = ast.Module(body=[stmt], type_ignores=[])
                    rewrite_asserts(one, b"")
                    for n in ast.walk(one):   # the rewrite's own line ranges can be invalid
                        if hasattr(n, "lineno"):
                            n.lineno = n.end_lineno = stmt.lineno
                            n.col_offset = n.end_col_offset = 0
                    body += one.body
                else:
                    body.append(stmt)
            node.body = body
            return node
    get_ipython().ast_transformers.append(ExplainAsserts())
_explain_asserts()
del _explain_asserts
"""

KINDS = ("check", "lab", "refuses", "anchor", "stopped", "error")


@dataclass
class Break:
    notebook: str
    cell: int
    title: str
    kind: str
    detail: str
    code: str    # the cell's first line, to find it

    def line(self) -> str:
        return f"  cell {self.cell:>3} · “{self.title}” · {self.kind}: {self.detail}"


def _first_lines(text: str, n: int = 3, width: int = 160) -> str:
    rows = [r.rstrip() for r in str(text).strip().split("\n") if r.strip()]
    rows = [r if len(r) <= width else r[: width - 1] + "…" for r in rows[:n]]
    return " ⏎ ".join(rows)


def classify(nb, index: int, lab: bool) -> Break | None:
    """The break in cell `index` of an executed notebook, or None if it ran clean."""
    cell = nb.cells[index]
    if cell.cell_type != "code":
        return None
    err = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)
    if err is None:
        return None
    ename, evalue = err.get("ename", ""), err.get("evalue", "")
    is_check = "check" in nbs.tags(cell)
    if ename == "ClaimFailed":
        kind, detail = "refuses", _first_lines(evalue, 1)
    elif ename == "LookupError" and evalue.startswith("show_source:"):
        kind, detail = "anchor", _first_lines(evalue, 1)
    elif is_check and ename == "AssertionError" and lab and ".check(" in cell.source:
        verdict = re.search(r"✗ Not yet: .*?(?=\\n|\n|$)", evalue)
        kind = "lab"
        detail = ("its own check rejects the solution: " +
                  (verdict.group(0)[:240] if verdict else _first_lines(evalue)))
    elif is_check and ename == "AssertionError":
        kind, detail = "check", _first_lines(evalue) or "assertion failed"
    else:
        kind = "error"
        detail = f"{ename}: {_first_lines(evalue, 1)}" if evalue else ename
        if is_check:
            detail = "check cell raised " + detail
    first = next((r for r in cell.source.split("\n") if r.strip()), "")
    return Break("", index, nbs.title_at(nb, index), kind, detail, first[:100])


def breaks_in(path: Path, nb, stopped: str | None = None, at: int = 0) -> list[Break]:
    """Every broken cell of an executed notebook, in order; `stopped`: why the run ended early,
    in cell `at`."""
    lab = bool(re.match(r"[JL]\d", path.stem))
    out = []
    for i in range(len(nb.cells)):
        b = classify(nb, i, lab)
        if b is not None:
            b.notebook = paths.short(path)
            out.append(b)
    if stopped:
        out = [b for b in out if b.cell != at]
        first = next((r for r in nb.cells[at].source.split("\n") if r.strip()), "")
        out.append(Break(paths.short(path), at, nbs.title_at(nb, at), "stopped",
                         _first_lines(stopped, 1), first[:100]))
        out.sort(key=lambda b: b.cell)
    return out


# --------------------------------------------------------------------------- inside the env

def inside(notebooks: list[Path], out: Path) -> None:
    """Run in the interpreter under test: execute every notebook, write the breaks as JSON."""
    import jax
    import nbformat

    from .builder import execute
    results = execute.run_many([(p, None) for p in notebooks], allow_errors=True, preamble=PREAMBLE)
    report = {"jax": jax.__version__, "python": sys.version.split()[0], "notebooks": []}
    for p, (res, text) in zip(notebooks, results):
        nb = nbformat.reads(text, as_version=4)
        report["notebooks"].append({
            "path": paths.short(p), "cells": len(nb.cells), "seconds": round(res.seconds, 1),
            "breaks": [asdict(b) for b in breaks_in(
                p, nb, res.stopped or None, res.failure.cell if res.failure else 0)]})
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


# --------------------------------------------------------------------------- the side env

def _run(cmd: list[str], what: str, **kw) -> None:
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        lines = [ln for ln in (p.stderr + p.stdout).split("\n")
                 if ln.strip() and "is ignored: it is neither" not in ln]
        why = next((ln for ln in lines if ln.startswith(("ERROR", "error:"))),
                   lines[-1] if lines else "")
        raise errors.KitError(f"{what}: {why.strip()[:300]}")


def side_env(version: str, base: str = sys.executable) -> Path:
    """The Python of a venv with jax==version, jaxlib==version and the rest of the lock."""
    from .lockfile import LOCK
    if not _VERSION.match(version):
        raise errors.KitError(f"{version!r} is not a JAX version (like 0.10.2)")
    home = DRIFT / f"jax-{version}"
    py = home / "venv" / "bin" / "python"
    rest = [ln for ln in _blocks(LOCK.read_text()) if not _JAX_PIN.match(ln)]
    base_version = subprocess.run([base, "-c", "import sys; print(sys.version.split()[0])"],
                                  capture_output=True, text=True).stdout.strip()
    want = hashlib.sha256("\n".join(rest + [version, base_version]).encode()).hexdigest()
    stamp = home / ".installed"
    if stamp.exists() and stamp.read_text() == want and py.exists():
        return py
    shutil.rmtree(home, ignore_errors=True)   # ours alone: a half-made one from an earlier run
    home.mkdir(parents=True)
    print(f"drift: making a side environment with JAX {version} in {paths.short(home)}/ "
          f"(Python {base_version}; a few minutes, once)", file=sys.stderr)
    uv = [str(_uv()), "pip", "install", "-q", "--compile-bytecode", "--python", str(py)]
    try:
        _run([base, "-m", "venv", "--without-pip", str(home / "venv")],
             "drift: cannot make a venv")
        req = home / "lock-without-jax.txt"
        req.write_text("\n".join(rest) + "\n")
        _run(uv + ["--require-hashes", "--no-deps", "-r", str(req)],
             "drift: the lock does not install")
        _run(uv + [f"jax=={version}", f"jaxlib=={version}"],
             f"drift: jax=={version} and jaxlib=={version} do not install on Python "
             f"{base_version}")
    except BaseException:
        shutil.rmtree(home, ignore_errors=True)
        raise
    stamp.write_text(want)
    return py


def _uv() -> Path:
    """The lock's uv, beside this Python (scripts/setup installs it), or one on PATH."""
    here = Path(sys.executable).with_name("uv")
    found = here if here.exists() else shutil.which("uv")
    if not found:
        raise errors.KitError("drift: no uv beside this Python or on PATH (scripts/setup installs "
                              "the lock's)")
    return Path(found)


def _blocks(lock: str) -> list[str]:
    """The lock's requirements, one string each (a requirement and its hash lines)."""
    out: list[str] = []
    for line in lock.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith((" ", "\t")) and out:
            out[-1] += "\n" + line
        else:
            out.append(line)
    return out


def _differs(py: Path) -> list[str]:
    """What the side env has that the lock does not say (pip may move jax's dependencies)."""
    code = ("import json; from workshop.tools import lockfile; "
            "print(json.dumps(lockfile.mismatches()))")
    p = subprocess.run([str(py), "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(paths.ROOT)})
    try:
        return [m for m in json.loads(p.stdout) if not m.startswith(("jax:", "jaxlib:"))]
    except json.JSONDecodeError:
        return []


# --------------------------------------------------------------------------- the command

def render(report: dict, differs: list[str]) -> str:
    books = report["notebooks"]
    broken = [b for nb in books for b in nb["breaks"]]
    head = (f"drift: JAX {report['jax']} on Python {report['python']}: {len(books)} notebook(s), "
            + (f"{len(broken)} cell(s) broke in {sum(bool(nb['breaks']) for nb in books)}"
               if broken else "nothing broke"))
    out = [head]
    if differs:
        out.append("  (the side environment differs from the lock: " + "; ".join(differs[:6])
                   + (" …" if len(differs) > 6 else "") + ")")
    for nb in books:
        if nb["breaks"]:
            out.append(f"{nb['path']} ({len(nb['breaks'])} of {nb['cells']} cells)")
            out += [Break(**b).line() for b in nb["breaks"]]
    if broken:
        counts = {k: sum(b["kind"] == k for b in broken) for k in KINDS}
        out.append("by kind: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
    return "\n".join(out)


def main(version: str | None, python: str | None, names: list[str],
         report_dir: Path = DRIFT) -> int:
    notebooks = nbs.select(names)
    for p in notebooks:
        nbs.read(p)   # a corrupt notebook is named before anything is installed
    if python:
        py = Path(python)
        try:
            works = subprocess.run([str(py), "-c", "import jax, nbclient"],
                                   capture_output=True, timeout=120).returncode == 0
        except OSError:
            works = False
        if not works:
            raise errors.KitError(f"{python} is not a Python with jax and nbclient installed")
    elif version:
        py = side_env(version)
    else:
        raise errors.KitError("name a JAX version (drift 0.10.2) or an interpreter (--python PATH)")
    report_dir.mkdir(parents=True, exist_ok=True)
    tmp = report_dir / f".report-{os.getpid()}.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(paths.ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))}
    print(f"drift: running {len(notebooks)} notebook(s) to the end with {py}", file=sys.stderr)
    try:
        p = subprocess.run([str(py), "-m", "workshop.tools.drift", str(tmp), *map(str, notebooks)],
                           env=env, cwd=paths.ROOT)
        if p.returncode != 0 or not tmp.exists():
            raise errors.KitError(f"the run in {py} failed (exit {p.returncode})")
        report = json.loads(tmp.read_text(encoding="utf-8"))
    finally:
        tmp.unlink(missing_ok=True)
    if version and report["jax"] != version:
        raise errors.KitError(f"asked for JAX {version}, but {py} has JAX {report['jax']}")
    text = render(report, _differs(py))
    name = f"jax-{report['jax']}"
    (report_dir / f"{name}.md").write_text(text + "\n", encoding="utf-8")
    as_json = json.dumps(report, indent=1, ensure_ascii=False) + "\n"
    (report_dir / f"{name}.json").write_text(as_json, encoding="utf-8")
    print(text)
    print(f"drift: report in {paths.short(report_dir / (name + '.md'))}")
    return 1 if any(nb["breaks"] for nb in report["notebooks"]) else 0


if __name__ == "__main__":   # the run inside the environment under test
    inside([Path(a) for a in sys.argv[2:]], Path(sys.argv[1]))
