"""What a slide shows: JAX's own source, and the artefacts of the four stations, trimmed.

Everything here returns a `Shown`: plain text for a terminal or a PDF, highlighted HTML in
Jupyter and in nbconvert's HTML export (inline styles, no stylesheet needed). Anything cut is
replaced by a visible marker that says how much was cut.
"""
from __future__ import annotations

import html
import importlib
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import palette
from .artefacts import hlo_text
from .config import MAX_LINES, WIDTH  # what a slide holds
from .pictures import MONO  # the slides' code face (decks/rise.css)

MARK_BG = palette.MARK
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# a notebook cell's temporary file (/tmp/ipykernel_10804/2215316448.py: the kernel's pid and
# the cell's hash), which JAX names where a function was defined: shown as ‹cell›, as the
# handouts print it (a machine path on a slide means nothing to the room)
_CELL_FILE = re.compile(r"(?:[A-Za-z]:)?[\w.~/\\-]*ipykernel_\d+[/\\]\d+\.py")
CELL = "‹cell›"


def cell_files(text: str) -> str:
    """`text` with each notebook cell's temporary file name written ‹cell›."""
    return _CELL_FILE.sub(CELL, text)


def _style():
    """pygments' default colours, but for its error token: a red box around what Python's lexer
    cannot read, which on a slide is the … that ends a cut line (the kit's own cut mark, quiet)."""
    from pygments.style import Style
    from pygments.styles.default import DefaultStyle
    from pygments.token import Error

    class SlideStyle(Style):
        background_color = DefaultStyle.background_color
        styles = {k: _readable(v) for k, v in {**DefaultStyle.styles,
                                                Error: palette.QUIET}.items()}
    return SlideStyle


def _luminance(colour: str) -> float:
    rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _readable(style: str) -> str:
    """A pygments style string whose colour reads at 4.5:1 or more on a marked line's tint
    (palette.MARK, the lightest background a source line gets): pygments' default purple and
    red keywords came to 4.4 there (axe-core's contrast rule), so they are darkened, step by
    step, in the same hue."""
    import re
    m = re.search(r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b", style)
    if not m:
        return style
    hexa = m.group(1) if len(m.group(1)) == 6 else "".join(c * 2 for c in m.group(1))
    colour, back = f"#{hexa}", _luminance(palette.MARK)
    while (back + 0.05) / (_luminance(colour) + 0.05) < 4.6:
        colour = "#" + "".join(f"{int(int(colour[i:i + 2], 16) * 0.9):02x}" for i in (1, 3, 5))
    return style[:m.start()] + colour + style[m.end():]


@dataclass
class Shown:
    """A block of text for a slide, with optional source highlighting.

    What `trim` and every `show_*` function of this module return. Its `str()`, and its repr
    (a terminal and a PDF show the same), is the title line, the text, each line after a
    gutter with its real line number when `numbers` is set (▶ before a marked one), and, when
    something was cut, one quiet line that says what. Jupyter shows it as HTML: highlighted
    by pygments with inline styles when `lexer` is set (no stylesheet needed, so it survives
    nbconvert's HTML export), the marked lines' numbers in the mark colour.

    Attributes:
        text: the lines shown, joined by newlines.
        title: a heading line above the text, "" for none. Defaults to "".
        lexer: the name of the pygments lexer that highlights the HTML ("python"), or None
            for plain text. Defaults to None.
        numbers: the real line number of each line of `text` (None for a line that stands
            for folded ones: a docstring, a TODO), or None for no gutter. Defaults to None.
        marked: the real line numbers of the marked lines. Defaults to an empty set.
        notes: what was cut, one phrase each. Defaults to an empty list.
        lines: (property) `text` split into its lines.
        cut: (property) the notes in one line, "⋯ not shown: …", or "" when there are none.

    Example:
        >>> s = Shown("x = 1\\ny = 2", title="two lines", notes=["1 more line of 3"])
        >>> s.lines
        ['x = 1', 'y = 2']
        >>> s
        two lines
        x = 1
        y = 2
        ⋯ not shown: 1 more line of 3
        >>> Shown("def f(x):\\n    return x", numbers=[3, 4], marked={4})
             3 │ def f(x):
        ▶    4 │     return x
    """
    text: str
    title: str = ""
    lexer: str | None = None        # pygments lexer name for HTML highlighting
    numbers: list[int | None] | None = None   # real line number of each line (source only)
    marked: set[int] = field(default_factory=set)   # real line numbers of marked lines
    notes: list[str] = field(default_factory=list)  # what was cut: one quiet line after it

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def _gutter(self, i: int) -> str:
        n = self.numbers[i]
        if n is None:
            return "       "
        return f"{'▶' if n in self.marked else ' '}{n:5d} "

    @property
    def cut(self) -> str:
        """What was cut, in one line ("" when nothing was)."""
        return f"⋯ not shown: {', '.join(self.notes)}" if self.notes else ""

    def __str__(self) -> str:
        out = [self.title] if self.title else []
        if self.numbers is None:
            out += self.lines
        else:
            out += [f"{self._gutter(i)}│ {line}" for i, line in enumerate(self.lines)]
        return "\n".join(out + ([self.cut] if self.cut else []))

    __repr__ = __str__

    def _repr_html_(self) -> str:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        if self.lexer:
            body = highlight(self.text, get_lexer_by_name(self.lexer),
                             HtmlFormatter(nowrap=True, noclasses=True, style=_style()))
            rows = body.rstrip("\n").split("\n")
        else:
            rows = [html.escape(line) for line in self.lines]
        if self.numbers is not None:
            hot = f"color:{palette.TEXT};font-weight:bold;"
            rows = [f"<span style='color:{palette.QUIET};user-select:none;"
                    f"{hot if self.numbers[i] in self.marked else ''}'>"
                    f"{html.escape(self._gutter(i))}</span> {row}" for i, row in enumerate(rows)]
            # a marked line is tinted whole, gutter and code, as a highlighter pen marks it on
            # paper (the tint on its number alone was missed from the back of the room)
            rows = [f"<span style='background:{MARK_BG};display:inline-block;"
                    f"min-width:100%'>{row}</span>" if self.numbers[i] in self.marked else row
                    for i, row in enumerate(rows)]
        body = ("<pre style='margin:0;line-height:1.25;background:transparent'>"
                + "\n".join(rows) + "</pre>")
        head = (f"<div style=\"font-family:{MONO};font-weight:bold;color:{palette.QUIET}\">"
                f"{html.escape(self.title)}</div>" if self.title else "")
        tail = (f"<div style=\"font-family:{MONO};color:{palette.QUIET}\">"
                f"{html.escape(self.cut)}</div>"
                if self.cut else "")
        return f"<div class='workshop-shown'>{head}{body}{tail}</div>"


# --------------------------------------------------------------------------- trimming

def trim(text: str, max_lines: int | None = MAX_LINES, width: int | None = WIDTH,
         title: str = "", lexer: str | None = None, keep: str | None = None) -> Shown:
    """Cut `text` to `max_lines` lines of at most `width` columns, saying what was cut.

    The first `max_lines` lines are kept, and a line wider than `width` is cut to it, ending
    in …; one quiet line under the text says how many lines and line ends were cut. Terminal
    colour codes (a jaxpr printed in a kernel has them) are removed first. The lines that
    `keep` matches are the slide's point: each is shown whole (wrapped at `width`, never cut),
    and the lines cut to make room for them are others (a ⋯ line stands where they were).

    Args:
        text: the text to show (a jaxpr, a module, a log).
        max_lines: the most lines to show, or None for all. Defaults to MAX_LINES (14: what
            a slide holds).
        width: the most columns a line may have, or None for no limit. Defaults to WIDTH
            (96: a slide's width at 20 px).
        title: the heading line of the result. Defaults to "".
        lexer: the pygments lexer name for the HTML highlighting, or None. Defaults to None.
        keep: a regular expression (re.search) for the line(s) the slide is about, or None.
            Defaults to None.

    Returns:
        A `Shown` with the lines kept, `title` and `lexer`, and the notes of what was cut.

    Raises:
        LookupError: `keep` matches no line: the slide's point is gone from the output,
            which fails the build.

    Example:
        >>> text = "\\n".join(f"line {i}" for i in range(20))
        >>> trim(text, max_lines=4, keep="line 17")
        line 0
        line 1
          ⋯
        line 17
        ⋯ not shown: 16 more lines of 20
        >>> trim("x = " + "1 + " * 30 + "1", width=40)
        x = 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 +…
        ⋯ not shown: 1 line end (…)
    """
    text = cell_files(_ANSI.sub("", text))   # JAX colours jaxprs in a kernel; HTML cannot
    lines = text.rstrip("\n").split("\n")
    hot = {i for i, line in enumerate(lines) if keep and re.search(keep, line)}
    if keep and not hot:
        raise LookupError(f"trim: keep={keep!r} matches no line of the {title or 'text'}")
    notes = []
    shown = list(range(len(lines)))
    if max_lines is not None and len(lines) > max_lines:
        k = len(lines) - max_lines
        notes.append(f"{k} more line{'s' if k > 1 else ''} of {len(lines)}")
        shown = _window(len(lines), max_lines, hot)
    out = []
    for k, i in enumerate(shown):
        if k and i != shown[k - 1] + 1:
            out.append("  ⋯")   # lines cut here, to keep a line the slide is about
        out += _wrap(lines[i], width) if i in hot else [lines[i]]
    out, notes = _clip(out, width, notes)
    return Shown("\n".join(out), title=title, lexer=lexer, notes=notes)


def _clip(lines: list[str], width: int | None, notes: list[str]) -> tuple[list[str], list[str]]:
    """Each line longer than `width` cut to it, ending in …, and the note that says so."""
    long = 0 if width is None else sum(len(line) > width for line in lines)
    if not long:
        return lines, notes
    lines = [line if len(line) <= width else line[:width - 1] + "…" for line in lines]
    return lines, notes + [f"{long} line end{'s' if long > 1 else ''} (…)"]


def _window(n: int, max_lines: int, hot: set[int]) -> list[int]:
    """Which of n lines to show in max_lines: the first ones, and every hot line (the first
    ones fewer, by the hot lines past them and a ⋯ line for the gap)."""
    late = sorted(i for i in hot if i >= max_lines)
    if not late:
        return list(range(max_lines))
    head = max(max_lines - len(late) - 1, 0)
    return list(range(head)) + [i for i in sorted(hot) if i >= head]


def _wrap(line: str, width: int | None) -> list[str]:
    """A line shown whole: broken at a space (else at `width`) into pieces no wider than
    `width`, each after the first indented as the line is, two more."""
    if width is None or len(line) <= width:
        return [line]
    pad = " " * min(len(line) - len(line.lstrip()) + 2, width // 2)
    out, rest, room = [], line, width
    while len(rest) > room:
        lead = len(rest) - len(rest.lstrip())   # (never break inside the indent)
        cut = rest.rfind(" ", max(room // 2, lead + 1), room + 1)
        cut = cut if cut > 0 else room
        out.append(rest[:cut].rstrip())
        rest, room = pad + rest[cut:].lstrip(), width
    return out + [rest]


# --------------------------------------------------------------------------- source

def _resolve(obj):
    """An object, or a dotted name such as 'jax._src.core.Primitive.bind'."""
    if not isinstance(obj, str):
        return obj
    parts = obj.split(".")
    for i in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            try:
                target = getattr(target, attr)
            except AttributeError:
                raise LookupError(f"show_source: cannot find {obj!r} in the installed JAX "
                                  f"(no {attr!r})") from None
        return target
    raise LookupError(f"show_source: cannot import {obj!r}")


def _source_of(obj) -> tuple[str, list[str], int, str]:
    """(file, lines, first line number, name) of an object, or of a dotted name."""
    target = _resolve(obj)
    if isinstance(target, property):
        target = target.fget
    target = inspect.unwrap(target) if callable(target) else target
    try:
        path = inspect.getsourcefile(target)
        src, first = inspect.getsourcelines(target)
    except TypeError:
        # a function wrapped by a C++ object (jaxlib's WeakrefLRUCache keeps no __wrapped__):
        # find the definition by its name in the module that holds it
        if not isinstance(obj, str):
            raise TypeError(f"show_source: no source for {type(target).__name__}; "
                            "pass its dotted name instead") from None
        module, _, attr = obj.rpartition(".")
        return _definition(importlib.import_module(module), attr)
    lines = [line.rstrip("\n") for line in src]
    return path, lines, max(first, 1), getattr(target, "__qualname__",
                                               getattr(target, "__name__", str(obj)))


def _definition(module, name: str) -> tuple[str, list[str], int, str]:
    import ast
    path = inspect.getsourcefile(module)
    text = Path(path).read_text(encoding="utf-8").split("\n")
    for node in ast.parse("\n".join(text)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            a = min([node.lineno] + [d.lineno for d in node.decorator_list])
            return path, text[a - 1: node.end_lineno], a, name
    raise LookupError(f"show_source: no definition of {name!r} in {_relative(path)}")


def _relative(path: str) -> str:
    import jax
    root = Path(jax.__file__).resolve().parent.parent
    p = Path(path).resolve()
    try:
        return str(p.relative_to(root))
    except ValueError:
        return str(p)


def _find(lines: list[str], needle: str, after: int, what: str, where: str) -> int:
    for i in range(after, len(lines)):
        if needle in lines[i]:
            return i
    raise LookupError(f"show_source: {what} {needle!r} not found in {where}: "
                      "the installed JAX differs from the one this slide was written for")


def _docstring_span(lines: list[str]) -> tuple[int, int] | None:
    """0-based [a, b) of the docstring of the def/class that `lines` start with, if any."""
    import ast
    import textwrap
    try:
        tree = ast.parse(textwrap.dedent("\n".join(lines)))
    except SyntaxError:
        return None
    node = tree.body[0] if tree.body else None
    if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(getattr(node.body[0], "value", None), ast.Constant)
            and isinstance(node.body[0].value.value, str)):
        return node.body[0].lineno - 1, node.body[0].end_lineno
    return None


SOURCE_WIDTH = WIDTH - 8   # the gutter (mark, line number, bar) takes 8 of the slide's columns
_TAIL_NOISE = re.compile(r"\s+#\s*(pyrefly|type|mypy|pytype):\s*(ignore|disable)\S*.*$")
_TODO = re.compile(r"^\s*#\s*(TODO|FIXME|XXX)\b")


def _fold_noise(rows: list[tuple[int | None, str]]) -> list[tuple[int | None, str]]:
    """Upstream housekeeping off the slide: a trailing `# pyrefly: ignore[...]` or `# type:
    ignore` is dropped, and a `# TODO(...)` comment (with the comment lines that continue it)
    is folded to one quiet line that says how many it was. Real line numbers are kept."""
    out, i = [], 0
    while i < len(rows):
        n, t = rows[i]
        if n is not None and _TODO.match(t):
            indent = t[: len(t) - len(t.lstrip())]
            j = i + 1
            while (j < len(rows) and rows[j][0] is not None
                   and rows[j][1].startswith(indent + "#")):
                j += 1
            out.append((None, f"{indent}# ⋮ upstream TODO, {j - i} line{'s' if j - i > 1 else ''}"))
            i = j
            continue
        out.append((n, _TAIL_NOISE.sub("", t) if n is not None else t))
        i += 1
    return out


def _cut(rows: list, max_lines: int | None, marked: set[int], where: str) -> tuple[list, list]:
    """The first max_lines rows, never ending on a dangling header, and the note of the cut;
    a marked line past them raises ValueError (the slide would point at a hidden line)."""
    last = next(n for n, _ in reversed(rows) if n is not None)
    keep = len(rows) if max_lines is None else min(max_lines, len(rows))
    hidden = sorted(n for n, _ in rows[keep:] if n in marked)
    if hidden:
        raise ValueError(f"show_source: marked line {hidden[0]} of {where} is past "
                         f"max_lines={max_lines}: narrow start/stop or raise max_lines")
    while keep > 1 and rows[keep - 1][0] not in marked | {None} and _dangles(rows[keep - 1][1]):
        keep -= 1   # an excerpt never ends on a header whose body it does not show
    if keep == len(rows):
        return rows, []
    n = len(rows) - keep
    return rows[:keep], [f"{n} more line{'s' if n > 1 else ''} (to line {last})"]


def _dangles(line: str) -> bool:
    """A blank line, or a block's header (`else:`, `def f(x):`, a decorator) with no body
    after it: what an excerpt must not end on."""
    code = line.split("#")[0].rstrip()
    return not code or code.endswith(":") or code.lstrip().startswith("@")


def show_source(obj, *, start: str | None = None, stop: str | None = None,
                mark: str | list[str] | tuple[str, ...] = (), docstring: bool = False,
                max_lines: int | None = 30, width: int | None = SOURCE_WIDTH) -> Shown:
    """The installed JAX's own source of `obj`, with its real path and line numbers.

    The source is read from the installed files, so a slide quotes the pinned JAX, never a
    copy. `start` and `stop` name the first and last lines to show by their text, so a slide
    names code, never line numbers; any of `start`, `stop` or `mark` missing from the source
    raises LookupError, which fails the build: a slide that points at code JAX no longer has
    is caught. The docstring is folded to one comment line unless `docstring=True`; an
    upstream `# TODO` comment is folded to one line that says how many it was, and a trailing
    `# type: ignore` (or pyrefly, mypy, pytype) comment is dropped. Real line numbers are kept
    either way. An excerpt never ends on a blank line or a block's header (`else:`, a
    decorator) unless that line is marked, and a line wider than `width` is cut with a quiet
    … and a note.

    Args:
        obj: what to show: a function, class, method, property or module, or its dotted name
            ("jax._src.core.Primitive.bind"); the name also finds a function that a C++
            wrapper hides from `inspect`.
        start: text of the first line to show (the first line that contains it), or None for
            the first line. Defaults to None.
        stop: text of the last line to show (the first line from `start` on that contains it),
            or None for the last line. Defaults to None.
        mark: text (or a list of texts) of the lines to highlight: every shown line that
            contains it is marked ▶. Defaults to no marks.
        docstring: if True, show the docstring whole instead of folded. Defaults to False.
        max_lines: the most lines to show, or None for all. Defaults to 30.
        width: the most columns a line may have, or None for no limit. Defaults to
            SOURCE_WIDTH (88: a slide's 96 columns less the 8 of the gutter).

    Returns:
        A `Shown` titled "path:first–last  name" (for JAX's files, the path relative to the
        folder JAX is installed in), with python highlighting, each line's real line number,
        the marked lines, and the notes of what was cut.

    Raises:
        LookupError: the name cannot be imported or found, or `start`, `stop` or a `mark` is
            not in the shown source.
        ValueError: a marked line falls past `max_lines` (the slide would point at a hidden
            line).
        TypeError: `obj` is an object with no Python source (pass its dotted name instead).

    Example:
        >>> from jax._src import xla_bridge
        >>> print(show_source(xla_bridge.backends_are_initialized))  # doctest: +ELLIPSIS
        jax/_src/xla_bridge.py:...  backends_are_initialized
        ... │ def backends_are_initialized() -> bool:
               │   # ⋮ docstring, 1 line
        ... │   with _backend_lock:
        ... │     return len(_backends) != 0
        >>> s = show_source("jax._src.core.Primitive.bind", start="prev_trace = trace_ctx.trace",
        ...                 mark="bind_with_trace", max_lines=4)
        >>> print(s)  # doctest: +ELLIPSIS
        jax/_src/core.py:...  Primitive.bind
        ... │     prev_trace = trace_ctx.trace
        ... │     trace_ctx.set_trace(None)
        ... │     try:
        ▶... │       return self.bind_with_trace(prev_trace, args, avals, params)
        ⋯ not shown: ... more line... (to line ...)
    """
    path, lines, first, name = _source_of(obj)
    where = f"{_relative(path)} ({name})"
    rows: list[tuple[int | None, str]] = [(first + i, line) for i, line in enumerate(lines)]
    span = None if docstring else _docstring_span(lines)
    if span:
        a, b = span
        indent = lines[a][: len(lines[a]) - len(lines[a].lstrip())]
        n = b - a   # a comment, so the highlighter shows it as one (not as an error token)
        rows[a:b] = [(None, f"{indent}# ⋮ docstring, {n} line{'s' if n != 1 else ''}")]
    texts = [t for _, t in rows]
    lo = _find(texts, start, 0, "start", where) if start else 0
    hi = _find(texts, stop, lo, "stop", where) + 1 if stop else len(rows)
    rows = _fold_noise(rows[lo:hi])
    marked = set()
    for m in [mark] if isinstance(mark, str) else list(mark):
        hits = {n for n, t in rows if m in t and n is not None}
        if not hits:
            raise LookupError(f"show_source: mark {m!r} not found in the shown lines of {where}")
        marked |= hits
    rows, notes = _cut(rows, max_lines, marked, where)
    texts, notes = _clip([t for _, t in rows], width, notes)
    rows = [(n, t) for (n, _), t in zip(rows, texts)]
    nums = [n for n, _ in rows if n is not None]
    return Shown("\n".join(t for _, t in rows),
                 title=f"{_relative(path)}:{nums[0]}–{nums[-1]}  {name}", lexer="python",
                 numbers=[n for n, _ in rows], marked=marked, notes=notes)


# --------------------------------------------------------------------------- four stations

def show_jaxpr(obj, max_lines: int | None = MAX_LINES, width: int | None = WIDTH,
               keep: str | None = None) -> Shown:
    """Station 1: the jaxpr of a `jax.jit(f).trace(...)` result, or a `core.Jaxpr`.

    The jaxpr's text, trimmed for a slide (see `trim`) and titled with its number of
    top-level equations (those of a nested jit, cond or scan are not counted).

    Args:
        obj: a `jax.jit(f).trace(...)` result (its `.jaxpr` is shown), or a `core.Jaxpr`
            itself (what `jax.make_jaxpr(f)(...)` returns).
        max_lines: the most lines to show, or None for all. Defaults to MAX_LINES (14).
        width: the most columns a line may have, or None for no limit. Defaults to WIDTH (96).
        keep: a regular expression for the line(s) the slide is about, shown whole even past
            `max_lines` (see `trim`), or None. Defaults to None.

    Returns:
        A `Shown` titled "jaxpr · N equations" ("1 equation" for one) with the jaxpr's lines.

    Raises:
        LookupError: `keep` matches no line of the jaxpr.

    Example:
        >>> def f(x):
        ...     return jnp.sin(x) * 2.0
        >>> show_jaxpr(jax.jit(f).trace(1.0))
        jaxpr · 2 equations
        { lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }
        >>> show_jaxpr(jax.make_jaxpr(f)(1.0)).lines[0]
        '{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }'
    """
    jaxpr = getattr(obj, "jaxpr", obj)
    n = len(getattr(jaxpr, "eqns", getattr(getattr(jaxpr, "jaxpr", None), "eqns", [])))
    title = f"jaxpr · {n} equation" + ("" if n == 1 else "s")
    return trim(str(jaxpr), max_lines, width, title=title, keep=keep)


def show_stablehlo(lowered, max_lines: int | None = MAX_LINES, width: int | None = WIDTH,
                   keep: str | None = None) -> Shown:
    """Station 2: the StableHLO module of a `.lower()` result.

    The MLIR text that `lowered.as_text()` gives, trimmed for a slide (see `trim`).

    Args:
        lowered: a `jax.jit(f).lower(...)` (or `.trace(...).lower()`) result.
        max_lines: the most lines to show, or None for all. Defaults to MAX_LINES (14).
        width: the most columns a line may have, or None for no limit. Defaults to WIDTH (96).
        keep: a regular expression for the line(s) the slide is about, shown whole even past
            `max_lines` (see `trim`), or None. Defaults to None.

    Returns:
        A `Shown` titled "StableHLO (lowered)" with the module's lines.

    Raises:
        LookupError: `keep` matches no line of the module.

    Example:
        >>> def f(x):
        ...     return jnp.sin(x) * 2.0
        >>> s = show_stablehlo(jax.jit(f).lower(1.0), keep="sine")
        >>> s.title
        'StableHLO (lowered)'
        >>> print(s.lines[0].split(" attributes")[0])
        module @jit_f
        >>> [line.strip() for line in s.lines if "sine" in line]
        ['%0 = stablehlo.sine %arg0 : tensor<f32>']
    """
    return trim(lowered.as_text(), max_lines, width, title="StableHLO (lowered)", keep=keep)


def show_hlo(compiled, max_lines: int | None = MAX_LINES, width: int | None = WIDTH,
             entry_only: bool = True, keep: str | None = None) -> Shown:
    """Station 3: the optimised HLO of a `.compile()` result, location tables dropped.

    The text of `compiled.as_text()` without its source-location tables and the `metadata=`
    of each op (the notes say how many lines and ops that was), trimmed for a slide (see
    `trim`). By default only the `HloModule` line and the ENTRY computation are shown: the
    fused computations it calls are counted in a note instead.

    Args:
        compiled: a `jax.jit(f).lower(...).compile()` result.
        max_lines: the most lines to show, or None for all. Defaults to MAX_LINES (14).
        width: the most columns a line may have, or None for no limit. Defaults to WIDTH (96).
        entry_only: if True, show the module line and the ENTRY computation, not the fusion
            bodies and other computations; if False, the whole module. Defaults to True.
        keep: a regular expression for the line(s) the slide is about, shown whole even past
            `max_lines` (see `trim`), or None. Defaults to None.

    Returns:
        A `Shown` titled "HLO (compiled, optimised)", its notes saying what was dropped or cut.

    Raises:
        LookupError: `keep` matches no line of the HLO shown.

    Example:
        >>> def f(x):
        ...     return jnp.sin(x) * 2.0
        >>> h = show_hlo(jax.jit(f).lower(1.0).compile())
        >>> h.lines[1]
        'ENTRY %main.1 (x.1: f32[]) -> f32[] {'
        >>> [line.split(" = ")[0].strip() for line in h.lines[2:-1]]
        ['%x.1', 'ROOT %sine_multiply_fusion']
        >>> h.notes  # doctest: +ELLIPSIS
        ['... location-table lines', 'metadata of ... ops', '1 other computation', ...]
    """
    text, notes = hlo_text(compiled)
    if entry_only:
        blocks = text.split("\n\n")
        entry = [b for b in blocks if b.lstrip().startswith("ENTRY")]
        others = len(blocks) - 1 - len(entry)
        text = "\n".join([blocks[0].split("\n")[0]] + entry)
        if others > 0:
            notes.append(f"{others} other computation{'s' if others > 1 else ''}")
    shown = trim(text, max_lines, width, title="HLO (compiled, optimised)", keep=keep)
    shown.notes = notes + shown.notes
    return shown


def show_cost(compiled) -> Shown:
    """Station 3, in numbers: XLA's cost analysis and the executable's memory analysis.

    One row per number, where the compiled executable reports it: the flops, transcendentals
    and bytes accessed of `compiled.cost_analysis()`, then the argument, output, temp, alias
    and generated-code bytes of `compiled.memory_analysis()`.

    Args:
        compiled: a `jax.jit(f).lower(...).compile()` result.

    Returns:
        A `Shown` titled "cost and memory analysis", one "name   value" line per number
        (a cost the backend does not report is left out).

    Example:
        >>> def f(x):
        ...     return jnp.sin(x) * 2.0
        >>> show_cost(jax.jit(f).lower(jnp.ones(4)).compile())
        cost and memory analysis
        flops                            4
        transcendentals                  4
        bytes accessed                  32
        argument bytes                  16
        output bytes                    16
        temp bytes                       0
        alias bytes                      0
        generated_code bytes             0
    """
    cost = compiled.cost_analysis() or {}
    if isinstance(cost, list):      # older JAX returned one dict per device
        cost = cost[0] if cost else {}
    mem = compiled.memory_analysis()
    rows = [(k, cost[k]) for k in ("flops", "transcendentals", "bytes accessed") if k in cost]
    if mem is not None:
        rows += [(f"{k} bytes", getattr(mem, f"{k}_size_in_bytes"))
                 for k in ("argument", "output", "temp", "alias", "generated_code")]
    text = "\n".join(f"{k:<22}{v:>12,.0f}" for k, v in rows)
    return Shown(text, title="cost and memory analysis")
