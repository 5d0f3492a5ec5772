"""Pictures for slides, drawn from live JAX objects: inline SVG, no files, no web fonts.

A `Picture` shows as SVG in Jupyter, RISE and the PDF handouts; its `facts` are the numbers and
names it drew, so a hidden check cell can pin what the picture claims. Sizes are the slide's
own pixels: a slide is 1280×720 and a picture scales down to at most SLIDE_W wide, so its text
is drawn at 18 px or more after that scaling (`Picture.text_px`).

What they draw is read by artefacts.py, and built with svg.py's elements.
"""
from __future__ import annotations

import inspect
import math
import re
from collections import Counter
from dataclasses import dataclass, field

from . import svg
from .artefacts import (
    JaxprGraph,
    batch_dims,
    check_split,
    collective_groups,
    hlo_entry,
    jaxpr_graph,
    stablehlo_ops,
)
from .artefacts import printer_names as printer_names  # the readers, where decks found them
from .artefacts import replica_groups as replica_groups

INK, FILL, ACCENT = "#1f3b57", "#eef4fb", "#b5651d"
UNKNOWN_FILL = "#fdebd9"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
SANS = "DejaVu Sans, Helvetica, Arial, sans-serif"
EM = 0.607        # width of one monospace character, in font sizes (DejaVu Sans Mono: 0.602)
SLIDE_W = 1184    # the widest a picture is shown on a 1280×720 slide
MIN_PX = 18       # the smallest text a picture draws, at that width


@dataclass
class Picture:
    svg: str
    caption: str
    facts: dict = field(default_factory=dict)

    def _repr_svg_(self) -> str:
        return self.svg

    def __repr__(self) -> str:       # a terminal, or a reader without SVG
        return self.caption

    __str__ = __repr__

    def size(self, slide_w: float = SLIDE_W) -> tuple[float, float]:
        """(width, height) as shown on a slide `slide_w` px wide: natural size, or scaled
        down to the slide's width (the SVG's style says max-width:100%)."""
        w, h = (float(v) for v in re.search(r"viewBox='0 0 ([\d.]+) ([\d.]+)'",
                                              self.svg).groups())
        k = min(1.0, slide_w / w)
        return w * k, h * k

    def text_px(self, slide_w: float = SLIDE_W) -> float:
        """The smallest text of the picture, in px as shown on a slide `slide_w` px wide."""
        from xml.etree import ElementTree
        root = ElementTree.fromstring(self.svg)
        w = float(root.get("viewBox").split()[2])
        sizes = [float(t.get("font-size")) for t in root.iter() if t.get("font-size")]
        return min(sizes) * min(1.0, slide_w / w)


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
    written, in orange, as the first line of box i + 1: the step that makes that box (the
    first box's own first line is orange too). Each box
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
                      fill=ACCENT if j == 0 else "#222") for j, line in enumerate(lines)]
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
    """The four stations of `jax.jit(fn)` on `args`, each box showing what it really produced:
    the jaxpr's primitives, @main's top-level ops, the names of the compiled ENTRY's
    instructions besides its parameters, the result's types (and value, for a scalar)."""
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


# --------------------------------------------------------------------------- jaxpr graphs

@dataclass
class _Layout:
    """Where a JaxprGraph's boxes go: box(c, r) -> (x, y, w, h); route(edge) -> a path's points
    (corners rounded when drawn, or a cubic when `curve`); the fonts; the size."""
    width: float
    height: float
    box: object
    route: object
    big: float
    small: float


def _layout_right(g: JaxprGraph, box_w: float, gap: float, top: float) -> _Layout:
    """Columns left to right, each as wide as its text. An edge to the next column is a curve
    inside the gap between them; an edge that skips columns turns into the nearest gap
    between rows (there are no boxes there), runs along it, and turns back in the gap before
    its target: it never runs underneath a box."""
    big = small = MIN_PX
    box_h, vgap = 60, 30
    widths = [max(box_w, *(max(_chars(t, big), *(_chars(s, small) for s in lines)) + 16
                           for t, lines, _ in column)) for column in g.columns]
    xs = [2 + sum(widths[:c]) + c * gap for c in range(len(widths))]
    rows = max(len(c) for c in g.columns)
    y0 = top + vgap / 2 + 2
    row_y = lambda r: y0 + r * (box_h + vgap)

    def box(c, r):
        return xs[c], row_y(r), widths[c], box_h

    def route(edge):
        (c0, r0), (c1, r1) = edge[0], edge[1]
        x0, ya, w0, _ = box(c0, r0)
        x1, yb, _, _ = box(c1, r1)
        a, b = (x0 + w0, ya + box_h / 2), (x1 - 2, yb + box_h / 2)
        if c1 == c0 + 1:
            return "curve", [a, b]
        mid = (a[1] + b[1]) / 2
        lane = min((row_y(k) - vgap / 2 for k in range(rows + 1)), key=lambda y: abs(y - mid))
        left, right = xs[c0 + 1] - gap / 2, xs[c1] - gap / 2
        return "lines", [a, (left, a[1]), (left, lane), (right, lane), (right, b[1]), b]

    width = xs[-1] + widths[-1] + 2
    height = row_y(rows) - vgap / 2 + 4
    return _Layout(width, height, box, route, big, small)


def _layout_down(g: JaxprGraph, top: float, min_width: float) -> _Layout:
    """Levels top to bottom, each level's boxes centred, larger type: for a short jaxpr on a
    slide. An edge to the next level is a curve in the gap between them; one that skips levels
    leaves downwards into that gap, runs left of every box, and comes back along the gap
    above its target."""
    box_w, box_h, across, along, big, small = 270, 56, 30, 28, 20, 18
    rows = max(len(c) for c in g.columns)
    span = rows * box_w + (rows - 1) * across
    pad = 40                       # the lane, left of every box, for edges that skip levels
    width = max(pad + span + 4, min_width)

    def box(c, r):
        n = len(g.columns[c])
        left = (span - (n * box_w + (n - 1) * across)) / 2
        return pad + left + r * (box_w + across), top + 4 + c * (box_h + along), box_w, box_h

    def route(edge):
        (c0, r0), (c1, r1) = edge[0], edge[1]
        xa, ya, _, _ = box(c0, r0)
        xb, yb, _, _ = box(c1, r1)
        if c1 == c0 + 1:
            return "curve", [(xa + box_w / 2, ya + box_h), (xb + box_w / 2, yb - 2)]
        a, b = (xa + box_w / 4, ya + box_h), (xb + box_w / 4, yb - 2)   # beside the others
        lane = pad / 2
        below, above = a[1] + along / 2, b[1] - along / 2 + 2
        return "lines", [a, (a[0], below), (lane, below), (lane, above), (b[0], above), b]

    height = top + len(g.columns) * (box_h + along) - along + 8
    return _Layout(width, height, box, route, big, small)


def _toward(p, q, k: float) -> tuple[float, float]:
    """The point `k` from p toward q, at most halfway."""
    dist = math.dist(p, q)
    t = min(k, dist / 2) / dist if dist else 0
    return p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t


def _path(kind: str, pts: list, down: bool, r: float = 12) -> str:
    """SVG path data: a cubic from pts[0] to pts[1] leaving and entering along the layout's
    direction, or straight lines through pts with corners rounded by `r`."""
    (x0, y0) = pts[0]
    if kind == "curve":
        (x1, y1) = pts[1]
        if down:
            m = (y0 + y1) / 2
            return f"M{x0:g},{y0:g} C{x0:g},{m:g} {x1:g},{m:g} {x1:g},{y1:g}"
        m = (x0 + x1) / 2
        return f"M{x0:g},{y0:g} C{m:g},{y0:g} {m:g},{y1:g} {x1:g},{y1:g}"
    d = [f"M{x0:g},{y0:g}"]
    for (pa, pb, pc) in zip(pts, pts[1:], pts[2:]):
        s, e = _toward(pb, pa, r), _toward(pb, pc, r)
        d.append(f"L{s[0]:g},{s[1]:g} Q{pb[0]:g},{pb[1]:g} {e[0]:g},{e[1]:g}")
    d.append(f"L{pts[-1][0]:g},{pts[-1][1]:g}")
    return " ".join(d)


def _draw_graph(g: JaxprGraph, lay: _Layout, down: bool, cut: bool, mirror: bool = False,
                colour: str = INK, head: str = "graphhead", dy: float = 0) -> list:
    """The boxes and edges of a laid-out graph (orange and dashed: unknown until later when
    `cut`; thick orange: an edge that crosses the cut). `mirror` flips it left to right, so
    it reads right to left; `dy` moves it down."""
    fx = (lambda x: lay.width - x) if mirror else (lambda x: x)
    out = []
    for edge in g.edges:
        kind, pts = lay.route(edge)
        d = _path(kind, [(fx(x), y + dy) for x, y in pts], down)
        out.append(svg.path(d, fill="none", stroke=ACCENT if edge[3] else colour,
                            stroke_width=4 if edge[3] else 1.8, marker_end=f"url(#{head})"))
    for c, column in enumerate(g.columns):
        for r, (title, lines, _) in enumerate(column):
            x, y, w, h = lay.box(c, r)
            x, y = (fx(x + w) if mirror else x), y + dy
            late = cut and g.late.get((c, r), False)
            end = c in (0, g.out_col)
            out.append(svg.rect(x, y, w, h, rx=8,
                                fill="#fff" if end else UNKNOWN_FILL if late else FILL,
                                stroke=ACCENT if late else INK, stroke_width=2,
                                stroke_dasharray="7 4" if late else None))
            out.append(label(x + w / 2, y + lay.big + 6, _fit(title, w - 12, lay.big),
                             lay.big, anchor="middle", bold=True, fill=ACCENT if end else INK))
            out.append(label(x + w / 2, y + lay.big + lay.small + 13,
                             _fit(lines[0], w - 12, lay.small), lay.small, anchor="middle",
                             fill="#222"))
    return out


def _jaxpr_of(x):
    """The core.Jaxpr to draw: `x` itself (what jax.make_jaxpr returns: one class, its consts
    attached) or the one a jit trace holds (jax.jit(f).trace(...).jaxpr)."""
    from jax._src import core

    jaxpr = x if isinstance(x, core.Jaxpr) else getattr(x, "jaxpr", None)
    if not isinstance(jaxpr, core.Jaxpr):
        raise TypeError(f"show_graph needs a jaxpr (what jax.make_jaxpr returns) or a jit "
                        f"trace, not a {type(x).__name__}")
    return jaxpr


def show_graph(jaxpr, down: bool = False, box_w: int = 110, gap: int = 44,
               unknowns: list[bool] | None = None) -> Picture:
    """A jaxpr as the dataflow graph it is: inputs on the left, one box per equation in the
    column after the last equation it reads from, the outputs on the right. Each box names
    the variable it defines and its type (~ marks a weak type, which the text form hides);
    a literal is written in the box that uses it: add(·, 2.0). down=True draws the levels top to
    bottom, with larger type: for a short jaxpr on a slide.

    unknowns (one bit per input; the consts the jaxpr carries are known) draws partial
    evaluation's cut: an equation is unknown when any input is, known ones stay blue, unknown
    ones are orange, and each known value an unknown equation reads is a residual (a thick
    orange arrow). The split drawn is checked against pe.partial_eval_jaxpr_nounits (the
    primitives on each side, the number of residuals); a disagreement raises, as for a nested
    jit, cond or scan, which pe splits inside."""
    inner = _jaxpr_of(jaxpr)
    if unknowns is not None and len(unknowns) != len(inner.invars):
        raise ValueError(f"unknowns has {len(unknowns)} bit(s); the jaxpr has "
                         f"{len(inner.invars)} input(s)")
    g = jaxpr_graph(inner, unknowns)
    cut = unknowns is not None
    if cut:
        check_split(inner, unknowns, g)
    top = 34 if cut else 0         # a legend line
    lay = (_layout_down(g, top, 680 if cut else 0) if down
           else _layout_right(g, box_w, gap, top))
    out = [label(2, 24, ["blue: known now · ", svg.tspan("orange: unknown until later",
                                                         fill=ACCENT), " · thick: residuals"],
                 MIN_PX, font=SANS)] if cut else []
    out += _draw_graph(g, lay, down, cut)
    facts = {"columns": [[t for t, _, _ in column] for column in g.columns],
             "edges": [e[2] for e in g.edges]}
    if cut:
        facts.update(known=g.known, unknown=g.unknown,
                     residuals=[g.names[v] for v in g.residuals])
    n_eqns = sum(len(c) for c in g.columns[1:g.out_col])
    caption = (f"dataflow: {len(g.columns[0])} input(s) → {n_eqns} equation(s) in "
               f"{g.out_col - 1} column(s) → {len(g.columns[g.out_col])} output(s)")
    picture = svg.svg(lay.width, lay.height, out, defs=[svg.arrowhead("graphhead", INK, 11)])
    return Picture(picture, caption, facts)


def _ad_programs(f, args) -> tuple:
    """jax.linearize(f, *args)'s primal output and linear function's jaxpr, that function
    transposed (jax.linear_transpose), and the backward program's consts renamed to the
    forward names of the same residuals."""
    import jax

    y, f_jvp = jax.linearize(f, *args)
    tangents = [jax.numpy.zeros_like(a) for a in args]
    lin = jax.make_jaxpr(f_jvp)(*tangents)
    f_t = jax.linear_transpose(f_jvp, *args)
    tr = jax.make_jaxpr(f_t)(y)
    fwd_names = printer_names(lin.jaxpr)     # a residual keeps its forward name below
    same = {tv: fwd_names[lv] for tv, tc in zip(tr.jaxpr.constvars, tr.consts)
            for lv, lc in zip(lin.jaxpr.constvars, lin.consts) if tc is lc}
    return y, lin, tr, fwd_names, same


def _params(f, n: int) -> list[str]:
    """The names of f's first `n` parameters; args[i] for those it does not name."""
    try:
        params = list(inspect.signature(f).parameters)[:n]
    except (TypeError, ValueError):
        params = []
    return params + [f"args[{i}]" for i in range(len(params), n)]


def _name_ends(fwd: JaxprGraph, bwd: JaxprGraph, params: list[str]) -> None:
    """The ends of both programs named after f's parameters, ṫ (tangent) and c̄ (cotangent)
    marked."""
    fwd.columns[0] = [(f"ṫ {t}", [f"{p}{lines[0][lines[0].index(':'):]}"], ins)
                      for p, (t, lines, ins) in zip(params, fwd.columns[0])]
    fwd.columns[-1] = [("ṫ out", lines, ins) for _, lines, ins in fwd.columns[-1]]
    bwd.columns[0] = [(f"c̄ {t}", lines, ins) for t, lines, ins in bwd.columns[0]]
    bwd.columns[-1] = [(f"c̄ {p}", lines, ins) for p, (_, lines, ins)
                       in zip(params, bwd.columns[-1])]


def show_ad_flow(f, *args) -> Picture:
    """One function's derivative both ways, as dataflow. Above, after f's own equations ran
    once, the linear function jax.linearize(f, *args) returns (its jaxpr: the tangent
    program), read left to right: tangents in, tangents out. Below, that program
    transposed by jax.linear_transpose, read
    right to left: cotangents in at the right, cotangents out at the left. The residuals the
    forward pass saved (a, b, …: the consts of both programs) are written, by name, in the
    boxes that use them. Facts: f's primitives, each program's primitives in order, the
    residuals' types by name, and the primal output's type."""
    import jax

    y, lin, tr, fwd_names, same = _ad_programs(f, args)
    fwd, bwd = (jaxpr_graph(lin.jaxpr, inline_consts=True),
                jaxpr_graph(tr.jaxpr, inline_consts=True, rename=same))
    _name_ends(fwd, bwd, _params(f, len(args)))
    lays = [_layout_right(g, 100, 36, 0) for g in (fwd, bwd)]
    width = max(760, *(lay.width for lay in lays))
    for lay in lays:
        lay.width = width
    title_h, h0 = 40, lays[0].height
    height = 2 * title_h + h0 + lays[1].height + 44
    name = getattr(f, "__name__", "f")
    primal = [e.primitive.name for e in jax.make_jaxpr(f)(*args).eqns]
    said = f"forward: jax.linearize ran {name} ({', '.join(primal)}); tangents flow →"
    out = [label(2, 27, _fit(said, width - 4, MIN_PX + 1), MIN_PX + 2, font=SANS)]
    out += _draw_graph(fwd, lays[0], False, False, head="tangenthead", dy=title_h)
    out.append(label(width - 2, title_h + h0 + 34,
                     "backward: jax.linear_transpose; cotangents flow ←",
                     MIN_PX + 2, font=SANS, fill=ACCENT, anchor="end"))
    out += _draw_graph(bwd, lays[1], False, False, mirror=True, colour=ACCENT,
                       head="cotanhead", dy=2 * title_h + h0)
    saved = [fwd.names[v] + (f" = {float(c):.3g}" if getattr(c, "shape", None) == () else "")
             for v, c in zip(lin.jaxpr.constvars, lin.consts)]
    if saved:
        said = f"residuals {', '.join(saved)}: kept by the forward pass, read by both programs"
        out.append(label(2, height - 12, _fit(said, width - 4, MIN_PX - 2), MIN_PX, font=SANS,
                         fill="#222"))
    prims = lambda j: [e.primitive.name for e in j.eqns]
    typ = lambda v: v.aval.str_short(short_dtypes=True)
    facts = {"primal": primal, "forward": prims(lin), "backward": prims(tr),
             "residuals": {fwd_names[v]: typ(v) for v in lin.jaxpr.constvars},
             "primal_out": jax.typeof(y).str_short(short_dtypes=True)}
    caption = (f"{name}: tangents through {', '.join(facts['forward'])}; cotangents back "
               f"through {', '.join(facts['backward'])}")
    heads = [svg.arrowhead("tangenthead", INK, 11), svg.arrowhead("cotanhead", ACCENT, 11)]
    return Picture(svg.svg(width, height, out, defs=heads), caption, facts)


CELL_W, CELL_H, PAD = 150, 84, 16          # a device's box on the mesh, the panel's margin
PALETTE = ["#b5651d", "#2e7d32", "#6a1b9a", "#1565c0", "#c62828", "#00838f", "#9e9d24",
           "#4e342e"]


# --------------------------------------------------------------------------- collectives

def _panel(x0: int, kind: str, groups: list, grid, names: tuple[str, str]) -> list:
    """One collective on the mesh: every device a box, each group a coloured outline (a block
    of the grid) or a line through its devices in order (scattered). Coordinates are written
    as Python prints them (77.0), as this picture always has."""
    rows, cols = grid.shape
    cell_w, cell_h, pad = CELL_W, CELL_H, PAD
    where = {i: divmod(i, cols) for i in range(rows * cols)}   # logical id -> (row, col)
    size = {len(g) for g in groups}
    out = [label(x0, 22, f"{kind}: {_n(len(groups), 'group')} of "
                 f"{'/'.join(map(str, sorted(size)))} · rows {names[0]}, columns {names[1]}",
                 20, font=SANS)]
    for i, (r, c) in where.items():
        x, y = x0 + pad + c * cell_w, 34 + pad + r * cell_h
        out.append(svg.rect(x + 10, y + 10, cell_w - 20, cell_h - 20, rx=6, fill=FILL, stroke=INK))
        out.append(label(str(x + cell_w / 2), str(y + cell_h / 2 + 7), f"dev {grid.flat[i].id}",
                         20, anchor="middle"))
    for k, group in enumerate(groups):
        colour = PALETTE[k % len(PALETTE)]
        rs, cs = [where[i][0] for i in group], [where[i][1] for i in group]
        if (max(rs) - min(rs) + 1) * (max(cs) - min(cs) + 1) == len(group):   # a block
            out.append(svg.rect(x0 + pad + min(cs) * cell_w + 3, 34 + pad + min(rs) * cell_h + 3,
                                (max(cs) - min(cs) + 1) * cell_w - 6,
                                (max(rs) - min(rs) + 1) * cell_h - 6, rx=10, fill="none",
                                stroke=colour, stroke_width=3, stroke_dasharray="8 4"))
        else:
            pts = " ".join(f"{x0 + pad + where[i][1] * cell_w + cell_w / 2},"
                           f"{34 + pad + where[i][0] * cell_h + cell_h / 2}" for i in group)
            out.append(svg.polyline(pts, fill="none", stroke=colour, stroke_width=3,
                                    stroke_dasharray="8 4"))
    return out


def show_collectives(compiled, mesh) -> Picture:
    """Who talks to whom: each collective of the compiled HLO drawn on a 2-D mesh, one
    coloured outline per group of devices that combine their values (read from its
    replica_groups). A collective it cannot draw (collective-permute names pairs, not
    groups) is listed as not drawn, never dropped silently."""
    import numpy as np

    grid = np.asarray(mesh.devices)
    if grid.ndim != 2:
        raise ValueError(f"show_collectives draws a 2-D mesh; this one has shape {grid.shape}")
    rows, cols = grid.shape
    names = tuple(str(a) for a in mesh.axis_names)
    found, left = collective_groups(compiled)
    panel_w, gap = max(cols * CELL_W + 2 * PAD, 470), 40
    panel_h = 34 + rows * CELL_H + 2 * PAD
    width = max(1, len(found)) * panel_w + (max(1, len(found)) - 1) * gap + 4
    out = []
    for n, (kind, groups) in enumerate(found):
        out += _panel(2 + n * (panel_w + gap), kind, groups, grid, names)
    if not found:
        say = ("not drawn: " + ", ".join(left) if left
               else "no collective: every device works alone")
        out.append(label(2, 22, say, 18, font=SANS))
    elif left:
        out.append(label(2, panel_h + 20, "not drawn: " + ", ".join(left), 20, font=SANS))
    facts = {"collectives": [{"kind": k, "groups": g} for k, g in found], "not_drawn": left}
    caption = "; ".join(f"{k}: groups {g}" for k, g in found) or "no collectives"
    return Picture(svg.svg(width, panel_h + (30 if found and left else 4), out), caption, facts)


# --------------------------------------------------------------------------- pytrees

def _tree_nodes(tree, treedef, is_leaf) -> tuple[list, list]:
    """The treedef's nodes, [slot, depth, title, detail, kind] each (a parent's slot midway
    between its children's; a leaf, a None or a childless node takes the next slot), and its
    edges (parent, child, key): the key on the leaf paths (tree_flatten_with_path) where the
    child holds leaves, else flatten_one_level_with_keys' (on jaxlib 0.12 it names a
    namedtuple's fields right; 0.10.2's named every field after the first)."""
    import jax
    from jax import tree_util as tu

    none_too = (lambda x: x is None or is_leaf(x)) if is_leaf else (lambda x: x is None)
    paths = [p for p, _ in tu.tree_flatten_with_path(tree, is_leaf=none_too)[0]]
    nodes, edges = [], []
    leaf_no = iter(range(treedef.num_leaves))
    spot = iter(range(len(paths) + treedef.num_nodes))   # left-to-right slots

    def show(v):
        try:
            return jax.typeof(v).str_short(short_dtypes=True) if hasattr(v, "shape") else repr(v)
        except TypeError:
            return type(v).__name__

    def walk(t, value, at: int, depth: int) -> tuple[int, float]:
        """Place treedef `t` of `value`, whose first position is paths[at]; return
        (positions, slot)."""
        data, me = t.node_data(), len(nodes)
        if data is None:
            nodes.append([next(spot), depth, f"leaf {next(leaf_no)}", show(value), "leaf"])
            return 1, nodes[me][0]
        kind, _ = data
        if kind is type(None):
            nodes.append([next(spot), depth, "None", "no leaves", "none"])
            return 1, nodes[me][0]
        nodes.append([None, depth, kind.__name__, "", "node"])
        kids = list(tu.flatten_one_level_with_keys(value)[0])
        used, xs = 0, []
        for i, child in enumerate(t.children()):
            j = len(nodes)
            n, x = walk(child, kids[i][1], at + used, depth + 1)
            key = paths[at + used][depth] if n else kids[i][0]    # the key on the paths
            edges.append((me, j, tu.keystr((key,))))
            used += n
            xs.append(x)
        nodes[me][0] = sum(xs) / len(xs) if xs else next(spot)
        return used, nodes[me][0]

    walk(treedef, tree, 0, 0)
    return nodes, edges


def show_tree(tree, is_leaf=None) -> Picture:
    """A pytree as tree_util sees it: one box per node of its treedef (containers by type,
    None as an empty node, leaves numbered in flatten order) and each edge labelled with its
    key (see _tree_nodes). Coordinates are written as Python prints them (12.0)."""
    from jax import tree_util as tu

    treedef = tu.tree_structure(tree, is_leaf=is_leaf)
    nodes, edges = _tree_nodes(tree, treedef, is_leaf)
    box_w, box_h, slot, level = 160, 60, 180, 104
    slots = max(n[0] for n in nodes) + 1
    depth = max(n[1] for n in nodes) + 1
    xy = lambda n: (2 + n[0] * slot + (slot - box_w) / 2, 4 + n[1] * level)
    out = []
    for i, j, key in edges:
        (x0, y0), (x1, y1) = xy(nodes[i]), xy(nodes[j])
        x0, y0, x1 = x0 + box_w / 2, y0 + box_h, x1 + box_w / 2
        out.append(svg.line(str(x0), str(y0), str(x1), str(y1), stroke=INK, stroke_width=1.6))
        out.append(label(str((x0 + x1) / 2 + 6), str((y0 + y1) / 2 + 5), _fit(key, slot, 18),
                         18, fill=ACCENT, stroke="#fff", stroke_width=4, paint_order="stroke"))
    for n in nodes:
        (x, y), (_, _, title, detail, kind) = xy(n), n
        out.append(svg.rect(str(x), y, box_w, box_h, rx=8, fill=FILL if kind == "leaf" else "#fff",
                            stroke=INK, stroke_width=2,
                            stroke_dasharray="6 4" if kind == "none" else None))
        out.append(label(str(x + box_w / 2), y + (26 if detail else 37),
                         _fit(title, box_w - 10, 19), 19, anchor="middle", bold=True))
        if detail:
            out.append(label(str(x + box_w / 2), y + 50, _fit(detail, box_w - 10, 18), 18,
                             anchor="middle", fill="#222"))
    edges.sort(key=lambda e: e[1])                        # in the treedef's order
    facts = {"nodes": len(nodes), "leaves": [n[3] for n in nodes if n[4] == "leaf"],
             "keys": [k for _, _, k in edges]}
    paths = tu.tree_flatten_with_path(tree, is_leaf=is_leaf)[0]
    caption = (f"pytree: {len(nodes)} nodes, {treedef.num_leaves} leaves: "
               + ", ".join(tu.keystr(p) for p, _ in paths))
    picture = svg.svg(slots * slot + 4, depth * level - (level - box_h) + 8, out)
    return Picture(picture, caption, facts)


# --------------------------------------------------------------------------- the jit caches

HIT, MISS = "#2e7d32", "#c62828"
OUTCOME = {"hit": ("hit", HIT, "#e3f2e4"), "miss": ("miss", MISS, "#fbe3e3"),
           "·": ("·", "#888", "#fff")}


def _wrap(name: str, width: float, px: float) -> list[str]:
    """`name` broken at spaces and before underscores into lines that fit `width`."""
    parts = re.findall(r"_?[^_ ]+ ?", name)
    lines = [""]
    for p in parts:
        if lines[-1] and _chars((lines[-1] + p).rstrip(), px) > width:
            lines.append("")
        lines[-1] += p
    return [s.rstrip() for s in lines]


def _lane(xs: list, cell: float, mid: float, got: list, px: float) -> list:
    """One call's lane: a line as far down the chain as it went, and each cache's outcome."""
    reached = [i for i, (_, v) in enumerate(got) if v != "·"]
    out = [svg.line(xs[i] + cell - 14, mid, xs[i + 1] + 14, mid, stroke=INK, stroke_width=3)
           for i in range(max(reached, default=0))]
    for x, (_, v) in zip(xs, got):
        word, colour, fill = OUTCOME[v]
        out.append(svg.rect(x + 14, mid - 17, cell - 28, 34, rx=17, fill=fill, stroke=colour,
                            stroke_width=1.5 if v == "·" else 3,
                            stroke_dasharray="5 4" if v == "·" else None))
        out.append(label(x + cell / 2, mid + 7, word, px, anchor="middle", fill=colour,
                         bold=v != "·"))
    return out


def show_cache_chain(rows: dict[str, dict[str, str]]) -> Picture:
    """The six in-process caches under a jit call (jitcache.CHAIN, in the order a call meets
    them) as a chain of boxes, and for each call of `rows` ({call label: jitcache.probe(...)})
    a lane under the chain: green where a cache hit, red where it missed, grey where the call
    never reached it, the lane's line running as far as the call went. A repeat call stops at
    the first box; a new shape runs all the way down."""
    from .jitcache import CHAIN

    caches = [name for name, *_ in CHAIN]
    for call, verdict in rows.items():
        if sorted(verdict) != sorted(caches) or set(verdict.values()) - set(OUTCOME):
            raise ValueError(f"{call!r} is not a jitcache.probe result: {verdict}")
    px, gap = MIN_PX + 1, 14
    label_w = max([_chars(c, px) for c in rows] + [_chars("call", px)]) + 20
    cell = (SLIDE_W - 4 - label_w - 5 * gap) / 6
    heads = [_wrap(c, cell - 14, px) for c in caches]
    head_h = 22 + max(map(len, heads)) * (px + 5)
    top, lane_h = 34, 46
    xs = [2 + label_w + i * (cell + gap) for i in range(6)]
    out = [label(2, 24, ["a jit call meets six caches, left to right · ",
                         svg.tspan("hit", fill=HIT, font_weight="bold"), " · ",
                         svg.tspan("miss", fill=MISS, font_weight="bold"), " · ",
                         svg.tspan("dashed: not reached", fill="#777")], px, font=SANS)]
    for i, (x, lines) in enumerate(zip(xs, heads)):
        out.append(svg.rect(x, top, cell, head_h, rx=8, fill=FILL, stroke=INK, stroke_width=2))
        out += [label(x + cell / 2, top + 24 + j * (px + 5), s, px, anchor="middle", bold=True)
                for j, s in enumerate(lines)]
        if i < 5:
            y = top + head_h / 2
            out.append(svg.line(x + cell + 1, y, x + cell + gap - 1, y, stroke=INK,
                                stroke_width=2.5, marker_end="url(#chainhead)"))
    facts = {"caches": caches, "calls": {}}
    for k, (call, verdict) in enumerate(rows.items()):
        got = facts["calls"][call] = [(c, verdict[c]) for c in caches]
        mid = top + head_h + 18 + k * lane_h + lane_h / 2 - 3
        out.append(label(2, mid + 7, call, px))
        out += _lane(xs, cell, mid, got, px)
    caption = "; ".join(f"{call}: " + " ".join(OUTCOME[v][0] for _, v in got)
                        for call, got in facts["calls"].items())
    height = top + head_h + 18 + len(rows) * lane_h + 6
    picture = svg.svg(SLIDE_W, height, out, defs=[svg.arrowhead("chainhead", INK, 13)])
    return Picture(picture, caption, facts)


# --------------------------------------------------------------------------- vmap's batch axis

def _axes_rows(seen: list, out_avals: list, size: int) -> list:
    """(label, [(dims, batch dim)]) per row: the inputs, each equation's outputs with B=size
    inserted where its batching rule left it, and the result with B first (out_axes=0)."""
    rows = []
    for prim, _, outs, avals in seen:
        vals = []
        for b, aval in zip(outs, avals):
            dims = [str(d) for d in getattr(aval, "shape", ())]
            if b is not None:
                dims.insert(b, f"B={size}")
            vals.append((dims, b))
        rows.append((prim, vals))
    out_dims = [[f"B={size}" if k == 0 else str(d) for k, d in enumerate(aval.shape)]
                for aval in out_avals]
    rows.append(("out", [(d, 0) for d in out_dims]))
    return rows


def _axes(x: float, y: float, dims: list[str], b, cell: int, px: float) -> tuple[list, float]:
    """One value as a row of its axes, the batch axis orange; and the x after it."""
    out = []
    for k, d in enumerate(dims):
        batch = k == b
        out.append(svg.rect(x, y, cell - 4, 48, rx=6, fill=UNKNOWN_FILL if batch else FILL,
                            stroke=ACCENT if batch else INK, stroke_width=3 if batch else 1.5))
        out.append(label(x + (cell - 4) / 2, y + 32, _fit(d, cell - 8, MIN_PX),
                         MIN_PX if len(d) > 3 else px, anchor="middle",
                         fill=ACCENT if batch else INK, bold=batch))
        x += cell
    if not dims:
        out.append(label(x, y + 32, "scalar", MIN_PX, fill="#222"))
        x += cell * 1.5
    return out, x + cell / 2


def _in_axes(in_axes, args) -> list:
    """One in_axes entry per argument, as vmap reads them; ValueError if there is none to
    batch."""
    axes = list(in_axes) if isinstance(in_axes, (list, tuple)) else [in_axes] * len(args)
    if len(axes) != len(args) or all(ax is None for ax in axes):
        raise ValueError(f"show_batching needs one in_axes entry per argument (an int or None,"
                         f" at least one int); got {in_axes!r} for {len(args)} argument(s)")
    return axes


def show_batching(f, *args, in_axes=0) -> Picture:
    """Where vmap keeps the batch dimension: `f`'s own equations top to bottom (the jaxpr of
    one example), each value drawn as a row of its axes with the batch axis B, orange, where
    the equation's batching rule left it (read from the BatchTracers while jax.vmap(f) runs).
    A rule moves B when that is cheaper than moving it back; vmap moves it to out_axes=0 only
    at the end, which is the batched jaxpr's trailing transpose. Facts: per equation, the
    batch dim of its inputs and outputs; the batched jaxpr's primitives."""
    import jax

    axes = _in_axes(in_axes, args)
    _, seen = batch_dims(f, args, axes)
    size = next(a.shape[ax] for a, ax in zip(args, axes) if ax is not None)
    batched = jax.make_jaxpr(jax.vmap(f, in_axes=tuple(axes)))(*args)
    moves = [e.primitive.name for e in batched.eqns]
    px, cell, row_h, top = MIN_PX + 2, 58, 64, 40
    name_w = max(_chars(s[0], px) for s in seen) + 30
    rows = _axes_rows(seen, batched.out_avals, size)
    widest = max(sum(len(d) for d, _ in v) + len(v) for _, v in rows)
    width = max(name_w + widest * cell + 40, 760)
    height = top + len(rows) * row_h + 46
    out = [label(2, 26, [svg.Raw("each value's axes after each equation · "),
                         svg.tspan("B", fill=ACCENT, font_weight="bold"),
                         ": the batch axis vmap carries"], px, font=SANS)]
    for r, (prim, vals) in enumerate(rows):
        y = top + r * row_h + 8
        io = r in (0, len(rows) - 1)
        out.append(label(2, y + 34, prim, px, bold=True, fill=ACCENT if io else INK))
        x = name_w
        for dims, b in vals:
            drawn, x = _axes(x, y, dims, b, cell, px)
            out += drawn
    out.append(label(2, height - 14, _fit("batched jaxpr: " + " → ".join(moves), width - 4,
                                          MIN_PX), MIN_PX, fill="#222"))
    facts = {"equations": [(p, i, o) for p, i, o, _ in seen[1:]], "inputs": seen[0][2],
             "batched": moves, "size": size, "out": [d for d, _ in rows[-1][1]]}
    caption = "; ".join(f"{p}: B at {o}" for p, _, o, _ in seen)
    return Picture(svg.svg(width, height, out), caption, facts)
