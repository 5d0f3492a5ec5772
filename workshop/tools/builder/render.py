"""Notebook → self-contained HTML for printing: slides (16:9), reading handout (A4), lab sheet.

No template fetches anything: styles are inline, code is highlighted with inline styles, images
are data: URIs. Slides are grouped as RISE groups them: a `slide` or `subslide` cell starts a
page, fragments and `-` cells join it, `notes` cells become the reader's notes, `skip` cells
(the hidden checks) are left out, but for a `reading` cell, which the reading handout adds to
its slide's notes.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from .. import notebooks as nbs
from .. import paths, talk

_ANCHOR = re.compile(r'<a class="anchor-link"[^>]*>.*?</a>')
# What is the author's and not the reader's: nbgrader's solution markers in a lab's code, the
# kernel's temporary file for a cell, the folder the kit was built in.
_SOLUTION_MARK = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
# (whole, or cut anywhere by a trimmed output, "…/ipykernel_82…": a long temp folder, as the
# build's run folder or macOS's /var/folders/…/T/, pushes it past the cut)
_KERNEL_FILE = re.compile(r"(?:/[\w.-]+)*/(?:ipykernel_\d*(?:/\d*(?:\.p?y?)?)?"
                          r"|workshop-run-\w*(?:/[\w.-]*)*)")


def clean(text: str) -> str:
    """`text` with no machine path: a kernel temp file is "‹cell›" (no angle brackets: `text`
    may be HTML already), the checkout is left out."""
    text = _KERNEL_FILE.sub("‹cell›", text)
    root = str(paths.ROOT)
    return text.replace(root + "/", "").replace(root, ".")


@dataclass
class Slide:
    title: str
    level: int                      # 1: a `slide`, 2: a `subslide`
    cells: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def slides(nb, reader: bool = False) -> list[Slide]:
    """The slides of `nb` as RISE groups them. `reader=True`: the notes as the attendee's
    reading handout prints them, without what is for the presenter only (a notes cell tagged
    `presenter`, a paragraph that starts with →), with what is for the reader only (a skip
    cell tagged `reading`: the notes that would not fit the presenter's glance)."""
    out: list[Slide] = []
    for cell in nb.cells:
        st = nbs.slide_type(cell)
        if st == "skip" or "check" in nbs.tags(cell):
            if reader and out and talk.READING in nbs.tags(cell) and cell.cell_type == "markdown":
                out[-1].notes.append(talk.reader_notes(cell.source))
            continue
        if st == "notes":
            text = cell.source
            if reader:
                text = "" if talk.PRESENTER in nbs.tags(cell) else talk.reader_notes(text)
            if out and text:
                out[-1].notes.append(text)
            continue
        if st in ("slide", "subslide") or not out:
            out.append(Slide(nbs.heading(cell) or "", 1 if st == "slide" else 2))
        out[-1].cells.append(cell)
    return out


def markdown(text: str) -> str:
    from nbconvert.filters import markdown2html_mistune
    return _ANCHOR.sub("", markdown2html_mistune(text))


def code(source: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    source = _SOLUTION_MARK.sub("", source)
    body = highlight(source, PythonLexer(), HtmlFormatter(nowrap=True, noclasses=True))
    return f"<pre class='code'>{body}</pre>"


def output(o) -> str:
    from nbconvert.filters import ansi2html
    kind = o.get("output_type")
    if kind == "stream":
        return f"<pre class='out'>{ansi2html(o.get('text', ''))}</pre>"
    if kind == "error":
        return f"<pre class='out err'>{html.escape(o['ename'])}: {html.escape(o['evalue'])}</pre>"
    data = o.get("data", {})
    if "image/png" in data:
        png = data["image/png"].replace("\n", "")
        return f"<img class='out' src='data:image/png;base64,{png}'>"
    if "image/svg+xml" in data:
        return f"<div class='out'>{data['image/svg+xml']}</div>"
    if "text/html" in data:
        return f"<div class='out html'>{data['text/html']}</div>"
    if "text/markdown" in data:   # IPython's Markdown(...): rendered, not its repr
        return f"<div class='out md'>{markdown(data['text/markdown'])}</div>"
    if "text/latex" in data:      # no TeX engine offline: the source, as text
        return f"<pre class='out'>{html.escape(data['text/latex'])}</pre>"
    if "text/plain" in data:
        return f"<pre class='out'>{ansi2html(data['text/plain'])}</pre>"
    return ""


def cell_html(cell, with_outputs: bool = True) -> str:
    if cell.cell_type == "markdown":
        return f"<div class='md'>{markdown(cell.source)}</div>"
    if cell.cell_type != "code":
        return ""
    parts = [code(cell.source)]
    if with_outputs:
        parts += [output(o) for o in cell.get("outputs", [])]
    kind = "cell code-hidden" if nbs.code_hidden(cell) else "cell"
    return clean(f"<div class='{kind}'>" + "".join(parts) + "</div>")


BASE_CSS = """
* { box-sizing: border-box; }
body { margin: 0; font-family: 'Source Sans Pro', 'DejaVu Sans', sans-serif; color: #111; }
pre { font-family: 'DejaVu Sans Mono', monospace; margin: 0; white-space: pre; }
pre.code { background: #f5f5f5; border: 1px solid #e0e0e0; padding: 4px 6px; }
pre.out, div.out { padding: 2px 10px 2px 14px; }
div.out pre { background: transparent; }
.err { color: #b00; }
h1, h2, h3 { color: #0b2a4a; margin: 0.2em 0 0.4em; font-weight: 600; }
.md code { background: #eef0f3; padding: 0 3px; font-family: 'DejaVu Sans Mono', monospace; }
.md :is(h1, h2, h3) code { background: none; padding: 0; font-size: 0.92em; color: inherit; }
img.out { max-width: 100%; display: block; }
div.out > svg { display: block; }   /* a picture is a block, as on the projector */
/* a sharding grid drawn by rich, in ink (decks/rise.css says why) */
div.out pre[style*="line-height:normal"] span { color: inherit !important; }
"""

SLIDES_CSS = """
@page { size: 1280px 720px; margin: 0; }
.slide { width: 1280px; height: 720px; position: relative; overflow: hidden;
         page-break-after: always; break-after: page; }
.slide .inner { position: absolute; top: 12px; left: 28px; width: 1216px; transform-origin: 0 0; }
.slide .md, .slide .cell { margin: 0; padding: 3px 0; }
.slide .md { font-size: 26px; line-height: 1.3; }
.slide .md p { margin: 0 0 12px; }
/* (line-height here only: with Source Sans Pro at 600, a heading's line-height of 1.2 made
   Chromium write its words twice into an A4 PDF's bookmarks) */
.slide h1, .slide h2, .slide h3 { margin: 0 0 10px; line-height: 1.2; }
.slide h1 { font-size: 60px; } .slide h2, .slide h3 { font-size: 46px; }
.slide pre { font-size: 20px; line-height: 1.25; }
/* an output wrapped as JupyterLab wraps it */
.slide pre.out { padding: 2px 0 2px 50px; white-space: pre-wrap; word-break: break-all; }
.slide .foot { position: absolute; bottom: 10px; left: 30px; right: 100px; font-size: 16px;
               color: #555; display: flex; justify-content: space-between; }
.slide .workshop-shown div { font-size: 20px; }
.slide .workshop-shown > div { line-height: 1.25; }
.slide .workshop-shown pre { padding: 2px 0; }
.slide pre.code { margin-bottom: 5px; }   /* JupyterLab's gap between a cell and its output */
.slide .cell:has(.workshop-filemap) > pre.code { display: none; }   /* as in RISE: the map */
.slide .cell.code-hidden > pre.code { display: none; }   /* as in RISE: a chart, its code hidden */
.slide .slide-credit { position: absolute; bottom: 34px; left: 30px; right: 48px; margin: 0;
                       font-size: 13px; color: #555; }
"""

READING_CSS = """
@page { size: A4; margin: 16mm 16mm 18mm 16mm; }
body { font-size: 11pt; line-height: 1.4; }
.part { break-inside: avoid; margin-bottom: 10mm; }   /* a slide and its notes on one page */
.sheet { break-inside: auto; }   /* a lab sheet is one part, pages long */
.md { font-size: 11pt; }
h1 { font-size: 22pt; } h2 { font-size: 16pt; break-after: avoid; }
h3 { font-size: 13pt; break-after: avoid; }
pre { font-size: 8.5pt; line-height: 1.3; white-space: pre-wrap; overflow-wrap: anywhere; }
.workshop-filemap { font-size: 8.5pt !important; }   /* 20 px on a slide */
.cell { margin: 3mm 0; break-inside: avoid; }
.notes { background: #fff8e1; border-left: 3px solid #d4a72c; padding: 2mm 4mm; margin: 3mm 0;
         font-size: 10pt; break-before: avoid; break-inside: avoid; }
.notes .label { font-weight: bold; color: #7a5a00; break-after: avoid; }
.notes p, .notes li { widows: 4; orphans: 3; }   /* never a line or two alone on a page */
.section { break-before: page; }
.workshop-shown div { font-size: 8pt; }
.credit { font-size: 8pt; color: #555; margin: 0 0 3mm; }
"""

# run by the printer in each page: the slides scaled to fit (what was shrunk, for the report),
# then anything that would still run off its page
FIT_JS = paths.fill_script("fit_slides.js")
OVERFLOW_JS = paths.page_script("overflow.js")
A4_CONTENT_PX = 672   # 210 mm less 2 × 16 mm margins, at 96 px per inch


# On each handout's first page: whose it is, under which licence, how to credit it (README's
# "Licence and credit"); the quoted JAX source keeps its own licence.
CREDIT = ("JAX Core, From the Inside · slides, notes and labs CC BY 4.0 · code MIT · quoted "
          "JAX source © The JAX Authors, Apache-2.0 (see NOTICE) · reusing it: “Adapted from "
          "JAX Core, From the Inside, CC BY 4.0”")


def credit(cls: str = "credit") -> str:
    return f"<p class='{cls}'>{html.escape(CREDIT)}</p>"


def document(title: str, css: str, body: str) -> str:
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{BASE_CSS}{css}</style></head>"
            f"<body>{body}</body></html>")


def talk_only(nb):
    """`nb` up to its appendix: the slides PDF is the talk as projected. The appendix (the depth
    kept for readers and questions) is printed in the reading handout, after the talk."""
    import copy
    out = copy.copy(nb)
    out.cells = nb.cells[: talk.talk_stop(nb)]
    return out


def slides_html(nb, title: str) -> str:
    ss = slides(talk_only(nb))
    pages = []
    for i, s in enumerate(ss, 1):
        cells = "".join(cell_html(c) for c in s.cells)
        pages.append(f"<section class='slide'><div class='inner'>{cells}</div>"
                     + (credit("credit slide-credit") if i == 1 else "") +
                     f"<div class='foot'><span>{html.escape(title)}</span>"
                     f"<span>{i} / {len(ss)}</span></div></section>")
    return document(title, SLIDES_CSS, "".join(pages))


def reading_html(nb, title: str) -> str:
    parts, divider = [], False
    for s in slides(nb, reader=True):
        cells = "".join(cell_html(c) for c in s.cells)
        # one box a slide, whole on one page with its label, kept with its slide
        notes = (f"<div class='notes'><div class='label'>Notes</div>"
                 f"{''.join(markdown(n) for n in s.notes)}</div>" if s.notes else "")
        # a section starts a page, but for one that follows a divider (a section of one slide
        # of prose, as the appendix's title): that would print a near-empty page
        new_page = s.level == 1 and parts and not divider
        parts.append(f"<div class='part{' section' if new_page else ''}'>{cells}{notes}</div>")
        divider = s.level == 1 and all(c.cell_type == "markdown" for c in s.cells)
    return document(title, READING_CSS, credit() + "".join(parts))


def sheet_html(nb, title: str) -> str:
    cells = [cell_html(c) for c in nb.cells if "check" not in nbs.tags(c)]
    return document(title, READING_CSS, credit() + "<div class='part sheet'>" + "".join(cells)
                + "</div>")
