"""The presenter's plan slide by slide, and the rehearsal report.

`plan(nb)`: each slide's planned seconds, its share of the kit's talk-time estimate
(`talk.estimate` over the slide's own cells: its notes' words, its visible code cells,
the slide itself; the estimate is a sum, so the slides' shares add up to the talk path's
`talk.talk_minutes`). The page script (`present/extension.py`) gives these to reveal.js's own
pacing (`data-timing` on each slide, `totalTime` the talk path) and puts a plan line at the top
of each slide's notes.

`present --rehearse`: the page script posts each slide change to the server extension, which
appends it to a log (build/rehearsal/DECK-TIME.log, one JSON line each: the server's time and the
slide); when the server stops, `write_report` turns the log into build/rehearsal/DECK-TIME.md:
planned against actual minutes per slide and per section, and the slides that ran longest.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from .. import notebooks as nbs
from .. import paths, talk
from ..errors import KitError
from . import pacing
from .private import private_dir

DIR = paths.BUILD / "rehearsal"


@dataclass
class Slide:
    number: int        # 1-based, as RISE numbers it
    title: str
    section: str
    seconds: float     # planned
    at: float          # planned seconds before it
    appendix: bool
    cells: tuple[int, int] = (0, 0)   # its cells: nb.cells[cells[0]:cells[1]]


def plan(nb) -> list[Slide]:
    starts = [i for i, c in enumerate(nb.cells) if nbs.slide_type(c) in ("slide", "subslide")]
    if not starts:
        return []
    starts[0] = 0                       # anything before the first slide shows on it
    secs = nbs.sections(nb)
    out, at = [], 0.0
    for k, (a, b) in enumerate(zip(starts, starts[1:] + [len(nb.cells)])):
        sec = next((s for s in secs if s.start <= a < s.stop), None)
        appendix = bool(sec and talk.is_appendix(nb, sec))
        seconds = talk.estimate("", nb.cells[a:b]).minutes * 60
        out.append(Slide(k + 1, nbs.title_at(nb, a) if a else nbs.heading(nb.cells[0]) or "",
                         sec.title if sec else "Title and setup", seconds, at, appendix,
                         (a, b)))
        if not appendix:
            at += seconds
    return out


def mmss(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 60}:{s % 60:02d}"


def page_plan(nb) -> dict:
    """What the page script needs: each slide's whole seconds (reveal's data-timing) and its
    plan line for the notes; the talk path's total and its number of slides (the appendix's
    follow: the counter counts the talk); the deck's cuts and expansions
    (`pacing`: indices into the same slides, seconds from the same estimate) and how far off
    the plan the presenter must be before the notes window offers them."""
    slides = plan(nb)
    talk_s = sum(s.seconds for s in slides if not s.appendix)
    by_section: dict[str, float] = {}
    for s in slides:
        by_section[s.section] = by_section.get(s.section, 0) + s.seconds
    lines = []
    for s in slides:
        if s.appendix:
            lines.append(f"→ Plan: appendix, not on the talk path ({mmss(s.seconds)} if shown)")
        else:
            lines.append(f"→ Plan: this slide {mmss(s.seconds)} · done by "
                         f"{mmss(s.at + s.seconds)} of {mmss(talk_s)} · section “{s.section}” "
                         f"{by_section[s.section] / 60:.0f} min")
    return {"total": max(1, round(talk_s)), "timing": [max(1, round(s.seconds)) for s in slides],
            "lines": lines, "talk": sum(not s.appendix for s in slides),
            **pacing.page_keys(nb, slides)}


# ---- the rehearsal: a log of slide changes, then the report

def log_path(deck: Path, n: int = 1) -> Path:
    """NAME-YYYYMMDD-HHMMSS.log, the n-th rehearsal of the deck started in that second -N."""
    return DIR / f"{deck.stem}-{time.strftime('%Y%m%d-%H%M%S')}{f'-{n}' if n > 1 else ''}.log"


def start_log(deck: Path) -> Path:
    """The rehearsal's log, made before the server starts, its first line the deck: where it
    cannot be written (a read-only build/), one line now, not a server that answers each slide
    change with an error and a rehearsal lost. A log of its own, made with O_EXCL: two
    rehearsals of a deck started in the same second shared one (and then one report)."""
    log = log_path(deck)
    try:
        # the presenter's alone, whatever the umask (probe 3: 0777 and 0666 under umask 000,
        # where anyone could write slide times into it or plant a link at the report's name)
        private_dir(log.parent)
        for n in range(2, 1000):
            try:
                fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(json.dumps({"deck": paths.short(deck), "t": time.time()}) + "\n")
                break
            except FileExistsError:
                log = log_path(deck, n)
    except OSError as e:
        raise KitError(f"--rehearse: cannot write {paths.short(log)} ({e.strerror or e}): the "
                       f"slides' times would be lost; make {paths.short(log.parent)}/ writable, "
                       "or present without --rehearse") from None
    return log


def read_log(log: Path) -> list[dict]:
    """The log's slide changes and restarts (not its first line, the deck's)."""
    if not log.exists():
        return []
    return [e for e in _lines(log) if isinstance(e, dict) and "slide" in e]


def actual(events: list[dict], end: float) -> dict[int, float]:
    """Seconds on each slide: from each change to the next (the last until `end`)."""
    events = sorted(events, key=lambda e: e["t"])
    got: dict[int, float] = {}
    for a, b in zip(events, events[1:] + [{"t": end}]):
        got[a["slide"]] = got.get(a["slide"], 0.0) + max(0.0, b["t"] - a["t"])
    return got


def restarts(slides: list[Slide], events: list[dict]) -> list[str]:
    """The report's line on the kernel restarts from the slideshow (the page's 0 0 or its
    button), where and when each came: none, no line."""
    done = sorted((e for e in events if e.get("event") == "restart"), key=lambda e: e["t"])
    if not done:
        return []
    t0 = min(e["t"] for e in events)
    title = {s.number: s.title for s in slides}
    said = [f"slide {e['slide']} “{title.get(e['slide'], '?')}”, {(e['t'] - t0) / 60:.1f} min in"
            for e in done]
    return [f"Kernel restarted from the slideshow {len(done)} time"
            f"{'s' if len(done) > 1 else ''}: {'; '.join(said)}.", ""]


def report(nb, deck_name: str, events: list[dict], end: float) -> str:
    slides = plan(nb)
    events, restart_lines = [e for e in events if "event" not in e], restarts(slides, events)
    got = actual(events, end) if events else {}
    m = lambda s: f"{s / 60:.1f}"
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(min(e["t"] for e in events))) \
        if events else "never"
    total_plan = sum(s.seconds for s in slides if not s.appendix)
    total_got = sum(got.values())
    out = [f"# Rehearsal: {deck_name}", "",
           f"Started {started}; {len(got)} of {len(slides)} slides shown; "
           f"{m(total_got)} minutes in all against {m(total_plan)} planned for the talk path "
           f"(the kit's talk-time estimate: notes at {talk.WORDS_PER_MINUTE} words a minute × "
           f"{talk.EXPLAIN}, {talk.CODE_CELL_S} s a code cell, {talk.SLIDE_S} s a slide, "
           f"+{talk.QUESTIONS:.0%} for questions). Minutes; + is over the plan.", "",
           *restart_lines, "## Slides that ran longest", "",
           "| slide | title | planned | actual | over |", "|---:|---|---:|---:|---:|"]
    shown = [s for s in slides if s.number in got]
    for s in sorted(shown, key=lambda s: got[s.number] - s.seconds, reverse=True)[:5]:
        out.append(f"| {s.number} | {s.title} | {m(s.seconds)} | {m(got[s.number])} | "
                   f"{(got[s.number] - s.seconds) / 60:+.1f} |")
    out += ["", "## By section", "", "| section | planned | actual | over |",
            "|---|---:|---:|---:|"]
    order: list[str] = []
    for s in slides:
        if s.section not in order:
            order.append(s.section)
    for sec in order:
        mine = [s for s in slides if s.section == sec]
        p = sum(s.seconds for s in mine)
        if not any(s.number in got for s in mine):
            if not all(s.appendix for s in mine):
                out.append(f"| {sec} | {m(p)} | not shown | |")
            continue
        a = sum(got.get(s.number, 0.0) for s in mine)
        out.append(f"| {sec} | {m(p)} | {m(a)} | {(a - p) / 60:+.1f} |")
    out += ["", "## By slide", "", "| slide | title | section | planned | actual | over |",
            "|---:|---|---|---:|---:|---:|"]
    for s in slides:
        if s.appendix and s.number not in got:
            continue
        a = got.get(s.number)
        cols = f"{m(a)} | {(a - s.seconds) / 60:+.1f}" if a is not None else "not shown |"
        out.append(f"| {s.number} | {s.title} | {s.section} | {m(s.seconds)} | {cols} |")
    return "\n".join(out) + "\n"


def write_report(deck: Path, log: Path, end: float | None = None) -> Path | None:
    """build/rehearsal/DECK-TIME.md beside the log; None when nothing was shown (and then no
    log is kept either)."""
    events = [e for e in read_log(log) if isinstance(e.get("slide"), int)]
    if not any("event" not in e for e in events):
        if not events:
            log.unlink(missing_ok=True)
        return None
    nb = nbs.read(deck)
    out = log.with_suffix(".md")
    # replaced whole, never written through a link (probe 3: another user's link beside a log
    # in a shared folder had `--report` overwrite a root file), and the presenter's alone
    paths.write_atomic(out, report(nb, paths.short(deck), events, end or time.time()),
                       mode=0o600)
    return out


def report_from_log(log: Path) -> Path:
    """`present --report LOG`: the report of a rehearsal whose present ended without writing
    it (killed, or the machine went down); the log's first line names the deck. The last
    slide's time is not known: it counts until the last change."""
    if not Path(log).is_file():   # (a FIFO would wait for a writer, silently)
        raise KitError(f"{log}: not a rehearsal log of present --rehearse (not a file)")
    if Path(log).suffix != ".log":   # (its report, NAME.md, would be written over it)
        raise KitError(f"{log}: not a rehearsal log of present --rehearse (a log is NAME.log; "
                       "its report is written beside it as NAME.md)")
    first = next(iter(_lines(log)), None)
    named = first.get("deck") if isinstance(first, dict) else None
    deck = (paths.ROOT / named).resolve() if isinstance(named, str) else None
    if deck is None or not deck.is_file():
        raise KitError(f"{log}: not a rehearsal log of present --rehearse (its first line names "
                       "the deck), or its deck is gone")
    # only a deck present could have shown: in the kit, a notebook, of a notebook's size (a
    # log that named another user's 3 GiB file had it read whole: probe 7)
    if not deck.is_relative_to(paths.ROOT) or deck.suffix != ".ipynb" or \
            deck.stat().st_size > LOG_MAX:
        raise KitError(f"{log}: its deck, {named}, is not a notebook in the kit that present "
                       "could have shown: no report")
    events = read_log(log)
    out = write_report(deck, log, max((e["t"] for e in events), default=None))
    if out is None:
        raise KitError(f"{log}: no slide was shown in that rehearsal, no report")
    return out


# A rehearsal writes one line of some 60 bytes a slide change: a log past this is no
# rehearsal's, and reading it whole ran out of memory (probe 4: a MemoryError traceback)
LOG_MAX = 16 << 20


def _lines(log: Path) -> list:
    try:
        size = log.stat().st_size
        if size > LOG_MAX:
            raise KitError(f"{log}: not a rehearsal log of present --rehearse ({size >> 20} MiB; "
                           f"a rehearsal writes a line a slide change, a log is under "
                           f"{LOG_MAX >> 20} MiB)")
        text = log.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise KitError(f"{log}: cannot be read ({getattr(e, 'strerror', None) or e})") from None
    out = []
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out
