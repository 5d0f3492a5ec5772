"""End to end, the RISE view: deck 01 in RISE in a real headless Chromium, driven as a presenter
drives it (workshop/tools/present/driver.py): opened by `present 01` with every code cell run
from the slideshow, every slide measured at three projector sizes, nothing fetched from off the
machine (decks 02–06, with the outputs of the session's fresh-kernel run: test_present_decks_a.py
and _b.py); a real window's resize, MathJax kept only where a notebook may have TeX, a file map,
a 50 MB output, the notes window; then, on the server that served all of it, that presenting
wrote nothing into the checkout and Ctrl-C stops it cleanly. The server's own tests are in
test_present_server.py."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest

from workshop.tools import browser, paths
from workshop.tools import notebooks as nbs
from workshop.tools.present import rehearse
from workshop.tools.present.driver import (
    HIDDEN,
    NEXT_JS,
    SHOTS,
    SIZES,
    STEP_JS,
    close_session,
    counter,
    executed_copy,
    go_step,
    key_window,
    keys_walk,
    look_at_every_slide,
    notes_of_slide,
    open_deck,
    port_open,
    press,
    run_cell,
    run_slide_cells,
    slideshow,
    steps,
    stop_present,
    talk_slides,
)
from workshop.tools.present.extension import MATHJAX, uses_tex
from workshop.tools.present.server import call

# talk slides whose content stays under FILL_SHARE of the slide's height when grown (their lines
# are too wide to grow further): each wants a picture, or its cells joined; a slide that fills
# must leave the list (measure.js says so)
THIN = {
    "01": ("Station 4: the call",
           "What tracing kept: shape, dtype, weak type",
           "A tracer that outlived its trace",
           "Two ways out"),
    "02": ("core.py: where the jaxpr language lives",   # (a file map's rows: no wider)
           "jax.linearize: the split that grad uses"),
    "03": ("The three events, by name",),
    "04": ("grad wants a scalar: the vector is refused",
           "The two jaxprs: where the sum went",
           "jit outermost: one equation, the whole program inside",
           "Per-example gradients: vmap of grad",
           "A JVPTracer, caught",
           "No rule: the JVP refuses",
           "The other two branches",
           "A layer, batched on axis 2",
           "vmap of a custom rule",
           "Policies and factories"),
    "05": ("Key paths: where each leaf lives",
           "tree_map: flatten, apply, unflatten",
           "scan: one trace for a thousand steps",
           "while_loop: two jaxprs, traced once each",
           "The fixes"),
    "06": ("Sharding in JAX",
           "make_mesh says Explicit; the Mesh constructor says Auto",
           "Per-platform variants",
           "Two platforms, one module: a case",
           "xla_bridge.py: the PJRT clients"),
}


def test_every_page_script_is_javascript_a_browser_parses(chromium):
    # the scripts the kit and its slideshow driver run in pages are files (read by their readers
    # and by this test), not strings inside Python: each parses, its placeholders filled in, and
    # a script with a syntax error is caught by the same check
    import re
    scripts = sorted(paths.PAGE_SCRIPTS.glob("*.js"))
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


@pytest.mark.browser
@pytest.mark.parametrize("deck", nbs.decks()[:1], ids=lambda p: p.stem)   # 02–06: its twin in
def test_deck_opens_in_rise_and_every_slide_fits(chromium, presenting,   # test_present_decks
                                                  executed_decks, runs, deck):
    # at 1280×720, where the slide is laid out (a slide larger than it scrolls at every size),
    # with its run's outputs and the first two slides' cells run from the slideshow; every cell
    # run from the slideshow, and the sizes it is scaled to, where rounding may push a line
    # over the edge, under thorough
    look_at_deck(chromium, presenting, executed_decks, runs, deck, SIZES[:1])


@pytest.mark.thorough
@pytest.mark.browser
@pytest.mark.parametrize("deck", nbs.decks()[:1], ids=lambda p: p.stem)
def test_every_cell_runs_from_the_slideshow_and_every_slide_fits_at_every_size(
        chromium, presenting, executed_decks, runs, deck):
    look_at_deck(chromium, presenting, executed_decks, runs, deck, SIZES, whole_live=True)


def look_at_deck(chromium, presenting, executed_decks, runs, deck, sizes, whole_live=False):
    """`deck` opened in RISE and every slide measured at each of `sizes`, its keys walked,
    nothing off this machine asked for, no console error, no cell failed. Deck 01, which
    `present 01` opened, runs its cells from the slideshow: every one at the first size when
    `whole_live`, else those of its first two slides, in a copy that shows its run's outputs."""
    # The kernel-side truth of every cell of every deck is test_notebooks' fresh-kernel run;
    # what a slide's layout depends on is that run's outputs.
    opened = f"/rise/{deck.relative_to(paths.ROOT).as_posix()}?" in presenting["url"]
    live = (opened and whole_live) or \
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
    # the counter counts the talk path (rise_talk.js): "1 / 25", not "1 / 27"
    assert page.inner_text(".reveal .slide-number").replace(" ", "") == \
        f"1/{len(talk_slides(nb))}"
    assert nb.metadata.workshop.title in page.inner_text("#rise-footer")
    assert MATHJAX in page.evaluate(DISABLED_JS), f"{deck.stem} opened with MathJax"

    setup = page.query_selector(".reveal section.present .jp-CodeCell")
    if live:   # the deck present opened runs its setup cell from the slideshow; the others show
        assert "8 CPU devices" in run_cell(page, setup, "8 CPU devices")   # their run's banner
    else:
        assert "8 CPU devices" in setup.inner_text()
    if live or opened:   # (in the run's copy, a cell run again: its prompt now this kernel's)
        if not live:
            assert run_slide_cells(page, f"{deck.stem} slide 1") == ["[1]:"]
            assert "8 CPU devices" in setup.inner_text()
        page.evaluate("() => document.querySelector('.reveal .controls .navigate-right')"
                      ".click()")
        page.wait_for_timeout(800)
        cell = page.query_selector(".reveal section.present .jp-CodeCell")
        text = run_cell(page, cell, None) if live else \
            (run_slide_cells(page, f"{deck.stem} slide 2"), cell.inner_text())[1]
        pictures = cell.query_selector_all(
            ".jp-OutputArea-output img, .jp-OutputArea-output svg")
        assert text.strip() or pictures, "the cell's output is empty"
        assert "Error" not in text and "Traceback" not in text, text
    if not live:   # the run's pictures are shown as pictures (a trusted notebook), not as text
        pictures = page.evaluate("() => document.querySelectorAll('.jp-OutputArea-output "
                                 "img, .jp-OutputArea-output svg').length")
        made = sum(bool({"image/png", "image/svg+xml"} & set(o.get("data", {})))
                   for c in nb.cells for o in c.get("outputs", []))
        assert pictures >= made, f"{deck.stem}: {made} pictures in the run, {pictures} shown"
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in [SHOTS / f"{deck.stem}.png", *SHOTS.glob(f"{deck.stem}-*.png")]:
        old.unlink(missing_ok=True)   # (an earlier run's picture of a problem since mended)
    page.screenshot(path=str(SHOTS / f"{deck.stem}.png"))

    problems = look_at_every_slide(page, deck, n_slides, run=live, talk_path=talk_slides(nb),
                                   sizes=sizes, thin=THIN.get(deck.name[:2], ()))
    # real keys, a few on every deck: a fragment, down a stack and on to the next section,
    # each one step (test_keys_step_deck_01_one_at_a_time…: one deck, every step)
    keys_walk(page, nb, key_window(nb), 6, 4, f"{deck.stem}: keys")
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


def _slide(text: str):
    """A Markdown cell that starts a slide."""
    return nbformat.v4.new_markdown_cell(text, metadata={"slideshow": {"slide_type": "slide"}})


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
    with slideshow(chromium, presenting["url"], nb, executed_decks / "tex.ipynb") as page:
        assert MATHJAX not in page.evaluate(DISABLED_JS)
        page.wait_for_function("() => document.querySelectorAll('.reveal section.present "
                               "mjx-container').length > 0", timeout=20_000)
        assert page.evaluate(MATHJAX_RAN_JS) is True


@pytest.mark.browser
def test_a_file_map_takes_the_place_of_its_call_once_run(chromium, presenting, executed_decks):
    # a file map is the slide's picture: the call that builds it (kit bookkeeping, 40% of the
    # slide) shows until the presenter runs it, then gives way to the map (decks/rise.css)
    nb = nbformat.v4.new_notebook()
    nb.metadata["rise"] = nbs.read(nbs.decks()[1]).metadata["rise"]   # laid out as deck 02
    nb.cells = [nbformat.v4.new_markdown_cell("## core.py", metadata={
        "slideshow": {"slide_type": "slide"}}), nbformat.v4.new_code_cell(
        'from workshop import file_map\nfile_map("jax._src.core", within=("Jaxpr", "Literal"),'
        ' reads=["Jaxpr"])')]
    shown = ("() => { const c = document.querySelector('.reveal section.present .jp-CodeCell');"
             " const h = (q) => { const e = c.querySelector(q); return e ? "
             "e.getBoundingClientRect().height : 0; }; return [h('.jp-Cell-inputWrapper'), "
             "h('.workshop-filemap')]; }")
    with slideshow(chromium, presenting["url"], nb, executed_decks / "file-map.ipynb") as page:
        call_px, map_px = page.evaluate(shown)
        assert call_px > 20 and map_px == 0, "before its run the slide shows the call"
        assert run_slide_cells(page, "file map") == ["[1]:"]
        call_px, map_px = page.evaluate(shown)
        assert call_px == 0 and map_px > 200, (call_px, map_px)
        # and no row is cut by the browser: a long role is shortened at a whole parameter or
        # word (workshop/filemap.py), so each row fits its column
        cut = page.evaluate("() => [...document.querySelectorAll('.reveal section.present "
                            ".workshop-filemap div[title]')].filter(r => r.scrollWidth > "
                            "r.clientWidth).map(r => [r.scrollWidth, r.clientWidth, r.innerText])")
        assert cut == [], cut


@pytest.mark.thorough
@pytest.mark.browser
def test_a_chart_shows_without_its_code_and_runs_with_ctrl_enter(chromium, presenting,
                                                                  executed_decks):
    # a chart's cell hides its code (metadata.jupyter.source_hidden): the slide shows neither
    # the code nor JupyterLab's one-line placeholder, only the chart once it ran; with nothing
    # to click into, the presenter's Ctrl-Enter runs it, RISE's choice of cell
    # (page_scripts/rise_keys.js). The driver runs it the same way.
    nb = nbformat.v4.new_notebook()
    nb.cells = [_slide("## Before"), nbformat.v4.new_code_cell("x = 1"), _slide("## A chart"),
                nbformat.v4.new_code_cell(
                    "import matplotlib.pyplot as plt\nplt.figure(figsize=(6, 2))\n"
                    "plt.plot([1, 3, 2]); plt.show()", metadata={
                        "slideshow": {"slide_type": "-"}, "jupyter": {"source_hidden": True}})]
    seen = ("() => { const c = document.querySelector('.reveal section.present .jp-CodeCell');"
            " const h = (q) => [...c.querySelectorAll(q)].reduce((a, e) => a +"
            " e.getBoundingClientRect().height, 0); return [h('.jp-Cell-inputWrapper'),"
            " h('.jp-OutputArea-output img'), c.innerText.trim()]; }")
    with slideshow(chromium, presenting["url"], nb, executed_decks / "chart.ipynb") as page:
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => document.querySelector('.reveal section.present')"
                               ".innerText.includes('A chart')", timeout=10_000)
        code_px, chart_px, words = page.evaluate(seen)
        assert code_px < 12 and chart_px == 0 and words == "", (code_px, words)
        page.wait_for_function("() => document.querySelector('.reveal section.present "
                               ".jp-CodeCell.jp-mod-active')", timeout=5_000)
        assert document_focus_outside_notebook(page)
        page.keyboard.press("Control+Enter")   # no click: the slide has nothing to click
        page.wait_for_selector(".reveal section.present .jp-OutputArea-output img",
                               timeout=60_000)
        code_px, chart_px, words = page.evaluate(seen)
        assert code_px < 12 and chart_px > 150 and "plt" not in words, (code_px, chart_px)
        page.screenshot(path=str(SHOTS / "chart-code-hidden-1280x720.png"))
        assert run_slide_cells(page, "a chart") == [HIDDEN]   # the driver's way, again


def document_focus_outside_notebook(page) -> bool:
    return page.evaluate("() => !document.activeElement.closest('.jp-Notebook')")


@pytest.mark.robust
@pytest.mark.browser
def test_a_cell_that_prints_50_mb_leaves_the_slideshow_responsive(chromium, presenting,
                                                                  executed_decks):
    # Jupyter's output rate limit (which present keeps on, whatever a config says) stops the
    # flood after a few MB with a note; the page answers and the next slide's cell runs. The
    # same for a 20 MB picture and a 10 000-line traceback, in a deck of 500 cells
    nb = nbformat.v4.new_notebook()
    nb.cells = [_slide("# Big"), nbformat.v4.new_code_cell(
        "for i in range(500_000): print('x' * 99)"), _slide("## After"),
        nbformat.v4.new_code_cell("print('after')"), _slide("## Picture"),
        nbformat.v4.new_code_cell("from IPython.display import Image, display\n"
                                  "display(Image(data=b'\\x89PNG' + bytes(20_000_000), "
                                  "format='png'))"),
        _slide("## Traceback"), nbformat.v4.new_code_cell(
            "raise ValueError('\\n'.join(f'line {i}' for i in range(10_000)))"),
        _slide("## Still here"), nbformat.v4.new_code_cell("print('still here')")]
    nb.cells += [_slide(f"## Filler {k}") for k in range(500 - len(nb.cells))]
    with slideshow(chromium, presenting["url"], nb, executed_decks / "big-output.ipynb") as page:
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


DECK_01 = paths.DECKS / "01-run-it-first.ipynb"


def test_the_steps_the_keys_take_are_read_from_the_slide_types():
    # what the key tests expect: a slide with k fragments is k + 1 steps; every deck has a
    # short stretch with a fragment, a sub-slide and a new section, where each deck's test
    # presses its keys; a deck of plain slides (a new one) is walked from its start
    cell = lambda kind: nbformat.v4.new_markdown_cell("x", metadata={
        "slideshow": {"slide_type": kind}})
    nb = nbformat.v4.new_notebook()
    nb.cells = [cell(k) for k in ("slide", "-", "notes", "subslide", "fragment", "-",
                                  "fragment", "slide", "skip")]
    assert steps(nb) == [(1, 0, "slide"), (2, 0, "subslide"), (2, 1, "subslide"),
                         (2, 2, "subslide"), (3, 0, "slide")]
    for deck in nbs.decks():
        d = nbs.read(deck)
        at = key_window(d)
        assert {"fragment" if f else k for _, f, k in steps(d)[at + 1:at + 7]} == \
            {"fragment", "subslide", "slide"}, deck.name
    nb.cells = [cell("slide") for _ in range(3)]
    assert key_window(nb) == 0


def test_the_guides_key_table_names_the_keys_the_browser_test_presses():
    # decks/README.md's "Moving and running": the keys it names for a step and a step back are
    # those test_keys_step_deck_01_one_at_a_time… presses (driver.NEXT_KEYS, BACK_KEYS)
    from workshop.tools.present.driver import BACK_KEYS, NEXT_KEYS
    names = {"→": "ArrowRight", "↓": "ArrowDown", "←": "ArrowLeft", "↑": "ArrowUp",
             "Shift-Space": "Shift+Space"}
    guide = (paths.DECKS / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (next step|one step back)\b[^|]*\| ([^|(]+)", guide, re.M))
    assert set(rows) == {"next step", "one step back"}, rows
    said = {k: {names.get(w, w) for w in v.split()} for k, v in rows.items()}
    assert said == {"next step": set(NEXT_KEYS), "one step back": set(BACK_KEYS)}


def _deck_01(chromium, presenting):
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    page.goto(presenting["url"])
    page.wait_for_selector(".reveal .slides section.present", timeout=90_000)
    return page


@pytest.mark.browser
def test_keys_step_deck_01_one_at_a_time_and_its_title_shows_the_byline(chromium, presenting):
    # In RISE ↓ and ↑ never moved and → ← jumped a whole section (deck 03: 3→6→12→19→28); the
    # kit's tests clicked the on-screen arrows. Here Chromium gets real key presses through
    # every step of deck 01 (its fragments, its sections' stacks), → ↓ Space PageDown in turn,
    # in three focus states (nothing clicked; the notebook focused by a click in the slide's
    # bottom band and Esc; a slide's text clicked), then ← ↑ PageUp back. After each, the
    # slide, its fragments shown and the counter, which counts the talk path (rise_talk.js)
    nb = nbs.read(DECK_01)
    all_steps = steps(nb)
    n, talk_n = all_steps[-1][0], len(talk_slides(nb))
    assert talk_n < n and {"subslide"} <= {k for _, _, k in all_steps}
    assert any(f for _, f, _ in all_steps), "deck 01 has fragments and stacks to step through"
    page = _deck_01(chromium, presenting)
    step = lambda: page.evaluate(STEP_JS)
    try:
        # the title slide shows present's --presenter/--event/--date (conftest's BYLINE), under
        # its heading, on every deck (none given: no line at all, test_presenter_tools)
        from conftest import BYLINE
        page.wait_for_selector(".reveal .workshop-byline", timeout=10_000)
        assert page.evaluate("() => { const p = document.querySelector('.reveal "
                             ".workshop-byline'); return [p.innerText, p.previousElementSibling"
                             ".tagName, !!p.closest('section.present')]; }") == \
            [" · ".join(BYLINE.values()), "H1", True]
        cells = page.evaluate("() => document.querySelectorAll('.jp-Cell').length")
        third = len(all_steps) // 3
        at = keys_walk(page, nb, 0, third, 0, "deck 01, nothing clicked")
        page.mouse.click(640, 700)
        page.keyboard.press("Escape")
        at = keys_walk(page, nb, at, third, 0, "deck 01, the notebook focused")
        page.click(".reveal section.present:not(.stack) .jp-MarkdownCell")
        keys_walk(page, nb, at, len(all_steps) - 1 - at, 10, "deck 01, a slide's text clicked")
        # Home and End (RISE's own worked only while the notebook had the focus)
        press(page, "End", (n, 0), counter(n, n, talk_n), "End")
        assert step()[3] == 1, "the bar is full in the appendix"
        press(page, "Home", (1, 0), counter(1, n, talk_n), "Home")
        # the bar fills over the talk path: full at its last slide, not half full
        go_step(page, talk_n, 0)
        assert step()[2:] == [f"{talk_n}/{talk_n}", 1]
        go_step(page, 13, 0)
        assert step()[3] == pytest.approx(12 / (talk_n - 1), abs=1e-4)
        # a click in the bottom 12 px (reveal's bar) moves nothing (it went to slide 30 of 57)
        for x in (100, 640, 1100):
            page.mouse.click(x, 715)
            page.wait_for_timeout(150)
            assert step()[:2] == [13, 0], f"a click at ({x}, 715) moved the slides"
        # B and . (a clicker's blank-screen button) black the screen and bring it back;
        # nothing moves meanwhile, and B no longer inserts a cell into the deck
        paused = "() => document.querySelector('.reveal').classList.contains('paused')"
        for blank, back in (("b", "."), (".", "b")):
            page.keyboard.press(blank)
            page.wait_for_function(paused, timeout=5_000)
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(300)
            assert step()[:2] == [13, 0] and page.evaluate(paused)
            page.keyboard.press(back)
            page.wait_for_function(f"() => !({paused})()", timeout=5_000)
        assert page.evaluate("() => document.querySelectorAll('.jp-Cell').length") == cells
        after = next(st for i, st in enumerate(all_steps) if all_steps[i - 1][:2] == (13, 0))
        press(page, "ArrowRight", after[:2], counter(after[0], n, talk_n),
              "→ after the black screen")
        # a section left from its last sub-slide, then a jump back (Home, the overview, a cut):
        # the next step from the slide before it shows the section's top (Reveal resumed a
        # stack where it was last left: deck 01's slide 9 went to 16)
        kind_of = {s: kind for s, _, kind in all_steps}
        top = next(s for s, f, kind in all_steps if kind == "slide" and f == 0 and
                   kind_of.get(s - 1) == "subslide" and kind_of.get(s + 1) == "subslide")
        bottom = max(s for s, _, kind in all_steps if s >= top and
                     all(k == "subslide" for t, _, k in all_steps if top < t <= s))
        before = max(st for st in all_steps if st[0] < top)
        go_step(page, bottom, 0)
        go_step(page, *before[:2])
        for key in ("ArrowRight", "Space"):
            press(page, key, (top, 0), counter(top, n, talk_n), f"{key} into a section left "
                  f"at its slide {bottom}")
            go_step(page, bottom, 0)
            go_step(page, *before[:2])
    finally:
        page.close()


@pytest.mark.browser
def test_a_restart_from_the_slideshow_reruns_the_setup_cell(chromium, presenting,
                                                           executed_decks):
    # There was no way to restart the kernel from the slideshow (Esc then 0 0 did nothing).
    # Now 0 0 or the ↻ button asks JupyterLab's "Restart Kernel?": Cancel changes nothing;
    # Restart restarts the kernel (a name defined before is gone), runs the setup cell again
    # (a new process prints its banner) and comes back to the slide it was on
    nb = nbformat.v4.new_notebook()
    nb.cells = [_slide("# Restart"), nbformat.v4.new_code_cell(
        "import os; print('setup ran in process', os.getpid())", metadata={"tags": ["setup"]}),
        _slide("## Define"), nbformat.v4.new_code_cell("x = 42"),
        _slide("## Ask"), nbformat.v4.new_code_cell(
            "print('x is', 'defined' if 'x' in globals() else 'gone')")]
    banner = ("() => document.querySelector('.reveal .slides section:not(.stack) .jp-CodeCell "
              ".jp-OutputArea').innerText.trim()")
    ask = ("() => document.querySelector('.reveal section.present:not(.stack) .jp-CodeCell "
           ".jp-OutputArea').innerText.trim()")
    with slideshow(chromium, presenting["url"], nb, executed_decks / "restart.ipynb") as page:
        run_slide_cells(page, "restart: the title slide")
        first = page.evaluate(banner)
        assert first.startswith("setup ran in process"), first
        press(page, "ArrowRight", (2, 0), None, "restart")
        run_slide_cells(page, "restart: slide 2")
        press(page, "ArrowRight", (3, 0), None, "restart")
        run_slide_cells(page, "restart: slide 3")
        assert page.evaluate(ask) == "x is defined"
        page.click("#workshop-restart-b")                            # the button, then Cancel
        page.click(".jp-Dialog .jp-mod-reject", timeout=10_000)
        page.wait_for_selector(".jp-Dialog", state="detached", timeout=10_000)
        run_slide_cells(page, "restart: slide 3 after Cancel")
        assert page.evaluate(ask) == "x is defined"
        assert page.evaluate(banner) == first
        page.keyboard.press("0")                                      # 0 0, then Restart
        page.keyboard.press("0")
        dialog = page.wait_for_selector(".jp-Dialog", timeout=10_000)
        assert "Restart Kernel?" in dialog.inner_text()
        page.click(".jp-Dialog .jp-mod-accept")
        page.wait_for_function(f"(b) => {{ const t = ({banner})(); return t !== b && "
                               "t.startsWith('setup ran in process'); }", arg=first,
                               timeout=60_000, polling=100)
        page.wait_for_function(f"() => ({STEP_JS})()[0] === 3", timeout=15_000, polling=50)
        run_slide_cells(page, "restart: slide 3 after the restart")
        assert page.evaluate(ask) == "x is gone"


@pytest.mark.browser
def test_the_notes_window_says_what_to_cut_when_behind_and_what_to_add_when_ahead(
        playwright_session, presenting):
    # The notes window (T) reads its own timer against the page's plan: behind by more than
    # the plan's threshold it offers the next cut point, ahead by more the appendix sections to
    # bring in (rise_notes_window.js). A plan of the test's own takes the deck's place in the
    # page (a 1 s threshold, 1 s slides but 1000 s for slide 2): on slide 1, seconds after T,
    # the presenter is behind; on slide 3 far ahead; on slide 2 on time. Its keys step the
    # slides (the notes window had them, and moved only its own previews)
    nb = nbs.read(DECK_01)
    plan = rehearse.page_plan(nb)
    timing = [1] * len(plan["timing"])
    timing[1] = 1000
    cut = "at “Slide B”, skip to “Slide D” (saves 2 min)"
    adds = ["bring in appendix “Y” (+8 min)", "bring in appendix “Z” (+3 min)"]
    plan.update(timing=timing, total=sum(timing[:plan["talk"]]), threshold=1,
                cut=[{"from": 0, "to": 3, "saves": 120, "text": cut}],
                expand=[{"at": plan["talk"] + 1, "adds": 480, "text": adds[0]},
                        {"at": plan["talk"] + 3, "adds": 180, "text": adds[1]}])

    def with_this_plan(route):
        got = route.fetch()
        body, n = re.subn(r"var PLAN = .*;\n", lambda m: f"var PLAN = {json.dumps(plan)};\n",
                          got.text(), count=1)
        assert n == 1, "the page declares no PLAN"
        route.fulfill(response=got, body=body)
    # (a page that Playwright answered has no address: Chromium then refuses its connections
    # to 127.0.0.1, the kernel's, unless told not to check)
    b = playwright_session.chromium.launch(
        executable_path=browser.find(), headless=True,
        args=[*browser.ARGS, "--disable-features=LocalNetworkAccessChecks"])
    try:
        page = b.new_page(viewport={"width": 1280, "height": 720})
        page.route("**/rise/decks/01-run-it-first.ipynb?*", with_this_plan)
        page.goto(presenting["url"])
        page.wait_for_selector(".reveal .slides section.present", timeout=90_000)
        with page.context.expect_page(timeout=15_000) as popup:   # (T, nothing clicked first:
            page.keyboard.press("t")                              # RISE's needed the focus)
        notes = popup.value
        said = "() => { const b = document.getElementById('workshop-advice'); " \
               "return b ? [b.className, b.innerText] : null; }"
        notes.wait_for_function(f"() => ({said})() && ({said})()[0] === 'behind'",
                                timeout=30_000, polling=100)
        kind, text = notes.evaluate(said)
        assert re.fullmatch(r"Behind the plan by 0:\d\d\. Cut: " + re.escape(cut), text), text
        n, talk_n = len(plan["timing"]), plan["talk"]
        press(page, "ArrowRight", (2, 0), counter(2, n, talk_n), "the notes window's →",
              by=notes)
        # (the window looks twice a second; at a load of 5 on 2 cores it took over 5 s once)
        notes.wait_for_function(f"() => ({said})()[1] === ''", timeout=20_000, polling=100)
        press(page, "PageDown", (3, 0), counter(3, n, talk_n), "the notes window's PageDown",
              by=notes)
        notes.wait_for_function(f"() => ({said})()[0] === 'ahead'", timeout=20_000, polling=100)
        kind, text = notes.evaluate(said)
        assert re.fullmatch(r"Ahead of the plan by 16:\d\d\. To add: " +
                            re.escape("; ".join(adds)), text), text
    finally:
        b.close()


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


# the notes window's current-slide pane: the text of its present slide's outputs, and where
# its title sits from the pane's top, as a share of the pane's height (in the window's px)
CURRENT_JS = """() => {
  const f = document.querySelector('#current-slide iframe'), doc = f && f.contentDocument;
  const sec = doc && doc.querySelector('.reveal .slides section.present:not(.stack)');
  const title = sec && sec.querySelector('h1, h2, h3');
  if (!title) return null;
  const pane = f.getBoundingClientRect(), t = title.getBoundingClientRect();
  return {outputs: [...sec.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText)
            .join(' '), title_at: t.top / pane.height, title: title.innerText};
}"""


@pytest.mark.thorough
@pytest.mark.browser
def test_the_notes_windows_current_slide_is_the_projectors(chromium, presenting, executed_decks):
    # the current pane was a fresh page: no outputs (no chart, no map) and the slide centred
    # in a pane taller than 16:9 (its title 190 px down); now the slide sits at the pane's top
    # with the outputs the slideshow's cells made, and follows a cell run after it opened
    nb = nbformat.v4.new_notebook()
    nb.metadata["rise"] = nbs.read(nbs.decks()[0]).metadata["rise"]
    kind = lambda k: {"slideshow": {"slide_type": k}}
    nb.cells = [nbformat.v4.new_markdown_cell("## First", metadata=kind("slide")),
                nbformat.v4.new_code_cell("print('made on the projector')", metadata=kind("-")),
                nbformat.v4.new_code_cell("print('and after T')", metadata=kind("fragment")),
                nbformat.v4.new_markdown_cell("Say this.", metadata=kind("notes")),
                nbformat.v4.new_markdown_cell("## Second", metadata=kind("slide"))]
    with slideshow(chromium, presenting["url"], nb, executed_decks / "notes-pane.ipynb") as page:
        page.wait_for_timeout(1_000)   # (RISE's choice of cell lands, then the run)
        first = page.query_selector_all(".reveal section.present .jp-CodeCell")[0]
        first.query_selector(".cm-content").click(force=True)
        page.keyboard.press("Control+Enter")
        first.wait_for_selector(".jp-OutputArea-output", timeout=60_000)
        page.keyboard.press("Escape")
        with page.context.expect_page(timeout=15_000) as popup:
            page.keyboard.press("t")
        notes = popup.value
        notes.wait_for_function(PREVIEWS_JS, timeout=60_000, polling=250)
        notes.wait_for_function(f"() => {{ const c = ({CURRENT_JS})(); return c && "
                                "c.outputs.includes('made on the projector'); }",
                                timeout=10_000, polling=250)
        seen = notes.evaluate(CURRENT_JS)
        assert seen["title"] == "First" and seen["title_at"] < 0.08, seen
        notes.screenshot(path=str(SHOTS / "notes-window-current-pane.png"))
        page.bring_to_front()
        assert run_slide_cells(page, "the notes pane") == ["[2]:", "[3]:"]
        notes.wait_for_function(f"() => ({CURRENT_JS})().outputs.includes('and after T')",
                                timeout=10_000, polling=250)
        notes.close()


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
                        for n in notes_of_slide(nb, k)]
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


def test_ctrl_c_stops_the_server_cleanly(presenting):
    # runs after the decks (pytest keeps the file's order): the server that served them all
    assert stop_present(presenting["proc"]) == 0, "Ctrl-C should stop the server cleanly"
    assert not port_open(presenting["port"]), "the server is still listening after Ctrl-C"


# What axe-core finds in the RISE page that is JupyterLab's own, not the kit's (left there, each
# with its reason): its code editor (CodeMirror) inside a slide's code cell, and the page around
# the slides. The kit's own content, the rest of every slide, must have none
LAB_OWN = {
    "aria-input-field-name": "CodeMirror's editable code area (contenteditable) has no label",
    "scrollable-region-focusable": "CodeMirror's scroller (tabindex -1) when a line is wider "
                                   "than its cell: the editor takes the keys, not the scroller",
    "html-has-lang": "jupyterlab-rise's page template has no lang on <html> (the slides' own "
                     "text is English)",
}


@pytest.mark.thorough
@pytest.mark.browser
def test_axe_finds_nothing_serious_on_any_slide_of_deck_01(chromium, presenting):
    # axe-core (axe-playwright-python, in the lock) on the live slideshow: every slide of deck
    # 01 with all its fragments shown. The slide's content, its code editors left out, has no
    # serious or critical violation (its contrast, its pictures' text alternatives, its
    # headings); the editors and the page around the slides have only LAB_OWN's
    from axe_playwright_python.sync_playwright import Axe
    axe, found, theirs = Axe(), {}, {}
    here = ".reveal .slides section.present"

    def serious(context):
        return [v for v in axe.run(page, context=context).response["violations"]
                if v["impact"] in ("serious", "critical")]
    page = _deck_01(chromium, presenting)
    try:
        last = {}
        for slide, shown, _ in steps(nbs.read(DECK_01)):
            last[slide] = max(shown, last.get(slide, 0))
        for slide, shown in last.items():
            go_step(page, slide, shown)
            for v in serious({"include": [[here]], "exclude": [[".cm-editor"]]}):
                found.setdefault(v["id"], []).append(f"slide {slide}: {v['nodes'][0]['html']}")
            for v in serious({"include": [[f"{here} .cm-editor"]]}):
                theirs.setdefault(v["id"], slide)
        for v in serious({"exclude": [[".reveal .slides"]]}):
            theirs.setdefault(v["id"], "around the slides")
    finally:
        page.close()
    assert found == {}, found
    assert set(theirs) <= set(LAB_OWN), theirs
