"""`python -m workshop compose OUT.ipynb --title "…" 01:"Section" 02:"Section" …`: a talk made
of sections of several decks.

It writes a deck: a generated title slide (the title, the sum of the sections' estimated
minutes, each section's objective: the bold sentence its first note opens with), the setup cell,
the presenter's plan (`talk.with_plan`), the chosen sections in order (copied whole; an appendix
section becomes talk), a closing `## Key points` slide naming where each section came
from, every cell with a fresh id; `rise.css` and the stylesheet RISE asks for beside it. Then it
prints the talk-time estimate and lists every markdown or notes cell that refers to a deck, a
lab, a phase or a slide outside the talk, for the speaker to fix. The composed deck runs,
presents and prints like any deck: `scripts/build OUT.ipynb`, `scripts/present OUT.ipynb`.
"""
from __future__ import annotations

import copy
import math
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from .. import errors, paths, talk
from .. import notebooks as nbs

# What a note in a deck says about the rest of the course or the deck around it: stale once
# the section stands in another talk.
REFERENCE = re.compile(
    r"\b(?:decks?\s+0?[1-9]\d?(?:\s*(?:,|and|or|–|-)\s*0?[1-9]\d?)*"
    r"|labs?\s+[JL]\d+|[JL][1-9]\b(?=[^\w]*(?:lab|task|'s|’s|\)|,|\.))"
    r"|phases?\s+[1-9]"
    r"|(?:next|previous|last|following|earlier|later|coming)\s+(?:slides?|sections?|decks?|labs?)"
    r"|slides?\s+(?:on|ago|back|later|earlier|before|after)\b"
    r"|(?:one|two|three|four|five|a few|several)\s+slides?"
    r"|(?:we|you)\s+(?:saw|have seen|met|built|wrote|read)\b"
    r"|as\s+(?:before|above|below)|earlier\s+(?:today|in)|later\s+(?:today|in))",
    re.I)


@dataclass
class Pick:
    deck: Path
    nb: object
    section: nbs.Section
    spec: str


def parse(specs: list[str]) -> list[Pick]:
    """`NN:Title` pairs; the title exact or a unique prefix (case ignored) of a section's."""
    picks, seen = [], {}
    decks = nbs.decks()
    read = {}
    for spec in specs:
        if ":" not in spec:
            raise errors.KitError(f"{spec!r}: name a section as DECK:TITLE, e.g. "
                                  "01:\"The four stations of a jitted call\"")
        key, title = (x.strip() for x in spec.split(":", 1))
        path = nbs.select([key], among=decks, what="deck")[0]
        nb = read.setdefault(path, nbs.read(path))
        secs = nbs.sections(nb)
        low = title.lower()
        hits = [s for s in secs if s.title.lower() == low] or \
               [s for s in secs if s.title.lower().startswith(low)] if low else []
        if len(hits) != 1:
            why = "matches several sections" if hits else "is not a section"
            names = "; ".join(f"“{s.title}”" for s in secs)
            raise errors.KitError(f"{spec!r}: {title!r} {why} of {path.stem} (its sections: "
                                  f"{names})")
        sec = hits[0]
        app = talk.appendix_sections(nb)
        if sec.title == "Key points" or (app and sec.start == app[0].start):
            raise errors.KitError(f"{spec!r}: “{sec.title}” is {path.stem}'s own closing or "
                                  "divider; the talk gets a closing slide of its own")
        if (path, sec.start) in seen:
            raise errors.KitError(f"{spec!r}: {path.stem} “{sec.title}” is named twice (also as "
                                  f"{seen[(path, sec.start)]!r})")
        seen[(path, sec.start)] = spec
        picks.append(Pick(path, nb, sec, spec))
    return picks


def lead(nb, section: nbs.Section) -> str:
    """The section's objective: the bold sentence its first notes cell opens with (every note
    starts with the sentence to say), else its title."""
    for c in nb.cells[section.start:section.stop]:
        if nbs.slide_type(c) == "notes" and talk.PRESENTER not in nbs.tags(c):
            m = re.match(r"\s*\*\*(.+?)\*\*", c.source, re.S)
            if m:
                return " ".join(m.group(1).split())
            break
    return section.title


def _md(source: str, slide: str, tags: tuple[str, ...] = ()):
    import nbformat
    c = nbformat.v4.new_markdown_cell(source)
    c.metadata = {"slideshow": {"slide_type": slide}}
    if tags:
        c.metadata["tags"] = list(tags)
    return c


def compose(title: str, picks: list[Pick]):
    import nbformat
    first = picks[0].nb
    nb = nbformat.v4.new_notebook()
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = copy.deepcopy(first.metadata)
    nb.metadata.rise.footer = (f"<span class='workshop-footer'>JAX Core, From the Inside · "
                               f"{title}</span>")
    objectives = [lead(p.nb, p.section) for p in picks]
    origin = lambda p: f"deck {p.deck.stem[:2]} {p.nb.metadata.workshop.title}"
    setup = first.cells[nbs.setup_index(first)]
    body = []
    for p in picks:
        part = [copy.deepcopy(c) for c in p.nb.cells[p.section.start:p.section.stop]]
        part[0].metadata.get("workshop", {}).pop("appendix", None)
        if "workshop" in part[0].metadata and not part[0].metadata.workshop:
            del part[0].metadata["workshop"]
        body += part
    closing = [
        _md("## Key points\n\n" + "\n".join(
            f"- {p.section.title}: the whole story in {origin(p)}" for p in picks), "slide"),
        _md("**What to take away: " + "; ".join(o.rstrip(".") for o in objectives) + ".**\n\n"
            "→ The decks these sections come from, their labs and the reading handouts are in "
            "the workshop kit.", "notes")]
    est_body = talk.estimate("", body + closing).minutes
    # the title slide's own share, estimated with a first draft of itself
    minutes = 0
    for _ in range(3):
        head = [_md(f"# {title}\n\n**JAX Core, From the Inside** · a talk · {minutes} minutes"
                    "\n\n" + "\n".join(f"- {o}" for o in objectives), "slide"),
                copy.deepcopy(setup),
                _md(f"**{title}: {len(picks)} parts, each one live on the pinned JAX.**\n\n"
                    "→ Run the setup cell first, always, and again after any kernel restart. "
                    "Check the banner: 8 CPU devices.", "notes")]
        total = talk.estimate("", head).minutes + est_body
        if math.ceil(total) == minutes:
            break
        minutes = math.ceil(total)
    cells = head + body + closing
    for c in cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
        c["id"] = uuid.uuid4().hex[:8]
    nb.cells = cells
    nb.metadata.workshop_generated = [c["id"] for c in head + closing]
    nb.metadata.workshop = {"title": title, "minutes": minutes, "objectives": objectives,
                            "key_points": [p.section.title for p in picks],
                            "sections": [f"{p.deck.stem[:2]}:{p.section.title}" for p in picks]}
    generated = set(nb.metadata.pop("workshop_generated"))
    talk.with_plan(nb)
    return nb, generated


def references(nb, generated: set[str] = frozenset()) -> list[str]:
    """Each markdown or notes cell that points outside the talk, one line each: the slide it is
    on and the words. Cells compose wrote itself (ids in `generated`) are not looked at."""
    out, slide, title = [], 0, ""
    for c in nb.cells:
        kind = nbs.slide_type(c)
        if kind in ("slide", "subslide"):
            slide += 1
            title = nbs.heading(c) or title
        if c.cell_type != "markdown" or talk.PRESENTER in nbs.tags(c) or c["id"] in generated:
            continue
        hits = []
        for m in REFERENCE.finditer(c.source):
            a, b = max(0, m.start() - 30), min(len(c.source), m.end() + 30)
            hits.append("…" + " ".join(c.source[a:b].split()) + "…")
        if hits:
            where = "notes" if kind == "notes" else "slide"
            out.append(f"slide {slide} “{title}” ({where}, cell {c['id']}): " + " | ".join(hits))
    return out


def main(out: str, title: str, specs: list[str], force: bool = False) -> int:
    path = Path(out)
    if path.suffix != ".ipynb":
        raise errors.KitError(f"{out}: the talk is a notebook; name it NAME.ipynb")
    if not title.strip():
        raise errors.KitError("--title is empty: give the talk a title")
    if path.exists() and not force:
        raise errors.KitError(f"{out} exists (pass --force to overwrite it)")
    picks = parse(specs)
    nb, generated = compose(title.strip(), picks)
    bad = talk.problems(nb) + nbs.audience_problems(nb)
    if bad:   # the sections come from checked decks: this is the kit's bug, not the user's
        raise RuntimeError("compose made a deck the kit rejects: " + "; ".join(bad))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbs.normalised(nb), encoding="utf-8")
    shutil.copy(paths.DECKS / "rise.css", path.parent / "rise.css")
    path.with_suffix(".css").write_text(
        f"/* {path.stem}: jupyterlab-rise asks for a stylesheet named after the deck; the "
        "styles are in rise.css beside it. */\n", encoding="utf-8")
    est = talk.talk_estimates(nb)
    slides = sum(nbs.slide_type(c) in ("slide", "subslide") for c in nb.cells)
    print(f"compose: wrote {out}: {len(picks)} sections, {slides} slides, {len(nb.cells)} "
          f"cells (fresh ids), with rise.css")
    print(f"compose: talk-time estimate {talk.talk_minutes(nb):.1f} minutes "
          f"(the title slide says {nb.metadata.workshop.minutes}):")
    for e, src in zip(est, ["(generated)"] + [p.deck.stem[:2] for p in picks] + ["(generated)"]):
        print(f"  {e.minutes:5.1f}  {e.title}  [{src}]")
    refs = references(nb, generated)
    if refs:
        print(f"compose: {len(refs)} cells refer to a deck, lab, phase or slide outside the "
              "talk; fix them before presenting:")
        for r in refs:
            print(f"  {r}")
    else:
        print("compose: no cell refers outside the talk")
    print(f"compose: run it with scripts/build {out}; present it with scripts/present {out}")
    return 0
