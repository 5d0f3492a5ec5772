"""Print handouts with a real Chromium, offline, stamped with what they were built from.

Every PDF's metadata holds the sha256 of its inputs (the notebook, the lock and the package);
its dates come from the inputs (the notebook's last commit), and its file ID from that hash, so
printing twice with no change gives the same bytes. Writes are atomic.
"""
from __future__ import annotations

import hashlib
import io
import os
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlparse

from .. import browser, paths
from .. import notebooks as nbs
from . import render

HANDOUTS = paths.ROOT / "handouts"
COPIES = paths.BUILD / "copies"   # the handouts of any notebook that is not the kit's
PACKAGE = paths.ROOT / "workshop"
LOCK = paths.LOCK
STAMP_KEY = "/WorkshopInputs"
SHRUNK_KEY = "/WorkshopShrunk"   # slides printed below 100%: "5:0.84 10:0.72", or "none"
MIN_SCALE = 0.90                 # a slide printed smaller than this must be split


class NoBrowser(Exception):
    pass


class Overflow(Exception):
    """Something would run off a printed page."""


# how a PDF is made from an executed notebook: every handout depends on these (and on what
# they import); a notebook depends besides on the kit modules its own cells import
PRINTING = [PACKAGE / "tools" / "builder" / f for f in ("render.py", "handouts.py")]


def _module_file(name: str) -> Path | None:
    """workshop.labs.j3 -> workshop/labs/j3.py (a package: its __init__.py); None if none."""
    base = PACKAGE.joinpath(*name.split(".")[1:])
    for f in (base / "__init__.py", base.with_suffix(".py")):
        if f.is_file():
            return f
    return None


def _imported(source: str, module: str = "", package: bool = False) -> set[str]:
    """The kit modules `source` imports anywhere (lazy imports in functions included), each
    with its parent packages (importing workshop.labs.j3 runs workshop/labs/__init__.py)."""
    import ast
    import re
    names: set[str] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:   # a cell with IPython syntax (%timeit, !ls): read its import lines
        names |= set(re.findall(r"(?:^|[\s;%])(?:from|import)\s+(workshop[\w.]*)", source, re.M))
        tree = None
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")[: len(module.split(".")) - node.level + package]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names |= {base} | {f"{base}.{a.name}" for a in node.names}
    out = set()
    for n in names:
        parts = n.split(".")
        if parts[0] == "workshop":
            out |= {".".join(parts[: i + 1]) for i in range(len(parts))}
    return {n for n in out if _module_file(n)}


def package_files(*notebooks: Path) -> list[Path]:
    """The files of the kit's package a notebook's handouts depend on: the modules its code
    cells import, the printing modules, and everything those import, transitively. A comment
    in workshop/labs/j3.py stales lab J3's handouts, not the decks'."""
    todo = set()
    for nb in notebooks:
        for cell in nbs.read(nb).cells:
            if cell.cell_type == "code":
                todo |= _imported(cell.source)
    todo |= {".".join(("workshop",) + f.relative_to(PACKAGE).with_suffix("").parts)
             for f in PRINTING}
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        f = _module_file(name)
        todo |= _imported(f.read_text(encoding="utf-8"), name, f.name == "__init__.py") - seen
    return sorted({_module_file(n) for n in seen})


def inputs_hash(*notebooks: Path) -> str:
    """sha256 of the notebooks, the lock and the package files they depend on."""
    h = hashlib.sha256()
    files = list(notebooks) + [LOCK] + package_files(*notebooks)
    for p in files:
        h.update(Path(paths.short(p)).as_posix().encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def build_date(path: Path) -> str:
    """The date of the notebook's last commit (stable across rebuilds); today if uncommitted."""
    try:
        dirty = subprocess.run(["git", "status", "--porcelain", "--", str(path)], cwd=paths.ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        day = subprocess.run(["git", "log", "-1", "--format=%cs", "--", str(path)],
                             cwd=paths.ROOT, capture_output=True, text=True,
                             timeout=10).stdout.strip()
        if day and not dirty:
            return day
    except (OSError, subprocess.SubprocessError):
        pass
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def stamp_of(pdf: Path) -> str | None:
    """The inputs hash a PDF was built from, or None (missing, unreadable, unstamped)."""
    from pypdf import PdfReader
    try:
        meta = PdfReader(pdf).metadata or {}
        return str(meta.get(STAMP_KEY)) if meta.get(STAMP_KEY) else None
    except Exception:
        return None


def shrunk_of(pdf: Path) -> list[tuple[int, float]] | None:
    """The slides a slides PDF printed below 100% (page, scale), as its build recorded them;
    None when the PDF records nothing (unreadable, or not a slides PDF)."""
    from pypdf import PdfReader
    try:
        value = (PdfReader(pdf).metadata or {}).get(SHRUNK_KEY)
    except Exception:
        return None
    if value is None:
        return None
    return [] if str(value) == "none" else [
        (int(a), float(b)) for a, b in (x.split(":") for x in str(value).split())]


def pages_of(pdf: Path) -> int | None:
    """Its page count, or None when it is not a readable PDF (truncated, not a PDF)."""
    from pypdf import PdfReader
    try:
        return len(PdfReader(pdf).pages)
    except Exception:
        return None


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _fix_outline(w, headings: list[str]) -> None:
    """Chromium builds the bookmarks from the laid-out headings and drops the space where a
    long heading wraps ("bytesper policy"); give each bookmark its heading's own text back."""
    from pypdf.generic import NameObject, TextStringObject
    proper = {_squeezed(h): h for h in headings}
    node = w._root_object.get("/Outlines")
    stack = [node.get_object()["/First"]] if node and "/First" in node.get_object() else []
    while stack:
        item = stack.pop().get_object()
        title = str(item.get("/Title", ""))
        if _squeezed(title) in proper and proper[_squeezed(title)] != title:
            item[NameObject("/Title")] = TextStringObject(proper[_squeezed(title)])
        stack += [item[k] for k in ("/First", "/Next") if k in item]


def _stamp(data: bytes, title: str, digest: str, day: str, source: str,
           shrunk: list | None = None, headings: list[str] = ()) -> bytes:
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, ByteStringObject
    w = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    _fix_outline(w, list(headings))
    date = "D:" + day.replace("-", "") + "000000Z"
    w.metadata = None
    w.add_metadata({"/Title": title, "/Author": "JAX Core, From the Inside",
                    "/Subject": f"built from {source}", "/Creator": "workshop build",
                    "/Producer": "Chromium via Playwright; pypdf", "/CreationDate": date,
                    "/ModDate": date, STAMP_KEY: digest})
    if shrunk is not None:
        w.add_metadata({SHRUNK_KEY: " ".join(f"{i}:{k:.2f}" for i, k in shrunk) or "none"})
    fid = ByteStringObject(bytes.fromhex(digest[:32]))
    w._ID = ArrayObject([fid, fid])
    out = io.BytesIO()
    w.write(out)
    return out.getvalue()


@dataclass
class Printed:
    path: Path
    pages: int
    seconds: float
    shrunk: list = field(default_factory=list)   # slides PDF: (page, scale) below 100%


def launch_error(text: str) -> str:
    """Playwright's launch failure in one line: the browser's own last complaint on stderr
    (`[pid=N][err] ...`), else the exit Playwright saw, else its first line."""
    import re
    err = [m.group(1).strip() for m in re.finditer(r"\[pid=\d+\]\[err\] (.+)", text)]
    exit_ = re.search(r"<process did exit: (exitCode=\S+ signal=\S+)>", text)
    first = text.strip().splitlines()[0] if text.strip() else "no reason given"
    why = err[-1] if err else exit_.group(1) if exit_ else first
    return why[:160]


FONTS = paths.BUILD / "fonts"
FONT_INSTALL = "apt-get install -y fonts-dejavu-core (Debian/Ubuntu)"


def pinned_fonts() -> dict[str, str]:
    """The environment that makes Chromium see the DejaVu fonts and nothing else: a machine
    with Noto (or any other family) installed prints the same glyphs, so the same bytes."""
    try:
        out = subprocess.run(["fc-list", "-f", "%{file}\n", "DejaVu Sans"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    dirs = sorted({str(Path(f).parent) for f in out.splitlines() if f.strip()})
    if not dirs:
        raise NoBrowser(f"the handouts are printed in DejaVu Sans and DejaVu Sans Mono, which "
                        f"this machine lacks: {FONT_INSTALL}")
    aliases = "".join(f"<alias><family>{generic}</family><prefer><family>{face}</family>"
                      "</prefer></alias>" for generic, face in
                      [("sans-serif", "DejaVu Sans"), ("serif", "DejaVu Serif"),
                       ("monospace", "DejaVu Sans Mono")])
    conf = ("<?xml version='1.0'?><!DOCTYPE fontconfig SYSTEM 'fonts.dtd'><fontconfig>"
            + "".join(f"<dir>{d}</dir>" for d in dirs)
            + f"<cachedir>{FONTS / 'cache'}</cachedir>{aliases}</fontconfig>\n")
    FONTS.mkdir(parents=True, exist_ok=True)
    (FONTS / "fonts.conf").write_text(conf)
    return {"FONTCONFIG_FILE": str(FONTS / "fonts.conf")}


class Printer:
    """One headless Chromium for a whole build; refuses every request off this machine."""

    def __init__(self, extra_args: tuple[str, ...] = ()):
        exe = browser.find()
        if exe is None:
            raise NoBrowser(f"no Chromium or Chrome to print the handouts: {browser.INSTALL}")
        fonts = pinned_fonts()
        from playwright.sync_api import Error, sync_playwright
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(executable_path=exe, headless=True,
                                                       args=browser.ARGS + list(extra_args),
                                                       env={**os.environ, **fonts},
                                                       timeout=60_000)
        except Error as e:
            self._pw.stop()
            raise NoBrowser(f"the browser {exe} did not start ({launch_error(str(e))}): "
                            f"{browser.INSTALL}") from None
        self.offsite: list[str] = []

    def close(self) -> None:
        self._browser.close()
        self._pw.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _guard(self, route):
        url = route.request.url
        local = urlparse(url).hostname in browser.LOOPBACK
        if local or url.startswith(("data:", "about:", "blob:")):
            route.continue_()
        else:
            self.offsite.append(url)
            route.abort()

    def pdf(self, html: str, kind: str, footer: str = "") -> tuple[bytes, list]:
        """Print `html`; kind is 'slides' (16:9, a page a slide) or 'a4'."""
        size = ({"width": 1280, "height": 720} if kind == "slides"
                else {"width": render.A4_CONTENT_PX, "height": 1000})
        page = self._browser.new_page(viewport=size)
        try:
            page.route("**/*", self._guard)
            page.set_content(html, wait_until="load")
            scaled = page.evaluate(render.FIT_JS) if kind == "slides" else []
            bad = page.evaluate(render.OVERFLOW_JS, kind)
            if bad:
                raise Overflow("would run off the page: " + "; ".join(bad[:3]))
            if kind == "slides":
                data = page.pdf(width="1280px", height="720px", print_background=True,
                                prefer_css_page_size=True, tagged=True)
            else:
                data = page.pdf(format="A4", print_background=True, outline=True, tagged=True,
                                display_header_footer=True, header_template="<span></span>",
                                footer_template=_footer(footer),
                                margin={"top": "16mm", "bottom": "18mm",
                                        "left": "16mm", "right": "16mm"})
            return data, scaled
        finally:
            page.close()


def _footer(text: str) -> str:
    import html as h
    return ("<div style='font-size:8px;width:100%;margin:0 16mm;display:flex;"
            "justify-content:space-between;color:#555;font-family:sans-serif'>"
            f"<span>{h.escape(text)}</span><span><span class='pageNumber'></span> / "
            "<span class='totalPages'></span></span></div>")


def jax_version() -> str:
    from importlib.metadata import version
    return version("jax")


def is_kit(src: Path) -> bool:
    """One of the kit's own decks or lab sources (not a copy, wherever the copy is)."""
    return Path(src).resolve() in {p.resolve() for p in nbs.all_notebooks()}


def is_deck(src: Path) -> bool:
    return Path(src).parent == paths.DECKS or "rise" in nbs.read(src).metadata


def outdir_of(src: Path) -> Path:
    """handouts/ for the kit's notebooks; build/copies/ for any other (a speaker's copy of a
    deck, an attendee's copy of a lab): a copy's PDFs never overwrite the kit's."""
    return HANDOUTS if is_kit(src) else COPIES


def targets(src: Path, outdir: Path | None = None) -> list[Path]:
    """The PDFs one notebook makes: a deck its slides and reading handout; a kit lab its
    attendee sheet and solutions; any other notebook one PDF of itself, run."""
    outdir = outdir or outdir_of(src)
    if is_deck(src):
        return [outdir / f"{src.stem}.slides.pdf", outdir / f"{src.stem}.pdf"]
    if is_kit(src):
        return [outdir / f"{src.stem}.pdf", outdir / f"{src.stem}.solutions.pdf"]
    return [outdir / f"{src.stem}.pdf"]


def lab_inputs(src: Path) -> list[Path]:
    return [src, paths.EXERCISES / src.name]


def sources_of(src: Path) -> list[Path]:
    return lab_inputs(src) if is_kit(src) and not is_deck(src) else [src]


def current(src: Path) -> bool:
    digest = inputs_hash(*sources_of(src))
    return all(stamp_of(t) == digest for t in targets(src))


# handouts made from something other than a notebook: the workshop's schedule
# (`python -m workshop schedule --write`, from the notebooks' metadata)
EXTRA = [HANDOUTS / "schedule.pdf"]


def strays() -> list[Path]:
    """Files in handouts/ that no kit notebook makes (a stray or renamed PDF, a leftover .tmp):
    left alone, and named by the build."""
    made = {t for p in nbs.all_notebooks() for t in targets(p)} | {HANDOUTS / "README.md"} \
        | set(EXTRA)
    return sorted(p for p in HANDOUTS.iterdir() if p.is_file() and p not in made) \
        if HANDOUTS.is_dir() else []


def export(printer: Printer, src: Path, executed, outdir: Path | None = None) -> list[Printed]:
    """Print the PDFs of one deck or lab (or a copy of one) from its executed notebook."""
    digest = inputs_hash(*sources_of(src))
    day = build_date(src)
    meta = executed.metadata.get("workshop", {})
    title = meta.get("title", src.stem)
    foot = f"{title} · JAX {jax_version()} · built {day}"
    out = []
    pdfs = targets(src, outdir)
    if is_deck(src):
        label = f"{src.stem[:2]} {title}"
        jobs = [(pdfs[0], render.slides_html(executed, label), "slides", ""),
                (pdfs[1], render.reading_html(executed, title), "a4", foot)]
    elif not is_kit(src):   # a copy of a lab, or any notebook: itself, as it ran
        jobs = [(pdfs[0], render.sheet_html(executed, title), "a4", foot)]
    else:
        from ..labgen import with_given_outputs
        sheet = with_given_outputs(nbs.read(paths.EXERCISES / src.name), executed)
        lab = f"Lab {meta.get('lab', '')} · {title}"
        jobs = [(pdfs[0], render.sheet_html(sheet, lab), "a4", foot),
                (pdfs[1], render.sheet_html(executed, lab + " · solutions"),
                 "a4", foot + " · solutions")]
    for path, html, kind, footer in jobs:
        t0 = time.perf_counter()
        pages = pages_of(path) if path.exists() else None
        if pages and stamp_of(path) == digest:   # printed from these very inputs: its bytes
            out.append(Printed(path, pages, 0.0,   # stay (a rerun's timings would churn them)
                               shrunk_of(path) or []))
            continue
        data, shrunk = printer.pdf(html, kind, footer)
        data = _stamp(data, title, digest, day, paths.short(src),
                      shrunk if kind == "slides" else None,
                      [title] + [nbs.plain(h) for h in map(nbs.heading, executed.cells) if h])
        paths.write_atomic(path, data)
        out.append(Printed(path, pages_of(path) or 0, time.perf_counter() - t0, shrunk))
    return out


def write_index() -> None:
    """handouts/README.md: every PDF the kit's notebooks make, with its pages."""
    lines = ["# Handouts", "", "Generated by `scripts/build` from the executed notebooks; do not "
             "edit. Each PDF's metadata records the hash of what it was built from.", "",
             "| PDF | pages |", "|---|---:|"]
    for p in sorted([t for src in nbs.all_notebooks() for t in targets(src)] + EXTRA):
        n = pages_of(p) if p.exists() else None
        lines.append(f"| [{p.name}]({p.name}) | {n if n is not None else 'not built'} |")
    paths.write_atomic(HANDOUTS / "README.md", ("\n".join(lines) + "\n").encode())
