"""The build report: one row per notebook, written as Markdown and JSON under build/."""
from __future__ import annotations

import json
from dataclasses import asdict

from ...config import CELL_BUDGET, DECK_BUDGET, TALK_CELL_BUDGET
from .. import paths
from .execute import Result


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
    from ...config import MIN_SCALE
    return [f"{r.name}: slide {page} printed at {k:.0%}"
            + (f" (below {MIN_SCALE:.0%}: split it)" if k < MIN_SCALE else "")
            for r in results for page, k in r.shrunk]


def talk_time(decks: list) -> str:
    """Each deck's talk path against its minutes by the kit's estimate (workshop.tools.talk), then a
    table per deck a presenter can plan with: each talk section, its minutes and when it starts."""
    from .. import notebooks as nbs
    from .. import talk
    if not decks:
        return ""
    rows = ["| deck | minutes | talk estimate | talk slides | appendix sections | fits |",
            "|---|---:|---:|---:|---:|---|"]
    per = []
    for path in decks:
        nb = nbs.read(path)
        est = talk.talk_estimates(nb)
        total = sum(e.minutes for e in est)
        mins = nb.metadata.get("workshop", {}).get("minutes")
        if not mins:    # a speaker's copy may state no minutes: its estimate, nothing to fit
            rows.append(f"| {path.stem} | | {total:.1f} | {sum(e.slides for e in est)} "
                        f"| {max(len(talk.appendix_sections(nb)) - 1, 0)} | no minutes stated |")
            continue
        rows.append(f"| {path.stem} | {mins} | {total:.1f} | {sum(e.slides for e in est)} "
                    f"| {max(len(talk.appendix_sections(nb)) - 1, 0)} "
                    f"| {'yes' if total <= mins else 'NO: over by ' + f'{total - mins:.1f}'} |")
        part = [f"\n{path.stem} ({mins} minutes):\n",
                "| section | words | code cells | slides | minutes | starts at |",
                "|---|---:|---:|---:|---:|---:|"]
        at = 0.0
        for e in est:
            part.append(f"| {e.title} | {e.words} | {e.code_cells} | {e.slides} "
                        f"| {e.minutes:.1f} | {at:.0f} |")
            at += e.minutes
        per.append("\n".join(part))
    return ("\n\nTalk time (notes at 130 words a minute × 1.2, 25 s a visible code cell, 5 s a "
            "slide, +15% for questions; the talk path only):\n\n" + "\n".join(rows)
            + "\n" + "\n".join(per))


def slow_on_stage(results: list[Result], decks: list) -> list[str]:
    """Talk-path cells (not the setup cell) over TALK_CELL_BUDGET: a silent pause on
    stage. Times from this run, or from the deck's last executed copy when it was current."""
    from .. import notebooks as nbs
    from .. import talk
    from .execute import cell_seconds
    from .handouts import executed_path
    out = []
    by_name = {r.name: r for r in results}
    for path in decks:
        nb = nbs.read(path)
        r = by_name.get(paths.short(path))
        times = r.times if r and r.times else []
        if not times:
            copy = executed_path(path)
            if copy.exists():
                times = [cell_seconds(c) for c in nbs.read(copy).cells]
        stop = talk.talk_stop(nb)
        for i, s in enumerate(times[:stop]):
            cell = nb.cells[i] if i < len(nb.cells) else None
            if (cell is not None and s > TALK_CELL_BUDGET and talk.is_visible_code(cell)
                    and "setup" not in nbs.tags(cell)):
                out.append(f"{path.stem}: cell {i} “{nbs.title_at(nb, i)}” took {s:.2f} s "
                           f"(on stage: {TALK_CELL_BUDGET} s)")
    return out


def write(results: list[Result], notes: list[str], folder, decks: list = ()) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    text = table(results)
    if notes:
        text += ("\n\nOver budget, or shrunk to fit a page:\n"
                 + "\n".join(f"- {n}" for n in notes))
    stage = slow_on_stage(results, list(decks))
    if stage:
        text += ("\n\nTalk-path cells over 1.5 s (a silent pause on stage: warm it in the "
                 "section's setup, precompute, or move it to the appendix):\n"
                 + "\n".join(f"- {n}" for n in stage))
    text += talk_time(list(decks))
    paths.write_atomic(folder / "report.md", (text + "\n").encode())
    paths.write_atomic(folder / "report.json",
                       (json.dumps([asdict(r) for r in results], indent=1) + "\n").encode())
    return text
