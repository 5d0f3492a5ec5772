"""End to end: the present command's server, every deck in RISE in a real headless Chromium:
the deck `present 01` opens with every code cell run from the slideshow, every other deck with
the outputs of the session's fresh-kernel run (and its setup cell run from the slideshow),
every slide of every deck measured at three projector sizes, nothing fetched from off the
machine."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest
from conftest import tiny

from workshop.tools import browser, paths, talk
from workshop.tools import notebooks as nbs
from workshop.tools.paths import page_script
from workshop.tools.present import rehearse
from workshop.tools.present.extension import MATHJAX, uses_tex
from workshop.tools.present.server import call, free_port, session_for

TEST_SCRIPTS = Path(__file__).with_name("page_scripts")

SHOTS = paths.BUILD / "screenshots"
# The sizes a deck is looked at (a laptop, a small projector, a full-HD projector): the slide is
# 1280×720 and Reveal scales it as a whole, so each must show all of it, nothing cropped.
SIZES = [(1280, 720), (1366, 768), (1920, 1080)]
LIMITS = {"code": 20, "text": 24}   # px at 1280×720 (in the slide's own px): code/outputs, text

# the page scripts the test runs, in tests/page_scripts/ (each says what it does)
(MEASURE_JS, FITS_JS, FIRST_JS, NEXT_FRAGMENT_JS, NEXT_JS, HASHCHANGES_JS, RISE_CHOSE_JS,
 SLIDE_PROMPTS_JS) = (page_script(f"{name}.js", TEST_SCRIPTS) for name in (
    "measure", "fits", "first", "next_fragment", "next", "hashchanges", "rise_chose",
    "slide_prompts"))
FRAGMENTS_JS = page_script("fragments.js", TEST_SCRIPTS).replace(
    "__NEXT_FRAGMENT__", NEXT_FRAGMENT_JS)


@pytest.fixture(scope="module")
def playwright_session():
    """One Playwright per module: a second sync_playwright in the same process refuses."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def chromium(playwright_session):
    exe = browser.find()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail(f"no browser for the RISE test: {browser.INSTALL}")
        pytest.skip(f"no browser: {browser.INSTALL}")
    b = playwright_session.chromium.launch(executable_path=exe, headless=True, args=browser.ARGS)
    yield b
    b.close()


def test_every_page_script_is_javascript_a_browser_parses(chromium):
    # the scripts the kit and this test run in pages are files (read by their readers and by
    # this test), not strings inside Python: each parses, its placeholders filled in, and a
    # script with a syntax error is caught by the same check
    import re
    scripts = sorted(paths.PAGE_SCRIPTS.glob("*.js")) + sorted(TEST_SCRIPTS.glob("*.js"))
    assert len(scripts) >= 10
    page = chromium.new_page()
    try:
        parses = "src => { try { new Function(src); return ''; } catch (e) { return String(e); } }"
        assert page.evaluate(parses, "(a) => { return a +; }").startswith("SyntaxError")
        bad = {}
        for js in scripts:
            text = re.sub(r"__[A-Z_]+__", "null", js.read_text(encoding="utf-8"))
            said = page.evaluate(parses, text)
            if said:
                bad[js.name] = said
        assert bad == {}
    finally:
        page.close()


def start_present(deck: str, port: int, env: dict | None = None, sigint_ignored=False,
                  prefix: list[str] | None = None):
    """`present DECK` on `port` (env: changes to this environment, None unsets; sigint_ignored:
    started as a non-interactive shell's `cmd &` starts it, with SIGINT ignored; prefix: a
    command that runs it, e.g. READ_ONLY)."""
    cmd = [sys.executable, "-m", "workshop", "present", deck, "--no-browser", "--port", str(port)]
    if sigint_ignored:   # the shell ignores it and exec keeps it ignored
        cmd = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *cmd]
    cmd = (prefix or []) + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, cwd=paths.ROOT,
                         env={k: v for k, v in {**os.environ, **(env or {})}.items()
                              if v is not None})   # None: unset
    seen, url = [], None
    end = time.monotonic() + 120
    while time.monotonic() < end and url is None:
        line = p.stdout.readline()
        if not line and p.poll() is not None:
            break
        seen.append(line)
        m = re.search(r"http://\S+", line)
        url = m.group(0) if m else None
    if url is None:
        p.kill()
        pytest.fail("present printed no URL:\n" + "".join(seen))
    return p, url


def stop_present(p) -> int:
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


def run_cell(page, cell, expect: str | None, timeout=90_000) -> str:
    cell.query_selector(".cm-content").click(force=True)
    page.keyboard.press("Control+Enter")   # runs without moving to the next slide
    out = cell.wait_for_selector(".jp-OutputArea-output", timeout=timeout)
    if expect:
        page.wait_for_function("([el, t]) => el.innerText.includes(t)", arg=[out, expect],
                               timeout=timeout)
    page.keyboard.press("Escape")
    return out.inner_text()


@pytest.fixture(scope="module")
def presenting(tmp_path_factory):
    """One `present 01` server for every deck (a server start is the slow part): deck 01 at the
    URL it printed, the others at the same server's RISE address for their path. The presenter's
    Jupyter config tries to turn the XSRF check and the output rate limit off (present keeps
    them on)."""
    cfg = tmp_path_factory.mktemp("jupyter-config")
    (cfg / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {
        "disable_check_xsrf": True, "iopub_data_rate_limit": 1e12}}))
    port = free_port()
    started = time.time()
    proc, url = start_present("01", port, env={"JUPYTER_CONFIG_DIR": str(cfg)})
    state = {"proc": proc, "url": url, "port": port, "offsite": [], "started": started}
    yield state
    stop_present(proc)


@pytest.fixture(scope="module")
def executed_decks():
    """A folder the present server serves (it serves the checkout) for the decks as the
    session's fresh kernels ran them, beside copies of the decks' stylesheets."""
    folder = paths.BUILD / f"rise-executed-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    for css in paths.DECKS.glob("*.css"):
        shutil.copy(css, folder / css.name)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def executed_copy(folder, deck, text: str):
    """`deck` with the outputs of its fresh-kernel run, trusted (JupyterLab shows an untrusted
    notebook's pictures and HTML as plain text)."""
    nb = nbformat.reads(text, as_version=4)
    from nbformat.sign import NotebookNotary
    NotebookNotary().sign(nb)
    path = folder / deck.name
    nbformat.write(nb, path)
    return path


def open_deck(url: str, deck) -> tuple[str, str | None]:
    """The RISE address of `deck` (a kit deck or an executed copy) on the server behind `url`,
    and the session started for it the way present starts one (None for the deck present itself
    opened)."""
    rel = deck.relative_to(paths.ROOT).as_posix()
    if f"/rise/{rel}?" in url:
        return url, None
    u = urlparse(url)
    base, token = f"{u.scheme}://{u.netloc}", u.query.split("token=")[1]
    session = session_for(base, token, rel)["id"]
    return re.sub(r"/rise/[^?]+", f"/rise/{rel}", url), session


def close_session(url: str, session: str | None) -> None:
    """Shut the deck's kernel down once its test is over: six JAX kernels at once is load."""
    if session:
        u = urlparse(url)
        call(f"{u.scheme}://{u.netloc}", u.query.split("token=")[1],
             f"/api/sessions/{session}", method="DELETE")


def run_slide_cells(page, where: str, timeout=90_000) -> list[str]:
    """Each code cell of the present slide, from the slideshow: click into it, Ctrl-Enter (runs
    it and stays on the slide), as the presenter does, one after the other. The prompt is set
    to a mark before each press, so a keypress the page dropped is told from a run, also for a
    cell that ran before (scripts/soak's restart). Returns the prompts the cells end with. (The
    prompt is looked at every 50 ms: deck 01 runs 32 cells, and at 200 ms the waits alone were
    some 15 s of its run.) A cell in a fragment not yet shown is run once the cells above it
    have run and its fragment is shown, as the presenter does. A click into a cell that is not
    RISE's own choice waits for that choice to land first (page_scripts/rise_chose.js; no deck
    01 slide needs it, decks 03, 04 and 06 do, under --full and in the soak)."""
    cells = page.query_selector_all(
        ".reveal section.present:not(.stack) .jp-CodeCell:not(.reveal-skip)")
    prompts = []
    for cell in cells:
        editor = cell.query_selector(".cm-content")
        # (its first line: a fragment not yet shown has no innerText)
        first = cell.evaluate("(c) => (c.querySelector('.cm-line') || {textContent: ''})"
                              ".textContent")
        for _ in range(20):   # its fragment, shown (the cells above it have run)
            if not cell.evaluate("(c) => !!c.closest('div.fragment:not(.visible)')"):
                break
            page.evaluate(NEXT_FRAGMENT_JS)
        else:
            raise AssertionError(f"{where}: 20 presses did not show the fragment of “{first}”")
        # RISE's own choice of cell lands 450 ms after a change (page_scripts/rise_chose.js)
        try:
            page.wait_for_function(RISE_CHOSE_JS, arg=cell, timeout=5_000, polling=50)
        except Exception:
            raise AssertionError(f"{where}: RISE did not make its own choice of cell active "
                                 f"within 5 s (before “{first}”)") from None
        # a keypress the page dropped leaves the mark: press again, as a presenter would. A
        # press that counts has changed the prompt by the time press() returns (Chromium
        # answers it once the page has handled the key, and JupyterLab marks the cell running
        # before it sends it), so 1.5 s a press is ample, for up to 15 s. A press that ran
        # another cell of the slide fails: the cells ran out of order
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            cell.evaluate("(c) => { c.querySelector('.jp-InputArea-prompt').textContent ="
                          " '[pressed]:'; }")
            before = page.evaluate(SLIDE_PROMPTS_JS)
            editor.scroll_into_view_if_needed()
            editor.click(force=True)
            page.keyboard.press("Control+Enter")
            try:
                page.wait_for_function(
                    "(c) => c.querySelector('.jp-InputArea-prompt').textContent.trim()"
                    " !== '[pressed]:'", arg=cell, timeout=1_500, polling=50)
                break
            except Exception:
                after = page.evaluate(SLIDE_PROMPTS_JS)
                ran = [f"{a[0]} {a[1]}" for b, a in zip(before, after)
                       if a[0] != b[0] and b[0] != "[pressed]:"]
                assert not ran, (f"{where}: Ctrl-Enter in “{first}” ran another cell of the "
                                 f"slide (now {ran[0]})")
        try:
            page.wait_for_function(
                "(c) => /\\[\\d+\\]/.test(c.querySelector('.jp-InputArea-prompt').textContent)",
                arg=cell, timeout=timeout, polling=50)
        except Exception:
            page.screenshot(path=str(SHOTS / f"{where.replace(' ', '-')}-not-run.png"))
            prompt = cell.query_selector(".jp-InputArea-prompt").inner_text()
            raise AssertionError(f"{where}: the cell “{first}” did not run from the slideshow "
                                 f"in {timeout // 1000} s (prompt {prompt!r})") from None
        prompts.append(cell.query_selector(".jp-InputArea-prompt").inner_text().strip())
    if cells:
        page.keyboard.press("Escape")
    return prompts


WALK_JS = page_script("walk.js", TEST_SCRIPTS).replace("__MEASURE__", MEASURE_JS.strip()).replace(
    "__FRAGMENTS__", FRAGMENTS_JS).replace("__NEXT__", NEXT_JS)
BACK_WALK_JS = page_script("back_walk.js", TEST_SCRIPTS).replace(
    "__MEASURE__", MEASURE_JS.strip()).replace("__FRAGMENTS__", FRAGMENTS_JS)

def talk_slides(nb) -> list[int]:
    """The slide numbers (as RISE counts them, from 1) of `nb`'s talk path: its appendix may
    scroll, its talk may not."""
    stop = talk.talk_stop(nb)
    starts = [i for i, c in enumerate(nb.cells) if nbs.slide_type(c) in ("slide", "subslide")]
    return [n for n, i in enumerate(starts, 1) if i < stop]


def look_at_every_slide(page, deck, n_slides: int, run: bool, talk_path: list[int]) -> list[str]:
    """Each slide of the deck, all fragments shown, at each of SIZES (its cells run at the
    first when `run`): what is wrong, as 'deck slide N at WxH: problem'; the middle size walks
    back from the last slide, where the first size ended. Screenshots (the first two slides, and
    any with a problem) go to SHOTS. A slide of `talk_path` (slide numbers) that needs the wheel
    after its cells ran is a problem: the presenter would scroll while the room watches."""
    limits = {**LIMITS, "talk": talk_path}
    problems, checked = [], False   # (checked: the hashchange events of a walk)
    for k, (w, h) in enumerate(SIZES):
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_function(FITS_JS, arg=[w, h], timeout=10_000, polling=200)
        shot = lambda i, w=w, h=h: page.screenshot(
            path=str(SHOTS / f"{deck.stem}-{i}-{w}x{h}.png"))
        # the first size's walk ended on the last slide, unless a slide with a problem was
        # shot (that went back to it): then this size walks forward, as the others do
        if k == 1 and n_slides > 2 and not problems:
            walk = page.evaluate(BACK_WALK_JS, {"n": n_slides, "limits": limits})
            problems += _walked(page, deck, walk, f"{w}x{h}", shot)
            assert [i for i, _ in walk["out"]] == list(range(n_slides, 0, -1))
            page.evaluate(FIRST_JS)   # (at slide 1 already unless a problem was shot)
            page.evaluate(FRAGMENTS_JS)
            shot(1)
            page.evaluate(NEXT_JS)
            page.evaluate(FRAGMENTS_JS)
            shot(2)
            continue
        page.evaluate(FIRST_JS)
        live = run and (w, h) == SIZES[0]
        for i in range(1, n_slides + 1 if live else min(2, n_slides) + 1):
            if live:   # (it shows a fragment once the cells above it have run)
                run_slide_cells(page, f"{deck.stem} slide {i}")
            page.evaluate(FRAGMENTS_JS)
            shown = page.inner_text(".reveal .slide-number").replace(" ", "")
            assert shown == f"{i}/{n_slides}", f"{deck.stem}: expected slide {i}, RISE shows {shown}"
            got = page.evaluate(MEASURE_JS, limits)
            problems += [f"{deck.stem} slide {i} at {w}x{h}: {p}" for p in got["problems"]]
            if i <= 2 or got["problems"]:
                shot(i)
            if i < n_slides:
                page.evaluate(NEXT_JS)
        if live or n_slides <= 2:
            continue
        start = None if checked else page.evaluate(HASHCHANGES_JS)
        walk = page.evaluate(WALK_JS, {"first": 3, "n": n_slides, "limits": limits})
        if start is not None:
            # the walk wrote the address at every change in one go; the page script dropped the
            # stale addresses' events, so one reached Reveal, not one a change
            changes = page.evaluate(HASHCHANGES_JS) - start
            assert changes == 1, f"{deck.stem}: {changes} hashchange events reached Reveal"
            checked = True
        problems += _walked(page, deck, walk, f"{w}x{h}", shot)
    if checked:   # an address the presenter goes to (typed, Back) still moves the slides
        # (once the walk's queued work has run: set at once, the address was written back to
        # the last slide's before its event came, and Reveal read that)
        page.evaluate(HASHCHANGES_JS)
        page.evaluate("() => { location.hash = '#/0'; }")
        page.wait_for_function(
            "() => document.querySelector('.reveal .slide-number').innerText"
            ".replace(/ /g, '').startsWith('1/')", timeout=10_000, polling=50)
    return problems


def _walked(page, deck, walk, size: str, shot) -> list[str]:
    """A walk's problems as 'deck slide N at WxH: problem' lines, once it is known to have shown
    the slides it expected; a picture of (up to five of) the slides with a problem."""
    assert "expected" not in walk, \
        f"{deck.stem}: expected slide {walk.get('expected')}, RISE shows {walk.get('shown')}"
    bad = sorted((i, got) for i, got in walk["out"] if got)
    for i, _ in bad[:5]:   # back to that slide
        page.evaluate(FIRST_JS)
        for _ in range(i - 1):
            page.evaluate(FRAGMENTS_JS)
            page.evaluate(NEXT_JS)
        page.evaluate(FRAGMENTS_JS)
        shot(i)
    return [f"{deck.stem} slide {i} at {size}: {p}" for i, got in bad for p in got]


@pytest.mark.browser
@pytest.mark.parametrize("deck", nbs.decks()[:1], ids=lambda p: p.stem)   # 02–06: its twin in
def test_deck_opens_in_rise_and_every_slide_fits(chromium, presenting,   # test_present_decks
                                                  executed_decks, runs, deck):
    # The deck present opened runs every code cell from the slideshow, as the presenter does
    # (the kernel-side truth of every cell of every deck is test_notebooks' fresh-kernel run);
    # the others show that run's outputs, which is what a slide's layout depends on.
    live = f"/rise/{deck.relative_to(paths.ROOT).as_posix()}?" in presenting["url"] or \
        bool(os.environ.get("WORKSHOP_TEST_FULL"))   # scripts/test --full: every deck live
    ran = None if live else runs[(deck, None)][1]
    nb = nbs.read(deck) if live else nbformat.reads(ran, as_version=4)   # what RISE shows
    n_slides = sum(nbs.slide_type(c) in ("slide", "subslide") for c in nb.cells)
    url = presenting["url"]
    assert urlparse(url).hostname == "127.0.0.1" and "token=" in url
    assert "/rise/decks/01-" in url, "present 01 opens deck 01"
    offsite = presenting["offsite"]
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    errors = []
    page.on("console", lambda m: errors.append(m.text[:300]) if m.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)

    def guard(route):
        host = urlparse(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in browser.LOOPBACK:
            route.continue_()
        else:
            offsite.append(route.request.url)
            route.abort()
    page.route("**/*", guard)
    shown = deck if live else executed_copy(executed_decks, deck, ran)
    deck_url, session = open_deck(url, shown)
    page.goto(deck_url)
    page.wait_for_selector(".reveal .slides section.present", timeout=90_000)
    leaves = page.evaluate(
        "() => document.querySelectorAll('.reveal .slides section:not(.stack)').length")
    assert leaves == n_slides
    assert page.inner_text(".reveal .slide-number").replace(" ", "") == f"1/{n_slides}"
    assert nb.metadata.workshop.title in page.inner_text("#rise-footer")
    assert MATHJAX in page.evaluate(DISABLED_JS), f"{deck.stem} opened with MathJax"

    setup = page.query_selector(".reveal section.present .jp-CodeCell")
    if live:   # the deck present opened runs its setup cell from the slideshow; the others show
        assert "8 CPU devices" in run_cell(page, setup, "8 CPU devices")   # their run's banner
    else:
        assert "8 CPU devices" in setup.inner_text()
    if live:
        page.evaluate("() => document.querySelector('.reveal .controls .navigate-right')"
                      ".click()")
        page.wait_for_timeout(800)
        cell = page.query_selector(".reveal section.present .jp-CodeCell")
        text = run_cell(page, cell, None)
        pictures = cell.query_selector_all(
            ".jp-OutputArea-output img, .jp-OutputArea-output svg")
        assert text.strip() or pictures, "the cell's output is empty"
        assert "Error" not in text and "Traceback" not in text, text
    else:   # the run's pictures are shown as pictures (a trusted notebook), not as text
        pictures = page.evaluate("() => document.querySelectorAll('.jp-OutputArea-output "
                                 "img, .jp-OutputArea-output svg').length")
        made = sum(bool({"image/png", "image/svg+xml"} & set(o.get("data", {})))
                   for c in nb.cells for o in c.get("outputs", []))
        assert pictures >= made, f"{deck.stem}: {made} pictures in the run, {pictures} shown"
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in [SHOTS / f"{deck.stem}.png", *SHOTS.glob(f"{deck.stem}-*.png")]:
        old.unlink(missing_ok=True)   # (an earlier run's picture of a problem since mended)
    page.screenshot(path=str(SHOTS / f"{deck.stem}.png"))

    problems = look_at_every_slide(page, deck, n_slides, run=live, talk_path=talk_slides(nb))
    # (MathJax adds its stylesheet on its first typeset, math or none: it never ran here)
    assert page.evaluate(MATHJAX_RAN_JS) is False, f"{deck.stem}: MathJax ran"
    failed = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                           ".filter(o => o.dataset.mimeType === 'application/vnd.jupyter.stderr'"
                           " && /Traceback|Error/.test(o.innerText)).map(o => o.innerText.slice(0, 200))")
    assert failed == [], f"{deck.stem}: a cell failed when run from the slideshow: {failed}"
    page.close()
    close_session(url, session)
    assert offsite == [], f"the slideshow asked for addresses off this machine: {offsite}"
    assert errors == [], f"{deck.stem}: the browser console shows errors: {errors}"
    assert problems == [], "\n".join(problems[:40])


# the slide's scale, and the size of what Reveal draws outside the slide: the footer's and the
# slide number's type, an arrow's height (3.6 em of the controls' 6 px at 1280×720)
CHROME_JS = """() => {
  const size = (q) => parseFloat(getComputedStyle(document.querySelector(q)).fontSize);
  return [document.querySelector('.reveal .slides').getBoundingClientRect().width / 1280,
          {footer: size('#rise-footer'), number: size('.reveal .slide-number'),
           arrow: document.querySelector('.reveal .controls .navigate-right')
                    .getBoundingClientRect().height}];
}"""


@pytest.fixture
def real_window(playwright_session):
    """A headed Chromium in a virtual display (Xvfb): its window is resized as a window is,
    by the display (a projector plugged in, F11), not by a viewport or a synthetic event."""
    exe, xvfb = browser.find(), shutil.which("Xvfb")
    if exe is None or xvfb is None:
        why = "no Xvfb (apt-get install -y xvfb)" if exe else f"no browser: {browser.INSTALL}"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    n = next(n for n in range(90 + os.getpid() % 400, 1000)   # one no X server holds
             if not Path(f"/tmp/.X{n}-lock").exists())
    display = f":{n}"
    x = subprocess.Popen([xvfb, display, "-screen", "0", "2560x1440x24", "-nolisten", "tcp"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)   # (the display accepts clients within a moment)
        b = playwright_session.chromium.launch(
            executable_path=exe, headless=False, env={**os.environ, "DISPLAY": display},
            args=browser.ARGS + ["--window-size=1920,1080", "--window-position=0,0"])
        yield b
        b.close()
    finally:
        x.terminate()
        x.wait(timeout=10)


@pytest.mark.browser
def test_a_real_window_resize_refits_the_slide(real_window, presenting):
    # after the window changed size the slide kept the previous window's scale (cropped when
    # the window shrank, small when it grew): Reveal laid it out before JupyterLab had resized
    # its panel. The page script lays it out again once the size settles.
    context = real_window.new_context(no_viewport=True)
    page = context.new_page()
    try:
        page.goto(presenting["url"])
        page.wait_for_selector(".reveal .slides section.present", timeout=90_000)
        cdp = context.new_cdp_session(page)
        window = cdp.send("Browser.getWindowForTarget")["windowId"]
        measured = ("() => { const r = document.querySelector('.reveal .slides')"
                    ".getBoundingClientRect(); return [innerWidth, innerHeight, r.width]; }")
        for w, h in [(1366, 768), (2560, 1440), (1280, 720), (1600, 900)]:
            cdp.send("Browser.setWindowBounds", {"windowId": window,
                                                 "bounds": {"width": w, "height": h}})
            page.wait_for_function(f"() => Math.abs(innerWidth - {w}) < 4", timeout=10_000)
            try:   # the slide fills the new window, letterboxed: it fits within 2 s
                page.wait_for_function(
                    "() => { const r = document.querySelector('.reveal .slides')"
                    ".getBoundingClientRect(); return Math.abs(r.width - 1280 * "
                    "Math.min(innerWidth / 1280, innerHeight / 720)) < 2; }",
                    timeout=2_000, polling=100)
            except Exception:
                vw, vh, got = page.evaluate(measured)
                pytest.fail(f"after a resize to {w}×{h} the slide is {got:.0f} px wide in a "
                            f"{vw}×{vh} page (it should be "
                            f"{1280 * min(vw / 1280, vh / 720):.0f})")
            # the footer, the slide number and the arrows sit outside the scaled slide: they
            # are sized by the window as the slide is (16 px type at 1280×720, 32 at 2560×1440)
            scale, chrome = page.evaluate(CHROME_JS)
            for what, px in chrome.items():
                want = {"footer": 16, "number": 16, "arrow": 21.6}[what] * scale
                assert abs(px - want) < 1, f"{w}×{h}: the {what} is {px:.1f} px, not {want:.1f}"
    finally:
        context.close()


@contextlib.contextmanager
def slideshow(chromium, presenting, nb, path):
    """A page on RISE's slideshow of `nb`, written to `path` (in executed_decks: the server
    serves it) with a session of its own, at 1280×720; the page and the kernel end after."""
    nbformat.write(nb, path)
    url, session = open_deck(presenting["url"], path)
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(url)
        page.wait_for_selector(".reveal .slides section.present", timeout=90_000)
        yield page
    finally:
        page.close()
        close_session(presenting["url"], session)


def _nb(*cells, outputs=()):
    """A notebook of Markdown (str) and code (("code", source)) cells; `outputs` go to the
    last code cell."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c[1]) if isinstance(c, tuple)
                else nbformat.v4.new_markdown_cell(c) for c in cells]
    code = [c for c in nb.cells if c.cell_type == "code"]
    if code:
        code[-1].outputs = [nbformat.v4.new_output("display_data", data=d) for d in outputs]
    return nb


@pytest.mark.parametrize("nb, tex", [
    (_nb("## ∂f/∂x = 2·x, in Unicode", ("code", "print('$5')")), False),
    (_nb("a `latex` word in prose", ("code", "x = 1"), outputs=[{"text/plain": "$ 5"}]), False),
    (_nb(("code", 're.findall(r"\\[(\\w+)\\]\\(x$", s)')), False),   # a regex: code, not output
    (_nb(("code", "1"), outputs=[{"image/svg+xml": "<svg><text>$x$</text></svg>"}]), False),
    (_nb("Euler: $e^{i\\pi} + 1 = 0$"), True),
    (_nb("$$\\nabla f$$"), True),
    (_nb("inline \\\\(x^2\\\\)"), True),
    (_nb("display \\\\[x^2\\\\]"), True),
    (_nb("escaped \\(x^2\\): Markdown's parenthesis, in doubt"), True),
    (_nb("\\begin{align} a &= b \\end{align}"), True),
    (_nb("\\begin {align} a &= b \\end {align}"), True),
    (_nb("&#36;x^2&#36; from an entity"), True),
    (_nb("a `$HOME` in prose: in doubt, MathJax stays"), True),
    (_nb(("code", "1"), outputs=[{"text/latex": "x"}]), True),
    (_nb(("code", "1"), outputs=[{"text/html": "<b>$x$</b>"}]), True),
    (_nb(("code", "1"), outputs=[{"text/html": "<b>&#x24;x&#X24;</b>"}]), True),
    (_nb(("code", "1"), outputs=[{"text/markdown": "$x$"}]), True),
    (_nb(("code", "from IPython.display import Math")), True),
    (_nb(("code", "display(Latex('x'))")), True),
    (_nb(("code", "%%markdown\nx")), True),
    (_nb(("code", "%%html\n<p>x</p>")), True),
    (_nb(("code", "display_markdown('x', raw=True)")), True),
    (_nb(("code", "HTML('<p>x</p>')")), True),
    (_nb(("code", "import sympy")), True),
    (_nb(("code", "obj._repr_latex_()")), True),
], ids=["unicode", "plain-dollar", "regex", "svg", "inline", "display", "paren", "bracket",
        "escaped-paren", "begin", "begin-space", "entity", "code-span", "latex-out", "html-out",
        "html-entity", "md-out", "Math", "Latex", "md-magic", "html-magic", "display_markdown",
        "HTML", "sympy", "repr"])
def test_a_notebook_keeps_mathjax_wherever_it_may_have_tex(nb, tex):
    assert uses_tex(nb) is tex


def test_no_kit_notebook_needs_mathjax():
    # the rule the slideshow's speed rests on (math in Unicode): every deck and lab opens
    # without MathJax
    assert [p.name for p in nbs.all_notebooks() + sorted(paths.EXERCISES.glob("*.ipynb"))
            if uses_tex(nbs.read(p))] == []


DISABLED_JS = ("() => JSON.parse(document.getElementById('jupyter-config-data').textContent)"
               ".disabledExtensions")
MATHJAX_RAN_JS = "() => !!document.getElementById('MJX-CHTML-styles')"


@pytest.mark.browser
def test_a_notebook_with_tex_keeps_mathjax_in_the_slideshow(chromium, presenting,
                                                            executed_decks):
    # JupyterLab's MathJax sets itself up on a page's first typeset, a second of every
    # deck's opening: the decks open without it (their test: it never ran there), and a
    # notebook with TeX keeps it and shows its math typeset
    nb = _nb("## Euler\n\n$e^{i\\pi} + 1 = 0$")
    nb.cells[0].metadata = {"slideshow": {"slide_type": "slide"}}
    with slideshow(chromium, presenting, nb, executed_decks / "tex.ipynb") as page:
        assert MATHJAX not in page.evaluate(DISABLED_JS)
        page.wait_for_function("() => document.querySelectorAll('.reveal section.present "
                               "mjx-container').length > 0", timeout=20_000)
        assert page.evaluate(MATHJAX_RAN_JS) is True


@pytest.mark.browser
def test_a_file_map_takes_the_place_of_its_call_once_run(chromium, presenting, executed_decks):
    # a file map is the slide's picture: the call that builds it (kit bookkeeping, 40% of the
    # slide) shows until the presenter runs it, then gives way to the map (decks/rise.css)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## core.py", metadata={
        "slideshow": {"slide_type": "slide"}}), nbformat.v4.new_code_cell(
        'from workshop import file_map\nfile_map("jax._src.core", within=("Jaxpr", "Literal"),'
        ' reads=["Jaxpr"])')]
    shown = ("() => { const c = document.querySelector('.reveal section.present .jp-CodeCell');"
             " const h = (q) => { const e = c.querySelector(q); return e ? "
             "e.getBoundingClientRect().height : 0; }; return [h('.jp-Cell-inputWrapper'), "
             "h('.workshop-filemap')]; }")
    with slideshow(chromium, presenting, nb, executed_decks / "file-map.ipynb") as page:
        call_px, map_px = page.evaluate(shown)
        assert call_px > 20 and map_px == 0, "before its run the slide shows the call"
        assert run_slide_cells(page, "file map") == ["[1]:"]
        call_px, map_px = page.evaluate(shown)
        assert call_px == 0 and map_px > 200, (call_px, map_px)


@pytest.mark.robust
@pytest.mark.browser
def test_a_cell_that_prints_50_mb_leaves_the_slideshow_responsive(chromium, presenting,
                                                                  executed_decks):
    # Jupyter's output rate limit (which present keeps on, whatever a config says) stops the
    # flood after a few MB with a note; the page answers and the next slide's cell runs. The
    # same for a 20 MB picture and a 10 000-line traceback, in a deck of 500 cells
    nb = nbformat.v4.new_notebook()
    slide = lambda text: nbformat.v4.new_markdown_cell(text, metadata={
        "slideshow": {"slide_type": "slide"}})
    nb.cells = [slide("# Big"), nbformat.v4.new_code_cell(
        "for i in range(500_000): print('x' * 99)"), slide("## After"),
        nbformat.v4.new_code_cell("print('after')"), slide("## Picture"),
        nbformat.v4.new_code_cell("from IPython.display import Image, display\n"
                                  "display(Image(data=b'\\x89PNG' + bytes(20_000_000), "
                                  "format='png'))"),
        slide("## Traceback"), nbformat.v4.new_code_cell(
            "raise ValueError('\\n'.join(f'line {i}' for i in range(10_000)))"),
        slide("## Still here"), nbformat.v4.new_code_cell("print('still here')")]
    nb.cells += [slide(f"## Filler {k}") for k in range(500 - len(nb.cells))]
    with slideshow(chromium, presenting, nb, executed_decks / "big-output.ipynb") as page:
        t0 = time.monotonic()
        assert run_slide_cells(page, "big output", timeout=120_000) == ["[1]:"]
        assert time.monotonic() - t0 < 60
        shown = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                              ".map(o => o.innerText)")
        assert any("IOPub data rate exceeded" in t for t in shown)
        assert sum(map(len, shown)) < 10_000_000, "the flood was cut"
        page.evaluate(NEXT_JS)   # (a notebook without the decks' RISE settings: no number)
        page.wait_for_function("() => document.querySelector('.reveal section.present:not("
                               ".stack)').innerText.includes('After')", timeout=10_000)
        assert run_slide_cells(page, "after the big output", timeout=60_000) == ["[2]:"]
        for title, prompt in (("Picture", "[3]:"), ("Traceback", "[4]:"),
                              ("Still here", "[5]:")):
            t0 = time.monotonic()
            page.evaluate(NEXT_JS)
            page.wait_for_function("(t) => document.querySelector('.reveal section.present:"
                                   "not(.stack)').innerText.includes(t)", arg=title,
                                   timeout=10_000)
            assert run_slide_cells(page, title, timeout=60_000) == [prompt]
            assert time.monotonic() - t0 < 30, title
        shown = page.evaluate("() => [...document.querySelectorAll('.reveal section.present "
                              ".jp-OutputArea-output')].map(o => o.innerText)")
        assert [t.strip() for t in shown] == ["still here"], shown
        assert page.evaluate("() => document.querySelectorAll('.reveal .slides "
                             "section:not(.stack)').length") == \
            sum(c.cell_type == "markdown" for c in nb.cells) == 495   # every slide is there


def _notes_of_slide(nb, k: int) -> list[str]:
    """The notes cells' texts of slide k (1-based), whitespace collapsed."""
    starts = [i for i, c in enumerate(nb.cells) if nbs.slide_type(c) in ("slide", "subslide")]
    end = starts[k] if k < len(starts) else len(nb.cells)
    return [" ".join(c.source.split()) for c in nb.cells[starts[k - 1]:end]
            if nbs.slide_type(c) == "notes"]


# in the notes window: the upcoming preview's slide number and title (in the window's own
# px), the "Upcoming" label over it, and how many help buttons the previews show; null until
# the preview shows a slide (the first one it shows must be the next slide: it showed the
# deck's first slide for seconds)
UPCOMING_JS = """() => {
  const host = document.querySelector('#upcoming-slide'), f = host && host.querySelector('iframe');
  const doc = f && f.contentDocument, frames = [...document.querySelectorAll('iframe')];
  const title = doc && doc.querySelector(
    '.reveal .slides section.present:not(.stack) :is(h1, h2, h3)');
  if (!title || getComputedStyle(title).visibility === 'hidden') return null;
  const at = f.getBoundingClientRect();
  return {number: doc.querySelector('.reveal .slide-number').innerText,
          title_top: at.top + title.getBoundingClientRect().top,
          label_bottom: host.querySelector('.overlay-element').getBoundingClientRect().bottom,
          help: frames.filter(x => { const h = x.contentDocument &&
            x.contentDocument.querySelector('#help-b');
            return h && h.getBoundingClientRect().width > 0 &&
                   getComputedStyle(h).display !== 'none'; }).length};
}"""


# the notes window's two previews are RISE pages of their own: each has shown its slide (Reveal
# ready, the kit's page script no longer holding it back) once this is true
PREVIEWS_JS = """() => { const f = [...document.querySelectorAll('iframe')];
  return f.length >= 2 && f.every(x => { const d = x.contentDocument;
    return d && d.querySelector('.reveal.ready .slides section.present') &&
      !d.documentElement.classList.contains('workshop-waiting'); }); }"""


def test_the_notes_window_shows_the_present_slides_notes_once_and_paces_the_talk(chromium,
                                                                                 presenting):
    # T opens Reveal's notes window. Before workshop.tools.present.extension it showed each note
    # twice (jupyterlab-rise's asides hold the hidden editor too) and, as its previews loaded at
    # the first slide, sent the slideshow back to slide 1. And reveal.js's own pacing is on:
    # each slide carries its planned seconds (the kit's talk-time estimate), the notes window
    # says the time left against the plan, and each slide's notes start with its plan line
    nb = nbs.read(paths.DECKS / "01-run-it-first.ipynb")
    plan = rehearse.page_plan(nb)
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    page.goto(presenting["url"])
    page.wait_for_selector(".reveal .slides section.present", timeout=90_000)
    page.wait_for_function("(t) => [...document.querySelectorAll('.reveal .slides "
                           "section:not(.stack)')].map(s => +s.dataset.timing).join() === t",
                           arg=",".join(map(str, plan["timing"])), timeout=30_000)
    number = lambda: page.inner_text(".reveal .slide-number").replace(" ", "")
    page.evaluate(NEXT_JS)
    page.wait_for_function("() => document.querySelector('.reveal .slide-number')"
                           ".innerText.replace(/ /g, '').startsWith('2/')", timeout=10_000)
    page.mouse.click(640, 700)
    page.keyboard.press("Escape")
    with page.context.expect_page(timeout=15_000) as popup:
        page.keyboard.press("t")
    notes = popup.value
    value = ".speaker-controls-notes .value"
    t0 = time.monotonic()
    notes.wait_for_function(f"() => {{ const v = document.querySelector('{value}');"
                            " return v && v.innerText.trim(); }", timeout=60_000, polling=250)
    filled = time.monotonic() - t0
    # the previews load and report their own slide (they sent the slideshow back as they did);
    # the notes window holds each state it sends the slides back 500 ms (its debounce)
    notes.wait_for_function(PREVIEWS_JS, timeout=60_000, polling=250)
    notes.wait_for_timeout(1_500)
    shown = " ".join(notes.inner_text(value).split())
    starts = lambda k: [" ".join(re.sub(r"[*`]", "", n).split()[:8])   # as rendered
                        for n in _notes_of_slide(nb, k)]
    assert number().startswith("2/"), f"the notes window moved the slides to {number()}"
    for words in starts(2):   # each note once, rendered
        assert shown.count(words) == 1, (words, shown[:300])
    assert not any(w in shown for w in starts(1)), "slide 1's notes shown on slide 2"
    # the previews: the next slide upcoming, its title below the "Upcoming" label (it was
    # under it), and no help button on either (it covered the current slide's corner)
    notes.wait_for_function(f"() => ({UPCOMING_JS})() !== null", timeout=30_000, polling=250)
    upcoming = notes.evaluate(UPCOMING_JS)
    assert upcoming["number"].replace(" ", "").startswith("3/"), upcoming
    assert upcoming["title_top"] >= upcoming["label_bottom"], upcoming
    assert upcoming["help"] == 0, upcoming
    page.bring_to_front()
    page.evaluate(NEXT_JS)                 # the slides lead, the notes follow
    notes.wait_for_function(f"(w) => document.querySelector('{value}').innerText"
                            ".replace(/\\s+/g, ' ').includes(w)", arg=starts(3)[0],
                            timeout=15_000, polling=250)
    # PACING on slide 3: shown, ahead or on track, and the time left to the end of the slide
    # is its planned end less the time since T; the slide's plan line atop its notes
    k = 3
    notes.wait_for_function("() => { const p = document.querySelector('.speaker-controls-time "
                            ".pacing'); return p && getComputedStyle(p).display !== 'none' && "
                            "/ahead|on-track|behind/.test(p.className) && "
                            "/\\d/.test(p.innerText); }", timeout=60_000, polling=250)
    line = plan["lines"][k - 1]
    assert re.search(r"this slide \d+:\d\d · done by \d+:\d\d of \d+:\d\d", line), line
    notes.wait_for_function(f"(t) => document.querySelector('{value}').innerText"
                            ".replace(/\\s+/g, ' ').includes(t)", arg=line,
                            timeout=30_000, polling=250)
    # (the notes window updates PACING once a second, for the slide present then: slide 3's
    # time left is more than slide 2's planned end, as long as T was pressed under 90 s ago)
    planned_end, slide_s = sum(plan["timing"][:k]), plan["timing"][k - 1]
    notes.wait_for_function("([lo, hi]) => { const n = (document.querySelector("
                            "'.speaker-controls-time .pacing').innerText.match(/-?\\d+/g) || [])"
                            ".slice(0, 3).map(x => Math.abs(+x)); const s = n.length === 3 ? "
                            "n[0] * 3600 + n[1] * 60 + n[2] : -1; return lo < s && s <= hi; }",
                            arg=[planned_end - slide_s, planned_end], timeout=15_000, polling=250)
    left = notes.inner_text(".speaker-controls-time .pacing").replace("\n", "")
    h, m, s = (abs(int(x)) for x in re.findall(r"-?\d+", left)[:3])
    assert planned_end - slide_s < h * 3600 + m * 60 + s <= planned_end, (left, planned_end)
    pace = notes.get_attribute(".speaker-controls-time .pacing", "class")
    assert "ahead" in pace or "on-track" in pace, pace
    print(f"notes window filled in {filled:.1f} s; pacing {left.strip()}; {line}")
    notes.close()
    page.close()


def test_the_guide_says_when_rise_selects_a_cell_as_the_installed_schema_says():
    # decks/README.md's line on RISE's auto_select (the behaviour itself: run_slide_cells, which
    # fails when a Ctrl-Enter runs another cell than the one clicked)
    from jupyter_core.paths import jupyter_path
    schema = next((Path(root) / "jupyterlab-rise" / "schemas" / "jupyterlab-rise" / "plugin.json"
                   for root in jupyter_path("labextensions")
                   if (Path(root) / "jupyterlab-rise").is_dir()), None)
    assert schema is not None, "no jupyterlab-rise among the lab extensions"
    props = json.loads(schema.read_text(encoding="utf-8"))["properties"]
    assert props["auto_select"]["default"] == "code"
    assert props["auto_select_timeout"]["default"] == 450
    guide = " ".join((paths.DECKS / "README.md").read_text(encoding="utf-8").split())
    assert ("Half a second after each slide change or fragment step, jupyterlab-rise makes a "
            "code cell the active one") in guide
    assert "(its `auto_select`, after `auto_select_timeout`: 450 ms)" in guide
    # neither the decks (RISE reads `rise` and the older `livereveal`) nor present's own
    # settings change it
    keys = {"auto_select", "auto_select_timeout", "auto_select_fragment"}
    for deck in nbs.decks():
        meta = nbs.read(deck).metadata
        assert not keys & (set(meta.get("rise", {})) | set(meta.get("livereveal", {}))), deck
    from workshop.tools.present.server import SETTINGS
    assert not any("rise" in k for k in SETTINGS)


def test_presenting_never_autosaves_the_committed_deck(presenting):
    # JupyterLab autosaves a notebook two minutes after a cell runs: the server present starts
    # has autosave off (its own settings folder), so the deck's outputs are never written
    u = urlparse(presenting["url"])
    got = call(f"{u.scheme}://{u.netloc}", u.query.split("token=")[1],
               "/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
    assert got["settings"]["autosave"] is False, got["settings"]
    for deck in nbs.decks():
        assert deck.read_text(encoding="utf-8") == nbs.normalised(nbs.read(deck)), deck.name
    # nor a checkpoint (JupyterLab copies a notebook it opens): they go to the server's folder
    written = [p for p in paths.ROOT.rglob(".ipynb_checkpoints/*")
               if ".venv" not in p.parts and p.stat().st_ctime >= presenting["started"]]
    assert written == [], written


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_the_servers_files_are_the_presenters_alone(presenting):
    # the log, the settings, the redirect page's folder and Jupyter's runtime file (it holds
    # the token) are readable by the presenter only; another local user reads none of them and
    # the server refuses that user without the token
    from workshop.tools.present.server import LOGS
    port = presenting["port"]
    log = LOGS / f"{port}.log"
    assert _mode(LOGS) == 0o700 and _mode(log) == 0o600
    # (and the server starts no language-server search: jupyter-lsp's `npm prefix -g`, left
    # running by a server stopped during its start, spun for minutes)
    assert "jupyter_lsp" not in log.read_text() and "language server" not in log.read_text()
    # (Jupyter adds the sticky bit to its runtime folder: 0o1700)
    assert {_mode(log.with_suffix(s)) & 0o777 for s in (".settings", ".labextensions",
                                                         ".runtime")} == {0o700}
    runtime = [p for p in log.with_suffix(".runtime").glob("jpserver-*.json")
               if json.loads(p.read_text()).get("port") == port]
    assert len(runtime) == 1 and _mode(runtime[0]) == 0o600, runtime
    assert presenting["url"].split("token=")[1] in runtime[0].read_text()
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("trying another local user needs root (CI and these machines have it)")
    other = ["runuser", "-u", "nobody", "--"]
    from workshop.tools.present.server import Server
    server = Server.__new__(Server)    # the redirect page this server's browser would open
    server.log = log
    opener = Path(server.opener(presenting["url"]).removeprefix("file://"))
    try:
        assert _mode(opener) == 0o600 and presenting["url"].split("token=")[1] in \
            opener.read_text()
        for f in (log, runtime[0], opener):
            p = subprocess.run([*other, "cat", str(f)], capture_output=True, text=True,
                               timeout=30)
            assert p.returncode != 0 and "Permission denied" in p.stderr, (f, p)
    finally:
        opener.unlink()
    base = f"http://127.0.0.1:{port}"
    for where in ("/api/contents", "/api/contents?token=not-the-token", "/lab"):
        p = subprocess.run([*other, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                            base + where], capture_output=True, text=True, timeout=30)
        assert p.stdout in ("403", "302"), (where, p.stdout, p.stderr)
        if p.stdout == "302":   # /lab sends a stranger to the login page, nothing else
            loc = subprocess.run([*other, "curl", "-s", "-o", "/dev/null", "-w",
                                  "%{redirect_url}", base + where], capture_output=True,
                                 text=True, timeout=30).stdout
            assert "/login" in loc, loc


def test_a_jupyter_config_cannot_turn_off_xsrf_and_one_without_a_token_is_refused(
        presenting, tmp_path):
    import http.cookiejar
    import urllib.error
    import urllib.request
    # the presenting server's config sets disable_check_xsrf (the fixture): a request another
    # site makes the browser send, with the presenter's login cookie, is still refused
    base, token = f"http://127.0.0.1:{presenting['port']}", presenting["url"].split("token=")[1]
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{base}/lab?token={token}", timeout=60).read()
    xsrf = next(c.value for c in jar if c.name == "_xsrf")

    def delete(headers):
        req = urllib.request.Request(f"{base}/api/sessions/none", method="DELETE",
                                     headers=headers)
        try:
            return opener.open(req, timeout=30).status
        except urllib.error.HTTPError as e:
            return e.code
    assert delete({}) == 403                      # refused: XSRF is checked
    assert delete({"X-XSRFToken": xsrf}) == 404   # the same request from the page itself
    # a config that turns the token off: present refuses to serve, in one line
    cfg = tmp_path / "jupyter"
    cfg.mkdir()
    (cfg / "jupyter_server_config.json").write_text(
        json.dumps({"IdentityProvider": {"token": ""}}))
    port = free_port()
    p = subprocess.run([sys.executable, "-m", "workshop", "present", "01", "--no-browser",
                        "--port", str(port)], capture_output=True, text=True, timeout=180,
                       cwd=paths.ROOT, env={**os.environ, "JUPYTER_CONFIG_DIR": str(cfg)})
    assert p.returncode == 1, p.stdout + p.stderr
    err = p.stderr.strip()
    assert err.count("\n") == 0 and "turns off the server's token" in err, p.stderr
    assert not port_open(port), "the server was stopped"


def test_ctrl_c_stops_the_server_cleanly(presenting):
    # runs after the decks (pytest keeps the file's order): the server that served them all
    assert stop_present(presenting["proc"]) == 0, "Ctrl-C should stop the server cleanly"
    assert not port_open(presenting["port"]), "the server is still listening after Ctrl-C"


def test_present_lists_decks_and_refuses_a_wrong_name():
    run = lambda *a: subprocess.run([sys.executable, "-m", "workshop", "present", *a],
                                    capture_output=True, text=True, cwd=paths.ROOT, timeout=60)
    listing = run()
    assert listing.returncode == 0 and "01-run-it-first" in listing.stdout
    wrong = run("99")
    assert wrong.returncode == 2 and "'99' is not a deck of the kit" in wrong.stderr
    assert "01-run-it-first" in wrong.stderr


def _kernel_processes(kernel_id: str) -> list[int]:
    pids = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if f"kernel-{kernel_id}".encode() in f.read():
                    pids.append(int(d))
        except (OSError, ValueError):
            continue
    return pids


@pytest.mark.robust
def test_a_kill_or_a_closed_terminal_stops_the_server_and_its_kernel():
    # SIGTERM (a kill), SIGHUP (the terminal closed) and SIGKILL (a kill -9, which runs none of
    # present's clean-up: the server sees its parent gone and stops itself), three servers at
    # once so their starts and stops overlap; present needs nothing of $HOME: unset for the
    # first, read-only for the second. And Ctrl-C to a present started with SIGINT ignored (a
    # non-interactive shell's `&`): it took no notice and was killed after 30 s (the soak)
    cases = [(signal.SIGTERM, {"HOME": None}, False), (signal.SIGHUP, {"HOME": "/proc/sys"},
             False), (signal.SIGKILL, None, False), (signal.SIGINT, None, True)]
    started = []
    with ThreadPoolExecutor(len(cases)) as pool:
        for (sig, env, ignored), port in zip(cases, [free_port() for _ in cases]):
            started.append((sig, port, pool.submit(start_present, "01", port, env, ignored)))
    done = [f.exception() is None for _, _, f in started]   # (waits for each start)
    procs = [f.result()[0] for (_, _, f), ok in zip(started, done) if ok]
    try:
        assert all(done), [f.exception() for _, _, f in started]
        running = []
        for (sig, port, fut), proc in zip(started, procs):
            u = urlparse(fut.result()[1])
            kernels = call(f"{u.scheme}://{u.netloc}", u.query.split("token=")[1],
                           "/api/kernels")
            assert len(kernels) == 1 and _kernel_processes(kernels[0]["id"]), sig.name
            running.append((sig, port, proc, kernels[0]["id"]))
        # four `present 01` at once: four servers, each on its own port with its own kernel
        assert len({tuple(_kernel_processes(k)) for *_, k in running}) == len(running)
    except BaseException:
        for proc in procs:
            stop_present(proc)
        raise
    for sig, _, proc, _ in running:
        proc.send_signal(sig)
    end = time.monotonic() + 30
    for sig, port, proc, kernel in running:
        proc.wait(max(1, end - time.monotonic()))
        if sig == signal.SIGINT:
            assert proc.returncode == 0 and "stopping the server" in proc.stdout.read()
        while (port_open(port) or _kernel_processes(kernel)) and time.monotonic() < end:
            time.sleep(0.2)
        assert not port_open(port), f"the server still listens after {sig.name}"
        assert _kernel_processes(kernel) == [], f"the kernel outlived {sig.name}"


def test_a_port_out_of_range_is_one_line():
    p = subprocess.run([sys.executable, "-m", "workshop", "present", "01", "--no-browser",
                        "--port", "70000"], capture_output=True, text=True, cwd=paths.ROOT,
                       timeout=60)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0
    assert "--port 70000: pick a port from 1024 to 65535" in p.stderr


def test_the_browser_is_opened_without_the_token_on_its_command_line(presenting, tmp_path):
    import stat

    from workshop.tools.present.server import Server
    server = Server.__new__(Server)             # only its log path is needed here
    server.log = tmp_path / "1234.log"
    url = presenting["url"]
    uri = server.opener(url)
    token = urlparse(url).query.split("token=")[1]
    assert uri.startswith("file://") and token not in uri
    page = tmp_path / "1234.open.html"
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    assert f"url={url}" in page.read_text().replace("&amp;", "&")


@pytest.mark.parametrize("case", ["outside the kit", "../ out of the kit",
                                  "a link out of the kit",
                                  "a cell without a slide type", "XLA_FLAGS that abort XLA"])
def test_present_refuses_in_one_line_what_it_cannot_serve(case, tmp_path):
    deck = paths.DECKS / "01-run-it-first.ipynb"
    arg, env, want = str(deck), dict(os.environ), None
    if case == "outside the kit":
        arg = str(shutil.copy(deck, tmp_path / deck.name))
        want = f"{arg} is outside the kit's folder, {paths.ROOT}, which is all that present serves"
    elif case == "../ out of the kit":   # a relative path that climbs out of the checkout
        out = shutil.copy(deck, tmp_path / deck.name)
        arg = os.path.relpath(out, paths.ROOT)
        assert arg.startswith("../")
        want = f"{out} is outside the kit's folder"
    elif case == "a link out of the kit":
        out = shutil.copy(deck, tmp_path / deck.name)
        link = paths.BUILD / f"link-{os.getpid()}.ipynb"
        link.unlink(missing_ok=True)
        link.symlink_to(out)
        arg, want = str(link), f"{out} is outside the kit's folder"
    elif case == "a cell without a slide type":   # a copy inside the kit, one notes cell bare
        nb = json.loads(deck.read_text())
        k = next(i for i, c in enumerate(nb["cells"])
                 if c["metadata"].get("slideshow", {}).get("slide_type") == "notes")
        del nb["cells"][k]["metadata"]["slideshow"]
        bare = paths.BUILD / f"bare-{os.getpid()}.ipynb"
        bare.write_text(json.dumps(nb))
        arg = str(bare)
        want = (f"{paths.short(bare)}: cell {k} has no slide type (set metadata.slideshow."
                "slide_type to one of -, fragment, notes, skip, slide, subslide): it would show "
                "on the slide")
    else:
        env["XLA_FLAGS"] = "--xla_no_such_flag=1"
        arg = "01"
        want = ("XLA_FLAGS='--xla_no_such_flag=1' stops JAX from starting (Unknown flag in "
                "XLA_FLAGS: --xla_no_such_flag=1): unset XLA_FLAGS")
    try:
        p = subprocess.run([sys.executable, "-m", "workshop", "present", arg, "--no-browser"],
                           capture_output=True, text=True, cwd=paths.ROOT, env=env, timeout=120)
    finally:
        for made in paths.ROOT.joinpath("build").glob(f"*-{os.getpid()}.ipynb"):
            made.unlink()
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("workshop present: ")
    assert want in p.stderr, p.stderr
    assert "RISE at" not in p.stdout   # no server was started


# a read-only checkout: the command runs in a mount namespace of its own where the kit's folder
# is a read-only bind of itself (root, as CI and these machines run; the rest of the machine,
# and every other test, still see it writable)
READ_ONLY = ["unshare", "-m", "sh", "-c",
             'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"',
             str(paths.ROOT)]


def _read_only_works() -> bool:
    try:
        p = subprocess.run(READ_ONLY + ["sh", "-c", f"! touch {paths.ROOT}/build/.ro-probe"],
                           capture_output=True, timeout=30)
    except OSError:
        return False
    return p.returncode == 0


@pytest.mark.robust
def test_a_read_only_checkout_presents_and_the_build_says_so_in_one_line():
    if not _read_only_works():
        pytest.skip("needs root and unshare -m (a private mount namespace) to make it read-only")
    port = free_port()
    proc, url = start_present("01", port, prefix=READ_ONLY)
    try:
        page = urllib.request.urlopen(url, timeout=60)   # the RISE page, from the served deck
        assert page.status == 200
        assert "rise" in page.read().decode().lower()
    finally:
        assert stop_present(proc) == 0
    out = proc.stdout.read()
    assert not port_open(port)
    build = subprocess.run(READ_ONLY + [sys.executable, "-m", "workshop", "build", "--no-pdf",
                                        "01"], capture_output=True, text=True, cwd=paths.ROOT,
                           timeout=120)
    assert build.returncode == 2 and build.stderr.count("\n") == 1, build.stderr
    assert re.match(r"workshop build: cannot write build(/\.build\.lock)?: Read-only file "
                    r"system \(the kit writes build/ and handouts/", build.stderr), build.stderr
    # (build/ itself where a fresh clone has none yet, else its lock file)
    # present said where its log went, and took that folder away when it stopped
    scratch = re.findall(r"are in (\S+) until it stops", out) or re.findall(
        r"(/\S+workshop-present-\w+)/\d+\.log", out)
    assert scratch and not os.path.exists(scratch[0]), out


def test_no_jupyter_config_puts_the_server_or_its_kernel_off_loopback(tmp_path):
    # a presenter's Jupyter config that listens everywhere: the command line outranks it, for
    # the server and (by each class that places them) the kernel's five ports
    import psutil
    cfg = tmp_path / "jupyter-config"
    cfg.mkdir()
    anywhere = "0.0.0.0"
    (cfg / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"ip": anywhere},
         **{c: {"ip": anywhere} for c in ("ConnectionFileMixin", "KernelManager",
                                          "AsyncIOLoopKernelManager", "ServerKernelManager")}}))
    port = free_port()
    proc, url = start_present("01", port, env={"JUPYTER_CONFIG_DIR": str(cfg)})
    try:
        tree = psutil.Process(proc.pid).children(recursive=True)
        kernels = [p for p in tree if "ipykernel" in " ".join(p.cmdline())]
        assert len(kernels) == 1, "present starts the deck's kernel before it prints the URL"
        end = time.monotonic() + 60
        while True:   # the kernel binds its ports once it has started up
            listening = [(p.pid, c.laddr.ip, c.laddr.port) for p in tree
                         for c in p.net_connections("inet") if c.status == psutil.CONN_LISTEN]
            if sum(pid == kernels[0].pid for pid, _, _ in listening) >= 5 or \
                    time.monotonic() > end:
                break
            time.sleep(0.2)
        assert sum(pid == kernels[0].pid for pid, _, _ in listening) >= 5, listening
        assert {ip for _, ip, _ in listening} == {"127.0.0.1"}, listening
    finally:
        assert stop_present(proc) == 0


@pytest.mark.robust
def test_no_writable_tmp_and_present_and_a_build_still_work(tmp_path):
    # /tmp read-only (a locked-down machine): Python's tempfile takes the next writable place
    # (/var/tmp), and the kernels, the server and the build follow it
    # (the kit stays writable where it is itself under /tmp, as CI's clean clone is: its own
    # bind mount, made before /tmp's is turned read-only, keeps its flags)
    no_tmp = ["unshare", "-m", "sh", "-c",
              'mount --bind /tmp /tmp && mount --bind "$0" "$0" && '
              'mount -o remount,ro,bind /tmp && exec "$@"', str(paths.ROOT)]
    if subprocess.run(no_tmp + ["sh", "-c", "! touch /tmp/.probe"], capture_output=True,
                      timeout=30).returncode != 0:
        pytest.skip("needs root and unshare -m (a private mount namespace) to make it read-only")
    port = free_port()
    proc, url = start_present("01", port, prefix=no_tmp)
    try:
        kernel = call(url.split("/rise/")[0], url.split("token=")[1], "/api/kernels")
        assert len(kernel) == 1 and kernel[0]["execution_state"] != "dead", kernel
    finally:
        assert stop_present(proc) == 0
    path = tiny(tmp_path / "no-tmp.ipynb", "import tempfile; print(tempfile.gettempdir())")
    p = subprocess.run(no_tmp + [sys.executable, "-m", "workshop", "build", "--no-pdf",
                                 str(path)], capture_output=True, text=True, cwd=paths.ROOT,
                       timeout=300)
    assert p.returncode == 0 and "FAILED" not in p.stdout, p.stdout + p.stderr


def test_a_deck_named_by_a_path_through_dot_dot_inside_the_kit_is_presented():
    port = free_port()
    proc, url = start_present("decks/../decks/01-run-it-first.ipynb", port)
    try:
        assert "/rise/decks/01-run-it-first.ipynb?token=" in url
    finally:
        assert stop_present(proc) == 0


@pytest.mark.robust
def test_present_and_build_force_of_the_same_deck_at_once_leave_the_deck_as_it_was():
    # the presenter rebuilds the deck on show (`build --force`): the build runs a copy in a
    # kernel of its own; the slideshow's kernel and server go on; the deck's bytes are unchanged
    deck = tiny(paths.BUILD / f"both-{os.getpid()}.ipynb", "print(6 * 7)", deck=True)
    before = deck.read_bytes()
    port = free_port()
    try:
        proc, url = start_present(str(deck), port)
        try:
            p = subprocess.run([sys.executable, "-m", "workshop", "build", "--force",
                                "--no-pdf", str(deck)], capture_output=True, text=True,
                               cwd=paths.ROOT, timeout=300)
            assert p.returncode == 0 and "FAILED" not in p.stdout, p.stdout + p.stderr
            base, token = url.split("/rise/")[0], url.split("token=")[1]
            kernels = call(base, token, "/api/kernels")
            assert len(kernels) == 1 and kernels[0]["execution_state"] != "dead", kernels
            assert urllib.request.urlopen(url, timeout=60).status == 200
        finally:
            assert stop_present(proc) == 0
        assert deck.read_bytes() == before
    finally:
        deck.unlink(missing_ok=True)
