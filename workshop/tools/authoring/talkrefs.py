"""What in a composed talk points outside it: a note written for its deck that names, or leans
on, a slide, a section or a name the talk does not have.

`compose` copies sections whole, so a reference inside one section always holds. What can break
is a reference across a section's edge; each kind is judged against where the talk puts things:

- another deck, lab or phase named ("deck 03", "lab J2", "Phase 4 of 6", "the lab", "this
  deck"), and the appendix ("(appendix)"): the talk has none of them, so always;
- the deck's map ("the map said"): unless the deck's first section, where its map is, comes
  earlier in the talk;
- a section or slide by name ("section “The counters”", "slides “A…” and “B”", "the
  counters section", "the station slide"): when no slide of that name is in the talk;
- a slide or section by position ("the next slide", "two slides on", "the last section"): when
  the slide that far away in the deck is not the one that far away in the talk;
- a look back or ahead ("we saw", "Bridge:", "so far"; "later today", "comes back to"): when the
  section next to this one in its deck, on that side, is not in the talk on that side;
- a name the section uses that an earlier section of its deck, not in the talk, introduced:
  a kit helper or value it imports (`probe`, `CHAIN`: the code shows it, the omitted section
  explained it), a JAX-internal name its notes say (`_pjit_lower`), or any name its code reads
  and never binds. Helpers that several decks use (`refuses`, `show_source`) explain
  themselves; the setup cell's names are everywhere.
"""
from __future__ import annotations

import builtins
import re
from collections import defaultdict

from .. import notebooks as nbs
from .. import talk

NUMBER = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "a few": 3, "few": 3,
          "several": 3}
_N = r"one|two|three|four|five|a few|few|several"
ELSEWHERE = re.compile(
    r"\b(?:decks?\s+0?[1-9]\d?(?:\s*(?:,|and|or|–|-)\s*0?[1-9]\d?)*"
    r"|labs?\s+[JL]\d+|[JL][1-9]\b(?=[^\w]*(?:lab|task|'s|’s|\)|,|\.))"
    r"|phases?\s+[1-9]|(?:the|this|next|previous|each|every)\s+(?:deck|lab)\b"
    r"|appendix)", re.I)
MAP = re.compile(r"\bthe map\b(?!['’]s)", re.I)
QUOTED = re.compile(r"\b(?:sections?|slides?)\s+((?:“[^”\n]+”(?:,\s*|\s+and\s+)?)+)", re.I)
BY_NAME = re.compile(r"\bthe\s+((?:[\w’'.-]+\s+){1,3}?)(section|slide)\b(?!\s+of\s+th)", re.I)
AHEAD = re.compile(rf"\bnext\s+(?:({_N})\s+)?slides?\b|\b({_N})\s+slides?\s+(?:on|later|ahead)\b",
                   re.I)
BEHIND = re.compile(rf"\b(?:previous|last)\s+slide\b(?!\s+of\s+th)"
                    rf"|\b({_N})\s+slides?\s+(?:back|ago|earlier|before)\b", re.I)
BACK = re.compile(r"\b(?:we|you)\s+(?:saw|have seen|met)\b|\bwe\s+(?:built|wrote|had)\b"
                  r"|\bwe have\b(?!\s+(?:to|not)\b)|\bas (?:before|above)\b"
                  r"|\bearlier (?:today|in)\b|\bso far\b|\bBridge:"
                  r"|^From\b[^.\n]*?\bto\b", re.I | re.M)     # the decks' bridge: "From A to B."
AHEAD_IN_DECK = re.compile(r"\blater (?:today|in the (?:deck|talk|day|workshop|course))\b"
                           r"|\bcoming up\b|\b(?:we|I)(?:'ll|’ll| will) (?:come back|return)\b",
                           re.I)
POSITION = {"next": 1, "following": 1, "last": -1, "previous": -1, "earlier": -1}
NOT_A_NAME = {"this", "that", "same", "first", "whole", "current", "one", "each", "every",
              "title", "other", "last", "next", "previous", "following", "earlier", "appendix"}
PRIVATE = re.compile(r"(?<![\w.])_[A-Za-z]\w*")
IPYTHON = {"display", "get_ipython", "In", "Out"}


class Talk:
    """A composed talk as the flagger reads it: its cells, and for each copied cell the part
    (index into `picks`) and the cell index in that part's deck it came from."""

    def __init__(self, nb, picks, origin: dict[str, tuple[int, int]]):
        self.nb, self.picks, self.origin = nb, picks, origin
        self.slides = []          # per talk slide: (part, deck cell index) or None
        self.slide_of = {}        # cell id -> index into self.slides
        for c in nb.cells:
            if nbs.slide_type(c) in ("slide", "subslide"):
                self.slides.append(origin.get(c["id"]))
            self.slide_of[c["id"]] = len(self.slides) - 1
        self.deck_slides = {id(p.nb): [i for i, c in enumerate(p.nb.cells)
                                       if nbs.slide_type(c) in ("slide", "subslide")]
                            for p in picks}

    def deck_of(self, part: int):
        return self.picks[part].deck

    def same_slide(self, a, b) -> bool:
        return a is not None and b is not None and (self.deck_of(a[0]), a[1]) == \
            (self.deck_of(b[0]), b[1])

    def moved(self, cell, offsets) -> bool:
        """Whether a slide `offsets` away from this cell's is not, in the talk, the slide that far
        away in its deck."""
        part, index = self.origin[cell["id"]]
        starts = self.deck_slides[id(self.picks[part].nb)]
        here = max(k for k, s in enumerate(starts) if s <= index)
        t = self.slide_of[cell["id"]]
        for k in offsets:
            want = (part, starts[here + k]) if 0 <= here + k < len(starts) else None
            got = self.slides[t + k] if 0 <= t + k < len(self.slides) else None
            if want is None or not self.same_slide(want, got):
                return True
        return False

    def neighbour(self, part: int, step: int) -> tuple[str | None, bool]:
        """The title of the deck's section next to this part's on the side `step`, and whether
        the talk has it on that side."""
        p = self.picks[part]
        secs = nbs.sections(p.nb)
        k = next(i for i, s in enumerate(secs) if s.start == p.section.start)
        if not 0 <= k + step < len(secs):
            return None, False
        return secs[k + step].title, self.has(part, secs[k + step], step)

    def has(self, part: int, section, step: int) -> bool:
        """Whether the talk has this section of the part's deck after it (`step` > 0) or
        before it."""
        side = range(part + 1, len(self.picks)) if step > 0 else range(part)
        return any(self.picks[q].deck == self.picks[part].deck and
                   self.picks[q].section.start == section.start for q in side)

    def later_missing(self, part: int) -> str | None:
        """The first of the deck's talk sections after this part's, before its closing, that
        the talk does not have after it."""
        p = self.picks[part]
        later = [s for s in talk.talk_sections(p.nb)
                 if s.start > p.section.start and s.title != "Key points"]
        return next((s.title for s in later if not self.has(part, s, 1)), None)


def _count(word: str | None) -> int:
    return NUMBER.get((word or "one").lower(), 1)


def _by_name(t: Talk, part: int, m) -> str | None:
    """Why `the <words> section|slide` points outside the talk, or None."""
    words = [w.strip(".’'").lower() for w in m.group(1).split()]
    if words and words[0] in POSITION:      # the next section, the last slide
        step = POSITION[words[0]]
        if m.group(2).lower() == "slide":
            return None     # judged by position below (AHEAD, BEHIND)
        title, here = t.neighbour(part, step)
        return None if here else f"the {words[0]} section in its deck" + (
            f" (“{title}”) is not next to it here" if title else " is in another deck")
    words = [w for w in words if w not in NOT_A_NAME and len(w) > 2]
    if not words:
        return None
    deck = t.deck_of(part)
    shown = {o[1] for o in t.slides if o and t.deck_of(o[0]) == deck}
    for i, c in enumerate(t.picks[part].nb.cells):
        head = nbs.heading(c) if nbs.slide_type(c) in ("slide", "subslide") else None
        heads = [h for h in re.findall(r"[\w’'.-]+", (head or "").lower()) if len(h) > 2]
        if head and all(any(h.startswith(w) or w.startswith(h) for h in heads) for w in words):
            return None if i in shown else f"“{nbs.plain(head)}” is not in the talk"
    return None


def _cell_hits(t: Talk, cell) -> list[tuple[re.Match, str]]:
    """(match, why) for each reference in one copied markdown cell."""
    part, _ = t.origin[cell["id"]]
    text, hits = cell.source, []
    for m in ELSEWHERE.finditer(text):
        hits.append((m, "the talk has no appendix" if m.group(0).lower() == "appendix"
                     else "names a deck, lab or phase"))
    p = t.picks[part]
    first = talk.talk_sections(p.nb)[0]
    has_map = p.section.start == first.start or any(
        q.deck == p.deck and q.section.start == first.start for q in t.picks[:part])
    hits += [(m, f"the map is on “{first.title}”, not in the talk") for m in MAP.finditer(text)
             if not has_map]
    titles = [nbs.plain(h).lower() for h in map(nbs.heading, t.nb.cells) if h]
    for m in QUOTED.finditer(text):     # slide “Who hits, who misses”, section “The counters…”
        for name in re.findall(r"“([^”]+)”", m.group(1)):
            if not any(h.startswith(name.rstrip("…").strip().lower()) for h in titles):
                hits.append((m, f"“{name}” is not in the talk"))
    for m in BY_NAME.finditer(text):
        why = _by_name(t, part, m)
        if why:
            hits.append((m, why))
    for rx, sign in ((AHEAD, 1), (BEHIND, -1)):
        for m in rx.finditer(text):
            n = _count(next((g for g in m.groups() if g), None))
            if t.moved(cell, [sign * k for k in range(1, n + 1)]):
                hits.append((m, "that slide is not there in the talk"))
    title, here = t.neighbour(part, -1)
    hits += [(m, f"it leans on “{title}”, not before it here" if title
              else "it leans on another deck") for m in BACK.finditer(text) if not here]
    later = t.later_missing(part)
    hits += [(m, f"it leans on a later part of its deck; “{later}” is not in the talk after it")
             for m in AHEAD_IN_DECK.finditer(text) if later]
    return hits


def _code_names(source: str) -> tuple[set[str], set[str], set[str]]:
    """(names it reads, names it binds, names it imports from the kit) of a code cell; a
    function's arguments and an except's name count as bound (read inside, bound there)."""
    names = nbs.code_names(source)
    return names.reads, names.binds | names.local, names.kit


def _spoken(c) -> bool:
    """Notes said aloud, or notes for the reader only (a `reading` cell the handout prints)."""
    return c.cell_type == "markdown" and talk.PRESENTER not in nbs.tags(c) and (
        nbs.slide_type(c) == "notes" or "reading" in nbs.tags(c))


def _shown(c) -> bool:
    """On the slide itself: its markdown, or visible code."""
    return (c.cell_type == "markdown" and nbs.slide_type(c) not in ("notes", "skip")) or \
        talk.is_visible_code(c)


def _introduced(nb, section, spoken: bool = True) -> tuple[set[str], set[str]]:
    """(what a section introduces to the room: the kit names its visible code imports and the
    private JAX names it shows, or says if `spoken`; every name its code binds)."""
    said, bound = set(), set()
    for c in nb.cells[section.start:section.stop]:
        if c.cell_type == "code":
            _, binds, kit = _code_names(c.source)
            bound |= binds
            if talk.is_visible_code(c):
                said |= kit
        if _shown(c) or spoken and _spoken(c):
            said |= set(PRIVATE.findall(c.source))
    return said, bound


def shared_names(decks) -> set[str]:
    """Kit names and private names that more than one deck introduces: they explain themselves
    (`refuses`, `show_source`), or the room knows them from the course."""
    seen = defaultdict(set)
    for path, nb in decks.items():
        for s in talk.talk_sections(nb):
            for name in _introduced(nb, s)[0]:
                seen[name].add(path)
    return {name for name, where in seen.items() if len(where) > 1}


def _name_hits(t: Talk, shared: set[str]) -> dict[str, str]:
    """{cell id: why} for each copied cell that uses a name only an earlier section of its deck,
    one the talk does not have, introduced (said or shown there; bound there, for code)."""
    out, before, known = {}, set(), set(dir(builtins)) | IPYTHON
    for part, p in enumerate(t.picks):
        intro, binder = {}, {}
        for s in nbs.sections(p.nb):
            if s.start >= p.section.start:
                break
            said, bound = _introduced(p.nb, s)
            for name in said - shared:
                intro.setdefault(name, s)
            for name in bound:
                binder.setdefault(name, s)
        omitted = {s.start for s in nbs.sections(p.nb)} - {
            q.section.start for q in t.picks if q.deck == p.deck}
        mine = [c for c in t.nb.cells if t.origin.get(c["id"], (None,))[0] == part]
        own_shown, own_bound = _introduced(p.nb, p.section, spoken=False)
        for c in mine:
            uses, missing = set(), set()
            if c.cell_type == "code":
                reads, binds, kit = _code_names(c.source)
                uses = kit & set(intro)
                missing = {n for n in reads - own_bound - known if n in binder}
            elif _spoken(c):
                uses = (set(PRIVATE.findall(c.source)) - own_shown) & set(intro)
            why = sorted({(intro[n].title, n) for n in uses - before
                          if intro[n].start in omitted} |
                         {(binder[n].title, n) for n in missing - before
                          if binder[n].start in omitted})
            if why:
                titles = dict.fromkeys(w for w, _ in why)
                out[c["id"]] = "; ".join(
                    f"uses {', '.join(n for w2, n in why if w2 == w)}, which “{w}” "
                    "introduces, not in the talk" for w in titles)
            before |= uses | missing
    return out


def references(nb, picks, origin: dict[str, tuple[int, int]], shared: set[str]) -> list[str]:
    """One line for each copied cell that points outside the talk: the slide it is on, the
    words, and why. `origin`: {cell id: (part, index in its deck)} for the copied cells; the
    cells compose wrote itself are not in it and are not looked at."""
    t = Talk(nb, picks, origin)
    names = _name_hits(t, shared)
    out, title = [], ""
    for c in nb.cells:
        kind = nbs.slide_type(c)
        if kind in ("slide", "subslide"):
            title = nbs.plain(nbs.heading(c) or title)
        if c["id"] not in origin or talk.PRESENTER in nbs.tags(c):
            continue
        hits = []
        if c.cell_type == "markdown":
            end = -1
            for m, why in sorted(_cell_hits(t, c), key=lambda h: h[0].start()):
                if m.start() < end:     # inside a reference already listed
                    continue
                end = m.end() + 40
                a, b = max(0, m.start() - 30), min(len(c.source), m.end() + 30)
                hits.append("…" + " ".join(c.source[a:b].split()) + f"… ({why})")
        if c["id"] in names:
            hits.append(names[c["id"]])
        if hits:
            where = ("notes" if kind == "notes" else "code" if c.cell_type == "code" else
                     "reading" if "reading" in nbs.tags(c) else "slide")
            out.append(f"slide {t.slide_of[c['id']] + 1} “{title}” ({where}, cell {c['id']}): "
                       + " | ".join(hits))
    return out
