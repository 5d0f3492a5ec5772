"""Handouts: current, one page per slide, legible, bookmarked, offline, deterministic."""
from __future__ import annotations

import copy
import os
import re
import subprocess

import nbformat
import pytest
from conftest import pdf_fills, pdf_pages
from pypdf import PdfReader

from workshop import PINNED_JAX
from workshop.config import MIN_SCALE
from workshop.tools import browser, paths, talk
from workshop.tools import notebooks as nbs
from workshop.tools.builder import handouts, inputs, pdfinfo, render
from workshop.tools.builder.printer import Overflow, Printer
from workshop.tools.errors import KitError

SOURCES = nbs.all_notebooks()


def _lig(text: str) -> str:
    """Undo the typographic ligatures (ﬁ, ﬀ, ...) a PDF's text layer may hold."""
    import unicodedata
    return "".join(unicodedata.normalize("NFKC", ch) if "\ufb00" <= ch <= "\ufb06" else ch
                   for ch in text)


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", _lig(text).replace("`", ""))


def _loose(text: str) -> str:
    """_norm, with hex digests and digit runs as #: timings, ids and cache keys differ from
    the run the committed handout was printed from. Digests are whole words (masked before
    the spaces go); digits alone, so a letter next to a number is never eaten."""
    text = re.sub(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]+\b", "#", _lig(text))
    return re.sub(r"\d+", "#", _norm(text))


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_committed_handouts_are_current(src):
    digest = inputs.inputs_hash(*handouts.sources_of(src))
    for pdf in handouts.targets(src):
        assert pdf.exists(), f"{paths.short(pdf)} is missing: run scripts/build {src.stem[:2]}"
        assert pdfinfo.stamp_of(pdf) == digest, (
            f"{paths.short(pdf)} is stale for {paths.short(src)}: run scripts/build {src.stem[:2]}")


def test_handouts_index_lists_every_pdf_with_its_pages():
    index = (handouts.HANDOUTS / "README.md").read_text()
    pdfs = sorted(handouts.HANDOUTS.glob("*.pdf"))
    assert pdfs
    for pdf in pdfs:
        assert f"| [{pdf.name}]({pdf.name}) | {pdfinfo.pages_of(pdf)} |" in index
    # a reader who found the PDFs finds the web site too, and how to make it
    assert "`scripts/build --site`" in index and "`build/site/index.html`" in index


@pytest.mark.parametrize("deck", nbs.decks(), ids=lambda p: p.stem)
def test_slides_pdf_has_a_page_per_slide_with_titles_and_code(deck):
    nb = nbs.read(deck)
    slides = render.slides(render.talk_only(nb))     # the talk as projected; no appendix
    reader = PdfReader(handouts.targets(deck)[0])
    pages = pdf_pages(handouts.targets(deck)[0])
    n = sum(nbs.slide_type(c) in ("slide", "subslide") for c in nb.cells[:talk.talk_stop(nb)])
    assert len(reader.pages) == len(pages) == len(slides) == n
    box = reader.pages[0].mediabox
    assert abs(box.width / box.height - 16 / 9) < 0.01
    for page, slide in zip(pages, slides):
        text = _norm(page)
        assert _norm(slide.title) in text, f"slide “{slide.title}” not on its page"
        for cell in slide.cells:
            if cell.cell_type == "code":
                first = cell.source.split("\n")[0]
                if "file_map(" in cell.source:   # the map is the slide, as in RISE: no call
                    assert _norm("file_map(") not in text, f"“{slide.title}” prints the call"
                    continue
                if cell.metadata.get("jupyter", {}).get("source_hidden"):   # a chart's code:
                    assert _norm(first) not in text, f"“{slide.title}” prints its chart's code"
                    continue                                 # the chart alone, as in RISE
                assert _norm(first) in text, f"“{first}” missing from “{slide.title}”"
    whole = _norm("".join(pages))
    hidden = [c for c in nb.cells if "check" in nbs.tags(c) or nbs.slide_type(c) == "notes"]
    assert hidden
    for c in hidden:
        assert _norm(c.source) not in whole, f"hidden cell shown on a slide: “{c.source[:60]}”"


@pytest.mark.parametrize("deck", nbs.decks(), ids=lambda p: p.stem)
def test_reading_handout_has_notes_bookmarks_and_footer(deck):
    nb = nbs.read(deck)
    reader = PdfReader(handouts.targets(deck)[1])
    box = reader.pages[0].mediabox
    assert abs(float(box.width) - 595) < 2 and abs(float(box.height) - 842) < 2   # A4
    titles = []

    def walk(items):
        for it in items:
            walk(it) if isinstance(it, list) else titles.append(it.title)
    walk(reader.outline)
    for sec in nbs.sections(nb):
        assert sec.title in titles, f"no bookmark for section “{sec.title}”"
    headings = {nbs.plain(h) for h in map(nbs.heading, nb.cells) if h}
    headings.add(nb.metadata.workshop.title)
    assert set(titles) <= headings, f"bookmarks not a heading: {set(titles) - headings}"
    pages = pdf_pages(handouts.targets(deck)[1])
    assert len(pages) == len(reader.pages)
    text = "".join(pages)
    first_note = next(n for s in render.slides(nb, reader=True) for n in s.notes)
    assert _norm(first_note.replace("**", "")[:60]) in _norm(text)
    # what is for the presenter only is not printed for the attendee: the plan, the → lines
    for c in nb.cells:
        if nbs.slide_type(c) != "notes":
            continue
        stage = [p for p in re.split(r"\n\s*\n", c.source) if p.lstrip().startswith("→")]
        for p in stage:
            assert _norm(p[:50]) not in _norm(text), f"presenter-only note printed: {p[:50]}"
    # the appendix, when the deck has one, is printed after the talk
    app = talk.appendix_sections(nb)
    if app:
        assert _norm(text).find(_norm(app[-1].title)) > _norm(text).find("Keypoints")
    title = nb.metadata.workshop.title
    last = _lig(pages[-1])
    n = len(reader.pages)
    assert re.search(rf"{re.escape(title)} · JAX {re.escape(PINNED_JAX)} · built "
                     rf"\d{{4}}-\d{{2}}-\d{{2}}", last)
    assert f"{n} / {n}" in last


@pytest.mark.parametrize("pdf", sorted(handouts.HANDOUTS.glob("*.pdf")), ids=lambda p: p.name)
def test_page_one_is_not_blank(pdf, tmp_path):
    from PIL import Image
    subprocess.run(["pdftoppm", "-r", "30", "-png", "-f", "1", "-l", "1", str(pdf),
                    str(tmp_path / "p")], check=True, timeout=60)
    gray = Image.open(next(tmp_path.glob("p*.png"))).convert("L")
    dark = sum(1 for v in gray.get_flattened_data() if v < 128)
    assert dark > 200, "page 1 is blank"


@pytest.fixture(scope="module")
def printer():
    if browser.find() is None:
        if os.environ.get("CI"):
            pytest.fail(f"no browser to print handouts: {browser.INSTALL}")
        pytest.skip(browser.INSTALL)
    with Printer() as p:
        yield p


@pytest.mark.parametrize("deck", nbs.decks(), ids=lambda p: p.stem)
def test_no_talk_slide_overflows_its_printed_page(deck):
    # the slides PDF holds the talk path, each slide in the live slide's box, faces and metrics
    # (render.SLIDES_CSS mirrors decks/rise.css): a slide shrunk to fit its page is one the
    # presenter would scroll on the projector
    pdf = handouts.targets(deck)[0]
    shrunk = pdfinfo.shrunk_of(pdf)
    assert shrunk is not None, f"{paths.short(pdf)} records no shrink: run scripts/build"
    small = [f"slide {i} at {k:.0%}" for i, k in shrunk if k < MIN_SCALE]
    assert not small, (f"{paths.short(pdf)}: {', '.join(small)}: the slide overflows its "
                       f"page, so it scrolls on the projector: split it")


def test_a_shrunk_slide_is_recorded_for_the_author(printer):
    cell = lambda text, kind: nbformat.v4.new_markdown_cell(
        text, metadata={"slideshow": {"slide_type": kind}})
    nb = nbformat.v4.new_notebook(cells=[
        cell("## fits", "slide"), cell("## long\n\n" + "\n\n".join(
            f"line {i}" for i in range(40)), "slide"), cell("## fits too", "slide")])
    data, shrunk = printer.pdf(render.slides_html(nb, "T"), "slides")
    assert [i for i, _ in shrunk] == [2] and 0 < shrunk[0][1] < 0.9
    pdf = pdfinfo.stamp(data, "T", "0" * 64, "2026-01-01", "t.ipynb", shrunk)
    import io
    meta = PdfReader(io.BytesIO(pdf)).metadata
    assert meta[pdfinfo.SHRUNK_KEY] == f"2:{shrunk[0][1]:.2f}"
    none = pdfinfo.stamp(data, "T", "0" * 64, "2026-01-01", "t.ipynb", [])
    assert PdfReader(io.BytesIO(none)).metadata[pdfinfo.SHRUNK_KEY] == "none"


def test_export_is_offline_and_deterministic(runs, printer, tmp_path):
    deck = nbs.decks()[0]
    executed = nbformat.reads(runs[(deck, None)][1], as_version=4)
    a, b = tmp_path / "a", tmp_path / "b"
    handouts.export(printer, deck, executed, a)
    handouts.export(printer, deck, executed, b)
    assert printer.offsite == [], f"the export asked for {printer.offsite}"
    for pa, pb in zip(handouts.targets(deck, a), handouts.targets(deck, b)):
        assert pa.read_bytes() == pb.read_bytes(), f"{pa.name} differs between two builds"


def test_the_offline_guard_refuses_and_records_a_remote_asset(printer):
    before = len(printer.offsite)
    printer.pdf("<p>x</p><img src='https://cdn.example.com/a.png'>", "a4")
    assert printer.offsite[before:] == ["https://cdn.example.com/a.png"]
    del printer.offsite[before:]


@pytest.mark.parametrize("kind,html", [
    ("a4", "<pre style='white-space:pre'>" + "x" * 400 + "</pre>"),
    ("slides", "<section class='slide'><div class='inner'><div style='position:relative;"
               "top:-400px'>pushed off the top</div></div><div class='foot'>"
               "<span class='scaled'></span></div></section>"),
])
def test_text_that_would_run_off_a_page_stops_the_export(printer, kind, html):
    with pytest.raises(Overflow, match="run off the page"):
        printer.pdf(html, kind)


def test_text_a_row_cuts_on_purpose_is_not_an_overflow(printer):
    # a file map's row ends in …: its clipped text is cut on purpose; the row itself fits
    row = ("<div style='width:300px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis'>"
           "<span>" + "role " * 400 + "</span></div>")
    slide = "<section class='slide'><div class='inner'>{}</div></section>"
    data, _ = printer.pdf(slide.format(row), "slides")
    assert data.startswith(b"%PDF")
    unclipped = row.replace("overflow:hidden;", "").replace("<span>", "<span style='position:"
                                                            "relative;top:-400px'>")
    with pytest.raises(Overflow, match="run off the page"):   # the same, not clipped
        printer.pdf(slide.format(unclipped), "slides")


@pytest.mark.parametrize("deck", nbs.decks(), ids=lambda p: p.stem)
def test_slides_pdf_shows_the_end_of_every_output(runs, deck):
    """A long output is scaled to fit its page, never clipped: its last line is printed."""
    executed = nbformat.reads(runs[(deck, None)][1], as_version=4)
    pages = pdf_pages(handouts.targets(deck)[0])
    for page, slide in zip(pages, render.slides(render.talk_only(executed)), strict=True):
        text = _loose(page)
        for cell in slide.cells:
            for o in cell.get("outputs", []):
                if {"image/png", "image/svg+xml"} & set(o.get("data", {})):
                    continue            # a picture: the slide shows the image, not its repr
                plain = render.clean(o.get("text") or o.get("data", {}).get("text/plain", ""))
                lines = [l for l in re.sub(r"\x1b\[[0-9;]*m", "", plain).split("\n")
                         if l.strip()]
                if lines:
                    last = lines[-1].split("│ ", 1)[-1]
                    if "workshop-filemap" in o.get("data", {}).get("text/html", ""):
                        # a file map: its last row's name printed after its header (the
                        # role is cut with … by design, "class" is a word of the row)
                        head, name = _loose(lines[0])[:30], last.lstrip("▶ ").split()[1]
                        row = _loose(name.split(".")[-1])[:20]   # a method shows its own name
                        assert head in text and text.rfind(row) > text.find(head), (
                            f"“{slide.title}”: the map ends at “{name}”")
                        # the map is the slide's picture, as in RISE: not under its call
                        assert _loose("file_map(") not in text, f"“{slide.title}”: the call"
                        continue
                    assert _loose(last) in text, f"“{slide.title}”: output ends “{last}”"


def test_a_lab_sheet_withholds_only_outputs_near_an_answers_names():
    # an output is given unless its cell reads, or makes again, a name an answer leaves in the
    # kernel; an answer's locals, a loop's names and an f-string's format are not such names
    from workshop.tools.authoring import labgen
    out = lambda text: [nbformat.v4.new_output("stream", name="stdout", text=text)]
    code = lambda src, text=None: nbformat.v4.new_code_cell(src, outputs=out(text) if text
                                                           else [])
    solution = nbformat.v4.new_notebook(cells=[
        code("for name, what in CAUSES.items():\n    print(f'{name:14s} {what}')", "suspects"),
        code("losses = train(1)\n[round(v, 3) for v in losses]", "losses"),
        code("fixed(2)", "gives fixed away"), code("causes = {1}\ncauses", "remakes causes"),
        nbformat.v4.new_markdown_cell("## Task 1 · Fix it"),
        code("def fixed(x):\n    ### BEGIN SOLUTION\n    name = s = v = x\n    return x\n"
             "    ### END SOLUTION\ncauses = {2}")])
    sheet = copy.deepcopy(solution)
    for c in sheet.cells:
        c.pop("outputs", None) if c.cell_type == "markdown" else c.update(outputs=[])
    given = labgen.with_given_outputs(sheet, solution)
    assert [bool(c.get("outputs")) for c in given.cells[:4]] == [True, True, False, False]
    # what an answer leaves also through `global`, a comprehension's :=, a magic's line
    assert labgen._names_made("def f():\n    global model\n    model = 1") == {"f", "model"}
    assert labgen._names_made("best = [y := i for i in range(3)]") == {"best", "y"}
    assert {"x"} <= labgen._names_made("%time x = 1") and "x" in labgen._names_near("%%time\nx")
    broken = copy.deepcopy(solution)
    broken.cells[-1].source = "def fixed(x:\n    ### BEGIN SOLUTION"
    with pytest.raises(KitError, match="an answer cell does not parse"):
        labgen.with_given_outputs(sheet, broken)


@pytest.mark.parametrize("lab", nbs.lab_sources(), ids=lambda p: p.stem)
def test_every_lab_sheet_prints_the_source_its_tasks_ask_to_read(runs, lab):
    # J2's sheet said "Read it first" over a cell whose output (the loop's source) it did not
    # print: a reader of the PDF had nothing to read. Every cell that prints source a task
    # reads (inspect.getsource, show_source) has its output on the attendee's sheet.
    executed = nbformat.reads(runs[(lab, None)][1], as_version=4)
    sheet = _loose("".join(pdf_pages(handouts.targets(lab)[0])))
    asked = 0
    for cell in executed.cells:
        if cell.cell_type != "code" or not re.search(r"getsource\(|show_source\(", cell.source):
            continue
        text = "".join(o.get("text") or o.get("data", {}).get("text/plain", "")
                       for o in cell.get("outputs", []))
        first = next((line for line in text.split("\n") if line.strip()), "")
        asked += 1
        assert _loose(first)[:40] in sheet, f"{lab.stem}: the sheet lacks “{first[:60]}”"
    if lab.stem.startswith("J2"):   # the loop, what it calls, its losses, the six suspects
        assert asked and all(f"def{f}(" in sheet for f in ("train_buggy", "schedule", "mse_step"))
        given = [o for c in executed.cells if c.source.startswith("for name, what")
                 or c.source.endswith("[round(v, 3) for v in losses]")
                 for o in c.get("outputs", [])]
        assert len(given) >= 2 and all(_loose(render.clean(o.get("text") or o["data"][
            "text/plain"])).split("\n")[0][:30] in sheet for o in given), given


# What is the author's, never the reader's: build diagnostics, the hint to see more, machine
# paths, the solution markers of a lab's source.
# (A path or an argument a slide shows on purpose, --xla_dump_to=/tmp/dumps or
# max_lines=None in a deck's code, is the talk's.)
FOR_THE_AUTHOR = ["scaled to", "pass max_lines", "BEGIN SOLUTION",
                  "END SOLUTION", "ipykernel_", "/tmp/tmp", "workshop-run-", str(paths.ROOT)]


@pytest.mark.parametrize("pdf", sorted(handouts.HANDOUTS.glob("*.pdf")), ids=lambda p: p.name)
def test_nothing_for_the_author_and_no_near_empty_page(pdf):
    pages = [_lig(p) for p in pdf_pages(pdf)]
    for i, text in enumerate(pages, 1):
        flat = re.sub(r"\s+", "", text)
        for bad in FOR_THE_AUTHOR:
            assert re.sub(r"\s+", "", bad) not in flat, f"{pdf.name} p{i}: “{bad}”"
        if ".slides." in pdf.name:
            continue          # a slide may be short (a title, a question)
        # a notes box keeps its label: no page ends on it, its notes on the next page
        body = [line.strip() for line in text.split("\n") if line.strip()][:-1]   # no footer
        assert body[-1:] != ["Notes"], f"{pdf.name} p{i} ends on a notes box's label"
    if ".slides." in pdf.name:
        return
    # a page of a reading handout or a sheet with next to nothing on it (a notes box alone, a
    # slide's last lines, a divider): its content ends in the top quarter. A last page may.
    for i, fill in enumerate(pdf_fills(pdf)[:-1], 1):
        assert fill > 0.25, f"{pdf.name} p{i} is nearly empty: its content ends {fill:.0%} down"


def test_the_cleaning_leaves_no_path_and_no_solution_marker():
    root = str(paths.ROOT)
    html = render.cell_html(nbformat.v4.new_code_cell(
        "x = 1\n    ### BEGIN SOLUTION\ny = 2\n### END SOLUTION\n", outputs=[
            nbformat.v4.new_output("stream", text=f"File /tmp/ipykernel_42/1234.py:3\n"
                                                  f"{root}/workshop/show.py\n")]))
    assert "SOLUTION" not in html and "ipykernel" not in html and root not in html
    assert "‹cell›:3" in html and "<cell>" not in html   # a raw <cell> would be a tag
    assert "workshop/show.py" in html
    # cut by a trimmed output wherever a long temp folder pushed it: the build's run folder,
    # macOS's /var/folders/…/T/
    for cut in ("at /tmp/workshop-run-kdr0xgz5/ipykernel_8257/142934290…",
                "at /tmp/workshop-run-kdr0xgz5/ipykernel_8257/2215316448.p…",
                "at /tmp/workshop-run-kdr0xgz5/ipykernel_82…", "at /tmp/workshop-run-kd…",
                "at /var/folders/7x/abc_def/T/ipykernel_1234/5678.py:4"):
        assert render.clean(cut) in ("at ‹cell›…", "at ‹cell›:4"), (cut, render.clean(cut))


def test_a_shrunk_slide_says_nothing_on_its_page():
    page = render.slides_html(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "## t", metadata={"slideshow": {"slide_type": "slide"}})]), "T")
    assert "scaled" not in page


def test_an_output_is_rendered_by_its_richest_printable_form():
    # IPython's Markdown(...) is text/markdown + its repr in text/plain: the reader gets the text
    md = {"output_type": "display_data", "metadata": {}, "data": {
        "text/markdown": "**bold** and `code`",
        "text/plain": "<IPython.core.display.Markdown object>"}}
    got = render.output(md)
    assert "<strong>bold</strong>" in got and "<code>code</code>" in got
    assert "IPython.core.display" not in got
    tex = {"output_type": "execute_result", "metadata": {}, "execution_count": 1,
           "data": {"text/latex": "$x < y$", "text/plain": "<Math>"}}
    assert render.output(tex) == "<pre class='out'>$x &lt; y$</pre>"
    html = {"output_type": "display_data", "metadata": {},
            "data": {"text/html": "<b>h</b>", "text/markdown": "m", "text/plain": "p"}}
    assert render.output(html) == "<div class='out html'><b>h</b></div>"


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_each_handout_says_its_licence_and_credit_on_page_one(src):
    for pdf in handouts.targets(src):
        first = _norm(pdf_pages(pdf)[0])
        for part in ("CC BY 4.0", "code MIT", "The JAX Authors, Apache-2.0"):
            assert _norm(part) in first, f"{pdf.name}: page 1 does not say “{part}”"


def test_a_charts_hidden_code_is_off_the_slides_pdf_and_in_the_reading_handout(printer):
    # as in RISE (decks/rise.css): the room sees the chart; a reader gets the code that drew it
    import io
    chart = nbformat.v4.new_code_cell(
        "fig, ax = plt.subplots(figsize=(7, 2))\nax.plot([1, 3, 2]); plt.show()", metadata={
            "slideshow": {"slide_type": "-"}, "jupyter": {"source_hidden": True}},
        outputs=[nbformat.v4.new_output("stream", text="the chart drawn\n")])
    plain = nbformat.v4.new_code_cell("print('shown')", metadata={
        "slideshow": {"slide_type": "-"}})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "## A chart", metadata={"slideshow": {"slide_type": "slide"}}), plain, chart])
    text = {}
    for kind, page in (("slides", render.slides_html(nb, "T")),
                       ("reading", render.reading_html(nb, "T"))):
        data, _ = printer.pdf(page, kind)
        text[kind] = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(data)).pages)
    assert "the chart drawn" in text["slides"] and "print('shown')" in text["slides"]
    assert "subplots" not in text["slides"]
    assert "subplots" in text["reading"] and "the chart drawn" in text["reading"]
