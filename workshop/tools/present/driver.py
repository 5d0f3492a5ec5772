"""A RISE slideshow driven by Playwright in a real Chromium, as a presenter drives it.

`start_present` runs `present DECK` as a subprocess (as a presenter types it) and
`stop_present` ends it with Ctrl-C; `open_deck` gives a deck's RISE address on that server,
with a session of its own; `run_slide_cells` runs the present slide's code cells from the
slideshow (a click into each, Ctrl-Enter); `look_at_every_slide` walks a deck at three
projector sizes and says what does not fit. The browser tests (tests/test_present_*.py,
tests/test_presenter_tools.py) and the soak (`present/soak.py`, `scripts/soak`) use it; it
needs the `build` extra (Playwright) and a Chromium (`tools.browser`), and is given pages: it
starts no browser itself.

The JavaScript it runs in the page is in tools/page_scripts/ (each file says what it does).
What the slideshow or the server does not do raises DriverError, an AssertionError: under
pytest, a test's failure.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from .. import notebooks as nbs
from .. import paths, talk
from ..paths import page_script
from .server import call, session_for


class DriverError(AssertionError):
    """What the slideshow or the server did not do (an AssertionError, so a test that drives
    the slideshow fails, rather than errs, on it)."""


SHOTS = paths.BUILD / "screenshots"
# The sizes a deck is looked at (a laptop, a small projector, a full-HD projector): the slide is
# 1280×720 and Reveal scales it as a whole, so each must show all of it, nothing cropped.
SIZES = [(1280, 720), (1366, 768), (1920, 1080)]
LIMITS = {"code": 20, "text": 24}   # px at 1280×720 (in the slide's own px): code/outputs, text

# the page scripts the driver runs, in tools/page_scripts/ (each says what it does)
(MEASURE_JS, FITS_JS, FIRST_JS, NEXT_FRAGMENT_JS, NEXT_JS, HASHCHANGES_JS, RISE_CHOSE_JS,
 SLIDE_PROMPTS_JS, STEP_JS, GO_STEP_JS) = (page_script(f"{name}.js") for name in (
    "measure", "fits", "first", "next_fragment", "next", "hashchanges", "rise_chose",
    "slide_prompts", "step", "go_step"))
FRAGMENTS_JS = page_script("fragments.js").replace("__NEXT_FRAGMENT__", NEXT_FRAGMENT_JS)
WALK_JS = page_script("walk.js").replace("__MEASURE__", MEASURE_JS.strip()).replace(
    "__FRAGMENTS__", FRAGMENTS_JS).replace("__NEXT__", NEXT_JS)
BACK_WALK_JS = page_script("back_walk.js").replace(
    "__MEASURE__", MEASURE_JS.strip()).replace("__FRAGMENTS__", FRAGMENTS_JS)
# (a cell's prompt is set to this mark before each Ctrl-Enter: see run_slide_cells)
PRESSED = "[pressed]:"
# A chart's cell has its code hidden (metadata.jupyter.source_hidden, decks/rise.css): no
# editor to click into and no prompt JupyterLab numbers. RISE makes it the active cell and
# Ctrl-Enter runs it (page_scripts/rise_keys.js); its run is seen as its output area changing,
# and run_slide_cells gives HIDDEN for its prompt.
HIDDEN = "[code hidden]:"
WATCH_JS = ("(c) => { c.__workshopRan = false; new MutationObserver(() => { c.__workshopRan ="
            " true; }).observe(c.querySelector('.jp-OutputArea'), {childList: true,"
            " subtree: true}); }")


# ---------------------------------------------------------------------------- the server

def start_present(deck: str, port: int, env: dict | None = None, sigint_ignored=False,
                  prefix: list[str] | None = None, args: tuple[str, ...] = (),
                  wait: float = 120):
    """`present DECK` on `port` (env: changes to this environment, None unsets; sigint_ignored:
    started as a non-interactive shell's `cmd &` starts it, with SIGINT ignored; prefix: a
    command that runs it, e.g. a read-only mount namespace; args: more of present's flags, e.g.
    --rehearse; wait: seconds for the URL): (the process, the URL it printed). The process's
    output is a pipe the caller may read (what follows the URL line, or all once it ended)."""
    cmd = [sys.executable, "-m", "workshop", "present", deck, "--no-browser", "--port", str(port),
           *args]
    if sigint_ignored:   # the shell ignores it and exec keeps it ignored
        cmd = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *cmd]
    cmd = (prefix or []) + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, cwd=paths.ROOT,
                         env={k: v for k, v in {**os.environ, **(env or {})}.items()
                              if v is not None})   # None: unset
    seen, url = [], None
    end = time.monotonic() + wait
    while time.monotonic() < end and url is None:
        line = p.stdout.readline()
        if not line and p.poll() is not None:
            break
        seen.append(line)
        m = re.search(r"http://\S+", line)
        url = m.group(0) if m else None
    if url is None:
        p.kill()
        raise DriverError("present printed no URL:\n" + "".join(seen))
    return p, url


def stop_present(p) -> int:
    """Ctrl-C to `present` (SIGINT), a kill after 30 s without an end: its exit status."""
    if p.poll() is None:
        p.send_signal(signal.SIGINT)       # what Ctrl-C sends
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


def port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def base_token(url: str) -> tuple[str, str]:
    """(the server's address, its token) from the URL present printed."""
    u = urlparse(url)
    return f"{u.scheme}://{u.netloc}", u.query.split("token=")[1]


def kernel_processes(kernel_id: str) -> list[int]:
    """The ids of the processes whose command line names the kernel's connection file."""
    pids = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if f"kernel-{kernel_id}".encode() in f.read():
                    pids.append(int(d))
        except (OSError, ValueError):
            continue
    return pids


# ---------------------------------------------------------------------------- a deck on show

def executed_copy(folder: Path, deck: Path, text: str) -> Path:
    """`deck` with the outputs of its fresh-kernel run (`text`, the notebook's JSON), trusted
    (JupyterLab shows an untrusted notebook's pictures and HTML as plain text), in `folder`."""
    import nbformat
    from nbformat.sign import NotebookNotary
    nb = nbformat.reads(text, as_version=4)
    NotebookNotary().sign(nb)
    path = folder / deck.name
    nbformat.write(nb, path)
    return path


def open_deck(url: str, deck: Path) -> tuple[str, str | None]:
    """The RISE address of `deck` (a kit deck or an executed copy) on the server behind `url`,
    and the session started for it the way present starts one (None for the deck present itself
    opened)."""
    rel = deck.relative_to(paths.ROOT).as_posix()
    if f"/rise/{rel}?" in url:
        return url, None
    base, token = base_token(url)
    session = session_for(base, token, rel)["id"]
    return re.sub(r"/rise/[^?]+", f"/rise/{rel}", url), session


def close_session(url: str, session: str | None) -> None:
    """Shut the deck's kernel down once its test is over: six JAX kernels at once is load."""
    if session:
        base, token = base_token(url)
        call(base, token, f"/api/sessions/{session}", method="DELETE")


@contextlib.contextmanager
def slideshow(chromium, url: str, nb, path: Path):
    """A page on RISE's slideshow of `nb`, written to `path` (a folder the server behind `url`
    serves) with a session of its own, at 1280×720; the page and the kernel end after."""
    import nbformat
    nbformat.write(nb, path)
    deck_url, session = open_deck(url, path)
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(deck_url)
        page.wait_for_selector(".reveal .slides section.present", timeout=90_000)
        yield page
    finally:
        page.close()
        close_session(url, session)


def talk_slides(nb) -> list[int]:
    """The slide numbers (as RISE counts them, from 1) of `nb`'s talk path: its appendix may
    scroll, its talk may not."""
    stop = talk.talk_stop(nb)
    starts = [i for i, c in enumerate(nb.cells) if nbs.slide_type(c) in ("slide", "subslide")]
    return [n for n, i in enumerate(starts, 1) if i < stop]


def counter(i: int, n: int, talk: int) -> str:
    """What the slide counter reads on slide i of n (spaces aside) in a deck whose talk path is
    its first `talk` slides (page_scripts/rise_talk.js): "i/talk" on the talk path, "A3/28" on
    the appendix's third slide (the divider is its first); Reveal's own "i/n" with no
    appendix."""
    if talk >= n or talk <= 0:
        return f"{i}/{n}"
    return f"{i}/{talk}" if i <= talk else f"A{i - talk}/{n - talk}"


def notes_of_slide(nb, k: int) -> list[str]:
    """The notes cells' texts of slide k (1-based), whitespace collapsed."""
    starts = [i for i, c in enumerate(nb.cells) if nbs.slide_type(c) in ("slide", "subslide")]
    end = starts[k] if k < len(starts) else len(nb.cells)
    return [" ".join(c.source.split()) for c in nb.cells[starts[k - 1]:end]
            if nbs.slide_type(c) == "notes"]


# ---------------------------------------------------------------------------- running cells

def run_cell(page, cell, expect: str | None, timeout=90_000) -> str:
    """One code cell run (a click into it, Ctrl-Enter, which stays on the slide): its output's
    text, once it holds `expect` (when given)."""
    cell.query_selector(".cm-content").click(force=True)
    page.keyboard.press("Control+Enter")   # runs without moving to the next slide
    out = cell.wait_for_selector(".jp-OutputArea-output", timeout=timeout)
    if expect:
        page.wait_for_function("([el, t]) => el.innerText.includes(t)", arg=[out, expect],
                               timeout=timeout)
    page.keyboard.press("Escape")
    return out.inner_text()


def run_slide_cells(page, where: str, timeout=90_000) -> list[str]:
    """Each code cell of the present slide, from the slideshow: click into it, Ctrl-Enter (runs
    it and stays on the slide), as the presenter does, one after the other. The prompt is set
    to a mark before each press, so a keypress the page dropped is told from a run, also for a
    cell that ran before (scripts/soak's restart). Returns the prompts the cells end with. (The
    prompt is looked at every 50 ms: deck 01 runs 32 cells, and at 200 ms the waits alone were
    some 15 s of its run.) A cell in a fragment not yet shown is run once the cells above it
    have run and its fragment is shown, as the presenter does. A click into a cell that is not
    RISE's own choice waits for that choice to land first (page_scripts/rise_chose.js; no deck
    01 slide needs it, decks 03, 04 and 06 do, under --full and in the soak). `where` names
    the slide in what is raised."""
    cells = page.query_selector_all(
        ".reveal section.present:not(.stack) .jp-CodeCell:not(.reveal-skip)")
    prompts = []
    for cell in cells:
        # (its first line: a fragment not yet shown has no innerText)
        first = cell.evaluate("(c) => (c.querySelector('.cm-line') || {textContent: ''})"
                              ".textContent")
        _show_fragment_of(page, cell, f"{where}: 20 presses did not show the fragment of "
                                      f"“{first}”")
        # RISE's own choice of cell lands 450 ms after a change (page_scripts/rise_chose.js)
        try:
            page.wait_for_function(RISE_CHOSE_JS, arg=cell, timeout=5_000, polling=50)
        except Exception:
            raise DriverError(f"{where}: RISE did not make its own choice of cell active "
                              f"within 5 s (before “{first}”)") from None
        if cell.query_selector(".cm-content") is None:   # a chart's cell: its code hidden
            _run_hidden(page, cell, where, first or "a cell, its code hidden", timeout)
            prompts.append(HIDDEN)
            continue
        _press_until_it_runs(page, cell, f"{where}: Ctrl-Enter in “{first}”")
        _wait_until_it_ran(page, cell, where, first, timeout)
        prompts.append(cell.query_selector(".jp-InputArea-prompt").inner_text().strip())
    if cells:
        page.keyboard.press("Escape")
    return prompts


def _run_hidden(page, cell, where: str, first: str, timeout: int) -> None:
    """A cell whose code is hidden, run as the presenter runs it: once RISE has made it the
    active cell, Ctrl-Enter (no click: there is nothing to click into); then its output."""
    first = cell.evaluate("(c) => (c.querySelector('.jp-PlaceholderText') || {textContent: ''})"
                          ".textContent") or first
    try:
        page.wait_for_function("(c) => c.classList.contains('jp-mod-active')", arg=cell,
                               timeout=5_000, polling=50)
    except Exception:
        raise DriverError(f"{where}: RISE did not make “{first}” (its code hidden) the active "
                          "cell: Ctrl-Enter cannot reach it") from None
    cell.evaluate(WATCH_JS)
    deadline = time.monotonic() + 15   # (a press the page dropped: press again)
    while time.monotonic() < deadline:
        page.keyboard.press("Control+Enter")
        try:
            page.wait_for_function("(c) => c.__workshopRan", arg=cell, timeout=1_500,
                                   polling=50)
            break
        except Exception:
            continue
    try:
        page.wait_for_function("(c) => c.__workshopRan && !!c.querySelector("
                               "'.jp-OutputArea-output')", arg=cell, timeout=timeout,
                               polling=50)
    except Exception:
        page.screenshot(path=str(SHOTS / f"{where.replace(' ', '-')}-not-run.png"))
        raise DriverError(f"{where}: the cell “{first}” (its code hidden) did not run from the "
                          f"slideshow in {timeout // 1000} s") from None


def _show_fragment_of(page, cell, failed: str) -> None:
    """The fragment `cell` is in, shown (the cells above it have run), as the space bar shows
    it; `failed` is raised when 20 steps did not."""
    for _ in range(20):
        if not cell.evaluate("(c) => !!c.closest('div.fragment:not(.visible)')"):
            return
        page.evaluate(NEXT_FRAGMENT_JS)
    raise DriverError(failed)


def _press_until_it_runs(page, cell, pressed: str) -> None:
    """Ctrl-Enter in `cell` until the page takes it. A keypress the page dropped leaves the
    mark: press again, as a presenter would. A press that counts has changed the prompt by the
    time press() returns (Chromium answers it once the page has handled the key, and JupyterLab
    marks the cell running before it sends it), so 1.5 s a press is ample, for up to 15 s. A
    press that ran another cell of the slide raises: the cells ran out of order."""
    editor = cell.query_selector(".cm-content")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        cell.evaluate(f"(c) => {{ c.querySelector('.jp-InputArea-prompt').textContent ="
                      f" '{PRESSED}'; }}")
        before = page.evaluate(SLIDE_PROMPTS_JS)
        editor.scroll_into_view_if_needed()
        editor.click(force=True)
        page.keyboard.press("Control+Enter")
        try:
            page.wait_for_function(
                "(c) => c.querySelector('.jp-InputArea-prompt').textContent.trim()"
                f" !== '{PRESSED}'", arg=cell, timeout=1_500, polling=50)
            return
        except Exception:
            after = page.evaluate(SLIDE_PROMPTS_JS)
            ran = [f"{a[0]} {a[1]}" for b, a in zip(before, after)
                   if a[0] != b[0] and b[0] != PRESSED]
            if ran:
                raise DriverError(f"{pressed} ran another cell of the slide (now {ran[0]})") \
                    from None


def _wait_until_it_ran(page, cell, where: str, first: str, timeout: int) -> None:
    """`cell`'s prompt a number within `timeout` ms; else a screenshot in SHOTS, and raised."""
    try:
        page.wait_for_function(
            "(c) => /\\[\\d+\\]/.test(c.querySelector('.jp-InputArea-prompt').textContent)",
            arg=cell, timeout=timeout, polling=50)
    except Exception:
        page.screenshot(path=str(SHOTS / f"{where.replace(' ', '-')}-not-run.png"))
        prompt = cell.query_selector(".jp-InputArea-prompt").inner_text()
        raise DriverError(f"{where}: the cell “{first}” did not run from the slideshow "
                          f"in {timeout // 1000} s (prompt {prompt!r})") from None


# ---------------------------------------------------------------------------- the keys

# what the presenter (or a clicker) presses for the next step and the step back, in turn
# (page_scripts/rise_keys.js gives them their meaning)
NEXT_KEYS = ("ArrowRight", "ArrowDown", "Space", "PageDown")
BACK_KEYS = ("ArrowLeft", "ArrowUp", "PageUp", "Shift+Space")


def steps(nb) -> list[tuple[int, int, str]]:
    """Every step of a deck, in the order the keys take them: (slide from 1, fragments shown,
    the slide's type: "slide" starts a section, "subslide" goes down its stack). A slide with k
    fragments is k + 1 steps; a step back from a slide's first step shows the previous slide
    whole, as Reveal does."""
    frags: list[int] = []
    kinds: list[str] = []
    for c in nb.cells:
        kind = nbs.slide_type(c)
        if kind in ("slide", "subslide") or not frags:
            frags.append(0)
            kinds.append(kind if kind in ("slide", "subslide") else "slide")
        if kind == "fragment":
            frags[-1] += 1
    return [(i + 1, f, kinds[i]) for i, n in enumerate(frags) for f in range(n + 1)]


def press(page, key: str, want: tuple[int, int], label: str | None, where: str,
          by=None) -> list:
    """A real key press (Playwright's keyboard, as a presenter's or a clicker's key reaches
    Chromium) in `page`, or in the window `by` (the notes window), then the slideshow at slide
    want[0] with want[1] fragments shown and its counter reading `label` (None: a notebook
    without the decks' RISE settings shows none) within 15 s (a loaded machine took over 5 s
    from the notes window once, CI's rehearsal), else DriverError: what the page
    shows (page_scripts/step.js)."""
    (by or page).keyboard.press(key)
    try:
        page.wait_for_function(f"([w, l]) => {{ const s = ({STEP_JS})(); return s[0] === w[0] "
                               "&& s[1] === w[1] && (l === null || s[2] === l); }",
                               arg=[list(want), label], timeout=15_000, polling=25)
    except Exception:
        got = page.evaluate(STEP_JS)
        focus = page.evaluate("() => { const a = document.activeElement; return a ? "
                              "a.tagName + '.' + String(a.className).slice(0, 60) : 'none'; }")
        raise DriverError(f"{where}: {key} should show slide {want[0]} with {want[1]} "
                          f"fragment(s), counter {label}; the page shows slide {got[0]} with "
                          f"{got[1]}, counter {got[2]} (the focus on {focus})") from None
    return page.evaluate(STEP_JS)


def go_step(page, slide: int, shown: int) -> None:
    """Straight to a slide with `shown` fragments (not by key: a test's starting point)."""
    page.evaluate(GO_STEP_JS, {"slide": slide, "shown": shown})
    page.wait_for_function(f"(w) => {{ const s = ({STEP_JS})(); return s[0] === w[0] && "
                           "s[1] === w[1]; }", arg=[slide, shown], timeout=10_000, polling=25)


def keys_walk(page, nb, first: int, forward: int, back: int, where: str) -> int:
    """From step `first` of steps(nb) (reached by go_step), `forward` presses of NEXT_KEYS in
    turn, then `back` of BACK_KEYS, each checked (the slide, its fragments, the counter), as
    far as the deck goes: the step it ends on."""
    all_steps, talk_n = steps(nb), len(talk_slides(nb))
    n = all_steps[-1][0]
    forward = min(forward, len(all_steps) - 1 - first)
    back = min(back, first + forward)
    go_step(page, *all_steps[first][:2])
    at = first
    for j in range(forward + back):
        at += 1 if j < forward else -1
        key = NEXT_KEYS[j % len(NEXT_KEYS)] if j < forward else \
            BACK_KEYS[(j - forward) % len(BACK_KEYS)]
        slide, shown, _ = all_steps[at]
        press(page, key, (slide, shown), counter(slide, n, talk_n), where)
    return at


def key_window(nb, length: int = 6) -> int:
    """Where a short walk of `length` steps forward covers the most of the three kinds of step
    the keys must take one at a time: a fragment, down a section's stack, on to the next
    section (all three where the deck has them; a deck of plain slides, from its start)."""
    all_steps = steps(nb)
    best, start = -1, 0
    for at in range(max(1, len(all_steps) - length)):
        ahead = all_steps[at + 1:at + length + 1]
        kinds = len({"fragment" if f else kind for _, f, kind in ahead})
        if kinds > best:
            best, start = kinds, at
    return start


# ---------------------------------------------------------------------------- every slide

def look_at_every_slide(page, deck: Path, n_slides: int, run: bool,
                        talk_path: list[int], sizes=SIZES, thin=()) -> list[str]:
    """Each slide of the deck, all fragments shown, at each of `sizes` (its cells run at the
    first when `run`): what is wrong, as 'deck slide N at WxH: problem'; the middle size walks
    back from the last slide, where the first size ended. Screenshots (the first two slides, and
    any with a problem) go to SHOTS. A slide of `talk_path` (slide numbers) that needs the wheel
    after its cells ran is a problem: the presenter would scroll while the room watches. Each
    slide's counter must read as `counter` says (the talk path counted apart from the
    appendix). A talk slide's content reaches FILL_SHARE of its height (grown to fill it:
    page_scripts/fill.js), but on a title, a divider, or a slide whose title is in `thin`."""
    from ...config import FILL_SHARE
    labels = [counter(i, n_slides, len(talk_path)) for i in range(1, n_slides + 1)]
    limits = {**LIMITS, "talk": talk_path, "labels": labels, "fill": FILL_SHARE,
              "thin": list(thin)}
    problems, checked = [], False   # (checked: the hashchange events of a walk)
    for k, (w, h) in enumerate(sizes):
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_function(FITS_JS, arg=[w, h], timeout=10_000, polling=200)
        size = f"{w}x{h}"
        shot = lambda i, size=size: page.screenshot(
            path=str(SHOTS / f"{deck.stem}-{i}-{size}.png"))
        # the first size's walk ended on the last slide, unless a slide with a problem was
        # shot (that went back to it): then this size walks forward, as the others do
        if k == 1 and n_slides > 2 and not problems:
            problems += _walk_back(page, deck, n_slides, limits, size, shot)
            continue
        page.evaluate(FIRST_JS)
        live = run and k == 0
        problems += _step_through(page, deck, n_slides, limits, live, size, shot)
        if live or n_slides <= 2:
            continue
        got, counted = _walk_the_rest(page, deck, n_slides, limits, size, shot,
                                      count=not checked)
        problems += got
        checked = checked or counted
    if checked:   # an address the presenter goes to (typed, Back) still moves the slides
        # (once the walk's queued work has run: set at once, the address was written back to
        # the last slide's before its event came, and Reveal read that)
        page.evaluate(HASHCHANGES_JS)
        page.evaluate("() => { location.hash = '#/0'; }")
        page.wait_for_function(
            "() => document.querySelector('.reveal .slide-number').innerText"
            ".replace(/ /g, '').startsWith('1/')", timeout=10_000, polling=50)
    return problems


def _walk_back(page, deck: Path, n_slides: int, limits: dict, size: str, shot) -> list[str]:
    """The middle size: from the last slide back to the first in one call of the page (the
    first size ended on the last), then the first two slides shot, all fragments shown."""
    walk = page.evaluate(BACK_WALK_JS, {"n": n_slides, "limits": limits})
    problems = _walked(page, deck, walk, size, shot)
    order = [i for i, _ in walk["out"]]
    if order != list(range(n_slides, 0, -1)):
        raise DriverError(f"{deck.stem}: the walk back at {size} showed slides {order}, not "
                          f"{n_slides} down to 1")
    page.evaluate(FIRST_JS)   # (at slide 1 already unless a problem was shot)
    page.evaluate(FRAGMENTS_JS)
    shot(1)
    page.evaluate(NEXT_JS)
    page.evaluate(FRAGMENTS_JS)
    shot(2)
    return problems


def _step_through(page, deck: Path, n_slides: int, limits: dict, live: bool, size: str,
                  shot) -> list[str]:
    """From the first slide, one slide a call, measured: every slide with its cells run when
    `live`, else the first two (the in-page walk does the rest)."""
    problems = []
    for i in range(1, n_slides + 1 if live else min(2, n_slides) + 1):
        if live:   # (it shows a fragment once the cells above it have run)
            run_slide_cells(page, f"{deck.stem} slide {i}")
        page.evaluate(FRAGMENTS_JS)
        shown = page.inner_text(".reveal .slide-number").replace(" ", "")
        if shown != limits["labels"][i - 1]:
            raise DriverError(f"{deck.stem}: expected slide {i} "
                              f"({limits['labels'][i - 1]}), RISE shows {shown}")
        got = page.evaluate(MEASURE_JS, limits)
        problems += [f"{deck.stem} slide {i} at {size}: {p}" for p in got["problems"]]
        if i <= 2 or got["problems"]:
            shot(i)
        if i < n_slides:
            page.evaluate(NEXT_JS)
    return problems


def _walk_the_rest(page, deck: Path, n_slides: int, limits: dict, size: str, shot,
                   count: bool) -> tuple[list[str], bool]:
    """Slides 3 to the last in one call of the page: (the problems, whether the hashchange
    events were counted, as they are when `count`)."""
    start = page.evaluate(HASHCHANGES_JS) if count else None
    walk = page.evaluate(WALK_JS, {"first": 3, "n": n_slides, "limits": limits})
    if start is not None:
        # the walk wrote the address at every change in one go; the page script dropped the
        # stale addresses' events, so one reached Reveal, not one a change
        changes = page.evaluate(HASHCHANGES_JS) - start
        if changes != 1:
            raise DriverError(f"{deck.stem}: {changes} hashchange events reached Reveal")
    return _walked(page, deck, walk, size, shot), start is not None


def _walked(page, deck: Path, walk: dict, size: str, shot) -> list[str]:
    """A walk's problems as 'deck slide N at WxH: problem' lines, once it is known to have shown
    the slides it expected; a picture of (up to five of) the slides with a problem."""
    if "expected" in walk:
        raise DriverError(f"{deck.stem}: expected slide {walk.get('expected')}, RISE shows "
                          f"{walk.get('shown')}")
    bad = sorted((i, got) for i, got in walk["out"] if got)
    for i, _ in bad[:5]:   # back to that slide
        page.evaluate(FIRST_JS)
        for _ in range(i - 1):
            page.evaluate(FRAGMENTS_JS)
            page.evaluate(NEXT_JS)
        page.evaluate(FRAGMENTS_JS)
        shot(i)
    return [f"{deck.stem} slide {i} at {size}: {p}" for i, got in bad for p in got]
