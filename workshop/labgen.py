"""Attendee copies of the labs, generated from the single source in exercises/solutions/.

nbgrader's markers: the lines between `### BEGIN SOLUTION` and `### END SOLUTION` become
`raise NotImplementedError()` at the marker's indentation; cells tagged `check` (the solution's
own assertions) are left out. Outputs and execution counts are never committed.
"""
from __future__ import annotations

import copy
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
                tmp = dst.with_name(dst.name + ".tmp")
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(dst)
    return stale
