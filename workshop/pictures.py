"""Pictures for slides, drawn from live JAX objects: inline SVG, no files, no web fonts.

A `Picture` shows as SVG in Jupyter, RISE and the PDF handouts; its `facts` are the numbers and
names it drew, so a hidden check cell can pin what the picture claims. Sizes are the slide's
own pixels: a slide is 1280×720 and a picture scales down to at most SLIDE_W wide, so its text
is drawn at 18 px or more after that scaling (`Picture.text_px`).

Here: the pictures' style and the four stations; the jaxpr pictures are in dataflow.py, the
others in diagrams.py. What they draw is read by artefacts.py, and built with svg.py.
"""
from __future__ import annotations

import inspect
import re
from collections import Counter
from dataclasses import dataclass, field

from . import svg
from .artefacts import hlo_entry, stablehlo_ops  # deck 01 imports hlo_entry from here
from .artefacts import printer_names as printer_names  # readers that lived here stay
from .artefacts import replica_groups as replica_groups  # importable here (the tests)
from .config import MIN_PX as MIN_PX  # the style's sizes: dataflow and diagrams draw
from .config import SLIDE_W  # with them (workshop/config.py says why each)
from .palette import FILL, HERE, INK, TEXT  # the colours: palette.py says what each means

MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
# the slides' one sans face, the RISE theme's Source Sans Pro (decks/rise.css): a picture's
# captions and a chart's words were in DejaVu Sans beside it, a second sans on the slide
SANS = "Source Sans Pro, Helvetica, Arial, sans-serif"
FACE = "Source Sans Pro"
EM = 0.607        # width of one monospace character, in font sizes (DejaVu Sans Mono: 0.602)


# matplotlib's defaults, sized for a projector: at 120 dpi a point is 1.67 px, so every text of
# a chart is 18 px or more where the slide shows the image at its own size (1280×720)
CHART_RC = {"figure.dpi": 120, "font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12,
            "xtick.labelsize": 11, "ytick.labelsize": 11, "legend.fontsize": 11,
            "lines.linewidth": 2.5, "axes.grid": True, "grid.alpha": 0.3,
            "axes.spines.top": False, "axes.spines.right": False}


def projector_charts() -> None:
    """Charts drawn after the setup cell read from the back of the room (matplotlib only; the
    kit declares it, but a kernel without it just skips this)."""
    try:
        import matplotlib
    except ImportError:
        return
    from .palette import CHART_CYCLE  # the series in the kit's colours, not matplotlib's
    # the words in the slides' face (a glyph it lacks, ∇, from DejaVu Sans)
    face = {"font.family": [FACE, "DejaVu Sans"]} if _slide_faces() else {}
    matplotlib.rcParams.update({**CHART_RC, **face,
                                "axes.prop_cycle": matplotlib.cycler(color=CHART_CYCLE)})


def _slide_faces() -> list[str]:
    """The slides' face given to matplotlib: the Source Sans Pro files jupyterlab-rise ships
    (the kit's environment has it, offline; the same files the printer uses). [] where it is
    not installed (an attendee's plain venv): the charts keep matplotlib's DejaVu Sans."""
    import importlib.util
    from pathlib import Path

    from matplotlib import font_manager, ft2font
    spec = importlib.util.find_spec("jupyterlab_rise")   # (found, not imported)
    if spec is None or not spec.origin:
        return []
    found = []
    for ttf in sorted(Path(spec.origin).parent.glob("static/*.ttf")):
        try:
            family = ft2font.FT2Font(str(ttf)).family_name
        except (OSError, RuntimeError, ValueError):
            continue
        if family.startswith(FACE):
            font_manager.fontManager.addfont(str(ttf))
            found.append(str(ttf))
    return found


@dataclass
class Picture:
    """A picture for a slide, drawn from live JAX objects: inline SVG, and what it drew.

    What every `show_*` picture function returns. Jupyter, RISE and the PDF handouts show its
    SVG (no files, no web fonts); a terminal, or a reader without SVG, shows its caption.
    Its `facts` are the numbers and names it drew, so a hidden check cell can pin what the
    picture claims. Sizes are the slide's own pixels: a slide is 1280×720, and a picture
    wider than SLIDE_W (1184 px) is scaled down to it.

    Attributes:
        svg: the SVG document, one `<svg …>` element with a viewBox and a width.
        caption: one line that says what the picture shows (its repr and str).
        facts: what the picture drew, by name (each picture function says which). Defaults
            to an empty dict.

    Its methods: `size(slide_w=SLIDE_W)` is its (width, height) in px as shown on a slide
    `slide_w` px wide; `text_px(slide_w=SLIDE_W)` is its smallest text in px as shown there
    (18 or more reads from the back row).

    Example:
        >>> pic = Picture("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 100 50' "
        ...               "width='200'><text font-size='12'>hi</text></svg>", "a greeting")
        >>> pic
        a greeting
        >>> pic.size(), pic.text_px()
        ((200.0, 100.0), 24.0)
        >>> tree = show_tree([1.0, 2.0])
        >>> type(tree).__name__, tree.facts["nodes"], tree._repr_svg_().startswith("<svg")
        ('Picture', 3, True)
    """
    svg: str
    caption: str
    facts: dict = field(default_factory=dict)

    def _repr_svg_(self) -> str:
        return self.svg

    def __repr__(self) -> str:       # a terminal, or a reader without SVG
        return self.caption

    __str__ = __repr__

    def _scale(self, slide_w: float) -> tuple[float, float, float]:
        """(viewBox width, height, px on the slide per unit): the SVG is `width` px wide
        (its natural size, or the size it asks to be shown at), scaled down to the slide's
        width (its style says max-width:100%)."""
        head = self.svg.split(">", 1)[0]
        w, h = (float(v) for v in re.search(r"viewBox='0 0 ([\d.]+) ([\d.]+)'", head).groups())
        shown = float(re.search(r" width='([\d.]+)'", head).group(1))
        return w, h, min(shown, slide_w) / w

    def size(self, slide_w: float = SLIDE_W) -> tuple[float, float]:
        """(width, height) as shown on a slide `slide_w` px wide."""
        w, h, k = self._scale(slide_w)
        return w * k, h * k

    def text_px(self, slide_w: float = SLIDE_W) -> float:
        """The smallest text of the picture, in px as shown on a slide `slide_w` px wide."""
        from xml.etree import ElementTree
        sizes = [float(t.get("font-size")) for t in ElementTree.fromstring(self.svg).iter()
                 if t.get("font-size")]
        return min(sizes) * self._scale(slide_w)[2]


# a graph shown alone under its line of code: as tall as that slide leaves room for (the
# talk path's five, 400-434 px drawn, had 84-112 px left under them)
GRAPH_TALL = 470


def grown(width: float, height: float, tall: float = 400) -> float:
    """The width to show a picture at that would sit small on its slide (a 636 × 242 mesh under
    one line of code): as wide as the slide, or as tall as `tall`, whichever comes first;
    never smaller than its natural size."""
    return width * max(1.0, min(SLIDE_W / width, tall / height))


def label(x, y, content, px: float, *, font: str = MONO, fill: str = INK, anchor: str = "",
          bold: bool = False, **extra) -> svg.Element:
    """Text in the pictures' style; `content` is a string, or a list of strings and tspans."""
    content = [content] if isinstance(content, str) else content
    return svg.text(x, y, *content, text_anchor=anchor or None, font_family=font, font_size=px,
                    font_weight="bold" if bold else None, fill=fill, **extra)


def _chars(text: str, px: float) -> float:
    """Width of `text` in monospace at `px`."""
    return len(text) * EM * px


def _fit(text: str, width: float, px: float = 15) -> str:
    """Cut `text` to what fits in `width` pixels of `px` monospace, with a visible …."""
    n = max(1, int(width // (EM * px)))
    return text if len(text) <= n else text[: n - 1] + "…"


def _list(names: list[str], room: int) -> list[str]:
    """`room` lines for a list of names: repeated names counted, the rest summarised."""
    counted = [f"{n} ×{k}" if k > 1 else n for n, k in Counter(names).items()]
    if len(counted) <= room:
        return counted
    return counted[: room - 1] + [f"+{len(counted) - room + 1} more"]


def _n(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


def _name_and_params(fn) -> tuple[str, str]:
    name = getattr(fn, "__name__", type(fn).__name__)
    try:
        return name, ", ".join(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return name, "…"


def flow(boxes: list[tuple[str, list[str]]], arrows: list[str], box_w: int = 0,
         gap: int = 34, title: str = "", px: float = 20, max_w: float = 330) -> str:
    """A left-to-right chain of boxes (a title and detail lines each). Arrow i's label is
    written, in orange (look here), as the first line of box i + 1: the step that makes that
    box (the first box's own first line is orange too). Each box
    is as wide as its lines at `px` (at least `box_w`, at most `max_w`; longer lines are cut
    with …)."""
    lines_of = [([arrows[i - 1]] if 0 < i <= len(arrows) else []) + lines
                for i, (_, lines) in enumerate(boxes)]
    widths = [min(max_w, max(box_w, _chars(name, px + 2) + 28,
                             *(_chars(s, px) + 24 for s in lines)))
              for (name, _), lines in zip(boxes, lines_of)]
    line_h = round(px * 1.35)
    rows = max(len(lines) for lines in lines_of)
    top = round(px * 2.2) if title else 8
    box_h = round(px * 2.3) + rows * line_h
    width = sum(widths) + (len(boxes) - 1) * gap + 4
    out = [label(2, px * 1.3, title, px, font=SANS)] if title else []
    x = 2
    for i, ((name, _), lines, w) in enumerate(zip(boxes, lines_of, widths)):
        out.append(svg.rect(str(x), top, w, box_h, rx=10, fill=FILL, stroke=INK, stroke_width=2))
        out.append(label(x + w / 2, top + px * 1.5, name, px + 2, font=SANS, anchor="middle",
                         bold=True))
        out += [label(x + 12, top + px * 2.3 + (j + 0.7) * line_h, _fit(line, w - 16, px), px,
                      fill=HERE if j == 0 else TEXT) for j, line in enumerate(lines)]
        if i + 1 < len(boxes):
            x0, x1, y = x + w + 3, x + w + gap - 3, top + box_h / 2
            out.append(svg.line(x0, y, x1, y, stroke=INK, stroke_width=3,
                                marker_end="url(#flowhead)"))
        x += w + gap
    return svg.svg(width, top + box_h + 8, out, defs=[svg.arrowhead("flowhead", INK, 14)])


def _result(result) -> tuple[list[str], list[str]]:
    """The result's types, and its value when it is one number (not a PRNG key)."""
    import jax
    import numpy as np

    leaves = jax.tree.leaves(result)
    shown = [f"{jax.typeof(v).str_short(short_dtypes=True)}" for v in leaves]
    if len(leaves) == 1 and np.shape(leaves[0]) == ():
        try:
            return shown, [f"{np.asarray(leaves[0]).item():.6g}"]
        except (TypeError, ValueError):          # a PRNG key, or another opaque type
            pass
    return shown, []


def show_stations(fn, *args, room: int = 4) -> Picture:
    """The four stations of `jax.jit(fn)` on `args`, each box showing what it really produced.

    Traces, lowers, compiles and calls `jax.jit(fn)` on `args`, and draws the chain Python →
    jaxpr → StableHLO → HLO → result, each box listing what that station really holds: the
    jaxpr's primitives, @main's top-level ops, the names of the compiled ENTRY's
    instructions besides its parameters, the result's types (and value, for a scalar). A
    name repeated is counted (mul ×2); a list longer than `room` lines ends "+N more".

    Args:
        fn: the function to jit (its name and parameters head the Python box).
        *args: the arguments to trace it with and call it on.
        room: the most lines each box lists. Defaults to 4.

    Returns:
        A `Picture` captioned with the whole chain, its facts: "equations" (the jaxpr's
        primitives, in order), "stablehlo" (@main's ops), "hlo" (the ENTRY's instruction
        names besides its parameters) and "result" (the result's leaves' types).

    Example:
        >>> def f(x):
        ...     return jnp.sin(x) * 2.0
        >>> pic = show_stations(f, 1.0)
        >>> pic.facts["equations"], pic.facts["result"]
        (['sin', 'mul'], ['f32[]'])
        >>> pic  # doctest: +ELLIPSIS
        jax.jit(f): Python → jaxpr (2 equations) → StableHLO (3 ops) → HLO (...) → f32[]
    """
    import jax

    traced = jax.jit(fn).trace(*args)
    lowered = traced.lower()
    compiled = lowered.compile()
    result = compiled(*args)
    prims = [e.primitive.name for e in traced.jaxpr.eqns]
    entry = hlo_entry(compiled)
    ops = stablehlo_ops(lowered)
    hlo = [name for name, op in entry if op != "parameter"]
    n_params = len(entry) - len(hlo)
    shown, value = _result(result)
    name, params = _name_and_params(fn)
    facts = {"equations": prims, "stablehlo": ops, "hlo": hlo, "result": shown}
    boxes = [
        ("Python", [f"{name}({params})", "traced once", "per signature"]),
        ("jaxpr", [_n(len(prims), "equation")] + _list(prims, room)),
        ("StableHLO", [_n(len(ops), "op") + " in @main"] + _list(ops, room)),
        ("HLO", [f"ENTRY, {_n(n_params, 'param')} +"] + _list(hlo, room)),
        ("result", shown[:room] + value),
    ]
    picture = flow(boxes, [".trace()", ".lower()", ".compile()", "call"],
                   title=f"jax.jit({name}): four stations, each hands you an artefact", px=21,
                   max_w=290)
    caption = (f"jax.jit({name}): Python → jaxpr ({_n(len(prims), 'equation')}) → "
               f"StableHLO ({_n(len(ops), 'op')}) → HLO ({', '.join(hlo)}) → "
               f"{', '.join(shown)}")
    return Picture(picture, caption, facts)


# what each kind of trace does with a primitive, as the trace chain says it (core.py and the
# interpreters: a class not named here is drawn with its name only)
TRACE_ROLES = {
    "EvalTrace": "runs each primitive now",
    "DynamicJaxprTrace": "records an equation",
    "BatchTrace": "batches, then binds",
    "JVPTrace": "adds a tangent, binds",
    "LinearizeTrace": "primal now, tangent staged",
}


def _trace_lines(trace) -> list[str]:
    """What a trace box says: its role, and what the live object holds (vmap's axis size,
    the equations a jaxpr trace has recorded so far, whether it has a parent)."""
    name = type(trace).__name__
    lines = [TRACE_ROLES.get(name, "")]
    axis = getattr(trace, "axis_data", None)
    if axis is not None:
        lines.append(f"axis size {axis.size}")
    frame = getattr(trace, "frame", None)
    if frame is not None and hasattr(frame, "eqns"):
        lines.append(_n(len(frame.eqns), "equation") + " so far")
    if not hasattr(trace, "parent_trace"):
        lines.append("no parent_trace")
    return [line for line in lines if line]


def show_trace_chain(trace) -> Picture:
    """A trace and the chain of its parents, drawn from the live objects: the trace first,
    then each `parent_trace`, to a trace that has none (EvalTrace, the outermost). No stack
    is searched: the current trace is one object, and this chain is how it reaches outward.

    Args:
        trace: a live trace (`core.trace_ctx.trace` inside a transformed function, or a
            tracer's `_trace`).

    Returns:
        A `Picture` captioned with the chain, its facts: "chain" (each trace's class name,
        the given one first).

    Example:
        >>> from jax._src import core
        >>> seen = []
        >>> _ = jax.jit(jax.vmap(lambda x: seen.append(core.trace_ctx.trace) or x))(jnp.ones(2))
        >>> show_trace_chain(seen[0])
        trace chain: BatchTrace → DynamicJaxprTrace → EvalTrace
    """
    chain, t = [], trace
    while t is not None and len(chain) < 8:
        chain.append(t)
        t = getattr(t, "parent_trace", None)
    names = [type(t).__name__ for t in chain]
    boxes = [(name, (["the current trace"] if i == 0 else []) + _trace_lines(t))
             for i, (name, t) in enumerate(zip(names, chain))]
    picture = flow(boxes, ["parent_trace"] * (len(boxes) - 1), gap=44, px=20, max_w=360,
                   title="one current trace; each reaches outward through its parent_trace")
    w, h = (float(v) for v in re.search(r"viewBox='0 0 ([\d.]+) ([\d.]+)'", picture).groups())
    picture = picture.replace(f" width='{w:g}'", f" width='{round(grown(w, h, 300))}'", 1)
    return Picture(picture, "trace chain: " + " → ".join(names), {"chain": names})


def _recording(wf, seen: list):
    """wf's function rebuilt as call_wrapped composes it, each layer recording what it is
    given and returns: the outermost transformation first, the function itself last."""
    from functools import partial

    def rec(name, fn):
        def layer(*args, **kwargs):
            k = len(seen)
            seen.append([name, args, None])
            seen[k][2] = out = fn(*args, **kwargs)
            return out
        return layer

    def core(*args, **kwargs):
        return wf.f(*args, **kwargs, **dict(wf.params))

    f = rec(getattr(wf.f, "__name__", "f"), core)
    for (gen, static), store in reversed(list(zip(wf.transforms, wf.stores))):
        inner = partial(gen, f, *static) if store is None else partial(gen, f, store, *static)
        f = rec(gen.__name__, inner)
    return f


def show_transforms(wf, *args) -> Picture:
    """A linear_util WrappedFun as the stack it is: its transformations, outermost first (the
    last one added), then the function they wrap; with `args`, each layer says what it was
    given and what it returned, from a call made here (the same composition call_wrapped
    runs, each layer recording).

    Args:
        wf: a `lu.WrappedFun`.
        *args: arguments to call it with, or none to draw the stack alone.

    Returns:
        A `Picture` captioned with the stack, its facts: "stack" (the transformations'
        names, outermost first, then the function's) and, with `args`, "calls" ((layer, the
        args it got, what it returned) for each layer, in call order).

    Example:
        >>> from jax._src import api_util, linear_util as lu
        >>> @lu.transformation2
        ... def double(f, x): return f(x * 2)
        >>> dbg = api_util.debug_info("demo", lambda x: x, (1,), {})
        >>> show_transforms(double(lu.wrap_init(lambda x: x, debug_info=dbg)), 3).facts["calls"]
        [('double', (3,), 6), ('<lambda>', (6,), 6)]
    """
    names = [gen.__name__ for gen, _ in wf.transforms] + [getattr(wf.f, "__name__", "f")]
    seen: list = []
    if args:
        _recording(wf, seen)(*args)
    shown = lambda a: ", ".join(map(str, a))
    boxes = [(name, [f"returns {out}"] if args else []) for name, _, out in seen] or \
        [(name, []) for name in names]
    boxes = [(name, lines + (["your function"] if i == len(names) - 1 else
                             ["the last added" if i == 0 else "transformation"]))
             for i, (name, lines) in enumerate(boxes)]
    arrows = [f"gets {shown(a)}" for _, a, _ in seen] if args else ["calls"] * len(names)
    picture = flow([("call_wrapped", [f"args {shown(args)}" if args else "your args"])] + boxes,
                   arrows, gap=40, px=20, max_w=300,
                   title="call_wrapped: the outermost transformation runs first")
    w, h = (float(v) for v in re.search(r"viewBox='0 0 ([\d.]+) ([\d.]+)'", picture).groups())
    picture = picture.replace(f" width='{w:g}'", f" width='{round(grown(w, h, 300))}'", 1)
    facts = {"stack": names}
    if args:
        facts["calls"] = [(name, a, out) for name, a, out in seen]
    return Picture(picture, "WrappedFun: " + " → ".join(names), facts)
