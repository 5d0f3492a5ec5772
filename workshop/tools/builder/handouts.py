"""The handouts a notebook makes and where (handouts/ for the kit's own, build/copies/ for any
other), printing them from its executed copy, and handouts/README.md, their index. The PDFs are
printed by printer.py, stamped by pdfinfo.py, and current when their stamp is the hash of what
inputs.py says they are made from."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import notebooks as nbs
from .. import paths
from . import inputs, pdfinfo, render
from .inputs import Source, build_date
from .printer import Printer

HANDOUTS = paths.ROOT / "handouts"
COPIES = paths.BUILD / "copies"   # the handouts of any notebook that is not the kit's
EXECUTED = paths.BUILD / "executed"   # the kit's notebooks as the build last ran them


@dataclass
class Printed:
    path: Path
    pages: int
    seconds: float
    shrunk: list = field(default_factory=list)   # slides PDF: (page, scale) below 100%




def jax_version() -> str:
    from importlib.metadata import version
    return version("jax")


def is_kit(src: Path) -> bool:
    """One of the kit's own decks or lab sources (not a copy, wherever the copy is)."""
    return inputs.is_kit(src)


def executed_path(src: Path) -> Path:
    """Where the executed copy of `src` is kept: a copy's never replaces the kit's."""
    return (EXECUTED if is_kit(src) else COPIES / "executed") / Path(src).name


def _source(src: Path | Source) -> Source:
    return src if isinstance(src, Source) else Source.read(src)


def is_deck(src: Path | Source) -> bool:
    return _source(src).deck


def outdir_of(src: Path | Source) -> Path:
    """handouts/ for the kit's notebooks; build/copies/ for any other (a speaker's copy of a
    deck, an attendee's copy of a lab): a copy's PDFs never overwrite the kit's."""
    return HANDOUTS if _source(src).kit else COPIES


def targets(src: Path | Source, outdir: Path | None = None) -> list[Path]:
    """The PDFs one notebook makes: a deck its slides and reading handout; a kit lab its
    attendee sheet and solutions; any other notebook one PDF of itself, run."""
    s = _source(src)
    outdir = outdir or outdir_of(s)
    stem = s.path.stem
    if s.deck:
        return [outdir / f"{stem}.slides.pdf", outdir / f"{stem}.pdf"]
    if s.kit:
        return [outdir / f"{stem}.pdf", outdir / f"{stem}.solutions.pdf"]
    return [outdir / f"{stem}.pdf"]


def sources_of(src: Path | Source) -> list[Path]:
    """The notebooks its handouts are made from: itself, and a kit lab's attendee copy."""
    return _source(src).files


def current(src: Path | Source) -> bool:
    s = _source(src)
    return all(pdfinfo.stamp_of(t) == s.digest for t in targets(s))


# handouts made from something other than a notebook: the workshop's schedule
# (`python -m workshop schedule --write`, from the notebooks' metadata)
EXTRA = [HANDOUTS / "schedule.pdf"]


def strays(pack: list[Path] = ()) -> list[Path]:
    """Files in handouts/ (and its presenter/ folder, whose PDFs are `pack`) that no kit
    notebook makes (a stray or renamed PDF, a leftover .tmp): left alone, and named by the
    build."""
    made = {t for p in nbs.all_notebooks() for t in targets(p)} | {HANDOUTS / "README.md"} \
        | set(EXTRA) | set(pack)
    folders = [HANDOUTS, HANDOUTS / "presenter"]
    return sorted(p for d in folders if d.is_dir() for p in d.iterdir()
                  if p.is_file() and p not in made)


def export(printer: Printer, src: Path | Source, executed,
           outdir: Path | None = None) -> list[Printed]:
    """Print the PDFs of one deck or lab (or a copy of one) from its executed notebook."""
    s = _source(src)
    digest, src = s.digest, s.path
    day = build_date(src)
    meta = executed.metadata.get("workshop", {})
    title = meta.get("title", src.stem)
    foot = f"{title} · JAX {jax_version()} · built {day}"
    out = []
    pdfs = targets(s, outdir)
    if s.deck:
        label = f"{src.stem[:2]} {title}"
        jobs = [(pdfs[0], render.slides_html(executed, label), "slides", ""),
                (pdfs[1], render.reading_html(executed, title), "a4", foot)]
    elif not s.kit:   # a copy of a lab, or any notebook: itself, as it ran
        jobs = [(pdfs[0], render.sheet_html(executed, title), "a4", foot)]
    else:
        from ..authoring.labgen import with_given_outputs
        sheet = with_given_outputs(s.sheet.nb, executed)
        lab = f"Lab {meta.get('lab', '')} · {title}"
        jobs = [(pdfs[0], render.sheet_html(sheet, lab), "a4", foot),
                (pdfs[1], render.sheet_html(executed, lab + " · solutions"),
                 "a4", foot + " · solutions")]
    for path, html, kind, footer in jobs:
        t0 = time.perf_counter()
        pages = pdfinfo.pages_of(path) if path.exists() else None
        if pages and pdfinfo.stamp_of(path) == digest:   # printed from these very inputs: its bytes
            out.append(Printed(path, pages, 0.0,   # stay (a rerun's timings would churn them)
                               pdfinfo.shrunk_of(path) or []))
            continue
        data, shrunk = printer.pdf(html, kind, footer)
        data = pdfinfo.stamp(data, title, digest, day, paths.short(src),
                      shrunk if kind == "slides" else None,
                      [title] + [nbs.plain(h) for h in map(nbs.heading, executed.cells) if h])
        paths.write_atomic(path, data)
        out.append(Printed(path, pdfinfo.pages_of(path) or 0, time.perf_counter() - t0, shrunk))
    return out


def write_index(pack: list[Path] = ()) -> None:
    """handouts/README.md: every PDF the kit's notebooks make, with its pages; then the
    presenter's pack (`pack`: presenter/, a card per deck and a debrief per lab)."""
    lines = ["# Handouts", "", "Generated by `scripts/build` from the executed notebooks; do not "
             "edit. Each PDF's metadata records the hash of what it was built from. The "
             "presenter's pack, in presenter/, is for the presenter and the helpers, not the "
             "room: a card per deck (the plan, where to cut, what to add, the key points) and "
             "a debrief per lab (its common mistakes with what the check says, what to say).",
             "", "The same course as a web site, to read on a laptop or a phone and search: "
             "`scripts/build --site`, then open `build/site/index.html` (it works offline, "
             "from the file too); each page links to these PDFs.",
             "", "| PDF | pages |", "|---|---:|"]
    for p in sorted([t for src in nbs.all_notebooks() for t in targets(src)] + EXTRA) \
            + sorted(pack):
        n = pdfinfo.pages_of(p) if p.exists() else None
        name = p.relative_to(HANDOUTS).as_posix()
        lines.append(f"| [{name}]({name}) | {n if n is not None else 'not built'} |")
    paths.write_atomic(HANDOUTS / "README.md", ("\n".join(lines) + "\n").encode())
