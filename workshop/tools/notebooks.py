"""The kit's notebooks: finding them by name, reading them, their slides and sections."""
from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import nbformat

from . import paths
from .errors import KitError
from .paths import short

SLIDE_TYPES = {"slide", "subslide", "fragment", "-", "skip", "notes"}
TAGS = {"setup", "check", "slow", "presenter", "reading"}   # the only cell tags the kit knows


# jsonschema (under nbformat, nbclient and Jupyter's server) imports rfc3987-syntax when it is
# installed (Jupyter's jsonschema[format-nongpl] brings it), and that compiles 39 lark grammars
# on import: 1.7 s of every tool process, for jsonschema's "iri" formats alone, which no schema
# the tools validate uses (nbformat's use no format; Jupyter's event schemas use "uri", which
# rfc3986-validator checks). The tools skip it; an attendee's kernel is left as it is.
SKIPPED_IMPORTS = ("rfc3987_syntax",)   # (and in the slideshow's JupyterLab: present/boot.py)


def skip_slow_imports() -> None:
    """Before anything imports nbformat: jsonschema then goes without rfc3987-syntax."""
    for name in SKIPPED_IMPORTS:
        sys.modules.setdefault(name, None)


skip_slow_imports()   # every tool imports this module before nbformat (the runtime never does)


def decks() -> list[Path]:
    return sorted(paths.DECKS.glob("[0-9][0-9]-*.ipynb"))


def lab_sources() -> list[Path]:
    """Every lab source in exercises/solutions/: the seed's J labs first, then the L labs, then
    any other (a new lab is never skipped for its name; the structure tests then ask it for a
    checks module and tasks like any lab)."""
    order = {"J": 0, "L": 1}
    return sorted(paths.SOLUTIONS.glob("*.ipynb"), key=lambda p: (order.get(p.name[:1], 2), p.name))


def all_notebooks() -> list[Path]:
    return decks() + lab_sources()


def select(names: list[str], among: list[Path] | None = None,
           what: str = "notebook") -> list[Path]:
    """Notebooks named by number ('1', '01'), lab ('J1'), stem, or path; none means all."""
    known = all_notebooks() if among is None else among
    if not names:
        return known
    chosen = []
    for name in names:
        if name.endswith(".ipynb") and Path(name).is_file():
            chosen.append(Path(name).resolve())   # any notebook, by path
            continue
        key = name.strip().lower().removesuffix(".ipynb")
        hits = [p for p in known
                if key in (p.stem.lower(), short(p).lower().removesuffix(".ipynb"))
                or p.stem.lower().split("-")[0] in (key, key.zfill(2))]
        if len(hits) != 1:
            listing = ", ".join(p.stem for p in known)
            why = "matches several" if hits else f"is not a {what} of the kit"
            raise KitError(f"{name!r} {why}; the {what}s are: {listing}")
        chosen += hits
    return chosen


def read(path: Path) -> nbformat.NotebookNode:
    """Read and validate a notebook; a broken one raises KitError naming the file and why."""
    return loads(read_bytes(path), path)


# the largest notebook any command reads: the kit's decks are under 1 MiB, with outputs a few;
# a 3 GiB "deck" from someone else was read whole (6.3 GB of memory, or a MemoryError
# traceback) before anything said it was no notebook (probe 8)
NOTEBOOK_MAX = 64 << 20


def read_bytes(path: Path) -> bytes:
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:   # (a FIFO: no wait)
            st = os.fstat(f.fileno())
            size = st.st_size
            if not stat.S_ISREG(st.st_mode):
                raise KitError(f"{short(Path(path))}: not a notebook: not a file")
            if size > NOTEBOOK_MAX:
                raise KitError(f"{short(Path(path))}: not a notebook of the kit's: "
                               f"{size >> 20} MiB (a notebook here is under "
                               f"{NOTEBOOK_MAX >> 20} MiB)")
            return f.read(NOTEBOOK_MAX + 1)
    except OSError as e:
        raise KitError(f"{path}: cannot read ({e.strerror})") from None


_VALID: set[bytes] = set()   # digests of the notebooks validated in this process


def metadata(path: Path) -> dict:
    """The notebook's metadata, read as JSON alone (no nbformat, no validation: a few ms where
    read() takes half a second, most of it importing nbformat): what `present` checks before its
    server starts. KitError where it is no JSON object, as read() says."""
    got = _json(read_bytes(path), path)[1]
    meta = got.get("metadata") if isinstance(got, dict) else None
    if not isinstance(meta, dict):
        raise KitError(f"{short(Path(path))}: not a valid notebook (no metadata)")
    return meta


def _json(raw: bytes, path: Path) -> tuple[str, object]:
    """(the text, its JSON) of `raw`, the bytes of `path`; KitError naming why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise KitError(f"{short(Path(path))}: not a notebook: not UTF-8 text (byte "
                       f"{e.start} is {e.object[e.start:e.start + 1]!r}); Jupyter saves UTF-8")\
            from None
    try:
        return text, json.loads(text)
    except json.JSONDecodeError as e:
        raise KitError(f"{short(Path(path))}: not a notebook: invalid JSON at line {e.lineno}, "
                       f"column {e.colno} ({e.msg})") from None
    except RecursionError:   # (probe 10: a traceback from every command that read it)
        raise KitError(f"{short(Path(path))}: not a notebook: JSON nested too deeply") from None
    except ValueError as e:   # (probe 11: a number of over 4 300 digits, Python's limit)
        raise KitError(f"{short(Path(path))}: not a notebook: {str(e).split(';')[0]}") from None


def loads(raw: bytes, path: Path) -> nbformat.NotebookNode:
    """The notebook in `raw` (the bytes of `path`), validated; KitError naming why not."""
    text = _json(raw, path)[0]
    import nbformat
    from nbformat import reader
    key = hashlib.blake2b(raw, digest_size=16).digest()
    try:
        # (nbformat.reads, less its own validation, which this one repeated: each notebook's
        # bytes validated once a process; a build or a release reads each a dozen times)
        nb = nbformat.convert(reader.reads(text), 4)
        if key not in _VALID:
            nbformat.validate(nb)
            _VALID.add(key)
    except Exception as e:  # nbformat raises several types for a malformed notebook
        first = str(e).strip().split("\n")[0]
        raise KitError(f"{short(Path(path))}: not a valid notebook ({first})") from None
    return nb


def slide_type(cell) -> str:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "")


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def code_hidden(cell) -> bool:
    """Whether a code cell's code is off the slide: a chart's cell, its input hidden by the
    standard metadata.jupyter.source_hidden (JupyterLab and RISE show the output only; the
    slides PDF does the same, the reading handout and the site print the code)."""
    return cell.get("cell_type") == "code" and bool(
        cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"))


def heading(cell) -> str | None:
    """The first markdown heading of a cell, without its #s."""
    if cell.cell_type != "markdown":
        return None
    for line in cell.source.split("\n"):
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return None


def plain(text: str) -> str:
    """Markdown's inline marks off, as a rendered heading reads: `code`, **bold**, [link](url)."""
    import re
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).replace("`", "").replace("**", "")


def audience_problems(nb) -> list[str]:
    """What would put author material in front of the audience, one line each: in a deck (a
    notebook with RISE metadata) every cell needs a known slide type (a cell without one shows
    on the slide, notes included) and a check cell must be hidden; every tag must be known."""
    out = []
    deck = "rise" in nb.metadata
    for i, cell in enumerate(nb.cells):
        kind = slide_type(cell)
        if deck and kind not in SLIDE_TYPES:
            out.append(f"cell {i} has {'slide type ' + repr(kind) if kind else 'no slide type'}"
                       f" (set metadata.slideshow.slide_type to one of "
                       f"{', '.join(sorted(SLIDE_TYPES))}): it would show on the slide")
        unknown = set(tags(cell)) - TAGS
        if unknown:
            out.append(f"cell {i} has unknown tag(s) {sorted(unknown)} (the kit knows "
                       f"{', '.join(sorted(TAGS))})")
        if "check" in tags(cell) and (cell.cell_type != "code" or deck and kind != "skip"):
            out.append(f"cell {i} is a check cell but not a hidden code cell (slide type skip)")
        if "reading" in tags(cell) and (cell.cell_type != "markdown" or deck and kind != "skip"):
            out.append(f"cell {i} is a reading cell but not a hidden markdown cell (slide type "
                       "skip): it would show on the slide or in the notes window")
    return out


def check_inputs(notebooks: list[Path]) -> None:
    """A corrupt notebook, or one that would show the audience author material, is named (the
    build and present refuse it)."""
    for p in notebooks:
        check_input(p, read(p))


def check_input(p: Path, nb) -> None:
    """check_inputs, for one notebook already read."""
    problems = audience_problems(nb)
    if problems:
        raise KitError(f"{short(p)}: {problems[0]}"
                       + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))


def title_at(nb, index: int) -> str:
    """The title of the slide holding cell `index`: the nearest heading at or above it."""
    for cell in reversed(nb.cells[: index + 1]):
        h = heading(cell)
        if h:
            return h
    return "(before the first heading)"


def setup_index(nb) -> int:
    """Index of the setup cell: the first code cell."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            return i
    raise KitError("no code cell: the first code cell must be the setup cell")


@dataclass
class CodeNames:
    """The names a code cell's source uses (IPython's % and ! lines left out; none for source
    that does not parse): what it reads, binds (assigned, defined, imported), imports, imports
    from the kit (`from workshop… import`), and binds only inside a function or handler (its
    arguments, an `except … as` name)."""
    reads: set
    binds: set
    imports: set
    kit: set
    local: set


def code_names(source: str) -> CodeNames:
    import ast
    text = "\n".join(line for line in source.split("\n")
                     if not line.lstrip().startswith(("%", "!")))
    out = CodeNames(set(), set(), set(), set(), set())
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return out
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (out.reads if isinstance(n.ctx, ast.Load) else out.binds).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.binds.add(n.name)
        elif isinstance(n, ast.arg):
            out.local.add(n.arg)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.local.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names = {(a.asname or a.name).split(".")[0] for a in n.names}
            out.imports |= names
            if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "workshop":
                out.kit |= names
    out.binds |= out.imports
    return out


@dataclass
class Section:
    title: str
    start: int   # index of its `## ` slide cell
    stop: int    # one past its last cell


def sections(nb) -> list[Section]:
    """A section starts at a `slide` cell whose markdown is a `## ` heading."""
    starts = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "markdown" and slide_type(c) == "slide"
              and c.source.lstrip().startswith("## ")]
    bounds = starts + [len(nb.cells)]
    return [Section(heading(nb.cells[a]), a, b) for a, b in zip(starts, bounds[1:])]


def section_notebook(nb, section: Section):
    """The setup cell (and what comes before it) plus one section: what a speaker reuses."""
    import copy

    import nbformat
    sub = nbformat.from_dict(copy.deepcopy({k: v for k, v in nb.items() if k != "cells"}))
    sub.cells = [copy.deepcopy(c) for c in _section_cells(nb, section)]
    return sub


def _section_cells(nb, section: Section) -> list:
    """The cells of section_notebook(nb, section), not copied."""
    return nb.cells[: setup_index(nb) + 1] + nb.cells[section.start: section.stop]


def covered_by_whole_run(nb, section: Section) -> bool:
    """Whether running the section alone repeats the top of the whole notebook's run: its code
    cells (setup included) are the notebook's first code cells, in order. A fresh kernel then
    executes the same code either way, so the top-to-bottom run already proves it."""
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    alone = [c.source for c in _section_cells(nb, section) if c.cell_type == "code"]
    return code[: len(alone)] == alone


def normalised(nb) -> str:
    """The committed form: no outputs, no execution counts, in Jupyter's own form (nbformat's
    writer, what JupyterLab's Ctrl-S writes: sources as lists of lines, sorted keys), so a save
    from JupyterLab of an unchanged notebook changes no byte."""
    import copy

    import nbformat
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    return nbformat.writes(nb) + "\n"
