"""The workshop schedule: made from the notebooks' metadata, committed current (its Markdown and
its printed page), agreeing with the README's table and the presenter's guide's timings."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from workshop import config
from workshop.tools import notebooks as nbs
from workshop.tools import paths, talk
from workshop.tools.authoring import schedule
from workshop.tools.builder import handouts, pdfinfo


def _rows(text: str) -> dict[str, int]:
    """{'01': 45, 'J1': 25, …} from the schedule's Markdown."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r"\| \[(?:Deck|Lab) (\w+) · [^|]*\]\([^)]*\) \| (\d+) \|", text)}


def test_the_committed_schedule_is_current_and_printed():
    text = schedule.markdown()
    assert schedule.SOURCE.read_text(encoding="utf-8") == text, \
        "docs/schedule.md is stale: run python -m workshop schedule --write"
    assert pdfinfo.stamp_of(schedule.PDF) == schedule.digest(text), \
        "handouts/schedule.pdf is stale: run python -m workshop schedule --write"
    index = (handouts.HANDOUTS / "README.md").read_text()
    assert f"| [schedule.pdf](schedule.pdf) | {pdfinfo.pages_of(schedule.PDF)} |" in index


def test_every_deck_and_lab_has_its_metadata_minutes_once_in_the_schedule():
    got = _rows(schedule.SOURCE.read_text(encoding="utf-8"))
    want = {}
    for p in nbs.decks():
        want[p.stem[:2]] = nbs.read(p).metadata.workshop.minutes
    for p in nbs.lab_sources():
        w = nbs.read(p).metadata.workshop
        want[w.lab] = w.minutes
    assert got == want


def test_the_readme_table_and_the_guides_timings_agree_with_the_schedule():
    rows = _rows(schedule.SOURCE.read_text(encoding="utf-8"))
    readme = (paths.ROOT / "README.md").read_text(encoding="utf-8")
    guide = (paths.DECKS / "README.md").read_text(encoding="utf-8")
    for p in nbs.decks():
        w = nbs.read(p).metadata.workshop
        lab = w.lab
        row = re.search(rf"^\| {w.phase} \| \[[^]]+\]\(decks/{re.escape(p.name)}\) \| (\d+) \| "
                        rf"\[{lab} [^]]+\]\([^)]+\) \| (\d+) \|$", readme, re.M)
        assert row, f"README.md's table has no row for {p.stem} and {lab}"
        assert (int(row[1]), int(row[2])) == (rows[p.stem[:2]], rows[lab]), p.stem
        g = re.search(rf"^\| {p.stem[:2]} [^|]+\| (\d+) min \| {lab}, (\d+) min \|", guide, re.M)
        assert g, f"decks/README.md's timings have no row for {p.stem}"
        assert (int(g[1]), int(g[2])) == (rows[p.stem[:2]], rows[lab]), p.stem


def test_a_decks_slot_holds_its_talk_path_estimate():
    # why the schedule gives a deck its stated minutes: the estimate fits inside them
    for p in nbs.decks():
        nb = nbs.read(p)
        assert talk.talk_minutes(nb) <= nb.metadata.workshop.minutes, p.stem


def test_days_sessions_and_breaks():
    days = schedule.plan("08:30", 120)
    for rows in days:
        assert rows[0].start == 8 * 60 + 30
        assert [r.what for r in rows].count("Lunch") == 1
        for a, b in zip(rows, rows[1:]):
            assert a.stop == b.start
        run = 0
        for r in rows:   # never more than a session of teaching without a break
            run = 0 if r.item is None else run + r.stop - r.start
            assert run <= 120
    # each lab after its deck (a break may come between), each debrief right after its lab
    items = [r.item for rows in days for r in rows if r.item]
    for a, b in zip(items, items[1:]):
        if b.kind == "lab":
            assert a.kind == "deck"
    rows = [r for day in days for r in day]
    for a, b in zip(rows, rows[1:]):
        if b.item and b.item.kind == "debrief":
            assert a.item and a.item.kind == "lab" and a.item.key == b.item.key


@pytest.mark.parametrize("start,session", [("09:00", 120), ("08:30", 90), ("10:00", 240)])
def test_setup_first_a_debrief_after_every_lab_and_a_wrap_up_last(start, session):
    # issue 49: an install check to open day 1, a debrief per lab, a closing slot on day 2
    days = schedule.plan(start, session)
    first, last = days[0][0], days[-1][-1]
    assert first.item.kind == "setup" and first.stop - first.start == config.SETUP == 20
    assert "doctor" in first.what
    assert last.item.kind == "wrap-up" and last.stop - last.start == config.WRAP_UP == 15
    rows = [r for day in days for r in day if r.item]
    labs = [r.item.key for r in rows if r.item.kind == "lab"]
    debriefs = [(r.item.key, r.stop - r.start) for r in rows if r.item.kind == "debrief"]
    assert labs and debriefs == [(k, config.DEBRIEF) for k in labs]
    kinds = [r.item.kind for r in rows]
    assert kinds.count("setup") == kinds.count("wrap-up") == 1


def test_the_committed_schedule_shows_the_setup_debriefs_and_wrap_up():
    text = schedule.SOURCE.read_text(encoding="utf-8")
    assert re.search(r"^\| 09:00–09:20 \| Setup: [^|]*doctor[^|]* \| 20 \|$", text, re.M)
    for p in nbs.lab_sources():
        lab = nbs.read(p).metadata.workshop.lab
        assert re.search(rf"^\| [\d:–]+ \| Debrief of lab {lab}: [^|]+ \| 10 \|$", text, re.M), lab
    day2 = text.split("## Day 2", 1)[1]
    assert re.search(r"\| Wrap-up: [^|]+ \| 15 \|\n\nDay 2 ends", day2)


@pytest.mark.parametrize("args,says", [
    (["--start", "25:00"], "--start '25:00': give a time of day as HH:MM"),
    (["--session", "30"], "--session 30: give"),
    (["--session", "ninety"], "--session 'ninety': give whole minutes"),
    (["--start", "21:00"], "would run past midnight"),
])
def test_bad_input_is_one_line_and_exit_2(args, says):
    p = subprocess.run([sys.executable, "-m", "workshop", "schedule", *args],
                       capture_output=True, text=True, cwd=paths.ROOT, timeout=60)
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout[:200])
    assert p.stderr.strip().count("\n") == 0 and says in p.stderr, p.stderr


def test_another_start_shifts_the_day():
    p = subprocess.run([sys.executable, "-m", "workshop", "schedule", "--start", "10:00"],
                       capture_output=True, text=True, cwd=paths.ROOT, timeout=60)
    assert p.returncode == 0 and "| 10:00–10:20 | Setup" in p.stdout
    assert "| 10:20–11:05 | [Deck 01" in p.stdout
