"""`python -m workshop schedule`: the decks and their labs laid over two days, with breaks
and lab slots, from each notebook's own metadata.

A deck takes its stated minutes (`metadata.workshop.minutes`), not its talk-path estimate
(`workshop.tools.talk.talk_minutes`): the estimate is held under the stated minutes by the structure
tests, the gap is the room's questions and a restart, and the estimate moves with every edit of a
note while a printed schedule should not. A lab takes its own metadata minutes and follows its
deck, and a debrief follows each lab (`DEBRIEF` minutes: its common mistakes, from the
presenter's debrief page). Day 1 opens with a setup slot (`SETUP`: every laptop installed and
`doctor` green) and the last day ends with a wrap-up (`WRAP_UP`). Phases are kept whole (deck,
then its lab and debrief) and split over the days in order, half each; items are packed into
sessions of at most `--session` minutes (a lab and its debrief never apart); between sessions a
break, the one closest to 12:30 (starting 11:30 to 14:00) being lunch.

`--write` writes the Markdown source (docs/schedule.md) and prints it to handouts/schedule.pdf
with the kit's Printer, stamped with the hash of that source; the tests fail when either is stale.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ...config import BREAK, DAYS, DEBRIEF, LUNCH, LUNCH_AT, LUNCH_WINDOW, SESSION, SETUP, WRAP_UP
from ...phasemap import count_word as number
from .. import errors, paths
from .. import notebooks as nbs

SOURCE = paths.ROOT / "docs" / "schedule.md"
PDF = paths.ROOT / "handouts" / "schedule.pdf"
START = "09:00"


@dataclass
class Item:
    kind: str        # "deck", "lab", "debrief", "setup" or "wrap-up"
    key: str         # "01" or "J1" (a debrief: its lab's)
    title: str
    minutes: int
    link: str | None = None   # a deck's or a lab's notebook, relative to the repository

    @property
    def what(self) -> str:
        return {"deck": f"Deck {self.key} · {self.title}",
                "lab": f"Lab {self.key} · {self.title}"}.get(self.kind, self.title)


def debrief(lab: Item) -> Item:
    return Item("debrief", lab.key, f"Debrief of lab {lab.key}: the common mistakes, what to "
                "take away", DEBRIEF)


SETUP_ITEM = Item("setup", "", "Setup: every laptop installed and `python -m workshop doctor` "
                  "green (the hub for the rest)", SETUP)
WRAP_UP_ITEM = Item("wrap-up", "", "Wrap-up: questions, what to read next, feedback", WRAP_UP)


def items() -> list[list[Item]]:
    """One list per phase: the deck, then each lab that follows it with its debrief."""
    labs = {}
    for p in nbs.lab_sources():
        w = nbs.read(p).metadata.get("workshop", {})
        lab = Item("lab", w.get("lab", p.stem.split("-")[0]), w.get("title", p.stem),
                   int(w.get("minutes", 0)), f"exercises/{p.name}")
        labs.setdefault(w.get("deck"), []).extend([lab, debrief(lab)])
    phases = []
    for p in nbs.decks():
        w = nbs.read(p).metadata.workshop
        phases.append([Item("deck", p.stem[:2], w.title, int(w.minutes), f"decks/{p.name}")]
                      + labs.get(p.stem, []))
    return phases


def units(day_items: list[Item]) -> list[list[Item]]:
    """What is packed whole: each item alone, but a lab with the debrief after it."""
    out: list[list[Item]] = []
    for it in day_items:
        if it.kind == "debrief" and out:
            out[-1].append(it)
        else:
            out.append([it])
    return out


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


def days_items() -> list[list[Item]]:
    """Each day's items in order: the phases split half each, setup first, wrap-up last."""
    phases = items()
    per_day = -(-len(phases) // DAYS)
    days = [[i for ph in phases[d * per_day:(d + 1) * per_day] for i in ph] for d in range(DAYS)]
    days[0].insert(0, SETUP_ITEM)
    days[-1].append(WRAP_UP_ITEM)
    return days


def sessions_of(day: list[Item], session: int) -> list[list[Item]]:
    out, cur = [], []
    for unit in units(day):
        if cur and sum(i.minutes for i in cur + unit) > session:
            out.append(cur)
            cur = []
        cur += unit
    return out + ([cur] if cur else [])


def _lunch(sessions: list[list[Item]], t0: int) -> int | None:
    """Which break is lunch: the one starting closest to 12:30 within the window (the breaks'
    start times before lunch do not depend on which one is lunch)."""
    starts, t = [], t0
    for k, sess in enumerate(sessions[:-1]):
        t += sum(i.minutes for i in sess) + (BREAK if k else 0)
        starts.append(t)
    near = [k for k, x in enumerate(starts) if LUNCH_WINDOW[0] <= x <= LUNCH_WINDOW[1]]
    return min(near, key=lambda k: abs(starts[k] - LUNCH_AT)) + 1 if near else None


def plan(start: str = START, session: int = SESSION) -> list[list[Row]]:
    """The rows of each day."""
    t0 = clock(start)
    days_in = days_items()
    longest = max((u for day in days_in for u in units(day)),
                  key=lambda u: sum(i.minutes for i in u))
    need = sum(i.minutes for i in longest)
    if not need <= session <= 240:
        with_debrief = " with its debrief" if len(longest) > 1 else ""
        raise errors.KitError(f"--session {session}: give {need} to 240 minutes (the "
                              f"longest item, {longest[0].key} {longest[0].title}{with_debrief}, "
                              f"is {need} and is never split)")
    days = []
    for d, day in enumerate(days_in):
        sessions = sessions_of(day, session)
        lunch = _lunch(sessions, t0)
        rows, t = [], t0
        for k, sess in enumerate(sessions):
            if k:
                gap, name = (LUNCH, "Lunch") if k == lunch else (BREAK, "Break")
                rows.append(Row(t, t + gap, name))
                t += gap
            for it in sess:
                rows.append(Row(t, t + it.minutes, it.what, it))
                t += it.minutes
        if t > 24 * 60:
            raise errors.KitError(f"--start {start}: day {d + 1} would run past midnight")
        days.append(rows)
    return days


def markdown(start: str = START, session: int = SESSION) -> str:
    days = plan(start, session)
    phases = items()
    talk = sum(ph[0].minutes for ph in phases)
    labs = [i for ph in phases for i in ph if i.kind == "lab"]
    # (what the file is for its maintainer is a comment: the printed schedule is for the room)
    out = ["<!-- Generated by `python -m workshop schedule --write` from each notebook's metadata "
           "minutes. Do not edit. -->", "# Workshop schedule", "",
           f"JAX Core, From the Inside: {number(len(phases))} decks ({talk} minutes) and "
           f"{number(len(labs))} labs ({sum(i.minutes for i in labs)} minutes) "
           f"over {DAYS} days, sessions of at most {session} minutes, {BREAK}-minute breaks and "
           f"an hour for lunch; a {SETUP}-minute setup to open, a {DEBRIEF}-minute debrief "
           f"after each lab and a {WRAP_UP}-minute wrap-up to close. A deck's slot is its "
           "stated minutes (its talk is shorter: the rest is for questions).", ""]
    for d, rows in enumerate(days, 1):
        out += [f"## Day {d}", "", "| time | what | min |", "|---|---|---:|"]
        for r in rows:
            what = (f"[{r.what}](../{r.item.link})" if r.item and r.item.link
                    else r.what if r.item else f"*{r.what}*")
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
