"""Where a deck can be cut when the presenter is behind, and what it can add when ahead: each
deck's `metadata.workshop.pacing`, resolved against the presenter's plan (`rehearse.plan`).

    "pacing": {"cut":    [{"from": "<talk slide title>", "to": "<a later talk slide title>"}],
               "expand": [{"section": "<appendix section title>"}]}

Titles, not numbers, so that the points follow their slides when slides move (markdown marks
do not count: "Station 1: `.trace()`" and "Station 1: .trace()" are the same title). Minutes
are never stored: a cut saves the planned seconds of the slides from `from` up to (not
including) `to`; an expansion adds its section's estimated seconds; both move with the notes.

A cut must not break the slides after it. Every section runs alone after the setup cell (the
notebook tests run each one so), so a cut that ends where a section starts breaks nothing; a cut
that ends inside a section must bind nothing that the rest of that section's cells read
(`breaks`; the cells the slideshow runs, not the hidden checks, which run in the build only).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...config import PACING_THRESHOLD
from .. import notebooks as nbs
from .. import talk


@dataclass
class Cut:
    start: int        # 0-based index of the first slide skipped (the plan's, the page's)
    stop: int         # the slide to skip to
    saves: float      # seconds
    frm: str
    to: str

    @property
    def text(self) -> str:
        return f"at “{self.frm}”, skip to “{self.to}” (saves {minutes(self.saves)} min)"


@dataclass
class Expand:
    at: int           # 0-based index of the section's first slide
    adds: float       # seconds
    section: str

    @property
    def text(self) -> str:
        return f"bring in appendix “{self.section}” (+{minutes(self.adds)} min)"


def minutes(seconds: float) -> int:
    """Whole minutes, at least 1: a point worth naming saves or adds something."""
    return max(1, round(seconds / 60))


def declared(nb) -> dict:
    p = nb.metadata.get("workshop", {}).get("pacing") or {}
    return {"cut": list(p.get("cut") or []), "expand": list(p.get("expand") or [])}


def _same(a: str, b: str) -> bool:
    return nbs.plain(a or "").strip() == nbs.plain(b or "").strip()


def _find(slides, title: str) -> list[int]:
    return [i for i, s in enumerate(slides) if not s.appendix and _same(s.title, title)]


def resolve(nb, slides) -> tuple[list[Cut], list[Expand], list[str]]:
    """The deck's cuts and expansions against `slides` (rehearse.plan(nb)), and one line for
    each that does not resolve (those are left out)."""
    out_c, out_e, bad = [], [], []
    for c in declared(nb)["cut"]:
        frm, to = _find(slides, c.get("from")), _find(slides, c.get("to"))
        for end, where in (("from", frm), ("to", to)):
            if len(where) != 1:
                bad.append(f"cut {end} “{c.get(end)}”: " + ("no talk-path slide has that title"
                           if not where else f"{len(where)} talk-path slides have that title"))
        if len(frm) == 1 and len(to) == 1:
            i, j = frm[0], to[0]
            if j <= i:
                bad.append(f"cut from “{c['from']}” to “{c['to']}”: `to` must come after `from`")
                continue
            out_c.append(Cut(i, j, sum(s.seconds for s in slides[i:j]),
                             nbs.plain(slides[i].title), nbs.plain(slides[j].title)))
    for e in declared(nb)["expand"]:
        at = [i for i, s in enumerate(slides) if s.appendix and _same(s.section, e.get("section"))]
        titles = [s.title for s in talk.appendix_sections(nb)[1:]]
        if not at or not any(_same(t, e.get("section")) for t in titles):
            bad.append(f"expand “{e.get('section')}”: no appendix section has that title")
            continue
        out_e.append(Expand(at[0], sum(slides[k].seconds for k in at),
                            nbs.plain(slides[at[0]].section)))
    return out_c, out_e, bad


def page_keys(nb, slides) -> dict:
    """What rehearse.page_plan adds for the notes window (docs: PACING-INTERFACE)."""
    cuts, adds, _ = resolve(nb, slides)
    return {"cut": [{"from": c.start, "to": c.stop, "saves": round(c.saves), "text": c.text}
                    for c in cuts],
            "expand": [{"at": e.at, "adds": round(e.adds), "text": e.text} for e in adds],
            "threshold": PACING_THRESHOLD}


# ---- a cut must not break what follows it

def _bound_and_read(source: str) -> tuple[set[str], set[str], set[str]]:
    """The names a cell binds, those it binds by import, and those it reads."""
    names = nbs.code_names(source)
    return names.binds, names.imports, names.reads


def _cells(nb, slides, a: int, b: int):
    """The code cells the slideshow runs on slides a to b (the hidden checks run in the
    build, never on stage)."""
    return [c for s in slides[a:b] for c in nb.cells[s.cells[0]:s.cells[1]]
            if talk.is_visible_code(c)]


def breaks(nb, slides, cut: Cut) -> list[str]:
    """The names the rest of the cut's last section reads that only the skipped slides bind
    (an import the section made before the cut is the same module either way). Empty when
    `to` starts a section: sections run alone after the setup cell."""
    to = slides[cut.stop]
    if to.section != slides[cut.stop - 1].section:
        return []
    before = set()
    for c in _cells(nb, slides, 0, cut.start):
        before |= _bound_and_read(c.source)[1]
    pending = set()
    for c in _cells(nb, slides, cut.start, cut.stop):
        bound, imported, _ = _bound_and_read(c.source)
        pending |= bound - (imported & before)
    rest = [k for k in range(cut.stop, len(slides)) if slides[k].section == to.section]
    out = []
    for c in _cells(nb, slides, cut.stop, rest[-1] + 1):
        bound, _, read = _bound_and_read(c.source)
        out += sorted((read - bound) & pending)
        pending -= bound
    return sorted(set(out))


def problems(nb, slides) -> list[str]:
    """Every way the deck's pacing is wrong, one line each: a title that does not resolve, a
    `to` not after its `from`, a cut that takes the closing slides or breaks a later slide."""
    cuts, _, bad = resolve(nb, slides)
    for c in cuts:
        if slides[c.start].section in ("Key points", "Title and setup") or c.start == 0:
            bad.append(f"cut from “{c.frm}”: the title slide and the key points are never cut")
        names = breaks(nb, slides, c)
        if names:
            bad.append(f"cut from “{c.frm}” to “{c.to}” skips what the rest of its section "
                       f"reads: {', '.join(names)} (end the cut where a section starts)")
    return bad
