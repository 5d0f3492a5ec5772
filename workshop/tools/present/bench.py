"""`scripts/bench-present [DECK]` (`python -m workshop.tools.present.bench`): how long `present`
takes to the first slide, as a presenter waits for it. A benchmark, not a timed test: the figure
depends on the machine and on what else runs there, so it prints the load beside it.

Each run starts `present DECK` as a presenter types it and times, from that moment, until the
deck's first slide is drawn with its title in a real Chromium (headless, `tools.browser`'s).
By default present opens the browser itself: the environment's BROWSER names a hook that hands
the bench the address present asked for, and the bench starts Chromium on it then (a browser
that starts cold, as it does for a presenter whose browser was closed). With --no-browser the
browser starts with the command and opens the URL present prints (a browser already open, as
the audit of issue 49 measured it). Each run prints its time and when present printed the URL,
asked for the browser and the RISE page answered; then the median of the runs and the 1-minute
load average before each run and at the end (on 2 cores, a load of 4 doubles every figure).

Everything a run starts ends with it: present by Ctrl-C (its server and kernel end with it),
the browser by Playwright, anything still left of the bench's children by SIGTERM, then SIGKILL.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import browser, errors, paths
from .. import notebooks as nbs

# the hook present's webbrowser runs (BROWSER): it writes the address it was given, whole
HOOK = '#!/bin/sh\nprintf "%s" "$1" > "$0.url.tmp" && mv "$0.url.tmp" "$0.url"\n'
# the first slide drawn: RISE's present slide shows the deck's title (its first heading) in
# the window, in its own font (not the fallback that stands in while it loads). The page looks
# every POLL ms and answers with the time it saw it (ms since the epoch, the machine's clock):
# the bench's own traffic with the browser stays small (Playwright runs beside the page on the
# same cores, and a look each frame cost a second of CPU a run).
POLL = 50
DRAWN_JS = """(title) => {
  const s = document.querySelector('.reveal .slides section.present');
  if (!s || !document.body.classList.contains('rise-enabled')) return false;
  const h = [...s.querySelectorAll('h1, h2')].find(e => e.innerText.includes(title));
  if (!h) return false;
  const r = h.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight
    && document.fonts.check(getComputedStyle(h).font)
    && performance.timeOrigin + performance.now();
}"""
# when the RISE page's HTML had come (ms since the epoch), read once the slide is drawn
PAGE_JS = """() => { const n = performance.getEntriesByType('navigation')[0];
  return n && n.name.includes('/rise/') ? performance.timeOrigin + n.responseEnd : null; }"""
LIMIT = 120   # s: a run that has not drawn its first slide by then failed


@dataclass
class Run:
    """One run's times, in seconds from the command's start."""
    load: float                     # the 1-minute load average just before it
    marks: dict = field(default_factory=dict)   # what happened when: url, browser, page, slide


def title_of(deck: Path) -> str:
    """The first slide's title as RISE draws it: the notebook's first heading, marks off."""
    nb = nbs.read(deck)
    for cell in nb.cells:
        h = nbs.heading(cell)
        if h:
            return nbs.plain(h)
    raise errors.KitError(f"{paths.short(deck)}: no heading, so no title to wait for")


def _watch_output(proc, run: Run, t0: float, seen: list[str]) -> None:
    """present's output, line by line: when it printed the URL (kept in marks['url_text'])."""
    for line in proc.stdout:
        seen.append(line)
        m = re.search(r"http://\S+", line)
        if m and "url" not in run.marks:
            run.marks["url"] = time.monotonic() - t0
            run.marks["url_text"] = m.group(0)


def _wait_for(what, proc, seen: list[str], t0: float, label: str):
    """what() once it is true (checked every 10 ms); present ending or LIMIT first raises."""
    while not what():
        if proc.poll() is not None:
            raise errors.KitError(f"present ended ({proc.returncode}) before {label}:\n"
                                  + "".join(seen[-20:]))
        if time.monotonic() - t0 > LIMIT:
            raise errors.KitError(f"no {label} within {LIMIT} s")
        time.sleep(0.01)
    return what()


def one_run(pw, deck: Path, title: str, no_browser: bool, folder: Path) -> Run:
    """`present DECK` once, to its first slide drawn; present stopped, the browser closed."""
    from .driver import stop_present
    hook = folder / "browser"
    hook.write_text(HOOK)
    hook.chmod(0o700)
    Path(f"{hook}.url").unlink(missing_ok=True)
    env = {**os.environ, "BROWSER": str(hook)}
    cmd = [sys.executable, "-m", "workshop", "present", str(deck)]
    run = Run(load=os.getloadavg()[0])
    seen: list[str] = []
    t0, epoch0 = time.monotonic(), time.time()
    proc = subprocess.Popen(cmd + (["--no-browser"] if no_browser else []), cwd=paths.ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    threading.Thread(target=_watch_output, args=(proc, run, t0, seen), daemon=True).start()
    chromium = None
    try:
        if no_browser:   # the presenter's browser, started with the command
            chromium = _launch(pw)
            address = _wait_for(lambda: run.marks.get("url_text"), proc, seen, t0, "a URL")
        else:            # the browser present asks for, started then
            url_file = Path(f"{hook}.url")
            _wait_for(url_file.exists, proc, seen, t0, "present opening the browser")
            run.marks["browser"] = time.monotonic() - t0
            address = url_file.read_text()
            chromium = _launch(pw)
        _first_slide(chromium, address, title, run, epoch0)
    finally:
        if chromium is not None:
            chromium.close()
        stop_present(proc)
    return run


def _launch(pw):
    exe = browser.find()
    if exe is None:
        raise errors.KitError(f"no browser to draw the slide in: {browser.INSTALL}")
    return pw.chromium.launch(executable_path=exe, headless=True, args=browser.ARGS)


def _first_slide(chromium, address: str, title: str, run: Run, epoch0: float) -> None:
    """`address` (the URL, or present's opener page that leads to it) in a 1280×720 page, to
    the first slide drawn: run.marks['page'] when the RISE page had come, ['slide'] then."""
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    page.goto(address)
    drawn = page.wait_for_function(DRAWN_JS, arg=title, polling=POLL,
                                   timeout=max(1, LIMIT - (time.time() - epoch0)) * 1000)
    run.marks["slide"] = drawn.json_value() / 1000 - epoch0
    came = page.evaluate(PAGE_JS)
    if came:
        run.marks["page"] = came / 1000 - epoch0


def report_line(k: int, run: Run) -> str:
    m = run.marks
    parts = [f"URL printed {m['url']:.1f} s" if "url" in m else None,
             f"browser asked {m['browser']:.1f} s" if "browser" in m else None,
             f"RISE page {m['page']:.1f} s" if "page" in m else None]
    return (f"  run {k}: {m['slide']:5.1f} s to the first slide   ("
            + ", ".join(p for p in parts if p) + f"; load {run.load:.1f} before)")


def bench(deck: Path, runs: int, no_browser: bool) -> list[Run]:
    """`runs` runs of present to the first slide of `deck`, each printed as it ends."""
    from playwright.sync_api import sync_playwright

    from ..processes import children, end_processes
    title = title_of(deck)
    done: list[Run] = []
    folder = Path(tempfile.mkdtemp(prefix="workshop-bench-"))
    try:
        with sync_playwright() as pw:
            for k in range(1, runs + 1):
                done.append(one_run(pw, deck, title, no_browser, folder))
                print(report_line(k, done[-1]), flush=True)
                time.sleep(2)   # the last run's server and kernel gone before the next starts
    finally:   # (Playwright's own process ended with its block)
        end_processes(children())
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench-present", description=__doc__.split("\n\n")[0])
    ap.add_argument("deck", nargs="?", default="03", help="03, 3, a name or a path (default 03)")
    ap.add_argument("--runs", type=int, default=5, help="how many runs (default 5)")
    ap.add_argument("--no-browser", action="store_true",
                    help="present --no-browser, the browser started with the command")
    args = ap.parse_args(argv)
    try:
        if args.runs < 1:
            raise errors.KitError("--runs: at least 1")
        deck = nbs.select([args.deck], among=nbs.decks(), what="deck")[0]
        how = ("present --no-browser, a browser started with it" if args.no_browser else
               "present opens the browser (Chromium started when it asks)")
        print(f"bench-present: {deck.stem}, {args.runs} run(s), {how}; "
              f"{os.cpu_count()} CPUs", flush=True)
        done = bench(deck, args.runs, args.no_browser)
    except errors.KitError as e:
        print(f"bench-present: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bench-present: interrupted", file=sys.stderr)
        return 130
    times = [r.marks["slide"] for r in done]
    print(f"bench-present: median {statistics.median(times):.1f} s to the first slide "
          f"(min {min(times):.1f}, max {max(times):.1f}); load average (1 min) "
          f"{statistics.median(r.load for r in done):.1f} before the runs (median), "
          f"{os.getloadavg()[0]:.1f} now", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
