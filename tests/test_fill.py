"""Content that fills the slide (issue 52): a slide whose content is smaller than the slide is
grown to fill it, its title kept, up to config.FILL_LIMIT, and never wider than the slide
(page_scripts/fill.js). Here the slides PDF's page, in Chromium (the printer's own script,
render.FIT_JS). Live, RISE runs the same function on the present slide (rise_fill.js), and the
RISE walks of every deck (test_present_slides.py, test_present_decks_a.py and _b.py: 1280×720
in the quick run, the other sizes under -m thorough) hold each talk slide's content to
config.FILL_SHARE of the slide's height but on a title or a divider, or a slide named in THIN
there."""
from __future__ import annotations

import nbformat

from workshop.config import FILL_LIMIT
from workshop.tools.builder import render

# what each page's body was zoomed by, where its content ends (px from the page's top), its
# title's size and height, and whether anything runs past the slide's right edge
MEASURE = """() => [...document.querySelectorAll('section.slide')].map((s) => {
  const inner = s.querySelector('.inner'), h = inner.querySelector('h1, h2, h3');
  const top = s.getBoundingClientRect().top, right = inner.getBoundingClientRect().left + 1216;
  const zooms = [...inner.querySelectorAll('[style*="zoom"]')].map((e) => +e.style.zoom);
  const all = [...inner.querySelectorAll('*')];
  return {zoom: inner.style.zoom ? +inner.style.zoom : zooms.length ? Math.max(...zooms) : 1,
          bottom: Math.max(...all.map((e) => e.getBoundingClientRect().bottom)) - top,
          title: [parseFloat(getComputedStyle(h).fontSize), h.getBoundingClientRect().height],
          past: Math.max(...all.map((e) => e.getBoundingClientRect().right)) - right};
})"""


def deck(*slides: tuple[str, str, str]) -> nbformat.NotebookNode:
    """A deck of slides, each a title, a code cell and its output."""
    nb = nbformat.v4.new_notebook()
    for title, code, out in slides:
        head = nbformat.v4.new_markdown_cell(f"### {title}")
        head.metadata = {"slideshow": {"slide_type": "slide"}}
        cell = nbformat.v4.new_code_cell(code)
        cell.metadata = {"slideshow": {"slide_type": "-"}}
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=out)]
        nb.cells += [head, cell]
    return nb


def printed(chromium, nb) -> list[dict]:
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.set_content(render.slides_html(nb, "T"), wait_until="load")
        page.evaluate(render.FIT_JS)
        return page.evaluate(MEASURE)
    finally:
        page.close()


def test_a_short_slide_is_grown_to_fill_its_page_and_its_title_kept(chromium):
    short, wide, long = printed(chromium, deck(
        ("Short", "x = 1\nx + 1", "2\n"),
        ("Wide", "y = " + "1 + " * 22 + "1", "23\n"),            # a 92-column line
        ("Long", "z = 0", "\n".join(str(i) for i in range(40)))))
    # three lines of code under a title: grown as far as the limit lets it
    assert short["zoom"] == FILL_LIMIT, short
    # its title keeps the size and place every slide's title has
    assert short["title"][0] == wide["title"][0] == 46 and \
        abs(short["title"][1] - wide["title"][1]) < 0.5, (short["title"], wide["title"])
    # a line of 92 columns: grown until it reaches the slide's right edge, not past it
    assert 1.02 < wide["zoom"] < 1.2 and -40 < wide["past"] <= 1, wide
    # a slide longer than its page is not grown: it shrinks, as before (fit_slides.js)
    assert long["zoom"] < 1 and long["bottom"] <= 720, long
    for s in (short, wide, long):
        assert s["bottom"] <= 12 + 644 + 1, s    # nothing grown past the page's box


def test_growing_stops_where_the_slide_is_full(chromium):
    # eleven lines and their output fill most of the page: grown a little, never past it
    nb = deck(("Nearly full", "\n".join(f"b{i} = {i}" for i in range(11)),
               "\n".join(f"line {i}" for i in range(5))))
    (got,) = printed(chromium, nb)
    assert 1 < got["zoom"] < FILL_LIMIT and 640 <= got["bottom"] <= 657, got
