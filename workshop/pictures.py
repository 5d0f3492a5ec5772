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
from .palette import FILL, HERE, INK, MUTED, PAPER, TEXT  # palette.py says what each means

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
    box_h = round(px * 2.7) + rows * line_h      # (room under the last line's descenders)
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


def _shown(value) -> str:
    """A value as a box line: a number to 4 digits, an array as its dtype and shape."""
    import numpy as np
    a = np.asarray(value)
    if a.size != 1:
        return f"{a.dtype}{list(a.shape)}"
    s = f"{a.item():.4g}"
    return s + ".0" if a.dtype.kind == "f" and s.lstrip("-").isdigit() else s   # 3.0, not 3


def _evaluated(jaxpr, args) -> list:
    """What each equation bound while core.eval_jaxpr ran `jaxpr` on `args`: the outputs of
    every EvalTrace.process_primitive call, in order (one per equation of a flat jaxpr)."""
    from jax._src import core

    outs, real = [], core.EvalTrace.process_primitive

    def spy(self, prim, tracers, params):
        out = real(self, prim, tracers, params)
        outs.append((prim.name, out if prim.multiple_results else [out]))
        return out

    core.EvalTrace.process_primitive = spy
    try:
        result = core.eval_jaxpr(jaxpr, jaxpr.consts, *args)
    finally:
        core.EvalTrace.process_primitive = real
    if [name for name, _ in outs] != [e.primitive.name for e in jaxpr.eqns]:
        raise ValueError("show_run draws a run at the top level, one bind an equation (no "
                         f"transform around it); the run bound {[n for n, _ in outs]}")
    return outs, result


def show_run(jaxpr, *args) -> Picture:
    """core.eval_jaxpr's environment, filled equation by equation, from a run made here:
    the inputs written first, then each equation reads its inputs from the environment,
    binds its primitive, and writes its output; the result is read from the outvars.

    Args:
        jaxpr: what `jax.make_jaxpr` returns.
        *args: the values of its inputs.

    Returns:
        A `Picture` captioned with the run, its facts: "steps" ((primitive, the name of
        the variable it wrote, its value as drawn) per equation, from the live bind),
        "env" (each variable's name and value as drawn, in the order written) and
        "result" (the values eval_jaxpr returned).

    Raises:
        ValueError: the run bound other primitives than the jaxpr's equations (a transform
            around the call: its trace, not EvalTrace, got the binds).

    Example:
        >>> k = jax.make_jaxpr(lambda a, b: jnp.sin(a) * b)(1.0, 2.0)
        >>> show_run(k, 0.5, 3.0).facts["steps"]
        [('sin', 'c', '0.4794'), ('mul', 'd', '1.438')]
    """
    from jax._src import core

    bound, result = _evaluated(jaxpr, args)
    names = printer_names(jaxpr)
    name = lambda v: _shown(v.val) if isinstance(v, core.Literal) else names.get(v, str(v))
    env = [(name(v), _shown(a)) for v, a in zip(jaxpr.invars, args)]
    boxes = [("inputs", ["write invars"] + [f"{n} = {s}" for n, s in env])]
    arrows, steps = [], []
    for eqn, (prim, outs) in zip(jaxpr.eqns, bound):
        wrote = [(name(v), _shown(o)) for v, o in zip(eqn.outvars, outs)]
        steps += [(prim, n, s) for n, s in wrote]
        env += wrote
        arrows.append(f"{', '.join(n for n, _ in wrote)} = {prim} "
                      f"{' '.join(name(v) for v in eqn.invars)}")
        boxes.append(("env", [f"{n} = {s}" for n, s in env]))
    outs = [name(v) for v in jaxpr.outvars]
    arrows.append("read " + ", ".join(outs))
    boxes.append(("result", [_shown(r) for r in result]))
    picture = flow(boxes, arrows, gap=40, px=20, max_w=300,
                   title="eval_jaxpr: read the inputs, bind the primitive, write the output")
    w, h = (float(v) for v in re.search(r"viewBox='0 0 ([\d.]+) ([\d.]+)'", picture).groups())
    picture = picture.replace(f" width='{w:g}'", f" width='{round(grown(w, h, 360))}'", 1)
    return Picture(picture, f"eval_jaxpr: {_n(len(steps), 'value')} written, then "
                            f"{', '.join(outs)} read", {"steps": steps, "env": env,
                                                        "result": [_shown(r) for r in result]})


def _names(vs, names: dict) -> str:
    """Variables as the printer names them; a literal as its value."""
    from jax._src import core
    return "[" + ", ".join(_shown(v.val) if isinstance(v, core.Literal) else names.get(v, str(v))
                           for v in vs) + "]"


def show_jaxpr_objects(jaxpr, eqn: int = 0) -> Picture:
    """A jaxpr as the Python objects it is, read from the live ones: the Jaxpr's fields, one
    of its equations (a JaxprEqn: primitive, variables, params), that equation's output
    variable (a Var) and its type (the aval). Variables are named as the printer names them.

    Args:
        jaxpr: what `jax.make_jaxpr` returns (a `core.Jaxpr`).
        eqn: the index of the equation to open. Defaults to 0.

    Returns:
        A `Picture` captioned with the path drawn, its facts: "boxes" ((class name, the
        lines drawn) for each object, the jaxpr first) and "path" (the attribute that leads
        from each object to the next).

    Example:
        >>> j = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
        >>> [name for name, _ in show_jaxpr_objects(j, 1).facts["boxes"]]
        ['Jaxpr', 'JaxprEqn', 'Var', 'ShapedArray']
    """
    names = printer_names(jaxpr)
    e = jaxpr.eqns[eqn]
    out = e.outvars[0]
    params = ", ".join(f"{k}: {v}" for k, v in e.params.items())
    boxes = [(type(jaxpr).__name__, [f"constvars: {_names(jaxpr.constvars, names)}",
                                     f"invars: {_names(jaxpr.invars, names)}",
                                     f"eqns: {_n(len(jaxpr.eqns), type(e).__name__)}",
                                     f"outvars: {_names(jaxpr.outvars, names)}",
                                     f"consts: {list(jaxpr.consts)}"]),
             (type(e).__name__, [f"primitive: {e.primitive.name}",
                                 f"invars: {_names(e.invars, names)}",
                                 f"outvars: {_names(e.outvars, names)}",
                                 f"params: {{{params}}}"]),
             (type(out).__name__, [f"printed {names.get(out, str(out))}"]),
             (type(out.aval).__name__, [f"shape: {out.aval.shape}", f"dtype: {out.aval.dtype}",
                                        f"weak_type: {out.aval.weak_type}"])]
    path = [f"eqns[{eqn}]", "outvars[0]", ".aval"]
    picture = flow([(boxes[0][0], ["the record"] + boxes[0][1])] + boxes[1:], path, gap=36,
                   px=20, max_w=330, title="a jaxpr is Python objects: fields, not text")
    w, h = (float(v) for v in re.search(r"viewBox='0 0 ([\d.]+) ([\d.]+)'", picture).groups())
    picture = picture.replace(f" width='{w:g}'", f" width='{round(grown(w, h, 360))}'", 1)
    return Picture(picture, f"{type(jaxpr).__name__} → " + " → ".join(path),
                   {"boxes": boxes, "path": path})


def _rule_name(rule) -> str | None:
    """A rule's function name: through partials and a lowering's LoweringRuleEntry."""
    import functools
    rule = getattr(rule, "rule", rule)
    while isinstance(rule, functools.partial):
        rule = rule.func
    return None if rule is None else getattr(rule, "__name__", type(rule).__name__)


def rule_tables() -> list[tuple[str, str, object]]:
    """(what the rule is for, where it is kept, how to read it for a primitive): the rules
    deck 02 names, on the primitive itself or in the interpreters' tables."""
    from jax._src.interpreters import ad, batching, mlir
    from jax._src.interpreters import partial_eval as pe
    return [("types", "prim.abstract_eval", lambda p: p.abstract_eval),
            ("values", "prim.impl", lambda p: p.impl),
            ("JVP", "ad.primitive_jvps", ad.primitive_jvps.get),
            ("transpose", "ad.primitive_transposes", ad.primitive_transposes.get),
            ("batching", "batching.fancy_primitive_batchers",
             batching.fancy_primitive_batchers.get),
            ("lowering", "mlir._lowerings", mlir._lowerings.get),
            ("staging", "pe.custom_staging_rules", pe.custom_staging_rules.get)]


def show_rules(prim) -> Picture:
    """A primitive and its rules, read from the live objects: the two it holds (abstract_eval
    and impl) and one entry per interpreter's table, keyed by the primitive (JVP, transpose,
    batching, lowering, a custom staging rule); a table with no entry is drawn dashed.

    Args:
        prim: a `core.Primitive` (jax.lax.sin_p).

    Returns:
        A `Picture` captioned with how many rules it has, its facts: "rules" (where each
        rule is kept -> its function's name, or None where the table has no entry).

    Example:
        >>> show_rules(jax.lax.sin_p).facts["rules"]["ad.primitive_jvps"]
        'standard_jvp'
    """
    rows = [(what, where, _rule_name(read(prim))) for what, where, read in rule_tables()]
    px, row_h, top, left_w, gap = 20, 40, 40, 150, 70
    what_w = max(_chars(w, px) for w, _, _ in rows) + 24
    where_w = max(_chars(w, px) for _, w, _ in rows) + 24
    rule_w = max(_chars(r or "no entry", px) for _, _, r in rows) + 24
    x0 = left_w + gap
    width = x0 + what_w + where_w + rule_w + 4
    height = top + len(rows) * row_h + 6
    out = [label(2, 24, f"{prim.name}_p: a name and its rules; in orange, each rule's function",
                 px, font=SANS),
           svg.rect(2, top, left_w, len(rows) * row_h - 8, rx=10, fill=FILL, stroke=INK,
                    stroke_width=2),
           label(2 + left_w / 2, top + len(rows) * row_h / 2, f"{prim.name}_p", px + 4,
                 anchor="middle", bold=True)]
    for i, (what, where, rule) in enumerate(rows):
        y = top + i * row_h
        out += [svg.line(left_w + 4, top + len(rows) * row_h / 2 - 4, x0 - 4, y + 16,
                         stroke=INK if rule else MUTED, stroke_width=2),
                svg.rect(x0, y, width - x0 - 2, row_h - 8, rx=8, fill=FILL if rule else PAPER,
                         stroke=INK if rule else MUTED, stroke_width=2,
                         stroke_dasharray=None if rule else "7 4"),
                label(x0 + 12, y + 24, what, px, font=SANS, bold=True,
                      fill=INK if rule else MUTED),
                label(x0 + what_w, y + 24, where, px, fill=TEXT if rule else MUTED),
                label(x0 + what_w + where_w, y + 24, rule or "no entry", px,
                      fill=HERE if rule else MUTED)]
    picture = svg.svg(width, height, out, shown=grown(width, height, 400))
    n = sum(r is not None for _, _, r in rows)
    return Picture(picture, f"{prim.name}_p: {n} of {len(rows)} rules",
                   {"rules": {where: rule for _, where, rule in rows}})


def _staged(f, args) -> tuple[list, object]:
    """What each primitive reaching the jaxpr trace of `jax.make_jaxpr(f)(*args)` took (a
    custom staging rule's name, or None for the default path) and the equations it wrote
    there, recorded from the live trace; and the jaxpr made."""
    import weakref

    import jax
    from jax._src import core
    from jax._src.interpreters import partial_eval as pe

    calls, mine, real = [], [], pe.DynamicJaxprTrace.process_primitive

    def spy(trace, prim, tracers, params):
        if trace is not (mine or [None])[0]:
            return real(trace, prim, tracers, params)
        before = len(trace.frame.tracing_eqns)
        out = real(trace, prim, tracers, params)
        rule = pe.custom_staging_rules.get(prim)
        wrote = [e() if isinstance(e, weakref.ref) else e     # (held weakly: dead code
                 for e in trace.frame.tracing_eqns[before:]]   # is dropped; these are live)
        calls.append((prim.name, _rule_name(rule), [e.primitive.name for e in wrote if e]))
        return out

    def entered(*a):
        mine.append(core.trace_ctx.trace)
        return f(*a)

    pe.DynamicJaxprTrace.process_primitive = spy
    try:
        jaxpr = jax.make_jaxpr(entered)(*args)
    finally:
        pe.DynamicJaxprTrace.process_primitive = real
    return calls, jaxpr


def show_staging(f, *args) -> Picture:
    """The jaxpr trace's two paths, from a live trace of `f`: each primitive that reached
    your trace's process_primitive, on the path it took (its custom staging rule, or the
    default path: abstract_eval and one equation), and the equations each wrote into your
    jaxpr (a jit marked inline writes its body's).

    Args:
        f: the function to trace, as `jax.make_jaxpr(f)(*args)` does.
        *args: its arguments.

    Returns:
        A `Picture` captioned with the count on each path, its facts: "calls" ((primitive,
        its staging rule's name or None, the equations it wrote) in call order) and "eqns"
        (the jaxpr's primitives).

    Example:
        >>> show_staging(lambda v: jax.lax.cos(jnp.sin(v)), 1.0).facts["calls"]
        [('jit', 'pjit_staging_rule', ['sin']), ('cos', None, ['cos'])]
    """
    calls, jaxpr = _staged(f, args)
    px, line_h = 20, 27
    rule = [f"{p} → {r} → {', '.join(w) or 'nothing'}" for p, r, w in calls if r]
    default = [f"{p} → {', '.join(w)}" for p, r, w in calls if not r]
    eqns = [e.primitive.name for e in jaxpr.eqns]
    bold = lambda t: _chars(t, px + 2) * 1.1 + 30      # a title: bold, 2 px larger
    w1 = bold("process_primitive")
    w2 = max(bold("custom_staging_rules[prim]"), *(_chars(s, px) + 30 for s in rule + default))
    w3 = max(bold("your jaxpr"), *(_chars(s, px) + 30 for s in eqns))
    gap, top = 64, 40
    h_rule = 56 + max(1, len(rule)) * line_h
    h_def = 56 + max(1, len(default)) * line_h
    height = top + h_rule + 24 + h_def + 8
    x2, x3 = 2 + w1 + gap, 2 + w1 + gap + w2 + gap
    width = x3 + w3 + 4
    mid = top + (height - top) / 2

    def box(x, y, w, h, title, lines, late=False):
        return [svg.rect(x, y, w, h, rx=10, fill=PAPER if late else FILL, stroke=INK,
                         stroke_width=2),
                label(x + 14, y + 30, title, px + 2, bold=True),
                *(label(x + 14, y + 30 + (k + 1) * line_h, s, px, fill=TEXT)
                  for k, s in enumerate(lines or ["none here"]))]

    def arrow(xa, ya, xb, yb):
        return svg.path(f"M{xa:g},{ya:g} C{(xa + xb) / 2:g},{ya:g} {(xa + xb) / 2:g},{yb:g} "
                        f"{xb:g},{yb:g}", fill="none", stroke=HERE, stroke_width=3,
                        marker_end="url(#staghead)")
    y_def = top + h_rule + 24
    out = [label(2, 24, "your jaxpr trace: a custom staging rule, or the default path",
                 px, font=SANS),
           *box(2, mid - 45, w1, 90, "process_primitive", ["of your trace"]),
           *box(x2, top, w2, h_rule, "custom_staging_rules[prim]", rule),
           *box(x2, y_def, w2, h_def, "default_process_primitive", default),
           *box(x3, top, w3, height - top - 8, "your jaxpr", eqns, late=True),
           arrow(2 + w1, mid, x2 - 2, top + h_rule / 2),
           arrow(2 + w1, mid, x2 - 2, y_def + h_def / 2),
           arrow(x2 + w2, top + h_rule / 2, x3 - 2, mid),
           arrow(x2 + w2, y_def + h_def / 2, x3 - 2, mid)]
    picture = svg.svg(width, height, out, defs=[svg.arrowhead("staghead", HERE, 14)],
                      shown=grown(width, height, 420))
    return Picture(picture, f"staging: {len(rule)} by a custom rule, {len(default)} by the "
                            f"default path", {"calls": calls, "eqns": eqns})


def _bind_calls(f, args) -> list:
    """The calls of bind's path while `jax.make_jaxpr(f)(*args)` runs, in order, as (name,
    the primitive, the trace's class), read from the live frames (sys.setprofile)."""
    import sys

    import jax
    from jax._src import core
    from jax._src.interpreters import partial_eval as pe
    path = {core.Primitive.bind.__code__: "Primitive.bind",
            core.Primitive.bind_with_trace.__code__: "bind_with_trace",
            pe.DynamicJaxprTrace.process_primitive.__code__: "process_primitive",
            pe.DynamicJaxprTrace.default_process_primitive.__code__: "default_process_primitive"}
    seen = []

    def watch(frame, event, _):
        if event == "call" and frame.f_code in path:
            loc = frame.f_locals
            prim = loc.get("primitive", loc.get("self"))
            trace = loc.get("trace", loc.get("self"))
            seen.append((path[frame.f_code], getattr(prim, "name", "?"), type(trace).__name__))

    old = sys.getprofile()
    sys.setprofile(watch)
    try:        # (a fresh function: f's own jaxpr may be cached, and then nothing binds)
        jaxpr = jax.make_jaxpr(lambda *a: f(*a))(*args)
    finally:
        sys.setprofile(old)
    return seen, jaxpr


def show_bind(f, *args) -> Picture:
    """The path one bind takes, recorded from the live frames while `jax.make_jaxpr(f)(*args)`
    traces: Primitive.bind asks for the current trace, bind_with_trace hands the primitive to
    it, the jaxpr trace's process_primitive finds no staging rule, and its default path types
    the call and records an equation. Drawn for the first primitive bound.

    Args:
        f: a function whose first operation binds a primitive with no staging rule
            (`jax.lax.sin`; a jnp function is a jit, whose rule inlines it).
        *args: its arguments.

    Returns:
        A `Picture` captioned with the path, its facts: "calls" ((step, primitive, the
        trace's class) of the first bind, in call order) and "eqns" (the jaxpr's primitives).

    Example:
        >>> [step for step, _, _ in show_bind(jax.lax.sin, 1.0).facts["calls"]]
        ['Primitive.bind', 'bind_with_trace', 'process_primitive', 'default_process_primitive']
    """
    seen, jaxpr = _bind_calls(f, args)
    first = [c for c in seen if c[1] == seen[0][1]][:4] if seen else []
    if [c[0] for c in first] != ["Primitive.bind", "bind_with_trace", "process_primitive",
                                 "default_process_primitive"]:
        raise ValueError(f"show_bind draws a bind on the default path; the first went "
                         f"{[c[0] for c in first]}")
    prim, trace = first[0][1], first[1][2]
    eqns = [e.primitive.name for e in jaxpr.eqns]
    out = jaxpr.eqns[0].outvars[0].aval.str_short() if jaxpr.eqns else "?"
    boxes = [("Primitive.bind", [f"{prim}_p.bind(x)", "reads trace_ctx"]),
             ("bind_with_trace", [trace]),
             ("process_primitive", [f"no staging rule for {prim}"]),
             ("default_process_primitive", ["abstract_eval types it", f"as {out}, then",
                                            f"→ jaxpr: {', '.join(eqns)}"])]
    picture = flow(boxes, ["the current trace", "trace.process_primitive",
                           "the default path"], gap=28, px=20, max_w=330,
                   title=f"one bind of {prim}_p, as it ran: ask the current trace")
    w, h = (float(v) for v in re.search(r"viewBox='0 0 ([\d.]+) ([\d.]+)'", picture).groups())
    picture = picture.replace(f" width='{w:g}'", f" width='{round(grown(w, h, 300))}'", 1)
    return Picture(picture, "bind: " + " → ".join(c[0] for c in first),
                   {"calls": first, "eqns": eqns})
