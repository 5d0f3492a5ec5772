"""The build report: one row per notebook, written as Markdown and JSON under build/."""
from __future__ import annotations

import json
from dataclasses import asdict

from .execute import Result

CELL_BUDGET = 2.0    # seconds, on the 2-core machine, unless the cell is tagged `slow`
DECK_BUDGET = 30.0   # seconds for a whole deck


def table(results: list[Result]) -> str:
    rows = ["| notebook | cells | slowest cell after setup | s | seconds | pages | export s "
            "| status |", "|---|---:|---|---:|---:|---:|---:|---|"]
    for r in results:
        if r.status == "current":
            rows.append(f"| {r.name} | | | | | {r.pages} | | current: not rebuilt |")
            continue
        if r.status == "reused run":
            rows.append(f"| {r.name} | | | | | {r.pages} | {r.export_seconds:.1f} "
                        "| printed from its last run (same inputs) |")
            continue
        i, title, s = r.slowest
        status = "ok" if r.ok else f"FAILED at cell {r.failure.cell}"
        rows.append(f"| {r.name} | {r.cells} | {i} “{title}” | {s:.2f} | {r.seconds:.1f} "
                    f"| {r.pages or ''} | {r.export_seconds:.1f} | {status} |")
    return "\n".join(rows)


def over_budget(results: list[Result], exempt: dict[str, set[int]]) -> list[str]:
    """Cells over CELL_BUDGET (but the exempt ones: the setup cell, which imports JAX, and
    cells tagged `slow`) and notebooks over DECK_BUDGET."""
    notes = []
    for r in results:
        for i, s in enumerate(r.times):
            if s > CELL_BUDGET and i not in exempt.get(r.name, set()):
                notes.append(f"{r.name}: cell {i} took {s:.2f} s (budget {CELL_BUDGET} s)")
        if r.seconds > DECK_BUDGET:
            notes.append(f"{r.name}: {r.seconds:.1f} s in all (budget {DECK_BUDGET} s)")
    return notes


def shrunk(results: list[Result]) -> list[str]:
    """Slides the slides PDF printed smaller than the projector shows them (for the author:
    nothing on the page says so). Below MIN_SCALE the tests fail: split the slide."""
    from .handouts import MIN_SCALE
    return [f"{r.name}: slide {page} printed at {k:.0%}"
            + (f" (below {MIN_SCALE:.0%}: split it)" if k < MIN_SCALE else "")
            for r in results for page, k in r.shrunk]


def write(results: list[Result], notes: list[str], folder) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    text = table(results)
    if notes:
        text += ("\n\nOver budget, or shrunk to fit a page:\n"
                 + "\n".join(f"- {n}" for n in notes))
    _atomic(folder / "report.md", text + "\n")
    _atomic(folder / "report.json", json.dumps([asdict(r) for r in results], indent=1) + "\n")
    return text


def _atomic(path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
