"""`python -m workshop compose OUT.ipynb --title "…" [--thesis] 01:"Section" 02:"Section" …`: a
talk made of sections of several decks.

It writes a deck that opens and closes like a talk: a generated title slide (the title, the sum
of the sections' estimated minutes, and the sections' objectives: the objectives each deck
states in its metadata, those that belong to the chosen sections, `talkframe`), the setup cell,
the presenter's plan (`talk.with_plan`), with `--thesis` the course's thesis slide (deck 01's
quote), the chosen sections in order (copied whole; an appendix section becomes talk), and a
closing `## Key points` slide made of the decks' own key points for those sections, with notes
that say them; every cell with a fresh id. Beside it, `rise.css` and the stylesheet RISE asks
for, unless the folder has them already (a presenter's edited stylesheet is theirs: it is kept,
`--force` or not, and compose says so). Then it prints the talk-time estimate, which objective
and key points each section got, and every cell that points outside the talk (`talkrefs`), for
the speaker to fix. The composed deck runs, presents and prints like any deck:
`scripts/build OUT.ipynb`, `scripts/present OUT.ipynb` (present serves the kit's folder only).

What compose writes is decided before it writes anything: an output it may not write is one
line and nothing written; what it writes is whole or, if a write fails, removed again. The title
is the one string the user gives: it is plain text wherever HTML or Markdown reads it.
"""
from __future__ import annotations

import copy
import html
import math
import os
import re
import unicodedata
import uuid
from dataclasses import dataclass
from pathlib import Path

from ...phasemap import count_word as number
from .. import errors, paths, talk
from .. import notebooks as nbs
from . import talkframe, talkrefs


@dataclass
class Pick:
    deck: Path
    nb: object
    section: nbs.Section
    spec: str


def parse(specs: list[str], read: dict | None = None) -> list[Pick]:
    """`NN:Title` pairs; the title exact or a unique prefix (case ignored) of a section's.
    `read`: {deck path: notebook} already read (filled in as decks are read)."""
    picks, seen = [], {}
    decks = nbs.decks()
    read = {} if read is None else read
    for spec in specs:
        if ":" not in spec:
            raise errors.KitError(f"{spec!r}: name a section as DECK:TITLE, e.g. "
                                  "01:\"The four stations of a jitted call\"")
        key, title = (x.strip() for x in spec.split(":", 1))
        path = nbs.select([key], among=decks, what="deck")[0]
        nb = read[path] if path in read else read.setdefault(path, nbs.read(path))
        secs = nbs.sections(nb)
        low = title.lower()
        hits = [s for s in secs if s.title.lower() == low] or \
               [s for s in secs if s.title.lower().startswith(low)] if low else []
        if len(hits) != 1:
            why = "matches several sections" if hits else "is not a section"
            names = "; ".join(f"“{s.title}”" for s in secs)
            raise errors.KitError(f"{spec!r}: {title!r} {why} of {path.stem} (its sections: "
                                  f"{names})")
        sec = hits[0]
        app = talk.appendix_sections(nb)
        if sec.title == "Key points" or (app and sec.start == app[0].start):
            raise errors.KitError(f"{spec!r}: “{sec.title}” is {path.stem}'s own closing or "
                                  "divider; the talk gets a closing slide of its own")
        if (path, sec.start) in seen:
            raise errors.KitError(f"{spec!r}: {path.stem} “{sec.title}” is named twice (also as "
                                  f"{seen[(path, sec.start)]!r})")
        seen[(path, sec.start)] = spec
        picks.append(Pick(path, nb, sec, spec))
    return picks


def _md(source: str, slide: str, tags: tuple[str, ...] = ()):
    import nbformat
    c = nbformat.v4.new_markdown_cell(source)
    c.metadata = {"slideshow": {"slide_type": slide}}
    if tags:
        c.metadata["tags"] = list(tags)
    return c


def _frames(picks: list[Pick]) -> list[talkframe.Frame]:
    """Each pick's objectives and key points, matched within its deck among all its sections."""
    by_deck = {}
    for p in picks:
        by_deck.setdefault(p.deck, (p.nb, []))[1].append(p.section)
    got = {deck: talkframe.frames(nb, secs) for deck, (nb, secs) in by_deck.items()}
    return [got[p.deck][p.section.start] for p in picks]


def _origin(p: Pick) -> str:
    return f"{p.deck.stem[:2]} ({p.nb.metadata.workshop.title})"


def _head(title: str, minutes: int, frames, setup, parts: int) -> list:
    """The title slide (the sections' objectives), the setup cell and the title's notes."""
    objectives = [o for f in frames for o in f.objectives]
    return [_md(f"# {title}\n\n**JAX Core, From the Inside** · a talk · {minutes} minutes\n\n"
                + "\n".join(f"- {o}" for o in objectives), "slide"),
            copy.deepcopy(setup),
            _md(f"**{title}: {parts} parts, each one live on the pinned JAX.**\n\n"
                "→ Run the setup cell first, always, and again after any kernel restart. "
                "Check the banner: 8 CPU devices.", "notes")]


def _thesis(th: talkframe.Thesis) -> list:
    return [_md(f"## {th.title}\n\n{th.quote}", "slide"),
            _md(f"**{th.said}**\n\n→ Read the quote aloud, slowly: each part of the talk is a "
                "program that reads or rewrites that record.", "notes")]


def _closing(picks: list[Pick], points: list[tuple[str, list[str]]]) -> list:
    """The key points slide, (section title, its points) in the talk's order; the notes say
    each with the part it closes."""
    decks = list(dict.fromkeys(_origin(p) for p in picks))
    n = sum(len(ks) for _, ks in points)
    bold = (f"{number(n).capitalize()} things to take away, one from each part of the talk."
            if n == len(points) else
            f"{number(n).capitalize()} things to take away, in the order the talk made them.")
    said = " ".join(f"{nbs.plain(t)}: {'; '.join(k.rstrip('.') for k in ks)}." for t, ks in points)
    return [_md("## Key points\n\n" + "\n".join(f"- {k}" for _, ks in points for k in ks),
                "slide"),
            _md(f"**{bold}**\n\n→ Say each with its part, then take questions. The parts come "
                f"from deck{'s' if len(decks) > 1 else ''} {' and '.join(decks)} of the "
                f"workshop kit.\n\n{said}", "notes")]


# what Markdown (JupyterLab's marked, the handouts' mistune) reads as markup inside a line: each
# is escaped with a backslash; < > & become entities, which both read as the character. A $ is
# left alone: no renderer makes it a tag, and the slideshow's MathJax reads the page, not the
# Markdown, so TeX in a title is typeset there as in any cell
MARKUP = re.compile(r"([\\`*_\[\]#~])")


def as_markdown(text: str) -> str:
    """`text` as Markdown that shows it as typed: no tag, entity, emphasis, link or code."""
    return html.escape(MARKUP.sub(r"\\\1", text), quote=False)


@dataclass
class Composed:
    nb: object
    generated: set          # ids of the cells compose wrote itself
    origin: dict            # {id of a copied cell: (pick index, its index in that deck)}
    frames: list            # per pick: its talkframe.Frame


def compose(title: str, picks: list[Pick], thesis: talkframe.Thesis | None = None) -> Composed:
    """The talk: title slide (objectives) and setup, the thesis if asked, the sections whole
    (an appendix section becomes talk), the key points; fresh ids; the plan in the title notes.
    `title` is the user's text; it is escaped wherever HTML or Markdown would read it."""
    import nbformat
    first = picks[0].nb
    nb = nbformat.v4.new_notebook()
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = copy.deepcopy(first.metadata)
    nb.metadata.rise.footer = (f"<span class='workshop-footer'>JAX Core, From the Inside · "
                               f"{html.escape(title, quote=False)}</span>")
    frames = _frames(picks)
    body, origin = [], []
    for k, p in enumerate(picks):
        part = [copy.deepcopy(c) for c in p.nb.cells[p.section.start:p.section.stop]]
        part[0].metadata.get("workshop", {}).pop("appendix", None)
        if "workshop" in part[0].metadata and not part[0].metadata.workshop:
            del part[0].metadata["workshop"]
        body += part
        origin += [(k, i) for i in range(p.section.start, p.section.stop)]
    opening = _thesis(thesis) if thesis else []
    # a part whose deck gave it no key point (a framing section) is summed up by its objective
    points = [(p.section.title, f.key_points or f.objectives) for p, f in zip(picks, frames)]
    closing = _closing(picks, points)
    setup = first.cells[nbs.setup_index(first)]
    rest = talk.estimate("", opening + body + closing).minutes
    minutes = 0     # the title slide's own share, estimated with a draft of itself
    for _ in range(3):
        head = _head(as_markdown(title), minutes, frames, setup, len(picks))
        total = talk.estimate("", head).minutes + rest
        if math.ceil(total) == minutes:
            break
        minutes = math.ceil(total)
    for c in head + opening + body + closing:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
        c["id"] = uuid.uuid4().hex[:8]
    nb.cells = head + opening + body + closing
    nb.metadata.workshop = {
        "title": title, "minutes": minutes,
        "objectives": [o for f in frames for o in f.objectives],
        "key_points": [k for _, ks in points for k in ks],
        "sections": [f"{p.deck.stem[:2]}:{p.section.title}" for p in picks]}
    talk.with_plan(nb)
    return Composed(nb, {c["id"] for c in head + opening + closing},
                    {c["id"]: o for c, o in zip(body, origin)}, frames)


# folders whose notebooks the kit's own tools read, rewrite or remove: no talk goes there
KIT_FOLDERS = [
    (paths.DECKS, "decks/ holds the kit's own decks, which the tests and the build read"),
    (paths.ATTENDEE_DECKS.parent, "attendee/ holds what fmt writes for attendees, and fmt "
                                  "removes any other notebook there"),
    (paths.EXERCISES, "exercises/ holds the labs, which the tests and the build read"),
    # (probe 3: written there, with a rise.css beside; present then served a talk in workshop/)
    (paths.ROOT / "workshop", "workshop/ is the kit's package"),
    (paths.ROOT / "tests", "tests/ holds the kit's tests"),
    (paths.ROOT / "handouts", "handouts/ holds the build's printed handouts"),
    (paths.ROOT / ".git", ".git/ is git's own"),
    (paths.ROOT / "scripts", "scripts/ holds the kit's commands"),
    (paths.ROOT / "environment", "environment/ holds the kit's lock")]


def _target(out: str, force: bool) -> Path:
    """The talk's path, once it is one compose may write: one line for each that is not."""
    path = Path(out)
    if path.suffix != ".ipynb":
        raise errors.KitError(f"{out}: the talk is a notebook; name it NAME.ipynb")
    for folder, why in KIT_FOLDERS:   # resolved: a link into them is refused too
        if path.resolve().is_relative_to(folder.resolve()):
            raise errors.KitError(f"{out}: {why}; write the talk elsewhere, e.g. "
                                  f"talks/{path.name}")
    if path.is_dir():
        raise errors.KitError(f"{out} is a folder: name the talk's notebook inside it, e.g. "
                              f"{path / 'talk.ipynb'}")
    where = path.absolute()
    shown = paths.short(where) if where.is_relative_to(paths.ROOT) else path.name
    from ..present import MARKUP_IN_PATH
    if MARKUP_IN_PATH.search(shown):   # (present refuses it: RISE puts it in its page)
        raise errors.KitError(f"{out!r}: a talk's path with a quote, <, >, &, ` or a line break "
                              "goes into the slideshow page as markup, and present refuses it: "
                              "name it otherwise")
    if path.stem == "rise":   # its own stylesheet, NAME.css, would be the folder's rise.css
        raise errors.KitError(f"{out}: a talk cannot be named rise: RISE styles every talk in a "
                              "folder with rise.css and each talk with NAME.css, which would "
                              f"be the same file; name it otherwise, e.g. {path.with_stem('talk')}")
    folder = next(p for p in [path.parent, *path.parent.parents] if os.path.lexists(p))
    if not folder.exists():
        raise errors.KitError(f"{out}: {folder} is a link to nothing, not a folder")
    if not folder.is_dir():
        raise errors.KitError(f"{out}: {folder} is a file, not a folder")
    if os.path.lexists(path) and not force:
        raise errors.KitError(f"{out} exists (pass --force to overwrite it)")
    return path


def _stylesheets(path: Path) -> tuple[list[tuple[Path, bytes]], list[str]]:
    """The stylesheets to write beside the talk (those its folder lacks), and a line for each
    one there that differs from what compose would write. Those are the presenter's (rise.css
    styles every talk in the folder): kept, `--force` or not. Decided before anything is written:
    a folder or a dangling link where a stylesheet goes is one line."""
    own = (f"/* {path.stem}: jupyterlab-rise asks for a stylesheet named after the deck; the "
           "styles are in rise.css beside it. */\n").encode()
    new, kept = [], []
    try:
        kit = (paths.DECKS / "rise.css").read_bytes()
        for css, text, why in [
                (path.parent / "rise.css", kit, "not the kit's: delete it to get decks/rise.css"),
                (path.with_suffix(".css"), own, "compose writes it only where there is none")]:
            if not os.path.lexists(css):
                new.append((css, text))
            elif not css.exists() or not css.is_file():
                what = ("a folder" if css.is_dir() else "a link to nothing" if not css.exists()
                        else "not a file (a pipe, a socket or a device)")
                raise errors.KitError(f"{paths.short(css)} is {what}, where the talk's "
                                      "stylesheet goes: move it, or write the talk elsewhere")
            elif css.read_bytes() != text:
                kept.append(f"kept the {css.name} already there ({why})")
    except OSError as e:
        raise errors.KitError(f"cannot read {e.filename}: {e.strerror or e}") from None
    return new, kept


def _write(path: Path, nb, css: list[tuple[Path, bytes]], force: bool = False) -> None:
    """The missing folders, the new stylesheets, then the talk (`paths.write_atomic`: whole or
    the old one kept). A stylesheet is created, never written over one that appeared since the
    check. If any write fails (or is interrupted), what this run made is removed again."""
    made: list[Path] = []
    folders = [p for p in [path.parent, *path.parent.parents] if not os.path.lexists(p)]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for name, text in css:
            try:
                with open(name, "xb") as f:
                    made.append(name)
                    f.write(text)
            except FileExistsError:   # made since the check (a compose beside): theirs stays
                continue
        # without --force, never over a talk another compose wrote meanwhile (probe 3: two at
        # once both said "wrote"; one talk was lost)
        paths.write_atomic(path, nbs.normalised(nb), replace=force)
    except BaseException as e:
        for p in made:
            p.unlink(missing_ok=True)
        for p in folders:   # the deepest first; one that is not empty stays
            try:
                p.rmdir()
            except OSError:
                break
        if isinstance(e, FileExistsError):
            raise errors.KitError(f"{paths.short(path.absolute())} exists: another compose "
                                  "wrote it meanwhile (pass --force to overwrite it)") from None
        if isinstance(e, OSError):
            where = paths.short(Path(e.filename).absolute()) if e.filename else "it"
            raise errors.KitError(f"{paths.short(path.absolute())}: cannot write {where}: "
                                  f"{e.strerror or e} (nothing written)") from None
        raise


def _advice(path: Path) -> str:
    """How to run and present the talk, with paths as the scripts read them (they start in the
    kit's folder); present serves only that folder, and Jupyter no hidden folder in it."""
    import shlex
    where = path.resolve()
    shown = shlex.quote(str(paths.short(where)))   # (a path with a space: one argument)
    run = f"run it with scripts/build {shown}"
    if not where.is_relative_to(paths.ROOT):
        return (f"{run}; present serves only the kit's folder, {paths.ROOT}: to present the "
                f"talk, compose it there (e.g. {shlex.quote('talks/' + path.name)})")
    hidden = [p for p in where.relative_to(paths.ROOT).parts[:-1] if p.startswith(".")]
    if hidden:
        return (f"{run}; present cannot show it: Jupyter shows no hidden folder ({hidden[0]}): "
                "to present the talk, compose it elsewhere in the kit (e.g. "
                f"{shlex.quote('talks/' + path.name)})")
    return f"{run}; present it with scripts/present {shown}"


def _report(out: str, path: Path, c: Composed, picks: list[Pick], refs: list[str]) -> None:
    nb = c.nb
    slides = sum(nbs.slide_type(x) in ("slide", "subslide") for x in nb.cells)
    print(f"compose: wrote {out}: {len(picks)} sections, {slides} slides, {len(nb.cells)} "
          f"cells (fresh ids)")
    print(f"compose: talk-time estimate {talk.talk_minutes(nb):.1f} minutes "
          f"(the title slide says {nb.metadata.workshop.minutes}):")
    mine = {p.section.title: p.deck.stem[:2] for p in picks}
    for e in talk.talk_estimates(nb):
        print(f"  {e.minutes:5.1f}  {e.title}  [{mine.get(e.title, 'generated')}]")
    print("compose: what the title slide and the key points say for each section:")
    for p, f in zip(picks, c.frames):
        got = "objective" if f.own_objective else "no objective of its deck's; its first note"
        print(f"  {p.deck.stem[:2]} “{p.section.title}”: {got}: {'; '.join(f.objectives)}")
        for k in f.key_points:
            print(f"      key point: {k}")
    if refs:
        print(f"compose: {len(refs)} cells point outside the talk (a deck, lab, phase, slide, "
              "section or name it does not have); fix them before presenting:")
        for r in refs:
            print(f"  {r}")
    else:
        print("compose: no cell points outside the talk")
    print(f"compose: {_advice(path)}")


def _title(title: str) -> str:
    """The title as given, once it is one line of text."""
    if not title.strip():
        raise errors.KitError("--title is empty: give the talk a title")
    if any(unicodedata.category(ch) == "Cc" for ch in title):
        raise errors.KitError("--title has a line break or another control character: a title "
                              "is one line of text")
    return title.strip()


def main(out: str, title: str, specs: list[str], force: bool = False,
         thesis: bool = False) -> int:
    title = _title(title)
    path = _target(out, force)
    decks = {p: nbs.read(p) for p in nbs.decks()}
    picks = parse(specs, decks)
    th = talkframe.thesis(decks) if thesis else None
    if th and any(p.deck.stem == th.deck and p.section.start == th.start for p in picks):
        raise errors.KitError(f"--thesis: “{th.title}” of {th.deck} is in the talk already")
    c = compose(title, picks, th)
    bad = talk.problems(c.nb) + nbs.audience_problems(c.nb)
    if bad:   # the sections come from checked decks: this is the kit's bug, not the user's
        raise RuntimeError("compose made a deck the kit rejects: " + "; ".join(bad))
    refs = talkrefs.references(c.nb, picks, c.origin, talkrefs.shared_names(decks))
    css, kept = _stylesheets(path)
    replaced = os.path.lexists(path)   # (only with --force: _target refused it otherwise)
    _write(path, c.nb, css, force)
    _report(out, path, c, picks, refs)
    if replaced:
        print(f"compose: replaced the {path.name} that was there (--force)")
    for line in kept:
        print(f"compose: {line}")
    return 0
