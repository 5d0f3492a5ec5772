"""The presenter's tools: `present --rehearse`'s report after a scripted run through a few
slides in a real headless Chromium, with a kernel restart from the slideshow, and the report's
sums; the title slide's byline, from present's flags or presenting.toml. (reveal.js's pacing in
the notes window is proven with the notes window, in test_present_slides.py: every present
server has it.)"""
from __future__ import annotations

import json
import re
import time

import pytest

from workshop.tools import notebooks as nbs
from workshop.tools import paths
from workshop.tools.present import rehearse
from workshop.tools.present.driver import NEXT_JS, start_present, stop_present
from workshop.tools.present.server import free_port

DECK = paths.DECKS / "01-run-it-first.ipynb"
NUMBER_IS = ("(n) => { const e = document.querySelector('.reveal .slide-number');"
             " return e && e.innerText.replace(/ /g, '').startsWith(n + '/'); }")


@pytest.fixture(scope="module")
def rehearsing():
    # (the byline blank whatever presenting.toml this checkout has: the title slide shows none)
    p, url = start_present("01", free_port(), args=("--rehearse", "--presenter", "", "--event",
                                                     "", "--date", ""), wait=180)
    seen, log = [], None
    for _ in range(3):   # the line after the URL names the rehearsal's report
        line = p.stdout.readline()
        seen.append(line)
        m = re.search(r"writes (build/rehearsal/\S+)\.md", line)
        if m:
            log = paths.ROOT / (m.group(1) + ".log")
            break
    if log is None:
        p.kill()
        pytest.fail("present --rehearse printed no report path:\n" + "".join(seen))
    state = {"proc": p, "url": url, "log": log}
    yield state
    stop_present(p)


def _open(browser_, url):
    page = browser_.new_page(viewport={"width": 1280, "height": 720})
    page.goto(url)
    page.wait_for_selector(".reveal .slides section.present", timeout=120_000)
    return page


def _go(page, n: int) -> None:
    page.evaluate(NEXT_JS)
    page.wait_for_function(NUMBER_IS, arg=n, timeout=15_000, polling=100)


def _events(log) -> list[int]:
    return [e["slide"] for e in rehearse.read_log(log)]


@pytest.mark.browser
def test_a_scripted_rehearsal_writes_the_report(chromium, rehearsing):
    log = rehearsing["log"]
    page = _open(chromium, rehearsing["url"])
    page.wait_for_function("() => true")
    end = time.monotonic() + 30
    while _events(log)[-1:] != [1] and time.monotonic() < end:   # the first slide, posted
        time.sleep(0.2)
    assert _events(log)[-1:] == [1], _events(log)
    before = len(_events(log))
    for n in (2, 3, 4):
        page.wait_for_timeout(300)   # (the report gives minutes: any time on a slide counts)
        _go(page, n)
        end = time.monotonic() + 15
        while _events(log)[-1:] != [n] and time.monotonic() < end:
            time.sleep(0.2)
    assert _events(log)[before - 1:] == [1, 2, 3, 4]
    # a kernel restart from the slideshow (0 0, then JupyterLab's Restart) goes into the log
    # with its slide: the setup cell runs again on the title slide and the slideshow comes back
    page.keyboard.press("0")
    page.keyboard.press("0")
    page.click(".jp-Dialog .jp-mod-accept", timeout=10_000)
    end = time.monotonic() + 60
    while not [e for e in rehearse.read_log(log) if e.get("event") == "restart"] and \
            time.monotonic() < end:
        time.sleep(0.2)
    page.wait_for_function("() => /8 CPU devices/.test(document.querySelector('.reveal .slides "
                           "section:not(.stack) .jp-CodeCell .jp-OutputArea').innerText)",
                           timeout=90_000, polling=200)
    page.wait_for_function(NUMBER_IS, arg=4, timeout=30_000, polling=100)
    # no presenter, event or date given: the title slide shows no byline, not an empty line
    assert page.evaluate("() => document.querySelectorAll('.workshop-byline').length") == 0
    page.close()
    p = rehearsing["proc"]
    assert stop_present(p) == 0
    out = p.stdout.read()
    m = re.search(r"rehearsal report (build/rehearsal/\S+\.md)", out)
    assert m, out
    text = (paths.ROOT / m.group(1)).read_text(encoding="utf-8")
    print(text)
    plan = rehearse.plan(nbs.read(DECK))
    rows = {int(r[0]): r for r in re.findall(
        r"^\| (\d+) \| [^|]+ \| [^|]+ \| ([\d.]+) \| ([\d.]+|not shown) \|", text, re.M)}
    for n in (1, 2, 3, 4):
        assert rows[n][1] == f"{plan[n - 1].seconds / 60:.1f}"
        assert rows[n][2] != "not shown"
    assert rows[5][2] == "not shown"
    assert "## Slides that ran longest" in text and "## By section" in text
    assert re.search(rf"^Kernel restarted from the slideshow 1 time: slide 4 "
                     rf"“{re.escape(plan[3].title)}”, \d+\.\d min in\.$", text, re.M), text
    json.dumps(rows)


def test_the_report_sums_slides_into_sections_and_names_the_longest():
    # no browser: a log as the server writes it, the report as present writes it at the end
    nb = nbs.read(DECK)
    plan = rehearse.plan(nb)
    events = [{"t": 0, "slide": 1}, {"t": 30, "slide": 2}, {"t": 330, "slide": 3},
              {"t": 345, "slide": 2}]
    got = rehearse.actual(events, end=405)
    assert got == {1: 30, 2: 360, 3: 15}          # slide 2 twice: 300 s, then 60 s
    text = rehearse.report(nb, "decks/01", events, end=405)
    longest = text.split("## Slides that ran longest")[1].split("##")[0]
    assert re.search(rf"^\| 2 \| {re.escape(plan[1].title)} \| [\d.]+ \| 6\.0 \|", longest,
                     re.M), longest
    first_row = [r for r in longest.splitlines() if r.startswith("| ") and "slide" not in r][0]
    assert first_row.startswith("| 2 |")
    sec = plan[1].section
    mine = [s for s in plan if s.section == sec]
    want = sum(got.get(s.number, 0) for s in mine) / 60
    assert re.search(rf"^\| {re.escape(sec)} \| [\d.]+ \| {want:.1f} \|", text, re.M)
    assert f"| {plan[4].number} | {plan[4].title} | {plan[4].section} | " \
           f"{plan[4].seconds / 60:.1f} | not shown |" in text
    # the shares of the slides add up to the talk path's estimate
    from workshop.tools import talk
    assert abs(sum(s.seconds for s in plan if not s.appendix) - talk.talk_minutes(nb) * 60) < 1


def test_the_report_says_where_the_kernel_was_restarted():
    # a restart is a line of the log like a slide's, with its slide: the report names it, and
    # it is not a slide change (slide 2's time runs on through it)
    nb = nbs.read(DECK)
    plan = rehearse.plan(nb)
    events = [{"t": 0, "slide": 1}, {"t": 30, "slide": 2},
              {"t": 90, "slide": 2, "event": "restart"}, {"t": 150, "slide": 3}]
    text = rehearse.report(nb, "decks/01", events, end=160)
    assert f"Kernel restarted from the slideshow 1 time: slide 2 “{plan[1].title}”, 1.5 min in." \
        in text
    assert re.search(rf"^\| 2 \| {re.escape(plan[1].title)} \| [^|]+ \| [\d.]+ \| 2\.0 \|",
                     text, re.M), text
    assert "Kernel restarted" not in rehearse.report(nb, "decks/01", events[:2] + events[3:],
                                                     end=160)


@pytest.mark.parametrize("given, saved, shown", [
    ({}, None, []),
    ({}, 'presenter = "Ada"\nevent = "PyData"\ndate = "1 May"\n', ["Ada", "PyData", "1 May"]),
    ({"event": "Other", "date": ""}, 'presenter = "Ada"\nevent = "PyData"\ndate = "1 May"\n',
     ["Ada", "Other"]),
    ({"presenter": "  Ada   L.  "}, 'date = ""\n', ["Ada L."]),
], ids=["nothing", "the-file", "flags-over-the-file", "blank-and-spaces"])
def test_the_byline_comes_from_the_flags_else_presenting_toml(tmp_path, given, saved, shown):
    from workshop.tools.present.extension import byline_for
    file = tmp_path / "presenting.toml"
    if saved is not None:
        file.write_text(saved, encoding="utf-8")
    assert byline_for(given, file) == shown


@pytest.mark.parametrize("given, saved, said", [
    ({}, 'presenter = "Ada\n', "is not TOML"),
    ({}, 'speaker = "Ada"\n', "unknown key 'speaker' (it may set presenter, event, date)"),
    ({}, "date = 2026-06-12\n", "date: one line of text, not datetime.date(2026, 6, 12)"),
    ({"event": "two\nlines"}, None, "--event: one line of text"),
], ids=["not-toml", "unknown-key", "not-text", "two-lines"])
def test_a_bad_byline_is_one_line_naming_it(tmp_path, given, saved, said):
    from workshop.tools.errors import KitError
    from workshop.tools.present.extension import byline_for
    file = tmp_path / "presenting.toml"
    if saved is not None:
        file.write_text(saved, encoding="utf-8")
    with pytest.raises(KitError) as e:
        byline_for(given, file)
    assert said in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("kind", ["folder", "fifo", "link to nothing"])
def test_a_presenting_toml_that_is_no_file_is_one_line(tmp_path, kind):
    # probe 17 (low): a folder there was a traceback, a FIFO a wait without a word
    import os
    import threading

    from workshop.tools.errors import KitError
    from workshop.tools.present.extension import byline_for
    file = tmp_path / "presenting.toml"
    {"folder": file.mkdir, "fifo": lambda: os.mkfifo(file),
     "link to nothing": lambda: file.symlink_to(tmp_path / "gone")}[kind]()
    said = []

    def read():
        try:
            byline_for({}, file)
        except KitError as e:
            said.append(str(e))
    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():   # (a FIFO's reader waits for a writer: let it go)
        with open(file, "w"):
            pass
        pytest.fail("reading presenting.toml waited")
    assert len(said) == 1 and "presenting.toml" in said[0] and "\n" not in said[0], said


def test_no_byline_or_plan_puts_markup_into_the_page_script():
    # probe 17 (low): a `<!--<script>` in --event kept the kit's page script from running (the
    # HTML parser's "double escaped" script state): no byline, and a rehearsal recorded
    # nothing. What the data holds goes in with every < escaped
    from workshop.tools.present.extension import script
    page = script({"title": "<!--<script></script>"}, True, ["<!--<script>", "</script>x"])
    inside = page[len("<script>"):-len("</script>")]
    assert page.startswith("<script>") and page.endswith("</script>")
    assert "<!--" not in inside and "<script" not in inside and "</script" not in inside


def test_present_refuses_a_bad_byline_before_it_starts_anything():
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "workshop", "present", "01", "--no-browser",
                        "--presenter", "two\nlines"], capture_output=True, text=True,
                       cwd=paths.ROOT, timeout=120)
    assert p.returncode == 2, p
    assert p.stderr.strip().splitlines() == [
        "workshop present: --presenter: one line of text, not 'two\\nlines'"], p.stderr


def _until_said(p, line: str) -> str:
    """What `p` printed up to and with the line that starts with `line` (or all, if it ended
    first: the test's asserts then say what was missing)."""
    said = ""
    while True:
        got = p.stdout.readline()
        said += got
        if not got or got.startswith(line):
            return said


# three Ctrl-C's in the quick run (told to wait, then ignored); one, and two after the
# clean-up, under thorough
@pytest.mark.parametrize("gaps", [pytest.param((0.05,), marks=pytest.mark.thorough), (0.05, 0.05),
                                  pytest.param((0.3, 0.3), marks=pytest.mark.thorough)])
def test_a_second_ctrl_c_while_present_stops_keeps_the_rehearsal_report(gaps):
    # a presenter's habitual Ctrl-C Ctrl-C (or three): one while it stops (the server's stop
    # takes some 0.3 to 2 s) is told to wait; one after its clean-up is ignored (it turned a
    # finished stop into exit 130); the server still stops and the report is still written
    import signal

    from workshop.tools.present.driver import base_token
    from workshop.tools.present.server import call
    p, url = start_present("01", free_port(), args=("--rehearse",), wait=180)
    log = paths.ROOT / re.search(r"writes (build/rehearsal/\S+)\.md", p.stdout.readline()
                                 + p.stdout.readline()).group(1)
    try:
        base, token = base_token(url)
        for n in (1, 2, 3):   # what the slideshow's page posts on each slide change
            call(base, token, "/workshop/rehearsal", {"slide": n, "path": "decks/01-run-it-first"})
            time.sleep(0.2)
        p.send_signal(signal.SIGINT)
        # the next once it says it stops (under load the first was taken late, and a second
        # sent 0.05 s after it came after the stop: CI's rehearsal)
        said = _until_said(p, "present: stopping the server")
        for gap in gaps:
            time.sleep(gap)
            p.send_signal(signal.SIGINT)
        p.wait(60)
        out = said + p.stdout.read()
        assert p.returncode == 0, out
        if gaps[0] < 0.1:
            assert "present: still stopping, then the rehearsal report" in out
        assert f"rehearsal report {paths.short(log)}.md" in out, out
        assert "3 of " in log.with_suffix(".md").read_text(encoding="utf-8")
    finally:
        stop_present(p)
        log.with_suffix(".md").unlink(missing_ok=True)
        log.with_suffix(".log").unlink(missing_ok=True)


def test_a_killed_rehearsals_kept_log_becomes_its_report(tmp_path):
    # present killed (kill -9: none of its clean-up runs) after three slides: the log stays,
    # and `present --report LOG` writes the report from it; what is no such log is one line
    import signal
    import subprocess
    import sys

    from workshop.tools.present.driver import base_token, port_open
    from workshop.tools.present.server import call
    port = free_port()
    p, url = start_present("01", port, args=("--rehearse",), wait=180)
    log = paths.ROOT / re.search(r"writes (build/rehearsal/\S+)\.md", p.stdout.readline()
                                 + p.stdout.readline()).group(1)
    log = log.with_suffix(".log")
    base, token = base_token(url)
    for n in (1, 2, 3):
        call(base, token, "/workshop/rehearsal", {"slide": n, "path": "decks/01-run-it-first"})
        time.sleep(0.2)
    p.send_signal(signal.SIGKILL)
    p.wait()
    end = time.monotonic() + 30
    while port_open(port) and time.monotonic() < end:   # the server sees present gone
        time.sleep(0.2)
    assert not log.with_suffix(".md").exists() and log.exists()
    run = lambda *a: subprocess.run([sys.executable, "-m", "workshop", "present", *a],
                                    capture_output=True, text=True, cwd=paths.ROOT, timeout=120)
    made = run("--report", str(log))
    try:
        assert made.returncode == 0, made.stdout + made.stderr
        assert made.stdout == f"present: rehearsal report {paths.short(log.with_suffix('.md'))}\n"
        assert re.search(r"^Started .*; 3 of \d+ slides shown;", log.with_suffix(".md").read_text(
            encoding="utf-8"), re.M)
    finally:
        log.with_suffix(".md").unlink(missing_ok=True)
        log.unlink()
    other = tmp_path / "notes.log"
    other.write_text("hello\n")
    bad = run("--report", str(other))
    assert bad.returncode == 2 and bad.stderr == (
        f"workshop present: {other}: not a rehearsal log of present --rehearse (its first line "
        "names the deck), or its deck is gone\n"), bad.stderr


def test_a_report_reads_only_a_deck_present_could_have_shown_and_is_asked_alone(tmp_path):
    # probe 7: a log's first line named another user's 3 GiB file as its deck, by an absolute
    # path or ../, and --report read it whole (a MemoryError traceback, or a long silence);
    # `present 02 --rehearse --report LOG` dropped the deck and --rehearse without a word
    from workshop.tools import errors
    from workshop.tools.present import server as present
    big = tmp_path / "big.ipynb"
    with open(big, "wb") as f:
        f.truncate(3 << 30)   # sparse: 3 GiB that take no room
    inside = paths.ROOT / "README.md"
    for named in (str(big), "../" * 12 + str(big).lstrip("/"), str(inside.relative_to(paths.ROOT))):
        log = tmp_path / "r.log"
        log.write_text(json.dumps({"deck": named, "t": 1.0}) + "\n"
                       + json.dumps({"slide": 1, "t": 2.0}) + "\n")
        with pytest.raises(errors.KitError, match=r"^.*r\.log: its deck, .*, is not a notebook in "
                           "the kit that present could have shown: no report$"):
            rehearse.report_from_log(log)
    for deck, rehearse_too in (("02", False), (None, True), ("02", True)):
        with pytest.raises(errors.KitError, match="^--report LOG writes a kept log's report and "
                           "presents nothing: give it alone, without a deck or --rehearse$"):
            present.main(deck, rehearse=rehearse_too, report=str(tmp_path / "r.log"))


def test_two_rehearsals_started_in_the_same_second_keep_a_log_each(tmp_path, monkeypatch):
    # probe 2: two `present 01 --rehearse` in one second shared one log (opened to append),
    # and the first one's report was the second's slides
    from workshop.tools.present import rehearse
    monkeypatch.setattr(rehearse, "DIR", tmp_path)
    monkeypatch.setattr(rehearse.time, "strftime", lambda fmt, *a: "20261206-203344")
    deck = nbs.decks()[0]
    logs = [rehearse.start_log(deck) for _ in range(3)]
    assert [p.name for p in logs] == [f"{deck.stem}-20261206-203344{n}.log"
                                      for n in ("", "-2", "-3")]
    assert all(len(p.read_text(encoding="utf-8").splitlines()) == 1 for p in logs)


def test_a_report_replaces_a_link_at_its_name_and_a_log_is_the_presenters_alone(tmp_path,
                                                                               monkeypatch):
    # probe 3: another user's link at the report's name, beside a log in a shared folder, had
    # `present --report` write through it (a root file overwritten); a FIFO for a log waited
    # silently; the rehearsal folder and its files were every user's to read, or write
    import os
    import stat as st

    from workshop.tools.errors import KitError
    from workshop.tools.present import rehearse
    monkeypatch.setattr(rehearse, "DIR", tmp_path / "rehearsal")
    deck = nbs.decks()[0]
    old = os.umask(0)
    try:
        log = rehearse.start_log(deck)
    finally:
        os.umask(old)
    assert st.S_IMODE(log.parent.stat().st_mode) == 0o700
    assert st.S_IMODE(log.stat().st_mode) == 0o600
    with log.open("a", encoding="utf-8") as f:
        for n, t in ((1, 1.0), (2, 2.0), (3, 3.0)):
            f.write(json.dumps({"slide": n, "t": time.time() + t}) + "\n")
    victim = tmp_path / "victim"
    victim.write_text("theirs")
    log.with_suffix(".md").symlink_to(victim)
    out = rehearse.report_from_log(log)
    assert victim.read_text() == "theirs" and not out.is_symlink()
    assert "3 of " in out.read_text(encoding="utf-8")
    assert st.S_IMODE(out.stat().st_mode) == 0o600
    fifo = tmp_path / "f.log"
    os.mkfifo(fifo)
    with pytest.raises(KitError, match="not a file"):
        rehearse.report_from_log(fifo)
    with pytest.raises(KitError, match="a log is NAME.log"):   # (probe 4: written over)
        rehearse.report_from_log(out)
    assert "3 of " in out.read_text(encoding="utf-8")
    # a log past any rehearsal's size (probe 4: read whole, a MemoryError) is one line, unread:
    # a sparse file with a real log's first line
    huge = tmp_path / "huge.log"
    huge.write_bytes(log.read_bytes().splitlines(keepends=True)[0])
    with huge.open("r+b") as f:
        f.truncate(rehearse.LOG_MAX + 1)
    with pytest.raises(KitError, match=r"huge.log: not a rehearsal log .*\(16 MiB; a rehearsal "
                                       r"writes a line a slide change, a log is under 16 MiB\)"):
        rehearse.report_from_log(huge)
    with huge.open("r+b") as f:   # at the limit, it is read (its padding is no line)
        f.truncate(rehearse.LOG_MAX)
    with pytest.raises(KitError, match="no slide was shown"):
        rehearse.report_from_log(huge)
