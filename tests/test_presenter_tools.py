"""The presenter's tools: `present --rehearse`'s report after a scripted run through a few
slides in a real headless Chromium, and the report's sums. (reveal.js's pacing in the notes
window is proven with the notes window, in test_present_slides.py: every present server has it.)"""
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
    p, url = start_present("01", free_port(), args=("--rehearse",), wait=180)
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
