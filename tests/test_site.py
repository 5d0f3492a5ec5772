"""The course as a web site (workshop/tools/builder/site.py), built from this session's runs of
the notebooks (the runs the other tests read, not a second execution) and read as a reader
reads it: every internal link lands (anchors too), a real Chromium opens it from file:// and
asks for nothing off the machine, its search finds what the course says, no page scrolls
sideways on a phone (390×844; a laptop's 1280×720 under -m thorough), it reads in the slides'
face and colours (its own copy of the face), and no page shows a check cell, a stage
direction, the presenter's plan or a machine path; axe-core finds no serious or critical
accessibility violation (a deck's page in the quick run, every page under -m thorough). Under
-m thorough too: a changed notebook alone is rewritten, and axe does see a contrast failure."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest

from workshop import palette
from workshop.tools import notebooks as nbs
from workshop.tools import paths
from workshop.tools.builder import render, site

NOTEBOOKS = nbs.all_notebooks()


@pytest.fixture(scope="module")
def built(runs, tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    executed = {p: nbformat.reads(runs[(p, None)][1], as_version=4) for p in NOTEBOOKS}
    first = site.build(executed, src=root / "src", out=root / "out")
    return {"out": root / "out", "src": root / "src", "executed": executed, "first": first}


def _pages(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*.html") if "_static" not in p.parts)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids, self.text = [], set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key):
                self.links.append(a[key])

    def handle_data(self, data):
        self.text.append(data)


def _parsed(page: Path) -> _Links:
    p = _Links()
    p.feed(page.read_text(encoding="utf-8"))
    return p


@pytest.mark.slow
def test_a_page_per_deck_lab_and_solutions_with_no_sphinx_warning(built):
    out = built["out"]
    decks, labs = nbs.decks(), nbs.lab_sources()
    for p in decks:
        assert (out / "decks" / f"{p.stem}.html").is_file()
    for p in labs:
        assert (out / "labs" / f"{p.stem}.html").is_file()
        assert (out / "labs" / f"{p.stem}.solutions.html").is_file()
    assert built["first"]["pages"] == 1 + len(decks) + 2 * len(labs)
    assert built["first"]["warnings"] == ""
    for pdf in paths.ROOT.glob("handouts/*.pdf"):
        assert (out / "pdf" / pdf.name).read_bytes() == pdf.read_bytes()
    home = _parsed(out / "index.html")
    for p in decks + labs:
        assert any(link.endswith(f"{p.stem}.html") for link in home.links), p.stem


@pytest.mark.thorough   # a third Sphinx run (15 s of CPU): the build tool's, not a reader's
def test_an_unchanged_notebook_is_not_rewritten_and_a_changed_one_alone_is(built):
    again = site.build(built["executed"], src=built["src"], out=built["out"])
    assert again["written"] == []
    executed = dict(built["executed"])
    deck = nbs.decks()[2]
    changed = nbformat.from_dict(executed[deck])
    changed.cells[0].source += "\n\nOne more line."
    executed[deck] = changed
    r = site.build(executed, src=built["src"], out=built["out"])
    assert r["written"] == [f"decks/{deck.stem}.ipynb"]
    assert "One more line." in (built["out"] / "decks" / f"{deck.stem}.html").read_text()
    back = site.build(built["executed"], src=built["src"], out=built["out"])   # as it was
    assert back["written"] == [f"decks/{deck.stem}.ipynb"]


@pytest.mark.slow
def test_every_internal_link_lands_on_a_page_and_an_anchor_there(built):
    out, broken, seen = built["out"], [], 0
    ids = {page: _parsed(page).ids for page in _pages(out)}
    for page in _pages(out):
        for link in _parsed(page).links:
            u = urlparse(link)
            if u.scheme or link.startswith(("mailto:", "//", "data:")):
                continue
            target = (page.parent / unquote(u.path)).resolve() if u.path else page
            seen += 1
            if not target.exists():
                broken.append(f"{page.relative_to(out)}: {link}")
            elif u.fragment and target.suffix == ".html" and u.fragment not in ids[target]:
                broken.append(f"{page.relative_to(out)}: {link} (no such anchor)")
    assert seen > 500 and broken == [], broken[:10]


@pytest.mark.slow
def test_each_slide_has_an_anchor_and_a_link_to_its_page_of_the_slides_pdf(built):
    for deck in nbs.decks():
        page = built["out"] / "decks" / f"{deck.stem}.html"
        n = len(render.slides(built["executed"][deck], reader=True))
        parsed = _parsed(page)
        assert {f"deck{deck.stem[:2]}-slide-{k}" for k in range(1, n + 1)} <= parsed.ids, \
            deck.stem
        pdf = [link for link in parsed.links if ".slides.pdf#page=" in link]
        assert pdf == [f"../pdf/{deck.stem}.slides.pdf#page={k}" for k in range(1, n + 1)]


@pytest.mark.slow
def test_no_page_shows_a_check_a_stage_direction_the_plan_or_a_machine_path(built):
    checks = {c.source.strip() for p in NOTEBOOKS for c in nbs.read(p).cells
              if "check" in nbs.tags(c)}
    bad = []
    for page in _pages(built["out"]):
        text = "".join(_parsed(page).text)
        lines = [line.strip() for line in text.splitlines()]
        where = page.relative_to(built["out"])
        bad += [f"{where}: a stage direction: {line[:60]}" for line in lines
                if line.startswith("→")]
        bad += [f"{where}: the plan" for line in lines if re.match(r"section\s*min\s*at", line)]
        # (a path the deck's code names, such as --xla_dump_to=/tmp/dumps, is the talk's)
        for machine in (str(paths.ROOT), "ipykernel_", "workshop-run-", "/tmp/tmp",
                        "/tmp/pytest-", "/root/", "/home/"):
            if machine in text:
                bad.append(f"{where}: {machine}")
        html = page.read_text(encoding="utf-8")
        bad += [f"{where}: a check cell" for c in checks
                if len(c) > 40 and c.splitlines()[0] in text and c in text]
        bad += [f"{where}: a solution marker" for m in ("### BEGIN SOLUTION", "### END SOLUTION")
                if m in html]
    assert bad == [], bad[:10]


@pytest.mark.slow
@pytest.mark.browser
def _offline(offsite: list):
    """A Playwright route handler: the page's own files, nothing off this machine (listed)."""
    def guard(route):
        if route.request.url.startswith(("file:", "data:", "blob:")):
            route.continue_()
        else:
            offsite.append(route.request.url)
            route.abort()
    return guard


# a phone's width, where a long name scrolls first: in the quick run a page of each kind (the
# home page, the decks with the longest source names and code, a lab and its solutions); every
# page, and a projector's width, under -m thorough
WIDTH_QUICK = ["index.html", f"decks/{nbs.decks()[1].stem}.html",
               f"decks/{nbs.decks()[-1].stem}.html", f"labs/{nbs.lab_sources()[0].stem}.html",
               f"labs/{nbs.lab_sources()[0].stem}.solutions.html"]


@pytest.mark.parametrize("w, h, every", [
    (390, 844, False), pytest.param(390, 844, True, marks=pytest.mark.thorough),
    pytest.param(1280, 720, True, marks=pytest.mark.thorough)])
def test_no_page_scrolls_sideways_or_asks_off_the_machine(built, chromium, w, h, every):
    out, offsite, widths = built["out"], [], {}
    page = chromium.new_page(viewport={"width": w, "height": h})
    page.route("**/*", _offline(offsite))
    pages = _pages(out) if every else [out / name for name in WIDTH_QUICK]
    assert all(p.is_file() for p in pages), [p for p in pages if not p.is_file()]
    for p in pages:
        page.goto(p.as_uri())
        widths[p.relative_to(out).as_posix()] = page.evaluate(
            "() => document.documentElement.scrollWidth")
    page.close()
    assert {k: v for k, v in widths.items() if v > w} == {}, "pages that scroll sideways"
    assert offsite == [], offsite[:5]


def test_read_offline_in_chromium_searched_in_the_kits_look(built, chromium):
    out = built["out"]
    offsite = []
    guard = _offline(offsite)
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    page.route("**/*", guard)
    # the kit's look: the slides' face, loaded from the site's own files, their titles' colour
    page.goto((out / "decks" / f"{nbs.decks()[2].stem}.html").as_uri())
    page.evaluate("() => document.fonts.ready")
    look = page.evaluate("""() => {
        const style = e => getComputedStyle(document.querySelector(e));
        return {face: document.fonts.check('600 20px "Source Sans Pro"')
                      && document.fonts.check('20px "Source Sans Pro"'),
                loaded: [...document.fonts].filter(f => f.status === 'loaded')
                                           .map(f => f.family.replace(/"/g, '')),
                words: style('.bd-article p').fontFamily, title: style('.bd-article h1').color,
                link: style('.bd-article a.slide-pdf').color}; }""")
    assert look["face"] and "Source Sans Pro" in look["loaded"], look
    assert look["words"].startswith('"Source Sans Pro"'), look
    assert look["title"] == _rgb(site.TITLE) and look["link"] == _rgb(palette.INK), look
    for term, where in [("tracer", "Tracing"), ("compilation cache", "jit and the cache"),
                        ("shard_map", "Devices")]:
        page.goto((out / "search.html").as_uri() + f"?q={term}")
        page.wait_for_function("() => /found \\d+ page/.test(document.body.innerText)",
                               timeout=20_000)
        hits = page.eval_on_selector_all("#search-results li a, ul.search li a",
                                         "as => as.map(a => a.innerText)")
        assert any(where in h for h in hits), (term, hits)
    page.close()
    assert offsite == [], offsite[:5]


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def _axe_serious(chromium, page_file: Path) -> list[str]:
    """axe-core's serious and critical violations on a page: 'rule: the first element's HTML'."""
    from axe_playwright_python.sync_playwright import Axe
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(page_file.as_uri())
        found = Axe().run(page).response["violations"]
    finally:
        page.close()
    return [f"{v['id']} ({v['impact']}, {len(v['nodes'])}×): {v['nodes'][0]['html'][:120]}"
            for v in found if v["impact"] in ("serious", "critical")]


# a deck's page (outputs, code, notes as prose, a slide's link: every kind of element a page
# has; its outputs' terminal colours were axe's one finding); every page under -m thorough
# (3.5 s a page)
AXE_QUICK = ["decks/01-run-it-first.html"]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("name", AXE_QUICK)
def test_axe_core_finds_nothing_serious(built, chromium, name):
    assert _axe_serious(chromium, built["out"] / name) == []


@pytest.mark.thorough
@pytest.mark.browser
def test_axe_core_finds_nothing_serious_on_any_page(built, chromium):
    found = {p.relative_to(built["out"]).as_posix(): _axe_serious(chromium, p)
             for p in _pages(built["out"])}
    assert {k: v for k, v in found.items() if v} == {}


@pytest.mark.thorough   # the axe tests' own proof that they can fail (a browser of its own)
@pytest.mark.browser
def test_axe_core_sees_a_contrast_failure_when_there_is_one(chromium, tmp_path):
    page = tmp_path / "low.html"
    page.write_text("<!doctype html><html lang='en'><head><title>t</title></head><body><main>"
                    "<p style='color:#208ffb;background:#f3f4f5'>faint text</p></main></body>"
                    "</html>", encoding="utf-8")
    assert any(f.startswith("color-contrast") for f in _axe_serious(chromium, page))
