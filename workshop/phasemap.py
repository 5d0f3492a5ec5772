"""The course's map: one record, a phase per deck. Deck 01 opens the workshop with it and every
deck can open with it to say where it sits (`show_phase_map(here=N)`).

The thesis the map draws: tracing runs your Python once with stand-ins and records what it did
(a jaxpr); each phase is a program that writes, reads or rewrites that record. The phases' titles
are the decks' titles and their two lines each deck's `metadata.workshop.map` (`PHASES`, in
workshop/phases.py, which `python -m workshop fmt` writes from the decks; deck 01's check cell
compares the cards with the decks).
"""
from __future__ import annotations

from . import svg
from .palette import FILL, HERE, HERE_FILL, INK, TEXT
from .phases import PHASES
from .pictures import SANS, Picture, label

COUNTS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve"]


def count_word(n: int) -> str:
    """6 -> 'six', a count in prose (the caption here, the schedule's decks and labs); 13 and
    more as digits."""
    return COUNTS[n] if 0 <= n < len(COUNTS) else str(n)

PX = 20          # text size of a card's lines, in slide pixels (the picture is drawn 1184 wide)
W, GAP = 1184, 16


def _chars(text: str, px: float) -> float:
    """A generous width for sans-serif text (DejaVu Sans averages about 0.55 em)."""
    return len(text) * px * 0.6


def show_phase_map(here: int | None = None) -> Picture:
    """The phases as cards around one record, three to a row: the banner says the trick, each
    card says what its phase does to the record; the card of phase `here` is marked "you are
    here"."""
    if here is not None and here not in {p for p, _, _ in PHASES}:
        raise ValueError(f"here={here!r}: the phases are 1 to {len(PHASES)}")
    card_w = (W - 2 * GAP - 4) / 3
    line_h = round(PX * 1.4)
    card_h = round(PX * 2.4) + 2 * line_h + 14
    top = 86
    rows = -(-len(PHASES) // 3)
    height = top + rows * card_h + (rows - 1) * GAP + 6
    out = []
    # the banner: your Python, traced once, becomes the record every phase works on
    boxes = [("your Python", 14, 190), ("the record: a jaxpr", 470, 300)]
    for name, x, w in boxes:
        bold = name.startswith("the record")
        out.append(svg.rect(x, 8, w, 48, rx=10, fill=FILL, stroke=HERE if bold else INK,
                            stroke_width=3 if bold else 2))
        out.append(label(x + w / 2, 40, name, PX + 2, font=SANS, anchor="middle", bold=bold))
    out.append(svg.line(207, 32, 467, 32, stroke=INK, stroke_width=3,
                        marker_end="url(#phasehead)"))
    out.append(label(337, 24, "trace once, with stand-ins", PX - 2, font=SANS,
                     anchor="middle", fill=HERE))
    out.append(label(790, 40, "every phase reads or rewrites it", PX, font=SANS))
    for k, (phase, title, lines) in enumerate(PHASES):
        x = 2 + (k % 3) * (card_w + GAP)
        y = top + (k // 3) * (card_h + GAP)
        mine = phase == here
        out.append(svg.rect(x, y, card_w, card_h, rx=10, fill=HERE_FILL if mine else FILL,
                            stroke=HERE if mine else INK, stroke_width=4 if mine else 2))
        out.append(label(x + 14, y + PX * 1.5, f"{phase} · {title}", PX + 2, font=SANS,
                         bold=True))
        if mine:
            out.append(label(x + card_w - 12, y + PX * 1.5, "you are here", PX - 2,
                             font=SANS, anchor="end", fill=HERE, bold=True))
        for j, line in enumerate(lines):
            if _chars(line, PX) > card_w - 24:
                raise ValueError(f"phase {phase}: {line!r} is too wide for its card")
            out.append(label(x + 14, y + PX * 2.4 + (j + 0.8) * line_h, line, PX, font=SANS,
                             fill=TEXT))
    facts = {"phases": [(p, t) for p, t, _ in PHASES], "here": here,
             "lines": {p: list(lines) for p, _, lines in PHASES}}
    where = f"; you are in phase {here}, {PHASES[here - 1][1]}" if here else ""
    caption = ("One trick: trace your Python once into a jaxpr, the record; "
               f"{count_word(len(PHASES))} phases read or rewrite it: "
               + "; ".join(f"{p} {t}" for p, t, _ in PHASES) + where)
    picture = svg.svg(W, height, out, defs=[svg.arrowhead("phasehead", INK, 14)])
    return Picture(picture, caption, facts)
