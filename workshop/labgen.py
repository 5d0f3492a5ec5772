"""Attendee copies of the labs, generated from the single source in exercises/solutions/.

nbgrader's markers: the lines between `### BEGIN SOLUTION` and `### END SOLUTION` become
`raise NotImplementedError()` at the marker's indentation; cells tagged `check` (the solution's
own assertions) are left out. Outputs and execution counts are never committed.

The solution code itself is written into the package (`workshop/labs/solutions.json`), so that
`qN.solution()` works from any install of it, a non-editable `pip install .` included.
"""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from . import notebooks as nbs

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def clear_solutions(source: str, where: str = "") -> str:
    out, inside = [], False
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise nbs.KitError(f"{where}: {BEGIN} inside another solution block")
            inside = True
            indent = re.match(r"\s*", line).group(0)
            out.append(f"{indent}raise NotImplementedError()")
        elif stripped == END:
            if not inside:
                raise nbs.KitError(f"{where}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise nbs.KitError(f"{where}: {BEGIN} without {END}")
    return "\n".join(out)


def attendee_copy(src: Path):
    nb = nbs.read(src)
    out = copy.deepcopy(nb)
    out.cells = []
    for i, cell in enumerate(nb.cells):
        if "check" in nbs.tags(cell):
            continue
        cell = copy.deepcopy(cell)
        if cell.cell_type == "code":
            cell.source = clear_solutions(cell.source, f"{nbs.short(src)} cell {i}")
        out.cells.append(cell)
    out.metadata.setdefault("workshop", {})["generated_from"] = nbs.short(src)
    return out


SOLUTIONS_JSON = nbs.ROOT / "workshop" / "labs" / "solutions.json"


def solution_blocks(src: Path) -> list[str]:
    """Each solution cell of a lab source, in order, without the markers: what
    `qN.solution()` prints for task N."""
    return ["\n".join(line for line in c.source.split("\n")
                      if line.strip() not in (BEGIN, END)).strip("\n")
            for c in nbs.read(src).cells if c.cell_type == "code" and BEGIN in c.source]


def solutions_text() -> str:
    data = {src.stem.split("-")[0]: solution_blocks(src) for src in nbs.lab_sources()}
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def target(src: Path) -> Path:
    return nbs.EXERCISES / src.name


def generate(check: bool = False) -> list[str]:
    """Write (or with check=True, compare) every attendee copy; returns the stale ones."""
    stale = []
    for src in nbs.lab_sources():
        text = nbs.normalised(attendee_copy(src))
        dst = target(src)
        if not dst.exists() or dst.read_text(encoding="utf-8") != text:
            stale.append(nbs.short(dst))
            if not check:
                _write(dst, text)
    text = solutions_text()
    if not SOLUTIONS_JSON.exists() or SOLUTIONS_JSON.read_text(encoding="utf-8") != text:
        stale.append(nbs.short(SOLUTIONS_JSON))
        if not check:
            _write(SOLUTIONS_JSON, text)
    return stale


def _write(dst: Path, text: str) -> None:
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(dst)
