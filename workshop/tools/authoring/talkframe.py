"""What opens and closes a composed talk: each chosen section's objective (the title slide), its
key points (the closing slide), and the course's thesis slide (`compose --thesis`).

A deck states its objectives and key points once, for the whole deck
(`metadata.workshop.objectives`, `.key_points`), not per section; they are written for the
reader and are what the deck's own title and closing slides show. A talk made of some sections
needs the ones that belong to those sections. Which section a sentence belongs to is decided by
what the section says: the sentence's words against each section's words (its slides, spoken
notes and visible code), weighted by how rare a word is among the deck's sections (TF-IDF,
cosine), so "caches" decides little in the caches deck and "_cache_size" much. Each sentence is
then given to one section so that the total similarity is highest and, while there are
sentences enough, every section gets one (an assignment, not each sentence's best section
alone: two sentences that both lean to a long section do not both land on it while a short
section that one of them describes gets none), unless that would put a sentence where it fits
less than half as well as in its best section. A section that no objective was given to (a
framing section such as a deck's map) is announced by its own first bold sentence, the one its
notes open with. `compose` prints what each section got, for the speaker to read.
"""
from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass

from .. import errors, talk
from .. import notebooks as nbs

# words that say nothing about which section a sentence belongs to
STOP = frozenset(
    "a an the and or of to in on at by for from with without is are be it its as that this what "
    "which who how why when where each every one two their your you do does not no then than "
    "into only say name read".split())


def _bag(text: str) -> Counter:
    """Lower-case words (identifiers kept whole), a plural or -ing/-ed cut to its stem."""
    out = Counter()
    for w in re.findall(r"[a-z_][a-z0-9_]*", text.lower()):
        if w in STOP or len(w) < 2:
            continue
        for suffix in ("ing", "es", "s", "ed"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[:-len(suffix)]
                break
        out[w] += 1
    return out


def _said(nb, section: nbs.Section) -> str:
    """What a section shows and says: its markdown (not the presenter's plan) and visible code."""
    return "\n".join(c.source for c in nb.cells[section.start:section.stop]
                     if (c.cell_type == "markdown" and talk.PRESENTER not in nbs.tags(c))
                     or talk.is_visible_code(c))


def _similarity(nb, sentences: list[str], sections: list[nbs.Section]) -> list[list[float]]:
    """score[i][j]: cosine of sentence i and section j, TF-IDF over the deck's sections."""
    bags = [_bag(_said(nb, s)) for s in sections]
    df = Counter(w for b in bags for w in b)
    idf = {w: math.log((len(bags) + 1) / (n + 0.5)) for w, n in df.items()}

    def vector(bag: Counter) -> dict[str, float]:
        return {w: (1 + math.log(n)) * idf[w] for w, n in bag.items() if w in idf}

    def cosine(a: dict, b: dict) -> float:
        dot = sum(v * b.get(w, 0.0) for w, v in a.items())
        size = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
        return dot / size if size else 0.0

    secs = [vector(b) for b in bags]
    return [[cosine(vector(_bag(t)), s) for s in secs] for t in sentences]


def assign(score: list[list[float]], floor: float = 0.0) -> list[int]:
    """For each sentence (a row), the section (a column) it is given to: one sentence to each
    section while both last, the largest total score; a sentence left over, or given a section it
    fits less than `floor` times as well as its best one, goes to its best section. Every way
    is tried when there are few (a deck has a handful of each); past that, the best remaining
    pair first."""
    n, m = len(score), len(score[0]) if score else 0
    if not n or not m:
        return []
    k = min(n, m)
    pairs = []      # (sentence, section) pairs of the best assignment found
    if math.perm(max(n, m), k) <= 50_000:
        ways = ([list(zip(rows, range(m))) for rows in itertools.permutations(range(n), m)]
                if n >= m else
                [list(zip(range(n), cols)) for cols in itertools.permutations(range(m), n)])
        pairs = max(ways, key=lambda way: sum(score[i][j] for i, j in way))
    else:
        for _, i, j in sorted(((-score[i][j], i, j) for i in range(n) for j in range(m))):
            if all(i != a and j != b for a, b in pairs):
                pairs.append((i, j))
    best = [max(range(m), key=lambda j: score[i][j]) for i in range(n)]
    home = {i: j for i, j in pairs if score[i][j] >= floor * score[i][best[i]]}
    return [home.get(i, best[i]) for i in range(n)]


@dataclass
class Frame:
    """One chosen section's share of the deck's objectives and key points."""
    objectives: list[str]   # the deck's objectives given to it, else its first bold sentence
    own_objective: bool     # whether they are the deck's objectives
    key_points: list[str]   # the deck's key points given to it, in the deck's order


def frames(nb, chosen: list[nbs.Section]) -> dict[int, Frame]:
    """{section start: Frame} for the chosen sections of one deck. The candidates are all the
    deck's talk sections but its closing (so a sentence goes where the whole deck says it
    belongs, not merely to the best of the chosen)."""
    secs = [s for s in talk.talk_sections(nb) if s.title != "Key points"]
    meta = nb.metadata.get("workshop", {})
    objectives, points = list(meta.get("objectives", [])), list(meta.get("key_points", []))
    # A deck's objectives are one per stretch of it, fewer than its sections: each goes to a
    # section of its own, however weakly it fits (deck 04's first objective, on the order of
    # grad and vmap, shares its words with ad.py but is its first section's). Its key points
    # include a summary of the whole deck: one goes where it fits best once it would fit less
    # than half as well where the assignment put it.
    at_obj = assign(_similarity(nb, objectives, secs)) if secs and objectives else []
    at_kp = assign(_similarity(nb, points, secs), floor=0.5) if secs and points else []
    out = {}
    for s in chosen:
        j = next((k for k, t in enumerate(secs) if t.start == s.start), None)
        mine = [o for o, k in zip(objectives, at_obj) if k == j and j is not None]
        out[s.start] = Frame(mine or [lead(nb, s)], bool(mine),
                             [p for p, k in zip(points, at_kp) if k == j and j is not None])
    return out


def lead(nb, section: nbs.Section) -> str:
    """The section's first bold sentence: the one its first notes cell opens with (every note
    starts with the sentence to say), else its title."""
    for c in nb.cells[section.start:section.stop]:
        if nbs.slide_type(c) == "notes" and talk.PRESENTER not in nbs.tags(c):
            m = re.match(r"\s*\*\*(.+?)\*\*", c.source, re.S)
            if m:
                return " ".join(m.group(1).split())
            break
    return section.title


@dataclass
class Thesis:
    title: str    # the section's title, the slide's heading
    quote: str    # the blockquote its first slide shows
    said: str     # its first bold sentence: the thesis as spoken
    deck: str     # the deck's file name, to say which section it is
    start: int    # the section's first cell in that deck


def thesis(decks: dict) -> Thesis:
    """The course's thesis: the blockquote on the first talk section of the phase-1 deck
    (deck 01's "One trick"), which the other decks' maps quote."""
    for path, nb in decks.items():
        if nb.metadata.get("workshop", {}).get("phase") == 1:
            first = talk.talk_sections(nb)[0]
            quote = [ln for ln in nb.cells[first.start].source.splitlines() if ln.startswith(">")]
            if quote:
                return Thesis(first.title, "\n".join(quote), lead(nb, first), path.stem,
                              first.start)
    raise errors.KitError("--thesis: no deck of phase 1 opens with a quoted thesis")
