"""A whole-file map: every function and class of one of JAX's installed source files, with its
line and its role, and the parts a deck reads marked. What "read whole" means on a slide.

    from workshop import file_map
    file_map("jax._src.cache_key", reads=["get", "_hash_xla_flags"])

The map is computed from the installed file each time (ast, no import), so it is the pinned
JAX's file, all of it. A name in `reads` the file does not define fails the run, the way a
`show_source` anchor does: a deck that reads a function JAX has renamed must not build green.

A slide holds ROWS rows at the projector's type size. A longer file is shown in parts, one per
sub-slide (`part=(2, 3)`: the second of three runs of rows, a class never split from its
methods), and the strip under each part marks where that part sits in the whole file. A map
that would not fit one slide without `part` fails the run and says how many parts it needs.
`within=("Trace", "Tracer")` maps only the top-level entries from one name to a later one, for
a file the outline cites in parts.
"""
from __future__ import annotations

import ast
import html
import importlib.util
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import palette
from .config import FILE_MAP_ROWS, WIDTH
from .expect import ClaimFailed

MARK = palette.MARK
READ = palette.MARK_INK
# the word `class` before a class's row: the row's own face and size, in the strip's class
# colour (an <i> fell back to another face in RISE, twice the row's size)
CLASS = f"<span style='color:{palette.CLASS}'>class</span> "
ROWS = FILE_MAP_ROWS


@dataclass
class Entry:
    name: str        # qualified: "Tracer.__init__"
    kind: str        # "class", "def" (module level) or "method"
    line: int        # first line (its first decorator's, as inspect and show_source count)
    end: int         # last line
    role: str        # the docstring's first sentence; else the signature or the bases
    depth: int = 0   # 0 module level, 1 in a class

    @property
    def lines(self) -> int:
        return self.end - self.line + 1


@dataclass
class FileMap:
    path: str                       # relative to site-packages: jax/_src/cache_key.py
    total: int                      # lines in the file
    entries: list[Entry]
    reads: set[str] = field(default_factory=set)
    scope: tuple[int, int] | None = None    # the lines this map shows (within= or part=)
    label: str = ""                         # "part 2 of 3", "Trace … Tracer"
    rows: list[Entry] | None = None         # the rows it shows, when not all

    @property
    def functions(self) -> list[Entry]:
        return [e for e in self.entries if e.kind != "class"]

    @property
    def classes(self) -> list[Entry]:
        return [e for e in self.entries if e.kind == "class"]

    def read_lines(self) -> int:
        """Lines of the file inside the entries the deck reads (nested reads counted once)."""
        covered: set[int] = set()
        for e in self.entries:
            if e.name in self.reads:
                covered |= set(range(e.line, e.end + 1))
        return len(covered)

    def summary(self) -> str:
        n_def = sum(e.kind == "def" for e in self.entries)
        n_meth = sum(e.kind == "method" for e in self.entries)
        counts = [_count(k, word) for k, word in ((len(self.classes), "class"),
                                                  (n_def, "function"), (n_meth, "method")) if k]
        parts = [f"{self.path} · {_count(self.total, 'line')}", *counts]
        if self.reads:
            parts.append(f"the deck reads {len(self.reads)} (▶), "
                         f"{_count(self.read_lines(), 'line')}")
        if self.scope:
            parts.append(f"{self.label}: lines {self.scope[0]}–{self.scope[1]}")
        return " · ".join(parts)

    def __str__(self) -> str:
        rows = [self.summary()]
        for e in self._shown():
            mark = "▶" if e.name in self.reads else " "
            rows.append(f"{mark}{e.line:5d} {'  ' * e.depth}{e.name}  {e.role}".rstrip())
        return "\n".join(rows)

    __repr__ = __str__

    def _shown(self) -> list[Entry]:
        """Every class and module-level function; a class's methods only where the deck reads
        one of them (the class row says how many it has)."""
        return self.rows if self.rows is not None else _listed(self.entries, self.reads)

    def _repr_html_(self) -> str:
        methods = {c.name: sum(1 for e in self.entries if e.name.startswith(c.name + "."))
                   for c in self.classes}
        cells = []
        columns = 2 if len(self._shown()) > 8 else 1
        for e in self._shown():
            read = e.name in self.reads
            more = f"+{_count(methods[e.name], 'method')}" if methods.get(e.name) else ""
            extra = (f" <span style='color:{palette.QUIET}'>{more}</span>"
                     if e.kind == "class" and more else "")
            first = e is self._shown()[0]   # a part that starts inside a class says which
            shown = e.name.split(".")[-1] if e.depth and not first else e.name
            name = html.escape(shown)
            taken = (ROW_FIXED + round(e.depth * 4 / 3) + (2 if read else 0) + len(shown)
                     + (len("class " + more) + bool(more) if e.kind == "class" else 0))
            role = _shorten(e.role, _row_chars(columns) - taken - 1)
            style = (f"background:{MARK};color:{READ};font-weight:bold" if read else "")
            cells.append(
                f"<div style='{style};padding:0 4px;white-space:nowrap;overflow:hidden;"
                f"text-overflow:ellipsis;padding-left:{4 + 16 * e.depth}px' "
                f"title='{html.escape(e.role, quote=True)}'>"
                f"<span style='color:{palette.QUIET};display:inline-block;min-width:3.2em;"
                f"text-align:right'>{e.line}</span> "
                f"{'▶ ' if read else ''}{CLASS if e.kind == 'class' else ''}"
                f"{name}{extra}<span style='color:{palette.QUIET};font-weight:normal'> "
                f"{html.escape(role)}</span></div>")
        return (f"<div class='workshop-filemap' style='font-family:\"DejaVu Sans Mono\","
                f"monospace;font-size:20px;line-height:1.2'>"
                f"<div style='font-weight:bold;margin-bottom:4px'>"
                f"{html.escape(self.summary())}</div>"
                f"<div style='column-count:{columns};column-gap:18px'>{''.join(cells)}</div>"
                f"{self._strip()}{self._legend()}</div>")

    def _legend(self) -> str:
        """What the strip's colours mean, under it (a strip with no legend was a bar of colours)."""
        def key(fill: str, text: str, stroke: str = "none") -> str:
            return (f"<span style='display:inline-block;width:1.4em;height:0.8em;"
                    f"background:{fill};border:2px solid {stroke};vertical-align:middle'></span>"
                    f" {text}")
        keys = [key(palette.MARK_STRIP, "read (▶)"), key(palette.CLASS_STRIP, "a class"),
                key(palette.STRIP, "the rest")]
        if self.scope:
            keys.append(key("transparent", "this part", palette.TEXT))
        return (f"<div style='color:{palette.QUIET};margin-top:2px'>the file to scale: "
                + " · ".join(keys) + "</div>")

    def _strip(self, width: int = 1000, height: int = 18) -> str:
        """The file as one bar, its length the file's: every module-level block drawn to
        scale, the read ones in the mark colour, so the whole is seen at once."""
        scale = width / max(self.total, 1)
        rects = []
        for e in self.entries:
            if e.depth:
                continue
            read = e.name in self.reads or any(r.startswith(e.name + ".") for r in self.reads)
            fill = (palette.MARK_STRIP if read else palette.CLASS_STRIP if e.kind == "class"
                    else palette.STRIP)
            rects.append(f"<rect x='{(e.line - 1) * scale:.1f}' y='0' "
                         f"width='{max(e.lines * scale, 1):.1f}' height='{height}' "
                         f"fill='{fill}'><title>{html.escape(e.name)}</title></rect>")
        if self.scope:   # where this part sits in the whole file
            a, b = self.scope
            rects.append(f"<rect x='{(a - 1) * scale:.1f}' y='1' width='{(b - a + 1) * scale:.1f}'"
                         f" height='{height - 2}' fill='none' stroke='{palette.TEXT}'"
                         " stroke-width='2'/>")
        return (f"<svg viewBox='0 0 {width} {height}' preserveAspectRatio='none' "
                f"style='width:100%;height:{height}px;"
                f"margin-top:6px' role='img' aria-label='{html.escape(self.path)} to scale'>"
                f"<rect width='{width}' height='{height}' fill='{palette.STRIP_BG}'/>"
                f"{''.join(rects)}"
                f"</svg>")


# the characters a row of a map holds at 20 px (DejaVu Sans Mono, 12 px a character): a
# slide's output is WIDTH wide, and two columns share it less their 18 px gap. A row spends
# ROW_FIXED of them on its line number (3.2em), the space after it and its 4 px paddings, and
# 4/3 of one per level of indent (16 px). A role longer than the rest of its row is shortened
# here, at a whole parameter or word, with a … (the browser cut it mid-word: "delta:…", "fo…").
ROW_FIXED = 7


def _row_chars(columns: int) -> int:
    return WIDTH if columns == 1 else (WIDTH * 12 - 18) // 2 // 12


def _count(k: int, word: str) -> str:
    """"1 class", "2 classes", "1 method"."""
    return f"{k} {word}" if k == 1 else f"{k} {word}{'es' if word.endswith('s') else 's'}"


def _shorten(role: str, room: int) -> str:
    """`role` in at most `room` characters: a signature cut after a whole parameter, a
    sentence after a whole word, each ending in …; "" when not even that fits."""
    if len(role) <= room:
        return role
    if role.startswith("(") and role.endswith(")"):
        kept = []
        for p in _params(role[1:-1]):
            if len(", ".join(kept + [p, "…"])) + 2 > room:
                break
            kept.append(p)
        return f"({', '.join(kept + ['…'])})" if room >= 3 else ""
    kept = []
    for w in role.split(" "):
        if len(" ".join(kept + [w])) + 1 > room:
            break
        kept.append(w)
    return " ".join(kept).rstrip(",;:") + "…" if kept else ""


def _params(inside: str) -> list[str]:
    """A signature's parameters, split at the commas outside brackets."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(inside):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth == 0:
            out.append(inside[start:i].strip())
            start = i + 1
    return out + [inside[start:].strip()]


# Sphinx's markup in a docstring's first sentence, as the sentence reads: :func:`jax.jit`,
# :class:`~jax.Array` and ``x`` are jax.jit, Array and x on a map
_RST_ROLE = re.compile(r":[\w:.-]+:`~?([^`<]*?)(?:\s*<[^`]*>)?`")


def _plain(text: str) -> str:
    text = _RST_ROLE.sub(lambda m: m.group(1).split(".")[-1] if m.group(0).count("~")
                         else m.group(1), text)
    return text.replace("``", "")


def _role(node, lines: list[str]) -> str:
    doc = ast.get_docstring(node, clean=True)
    if doc:
        first = _plain(" ".join(doc.strip().split("\n\n")[0].split()))
        return _shorten(first.split(". ")[0].rstrip(".") + ".", 90)
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        return f"({bases})" if bases else ""
    args = ast.unparse(node.args)
    return _shorten(f"({args})", 90)


def _entries(tree, lines) -> list[Entry]:
    out = []

    def add(node, prefix: str, depth: int):
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        kind = "class" if isinstance(node, ast.ClassDef) else "method" if depth else "def"
        out.append(Entry(prefix + node.name, kind, start, node.end_lineno,
                         _role(node, lines), depth))
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    add(child, prefix + node.name + ".", depth + 1)

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node, "", 0)
        elif isinstance(node, ast.If):   # `if TYPE_CHECKING:` / platform branches
            for child in node.body + node.orelse:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    add(child, "", 0)
    return sorted(out, key=lambda e: e.line)


def source_file(module) -> Path:
    """The installed file of a module (a module object or its dotted name), without importing."""
    name = module if isinstance(module, str) else module.__name__
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ClaimFailed(f"no Python source for {name}")
    return Path(spec.origin)


def _relative(path: Path) -> str:
    parts = path.parts
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in ("site-packages", "dist-packages"):
            return "/".join(parts[i + 1:])
    return path.name


def _listed(entries: list[Entry], reads) -> list[Entry]:
    """Every class and module-level function; a class's methods only where the deck reads one
    of them (the class row says how many it has)."""
    read_classes = {n.split(".")[0] for n in reads if "." in n}
    return [e for e in entries if e.depth == 0 or e.name.split(".")[0] in read_classes]


def _runs(rows: list[Entry], n: int) -> list[list[Entry]]:
    """`rows` cut into n contiguous runs of about equal length, each cut moved to the nearest
    top-level row when one is near (a class stays with its methods where it can)."""
    cuts, slack = [0], len(rows) / (4 * n)
    for i in range(1, n):
        ideal = round(i * len(rows) / n)
        near = [j for j in range(max(cuts[-1] + 1, int(ideal - slack)),
                                 min(len(rows), int(ideal + slack) + 1)) if rows[j].depth == 0]
        cuts.append(min(near, key=lambda j: abs(j - ideal)) if near else ideal)
    cuts.append(len(rows))
    return [rows[a:b] for a, b in zip(cuts, cuts[1:])]


def file_map(module, reads=(), *, within: tuple[str, str] | None = None,
             part: tuple[int, int] | None = None) -> FileMap:
    """The map of `module`'s whole file: every function and class, its line and its role.

    Read from the installed file with `ast` (the module itself is not imported), so it is the
    pinned JAX's file, all of it. Each row is an entry's first line, its name and its role
    (the docstring's first sentence, else its signature or bases); every class and module-level
    function has a row, a class's methods only where the deck reads one of them. `reads`
    names the parts the deck reads: they are marked ▶, and each must be defined by the file,
    as a `show_source` anchor must be there. A slide holds ROWS (32) rows: a longer file is
    shown in parts, one per sub-slide, and a map that does not fit fails the run.

    Args:
        module: the module, or its dotted name ("jax._src.cache_key").
        reads: the qualified names ("get", "Tracer.__init__") of the entries the deck reads.
            Defaults to none.
        within: (first, last): only the top-level entries from `first` to `last`, both
            included, or None for the whole file. `first` must come first in the file: the
            other way round maps no rows. Defaults to None.
        part: (k, n): only the k-th of n runs of rows (a class is never split from its
            methods where it can be helped), or None for all rows. Defaults to None.

    Returns:
        A `FileMap`: `path` (relative to site-packages), `total` (its lines), `entries` (each
        with `name`, `kind`, `line`, `end` and `role`), `reads`, and, for `within` or `part`,
        `scope` (the lines shown) and `label`. Its `summary()` is the heading line; printed,
        it is the heading and one row per entry shown; Jupyter shows the rows in columns over
        a strip of the whole file drawn to scale.

    Raises:
        ClaimFailed: the module has no Python source, the file defines no entry named in
            `reads` or `within`, `part` is not 1 ≤ k ≤ n or its rows do not make n parts, or
            the rows do not fit one slide (the message says how many parts they need).

    Example:
        >>> fm = file_map("jax._src.cache_key", reads=["get", "_hash_xla_flags"])
        >>> fm.path
        'jax/_src/cache_key.py'
        >>> [(e.kind, e.name) for e in fm.entries if e.name in fm.reads]
        [('def', 'get'), ('def', '_hash_xla_flags')]
        >>> for row in str(fm).split("\\n"):  # doctest: +ELLIPSIS
        ...     if row.startswith("▶"):
        ...         print(row)
        ▶... get  Creates a hashed string to use as a key to the compilation cache.
        ▶... _hash_xla_flags  (hash_obj, extra_flag_prefixes: list[str])
        >>> file_map("jax._src.cache_key", reads=["get_the_key"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        workshop.expect.ClaimFailed: jax/_src/cache_key.py defines no get_the_key: ...
    """
    path = source_file(module)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    entries = _entries(ast.parse(text), lines)
    names = {e.name for e in entries}
    missing = [r for r in reads if r not in names]
    if missing:
        raise ClaimFailed(f"{_relative(path)} defines no {', '.join(missing)}: the deck reads "
                          "a part this JAX does not have")
    total = len(lines) - (1 if text.endswith("\n") else 0)
    rel = _relative(path)
    fm = FileMap(rel, total, entries, set(reads))
    rows = _listed(entries, reads)
    if within:
        tops = {e.name: e for e in entries if e.depth == 0}
        absent = [w for w in within if w not in tops]
        if absent:
            raise ClaimFailed(f"{rel} defines no {', '.join(absent)} (within=)")
        a, b = tops[within[0]].line, tops[within[1]].end
        rows = [e for e in rows if a <= e.line <= b]
        fm.scope, fm.label, fm.rows = (a, b), f"{within[0]} … {within[1]}", rows
    if part:
        k, n = part
        if not 1 <= k <= n:
            raise ClaimFailed(f"part={part}: k runs from 1 to n")
        runs = _runs(rows, n)
        if len(runs) < n or not runs[k - 1]:
            raise ClaimFailed(f"{rel}: {len(rows)} rows do not make {n} parts")
        rows = runs[k - 1]
        end = runs[k][0].line - 1 if k < n else max(e.end for e in rows)
        fm.scope, fm.rows = (rows[0].line, min(max(e.end for e in rows), end)), rows
        fm.label = f"part {k} of {n}" + (f" of {fm.label}" if within else "")
    if len(rows) > ROWS:
        need = math.ceil(len(rows) / ROWS)
        where = f"part {part[0]} of {part[1]} of {rel}" if part else rel
        raise ClaimFailed(f"{where}: {len(rows)} rows do not fit one slide ({ROWS}): show it in "
                          f"{need if not part else need * part[1]} parts, part=(1, N) … "
                          "(N, N), one per sub-slide")
    return fm
