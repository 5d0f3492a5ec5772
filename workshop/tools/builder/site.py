"""The course as a web site, `build/site/`: a reader's pages made by Sphinx, reading notebooks
through myst-nb as JAX's own documentation does, from the notebooks the build already executed
(`build/executed/`), never run again.

- a home page: the course's thesis, its phases with their decks and labs, the schedule, the
  handouts;
- a page per deck: the talk path and then the appendix, each slide's cells with their outputs
  and its notes as prose (the reading handout's words: no stage direction, no plan, no check
  cell), an anchor per slide (`#slide-7`) beside a link to that slide's page of the slides PDF;
- a page per lab (the attendee sheet, with the outputs it gives) and one for its solutions.

Offline: the theme (sphinx-book-theme) ships its icons and scripts, and the site carries the
slides' face (Source Sans Pro, the files jupyterlab-rise ships, as the printer reads them); no
page asks for math (MathJax would come from a CDN) and the search is Sphinx's own, which works
from file://. The kit's look: the slides' face for the words, their title colour for headings,
the palette's ink for links (workshop/palette.py).
Incremental: a page's source is rewritten only when it changed, so Sphinx rebuilds only that
page (and the pages that list it). `scripts/build --site` makes it after the build.
"""
from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ... import palette
from .. import errors, paths
from .. import notebooks as nbs
from . import handouts, render

TITLE = "#0b2a4a"   # the slides' titles (decks/rise.css: .reveal h1, h2, h3)

SRC = paths.BUILD / "site-src"
OUT = paths.BUILD / "site"
PDFS = "pdf"   # the handouts' folder in the site

CONF = '''\
# written by workshop/tools/builder/site.py: edit that, not this
project = "JAX Core, From the Inside"
author = "the workshop's maintainers"
copyright = "the kit's authors, CC BY 4.0 (prose) and MIT (code)"
extensions = ["myst_nb"]
nb_execution_mode = "off"              # the build ran them: never again here
nb_merge_streams = True
myst_heading_anchors = 3
html_theme = "sphinx_book_theme"
html_title = "JAX Core, From the Inside"
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_extra_path = ["extra"]   # extra/pdf/: the handouts, at pdf/ in the site
html_theme_options = {"show_navbar_depth": 1, "use_download_button": False,
                      "use_fullscreen_button": False, "home_page_in_toc": True,
                      "navigation_with_keys": False, "search_bar_text": "Search the course"}
exclude_patterns = ["_build"]
html_static_path = ["_static"]
html_css_files = ["workshop.css"]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]
'''


FONTS = "_static/fonts"   # the slides' face, in the site


def _faces_css() -> str:
    """@font-face rules for the four Source Sans Pro files the site carries (printer.FACES)."""
    from .printer import FACES
    rules = []
    for face in FACES:
        weight = 600 if "Semibold" in face else 400
        style = "italic" if face.endswith(("It", "SemiboldIt")) else "normal"
        rules.append(f'@font-face {{ font-family: "Source Sans Pro"; font-weight: {weight}; '
                     f'font-style: {style}; src: url("fonts/{face}.ttf") format("truetype"); }}')
    return "\n".join(rules) + "\n"


# the kit's look (decks/rise.css): the slides' face for the words, their titles' colour for the
# headings, the palette's ink for links; the theme's own colours for the rest (its dark mode too)
LOOK = f"""\
html {{ --pst-font-family-base: "Source Sans Pro", Helvetica, Arial, sans-serif;
        --pst-font-family-heading: "Source Sans Pro", Helvetica, Arial, sans-serif;
        --pst-font-family-monospace: "DejaVu Sans Mono", Menlo, Consolas, monospace; }}
html[data-theme="light"] {{ --pst-color-link: {palette.INK}; --pst-color-primary: {palette.INK};
        --pst-color-link-hover: {palette.MARK_INK}; }}
html[data-theme="light"] .bd-article :is(h1, h2, h3) {{ color: {TITLE}; }}
"""

# a long name in code or a heading wraps on a phone, not the page (390 px wide)
CSS = """\
.bd-article p, .bd-article li, .bd-article td, .bd-article code.literal, .bd-article h1,
.bd-article h2, .bd-article h3, .bd-article a { overflow-wrap: anywhere; }
.bd-article code.literal span.pre { white-space: pre-wrap; }
/* the terminal colours of an output (a jaxpr's), dark enough to read on the output's grey (4.5:1
   and more, axe-core's contrast rule); the backgrounds stay as myst-nb sets them */
html .bd-article div.highlight .-Color[class*=-Black] { color: #24292f; }
html .bd-article div.highlight .-Color[class*=-Red] { color: #a40e26; }
html .bd-article div.highlight .-Color[class*=-Green] { color: #116329; }
html .bd-article div.highlight .-Color[class*=-Yellow] { color: #6b5200; }
html .bd-article div.highlight .-Color[class*=-Blue] { color: #0550ae; }
html .bd-article div.highlight .-Color[class*=-Magenta] { color: #6f2da8; }
html .bd-article div.highlight .-Color[class*=-Cyan] { color: #0b5c63; }
html .bd-article div.highlight .-Color[class*=-White] { color: #57606a; }
"""


def _label(stem: str, n: int) -> str:
    """Slide n's anchor on its deck's page (an id starts with a letter: deck03-slide-12)."""
    return f"deck{stem[:2].lower()}-slide-{n}"


def deck_page(executed, src: Path):
    """The reading notebook of a deck: per slide, an anchor (`#deck01-slide-7`), its cells with
    their outputs (machine paths out), a link to its page of the slides PDF, its notes as the
    reading handout has them."""
    import nbformat
    out = nbformat.v4.new_notebook(metadata={"kernelspec": executed.metadata.get(
        "kernelspec", {}), "language_info": executed.metadata.get("language_info", {})})
    stem = src.stem
    for n, slide in enumerate(render.slides(executed, reader=True), start=1):
        pdf = f"../{PDFS}/{stem}.slides.pdf#page={n}"   # (a file, not a page: HTML)
        link = (f"<small><a class='slide-pdf' href='{pdf}'>slide {n} in the slides PDF"
                "</a></small>")
        cells = [copy.deepcopy(c) for c in slide.cells]
        if not (cells and cells[0].cell_type == "markdown"):   # (a slide that opens on code)
            cells.insert(0, nbformat.v4.new_markdown_cell("", id=f"slide-{n}"))
        # the slide's anchor: an element of its own, so that every slide has one whatever
        # its first cell holds (a heading, a paragraph)
        head, _, rest = _links(cells[0].source).partition("\n")
        if not head.startswith("#"):   # (after the heading: the page's title stays first)
            head, rest = "", cells[0].source and _links(cells[0].source)
        cells[0].source = (f"{head}\n\n<span id='{_label(stem, n)}'></span>\n\n"
                           f"{rest}\n\n{link}").lstrip("\n")
        for cell in cells:
            cell.metadata = {}
            if cell.cell_type == "markdown" and cell is not cells[0]:
                cell.source = _links(cell.source)
            elif cell.cell_type == "code":
                cell.source = render.clean(cell.source)
                for o in cell.get("outputs", []):
                    _clean_output(o)
            out.cells.append(cell)
        if slide.notes:
            out.cells.append(nbformat.v4.new_markdown_cell("\n\n".join(slide.notes),
                                                            id=f"notes-{n}"))   # (ids fixed:
    return out                                   # an unchanged deck writes the same page)


def _links(text: str, up: str = "../") -> str:
    """The kit's relative links as the site's: a lab (exercises/) is a page under labs/, a
    handout a file under pdf/ (`up`: from a page in a folder, or "" from the home page)."""
    text = re.sub(r"\]\((?:\.\./)?exercises/(?:solutions/)?([\w.-]+)\.ipynb",
                  rf"]({up}labs/\1.ipynb", text)
    text = re.sub(r"\]\((?:\.\./)?decks/([\w.-]+\.ipynb)", rf"]({up}decks/\1", text)
    return re.sub(r"\]\((?:\.\./)?handouts/([\w.-]+\.pdf)", rf"]({up}{PDFS}/\1", text)


def _clean_output(o) -> None:
    if "text" in o:
        o["text"] = render.clean(o["text"])
    for kind in ("text/plain", "text/html"):
        if kind in o.get("data", {}):
            o["data"][kind] = render.clean(o["data"][kind])
    if o.get("output_type") == "error":
        o["traceback"] = [render.clean(t) for t in o.get("traceback", [])]


def lab_pages(executed, src: Path):
    """(the attendee sheet with the outputs it gives, the solutions), as notebooks."""
    from ..authoring import labgen
    sheet = labgen.with_given_outputs(nbs.read(labgen.target(src)), executed)
    solution = copy.deepcopy(executed)
    solution.cells = [c for c in solution.cells if "check" not in nbs.tags(c)]
    for nb in (sheet, solution):
        for cell in nb.cells:
            cell.metadata = {}
            if cell.cell_type == "code":
                cell.source = render._SOLUTION_MARK.sub("", cell.source)
                for o in cell.get("outputs", []):
                    _clean_output(o)
    first = next(c for c in solution.cells if c.cell_type == "markdown")
    first.source = re.sub(r"^(#+ .*)$", r"\1: solutions", first.source, count=1, flags=re.M)
    return sheet, solution


def home(decks: list[Path], labs: list[Path]) -> str:
    """The home page: the thesis, the phases, the schedule, the handouts, the contents."""
    from ..authoring import derived
    readme = (paths.ROOT / "README.md").read_text(encoding="utf-8")
    thesis = readme.split("\n\n")[1].strip()
    by_lab = {p.stem.split("-")[0]: p for p in labs}
    rows = ["| phase | deck | minutes | lab | minutes |", "|---:|---|---:|---|---:|"]
    for ph in derived.phases():
        lab = by_lab.get(ph.lab)
        rows.append(f"| {ph.phase} | [{ph.title}](decks/{ph.deck.stem}) | {ph.minutes} | "
                    + (f"[{ph.lab} {ph.lab_title}](labs/{lab.stem}) | {ph.lab_minutes} |"
                       if lab else f"{ph.lab} | |"))
    schedule = (paths.ROOT / "docs" / "schedule.md").read_text(encoding="utf-8")
    schedule = _links(re.sub(r"^# .*\n", "", schedule, count=1), up="")
    pdfs = [f"- <a href='{PDFS}/{p.name}'>{p.name}</a>"
            for p in sorted(paths.ROOT.glob("handouts/*.pdf"))]
    toc = "\n".join(["```{toctree}", ":maxdepth: 1", ":caption: Decks", ":hidden:", "",
                     *[f"decks/{p.stem}" for p in decks], "```", "",
                     "```{toctree}", ":maxdepth: 1", ":caption: Labs", ":hidden:", "",
                     *[f"labs/{p.stem}" for p in labs],
                     *[f"labs/{p.stem}.solutions" for p in labs], "```"])
    return "\n\n".join(["# JAX Core, From the Inside", thesis, "## The phases", "\n".join(rows),
                        "## The schedule", schedule.strip(), "## The handouts",
                        "\n".join(pdfs), toc]) + "\n"


def sources(executed: dict[Path, object]) -> dict[str, str]:
    """{a page's path under SRC: its text}: every page of the site, from the executed
    notebooks given (path of the deck or lab source: executed notebook)."""
    import nbformat
    decks = [p for p in nbs.decks() if p in executed]
    labs = [p for p in nbs.lab_sources() if p in executed]
    out = {"conf.py": CONF, "_static/workshop.css": _faces_css() + LOOK + CSS,
           "index.md": home(decks, labs)}
    for p in decks:
        out[f"decks/{p.stem}.ipynb"] = nbformat.writes(deck_page(executed[p], p))
    for p in labs:
        sheet, solution = lab_pages(executed[p], p)
        out[f"labs/{p.stem}.ipynb"] = nbformat.writes(sheet)
        out[f"labs/{p.stem}.solutions.ipynb"] = nbformat.writes(solution)
    return out


def executed_notebooks() -> dict[Path, object]:
    """The build's executed copy of every deck and lab, or KitError naming what is missing."""
    missing = [p for p in nbs.all_notebooks() if not handouts.executed_path(p).is_file()]
    if missing:
        raise errors.KitError(f"no executed copy of {', '.join(p.stem for p in missing)}: "
                              "run scripts/build first (the site shows the build's runs)")
    return {p: nbs.read(handouts.executed_path(p)) for p in nbs.all_notebooks()}


def _copy_faces(folder: Path) -> None:
    """The slides' face into the site's static files (only when a file changed: Sphinx then
    copies nothing again)."""
    from .printer import theme_face
    folder.mkdir(parents=True, exist_ok=True)
    for ttf in theme_face().glob("*.ttf"):
        there = folder / ttf.name
        if not there.is_file() or there.read_bytes() != ttf.read_bytes():
            shutil.copyfile(ttf, there)


def build(executed: dict[Path, object] | None = None, src: Path = SRC, out: Path = OUT) -> dict:
    """Write the pages that changed into `src` and run Sphinx into `out`. Returns what it did:
    {"pages": number of pages, "written": sources rewritten, "seconds": Sphinx's time}."""
    pages = sources(executed if executed is not None else executed_notebooks())
    written = []
    for rel, text in pages.items():
        f = src / rel
        if not f.is_file() or f.read_text(encoding="utf-8") != text:
            f.parent.mkdir(parents=True, exist_ok=True)
            paths.write_atomic(f, text.encode())
            written.append(rel)
    for f in src.rglob("*"):   # a page whose notebook is gone goes too
        rel = f.relative_to(src).as_posix()
        if f.is_file() and rel not in pages and "extra" not in f.parts \
                and not rel.startswith(FONTS + "/"):
            f.unlink()
    _copy_faces(src / FONTS)
    pdfs = src / "extra" / PDFS
    pdfs.mkdir(parents=True, exist_ok=True)
    for p in paths.ROOT.glob("handouts/*.pdf"):
        if not (pdfs / p.name).is_file() or (pdfs / p.name).read_bytes() != p.read_bytes():
            shutil.copyfile(p, pdfs / p.name)
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", "2",
                        str(src), str(out)], capture_output=True, text=True, timeout=900)
    if p.returncode:
        raise errors.KitError("site: Sphinx failed: " + (p.stderr.strip().splitlines() or
                                                         ["(no message)"])[-1])
    for made in [out, *out.rglob("*")]:   # the hub serves it as root: its maker's alone, even
        st = made.lstat()                 # built under umask 000 (hub/local.py site_problem)
        if not made.is_symlink() and st.st_mode & 0o022:
            os.chmod(made, st.st_mode & ~0o022)
    return {"pages": sum(r.endswith((".md", ".ipynb")) for r in pages), "written": written,
            "seconds": time.monotonic() - start, "warnings": p.stderr.strip()}
