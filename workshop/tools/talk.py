"""A deck as a talk: its talk path and its appendix, the talk-time estimate, the presenter's plan,
and what of the notes is for the presenter only.

- A section whose `## ` slide cell has `metadata.workshop.appendix = true` is appendix; the
  appendix comes after the closing `## Key points` section, and opens with a divider section
  (`## Appendix…`, itself marked). Everything before is the talk path.
- The talk-time estimate of a stretch of cells: the words of its notes at 130 words a minute,
  × 1.2 (slides are explained, not read), plus 25 s for each visible code cell, plus 5 s for each
  slide, all + 15 % for questions. Notes tagged `presenter` (the plan itself) are not spoken and
  not counted.
- For the presenter only, and left out of the attendee's reading handout: a notes cell tagged
  `presenter`, and any paragraph of a notes cell that starts with `→` (where to point, what to
  click, what is optional, timings).
- For the reader only: a markdown cell of slide type `skip` tagged `reading`, the slide's notes
  that would not fit a glance. The slideshow and its notes window never show it, it is not
  spoken (not counted), and the reading handout prints it in the slide's notes box.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..config import (  # the estimate's rates, each with its reason
    CODE_CELL_S,
    EXPLAIN,
    QUESTIONS,
    SLIDE_S,
    WORDS_PER_MINUTE,
)
from . import notebooks as nbs

STAGE = "→"          # a notes paragraph for the presenter only starts with this
PLAN_HEAD = "→ Plan:"  # the first line of the generated plan cell
PRESENTER = "presenter"
READING = "reading"   # a skip cell of notes for the reader only


def is_appendix_cell(cell) -> bool:
    return bool(cell.get("metadata", {}).get("workshop", {}).get("appendix"))


def is_appendix(nb, section: nbs.Section) -> bool:
    return is_appendix_cell(nb.cells[section.start])


def talk_sections(nb) -> list[nbs.Section]:
    return [s for s in nbs.sections(nb) if not is_appendix(nb, s)]


def appendix_sections(nb) -> list[nbs.Section]:
    return [s for s in nbs.sections(nb) if is_appendix(nb, s)]


def talk_stop(nb) -> int:
    """Index one past the talk path's last cell (where the appendix divider starts)."""
    app = appendix_sections(nb)
    return app[0].start if app else len(nb.cells)


def spoken_words(cell) -> int:
    if nbs.slide_type(cell) != "notes" or PRESENTER in nbs.tags(cell):
        return 0
    return len(re.findall(r"[\w’'-]+", cell.source))


def is_visible_code(cell) -> bool:
    return cell.cell_type == "code" and nbs.slide_type(cell) not in ("skip", "notes")


@dataclass
class Estimate:
    title: str
    words: int
    code_cells: int
    slides: int

    @property
    def minutes(self) -> float:
        speak = self.words / WORDS_PER_MINUTE * EXPLAIN
        return (speak + (self.code_cells * CODE_CELL_S + self.slides * SLIDE_S) / 60) \
            * (1 + QUESTIONS)


def estimate(title: str, cells) -> Estimate:
    return Estimate(title, sum(spoken_words(c) for c in cells),
                    sum(is_visible_code(c) for c in cells),
                    sum(nbs.slide_type(c) in ("slide", "subslide") for c in cells))


def talk_estimates(nb) -> list[Estimate]:
    """One estimate per stretch of the talk path: the title slide (and setup), then each talk
    section."""
    secs = talk_sections(nb)
    first = secs[0].start if secs else len(nb.cells)
    out = [estimate("Title and setup", nb.cells[:first])]
    out += [estimate(s.title, nb.cells[s.start:s.stop]) for s in secs]
    return out


def talk_minutes(nb) -> float:
    return sum(e.minutes for e in talk_estimates(nb))


def over_minutes(nb) -> str | None:
    """Why the deck's talk path does not fit its stated minutes, or None when it does."""
    est = talk_estimates(nb)
    total, mins = sum(e.minutes for e in est), nb.metadata.workshop.minutes
    if total <= mins:
        return None
    worst = max(est, key=lambda e: e.minutes)
    return (f"the talk path is about {total:.1f} minutes by the kit's estimate, over the "
            f"deck's {mins} (longest: “{worst.title}”, {worst.minutes:.1f}): move depth to "
            "the appendix")


def plan_text(nb) -> str:
    """The presenter's plan for the title slide's notes: the deck's minutes and each talk
    section's estimate, then the appendix sections by name. Written by `workshop fmt`; a
    structure test fails when it is stale."""
    w = nb.metadata.workshop
    est = talk_estimates(nb)
    lines = [f"{PLAN_HEAD} {w.minutes} minutes; the talk path is about "
             f"{sum(e.minutes for e in est):.0f} by the kit's estimate (notes at "
             f"{WORDS_PER_MINUTE} words a minute × {EXPLAIN}, {CODE_CELL_S} s a code cell, "
             f"{SLIDE_S} s a slide, +{QUESTIONS:.0%} for questions).", "",
             "| section | min | at |", "|---|---:|---:|"]
    at = 0.0
    for e in est:
        lines.append(f"| {e.title} | {e.minutes:.0f} | {at:.0f} |")
        at += e.minutes
    app = [s.title for s in appendix_sections(nb)[1:]]
    if app:
        lines += ["", "Appendix (not on stage; printed in the reading handout): "
                  + "; ".join(app) + "."]
    return "\n".join(lines)


def plan_cell_index(nb) -> int | None:
    for i, c in enumerate(nb.cells[:6]):
        if nbs.slide_type(c) == "notes" and c.source.startswith(PLAN_HEAD):
            return i
    return None


def with_plan(nb) -> bool:
    """Write the plan into the deck's plan cell (a presenter-only notes cell after the title
    slide's notes, made if missing). Returns whether anything changed."""
    import nbformat
    if "workshop" not in nb.metadata or "rise" not in nb.metadata:
        return False
    text = plan_text(nb)
    i = plan_cell_index(nb)
    if i is None:
        s = nbs.setup_index(nb)
        j = s + 1
        while j < len(nb.cells) and nbs.slide_type(nb.cells[j]) == "notes":
            j += 1
        cell = nbformat.v4.new_markdown_cell(text)
        cell.metadata = {"slideshow": {"slide_type": "notes"}, "tags": [PRESENTER]}
        cell.pop("id", None)
        nb.cells.insert(j, cell)
        if nb.nbformat_minor >= 5:
            import uuid
            cell["id"] = uuid.uuid4().hex[:8]
        return True
    if nb.cells[i].source == text:
        return False
    nb.cells[i].source = text
    return True


def reader_notes(text: str) -> str:
    """A notes cell as the attendee's reading handout prints it: without the paragraphs for the
    presenter only."""
    paras = re.split(r"\n\s*\n", text)
    return "\n\n".join(p for p in paras if not p.lstrip().startswith(STAGE)).strip()


def problems(nb) -> list[str]:
    """The talk's shape, one line each: the appendix after the closing slide, behind a
    divider; no talk section after the appendix starts."""
    out = []
    secs = nbs.sections(nb)
    app = [i for i, s in enumerate(secs) if is_appendix(nb, s)]
    if not app:
        return out
    first = app[0]
    if not secs[first].title.lower().startswith("appendix"):
        out.append(f"the appendix starts at “{secs[first].title}”: it needs a divider section "
                   "(`## Appendix…`) first")
    if first == 0 or secs[first - 1].title != "Key points":
        out.append("the appendix must come right after the closing `## Key points` section")
    for s in secs[first:]:
        if not is_appendix(nb, s):
            out.append(f"talk section “{s.title}” after the appendix divider "
                       "(mark it appendix or move it up)")
    for i, c in enumerate(nb.cells):
        if is_appendix_cell(c) and not (nbs.slide_type(c) == "slide"
                                        and c.source.lstrip().startswith("## ")):
            out.append(f"cell {i} is marked appendix but does not start a section")
    return out
