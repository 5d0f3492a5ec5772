"""What a notebook's handouts are made from, and whether they are current: the notebook (a
lab's attendee copy too), the lock, and the files of the package its cells and the printing
modules import, transitively. A comment in workshop/labs/j3.py stales lab J3's handouts, not
the decks'."""
from __future__ import annotations

import functools
import hashlib
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .. import notebooks as nbs
from .. import paths
from ..authoring.labgen import target as attendee_copy

PACKAGE = paths.ROOT / "workshop"
# how a PDF is made from an executed notebook: every handout depends on these (and on what
# they import); a notebook depends besides on the kit modules its own cells import
PRINTING = [PACKAGE / "tools" / "builder" / f
            for f in ("render.py", "handouts.py", "printer.py", "pdfinfo.py")]
# and the scripts the printer runs in each page (they scale and measure what is printed)
PAGE_SCRIPTS = [paths.PAGE_SCRIPTS / f for f in ("fit_slides.js", "overflow.js")]


def _module_file(name: str) -> Path | None:
    """workshop.labs.j3 -> workshop/labs/j3.py (a package: its __init__.py); None if none."""
    base = PACKAGE.joinpath(*name.split(".")[1:])
    for f in (base / "__init__.py", base.with_suffix(".py")):
        if f.is_file():
            return f
    return None


@functools.lru_cache(maxsize=4096)
def _imported(source: str, module: str = "", package: bool = False) -> frozenset[str]:
    """The kit modules `source` imports anywhere (lazy imports in functions included), each
    with its parent packages (importing workshop.labs.j3 runs workshop/labs/__init__.py).
    Kept by the source's text: a release's or a build's currency check walks the same modules
    for every notebook (1,586 parses, 10 of `release.stale`'s 17 s, before it was)."""
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
    return frozenset(n for n in out if _module_file(n))


def package_files(*notebooks) -> list[Path]:
    """The files of the kit's package a notebook's handouts depend on: the modules its code
    cells import, the printing modules, and everything those import, transitively. A comment
    in workshop/labs/j3.py stales lab J3's handouts, not the decks'."""
    todo = set()
    for nb in notebooks:   # each a path, or a notebook already read
        for cell in (nb if hasattr(nb, "cells") else nbs.read(nb)).cells:
            if cell.cell_type == "code":
                todo |= _imported(cell.source)
    return module_files(todo)


def module_files(todo: set[str]) -> list[Path]:
    """The files of the modules named (workshop.x.y), of the printing modules, and of
    everything those import, transitively."""
    todo = set(todo) | {".".join(("workshop",) + f.relative_to(PACKAGE).with_suffix("").parts)
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
    return _digest([Source.read(p) for p in notebooks])


def _digest(sources: list[Source]) -> str:
    return _hash([(s.path, s.raw) for s in sources], package_files(*(s.nb for s in sources)))


def digest_of(parts: list[Path], modules: set[str], extra: list[tuple[str, bytes]] = ()) -> str:
    """sha256 of what a handout made from more than one notebook is made from (a presenter's
    card or debrief): the files `parts`, named bytes `extra` (a part of a file, such as a
    lab's metadata), the lock, the page scripts, and the package files `modules` import."""
    return _hash([(p, p.read_bytes()) for p in parts] + [(Path(n), b) for n, b in extra],
                 module_files(modules))


def _hash(named: list[tuple[Path, bytes]], package: list[Path]) -> str:
    h = hashlib.sha256()
    for p, data in named + [(f, f.read_bytes()) for f in [paths.LOCK] + package + PAGE_SCRIPTS]:
        h.update(Path(paths.short(p)).as_posix().encode() + b"\0")
        h.update(data + b"\0")
    return h.hexdigest()


def is_kit(src: Path) -> bool:
    """One of the kit's own decks or lab sources (not a copy, wherever the copy is)."""
    return Path(src).resolve() in {p.resolve() for p in nbs.all_notebooks()}


@dataclass
class Source:
    """One notebook as a build sees it, read once and passed from stage to stage: its bytes,
    the notebook, whether it is one of the kit's own and a deck, and (cached) the hash of what
    its handouts are made from."""
    path: Path
    raw: bytes = field(repr=False)
    nb: object = field(repr=False)
    kit: bool = False
    deck: bool = False

    @classmethod
    def read(cls, path: Path) -> Source:
        path = Path(path)
        raw = nbs.read_bytes(path)
        nb = nbs.loads(raw, path)
        return cls(path, raw, nb, is_kit(path),
                   path.parent == paths.DECKS or "rise" in nb.metadata)

    @property
    def lab(self) -> bool:
        """A kit lab source: its handouts are made from its attendee copy too."""
        return self.kit and not self.deck

    @functools.cached_property
    def sheet(self) -> Source:
        """A kit lab's attendee copy in exercises/, read once."""
        return Source.read(attendee_copy(self.path))

    @property
    def files(self) -> list[Path]:
        """The notebooks its handouts are made from (without reading the attendee copy)."""
        return [self.path, attendee_copy(self.path)] if self.lab else [self.path]

    @functools.cached_property
    def digest(self) -> str:
        return _digest([self, self.sheet] if self.lab else [self])


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


