"""`python -m workshop schedule`: the decks and their labs laid over two days, with breaks
and lab slots, from each notebook's own metadata.

A deck takes its stated minutes (`metadata.workshop.minutes`), not its talk-path estimate
(`workshop.tools.talk.talk_minutes`): the estimate is held under the stated minutes by the structure
tests, the gap is the room's questions and a restart, and the estimate moves with every edit of a
note while a printed schedule should not. A lab takes its own metadata minutes and follows its
deck. Phases are kept whole (deck, then its lab) and split over the days in order, half each;
items are packed into sessions of at most `--session` minutes; between sessions a break, the one
closest to 12:30 (starting 11:30 to 14:00) being lunch.

`--write` writes the Markdown source (docs/schedule.md) and prints it to handouts/schedule.pdf
with the kit's Printer, stamped with the hash of that source; the tests fail when either is stale.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ...config import BREAK, DAYS, LUNCH, LUNCH_AT, LUNCH_WINDOW, SESSION
from ...phasemap import count_word as number
from .. import errors, paths
from .. import notebooks as nbs

SOURCE = paths.ROOT / "docs" / "schedule.md"
PDF = paths.ROOT / "handouts" / "schedule.pdf"
START = "09:00"


@dataclass
class Item:
    kind: str        # "deck" or "lab"
    key: str         # "01" or "J1"
    title: str
    minutes: int
    link: str        # the notebook, relative to the repository


def items() -> list[list[Item]]:
    """One list per phase: the deck, then the labs that follow it."""
    labs = {}
    for p in nbs.lab_sources():
        w = nbs.read(p).metadata.get("workshop", {})
        labs.setdefault(w.get("deck"), []).append(
            Item("lab", w.get("lab", p.stem.split("-")[0]), w.get("title", p.stem),
                 int(w.get("minutes", 0)), f"exercises/{p.name}"))
    phases = []
    for p in nbs.decks():
        w = nbs.read(p).metadata.workshop
        phases.append([Item("deck", p.stem[:2], w.title, int(w.minutes), f"decks/{p.name}")]
                      + labs.get(p.stem, []))
    return phases


def clock(text: str) -> int:
    m = re.fullmatch(r"([01]?\d|2[0-3])[:.h]([0-5]\d)", text.strip())
    if not m:
        raise errors.KitError(f"--start {text!r}: give a time of day as HH:MM, e.g. 09:00")
    return int(m.group(1)) * 60 + int(m.group(2))


def hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


@dataclass
class Row:
    start: int
    stop: int
    what: str
    item: Item | None = None


def plan(start: str = START, session: int = SESSION) -> list[list[Row]]:
    """The rows of each day."""
    t0 = clock(start)
    phases = items()
    longest = max((i for ph in phases for i in ph), key=lambda i: i.minutes)
    if not longest.minutes <= session <= 240:
        raise errors.KitError(f"--session {session}: give {longest.minutes} to 240 minutes (the "
                              f"longest item, {longest.key} {longest.title}, is "
                              f"{longest.minutes} and is never split)")
    per_day = -(-len(phases) // DAYS)
    days = []
    for d in range(DAYS):
        todo = [i for ph in phases[d * per_day:(d + 1) * per_day] for i in ph]
        sessions, cur = [], []
        for it in todo:
            if cur and sum(i.minutes for i in cur) + it.minutes > session:
                sessions.append(cur)
                cur = []
            cur.append(it)
        if cur:
            sessions.append(cur)
        # the breaks' start times before lunch do not depend on which one is lunch
        starts, t = [], t0
        for k, sess in enumerate(sessions[:-1]):
            t += sum(i.minutes for i in sess) + (BREAK if k else 0)
            starts.append(t)
        near = [k for k, x in enumerate(starts) if LUNCH_WINDOW[0] <= x <= LUNCH_WINDOW[1]]
        lunch = min(near, key=lambda k: abs(starts[k] - LUNCH_AT)) + 1 if near else None
        rows, t = [], t0
        for k, sess in enumerate(sessions):
            if k:
                gap, name = (LUNCH, "Lunch") if k == lunch else (BREAK, "Break")
                rows.append(Row(t, t + gap, name))
                t += gap
            for it in sess:
                what = (f"Deck {it.key} · {it.title}" if it.kind == "deck"
                        else f"Lab {it.key} · {it.title}")
                rows.append(Row(t, t + it.minutes, what, it))
                t += it.minutes
        if t > 24 * 60:
            raise errors.KitError(f"--start {start}: day {d + 1} would run past midnight")
        days.append(rows)
    return days


def markdown(start: str = START, session: int = SESSION) -> str:
    days = plan(start, session)
    phases = items()
    talk = sum(ph[0].minutes for ph in phases)
    labs = sum(i.minutes for ph in phases for i in ph[1:])
    n_labs = sum(len(ph) - 1 for ph in phases)
    # (what the file is for its maintainer is a comment: the printed schedule is for the room)
    out = ["<!-- Generated by `python -m workshop schedule --write` from each notebook's metadata "
           "minutes. Do not edit. -->", "# Workshop schedule", "",
           f"JAX Core, From the Inside: {number(len(phases))} decks ({talk} minutes) and "
           f"{number(n_labs)} labs ({labs} minutes) "
           f"over {DAYS} days, sessions of at most {session} minutes, {BREAK}-minute breaks and "
           "an hour for lunch. A deck's slot is its stated minutes (its talk is shorter: the "
           "rest is for questions).", ""]
    for d, rows in enumerate(days, 1):
        out += [f"## Day {d}", "", "| time | what | min |", "|---|---|---:|"]
        for r in rows:
            what = f"[{r.what}](../{r.item.link})" if r.item else f"*{r.what}*"
            out.append(f"| {hhmm(r.start)}–{hhmm(r.stop)} | {what} | {r.stop - r.start} |")
        out += ["", f"Day {d} ends at {hhmm(rows[-1].stop)}.", ""]
    out += ["A lab's minutes are how long its tasks took a presenter working them as an "
            "attendee would, hints included.", ""]
    return "\n".join(out)


def html(text: str) -> str:
    from ..builder import render
    body = render.markdown(text.replace("](../", "]("))   # links read as text on paper
    css = render.READING_CSS + ("table{border-collapse:collapse;width:100%;margin:0 0 4mm}"
                                "td,th{border-bottom:1px solid #ccc;padding:1.2mm 2mm;"
                                "text-align:left;font-size:10.5pt}"
                                "h1{font-size:18pt;margin:0 0 3mm}h2{font-size:14pt;"
                                "margin:5mm 0 2mm}p{font-size:10pt}a{color:inherit;"
                                "text-decoration:none}")
    return render.document("Workshop schedule", css, f"<div class='part'>{body}</div>")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write(text: str) -> list[str]:
    from ..builder import handouts, pdfinfo, printer
    paths.write_atomic(SOURCE, text.encode())
    with printer.Printer() as p:
        data, _ = p.pdf(html(text), "a4", "Workshop schedule · JAX Core, From the Inside")
    data = pdfinfo.stamp(data, "Workshop schedule", digest(text),
                           handouts.build_date(SOURCE), paths.short(SOURCE))
    paths.write_atomic(PDF, data)
    index = handouts.HANDOUTS / "README.md"
    row = f"| [{PDF.name}]({PDF.name}) | {pdfinfo.pages_of(PDF)} |"
    lines = [x for x in index.read_text().splitlines() if f"[{PDF.name}]" not in x]
    paths.write_atomic(index, ("\n".join(lines + [row]) + "\n").encode())
    return [paths.short(SOURCE), paths.short(PDF)]


def current(text: str) -> bool:
    """The committed schedule's Markdown is `text` and its PDF was printed from it."""
    from ..builder import pdfinfo
    return (SOURCE.is_file() and SOURCE.read_text(encoding="utf-8") == text
            and PDF.is_file() and pdfinfo.stamp_of(PDF) == digest(text))


def write_if_stale() -> list[str]:
    """Write the committed schedule (the defaults) when its Markdown or its PDF is not made
    from the notebooks as they are now, or is missing; the files written."""
    text = markdown()
    return [] if current(text) else write(text)


def main(start: str = START, session: int | str = SESSION, write_files: bool = False) -> int:
    if not str(session).strip().isdigit():
        raise errors.KitError(f"--session {session!r}: give whole minutes, e.g. 120")
    session = int(session)
    text = markdown(start, session)
    print(text, end="")
    if write_files:
        if (start, session) != (START, SESSION):
            raise errors.KitError("--write keeps the committed schedule at the defaults (--start "
                                  f"{START}, --session {SESSION}); print others without it")
        for f in write(text):
            print(f"schedule: wrote {f}")
    return 0
