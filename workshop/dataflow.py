"""A jaxpr drawn as the dataflow graph it is (show_graph), and one function's derivative both
ways, as two such graphs (show_ad_flow). The graph is read by artefacts.jaxpr_graph; here it
is laid out (left to right, or top to bottom) and drawn. Style and `Picture`: pictures.py."""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np

from . import svg
from .artefacts import JaxprGraph, check_split, jaxpr_graph, printer_names
from .palette import FILL, HERE, INK, LATER, LATER_FILL, PAPER, TEXT
from .pictures import GRAPH_TALL, MIN_PX, SANS, Picture, _chars, _fit, grown, label


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


def _controls(pts: list, down: bool) -> tuple:
    """A curve's two control points and its end: it leaves and enters along the layout's
    direction."""
    (x0, y0), (x1, y1) = pts
    if down:
        m = (y0 + y1) / 2
        return (x0, m), (x1, m), (x1, y1)
    m = (x0 + x1) / 2
    return (m, y0), (m, y1), (x1, y1)


def _path(kind: str, pts: list, down: bool, r: float = 12) -> str:
    """SVG path data: a cubic from pts[0] to pts[1] leaving and entering along the layout's
    direction, or straight lines through pts with corners rounded by `r`."""
    (x0, y0) = pts[0]
    if kind == "curve":
        (c1x, c1y), (c2x, c2y), (x1, y1) = _controls(pts, down)
        return f"M{x0:g},{y0:g} C{c1x:g},{c1y:g} {c2x:g},{c2y:g} {x1:g},{y1:g}"
    d = [f"M{x0:g},{y0:g}"]
    for (pa, pb, pc) in zip(pts, pts[1:], pts[2:]):
        s, e = _toward(pb, pa, r), _toward(pb, pc, r)
        d.append(f"L{s[0]:g},{s[1]:g} Q{pb[0]:g},{pb[1]:g} {e[0]:g},{e[1]:g}")
    d.append(f"L{pts[-1][0]:g},{pts[-1][1]:g}")
    return " ".join(d)


def _draw_graph(g: JaxprGraph, lay: _Layout, down: bool, cut: bool, mirror: bool = False,
                colour: str = INK, head: str = "graphhead", dy: float = 0) -> list:
    """The boxes and edges of a laid-out graph (purple and dashed: unknown until later when
    `cut`; thick orange: an edge that crosses the cut, the slide's point), in `colour`
    otherwise. `mirror` flips it left to right, so it reads right to left; `dy` moves it
    down."""
    fx = (lambda x: lay.width - x) if mirror else (lambda x: x)
    out = []
    for edge in g.edges:
        kind, pts = lay.route(edge)
        d = _path(kind, [(fx(x), y + dy) for x, y in pts], down)
        out.append(svg.path(d, fill="none", stroke=HERE if edge[3] else colour,
                            stroke_width=4 if edge[3] else 1.8, marker_end=f"url(#{head})"))
    for c, column in enumerate(g.columns):
        for r, (title, lines, _) in enumerate(column):
            x, y, w, h = lay.box(c, r)
            x, y = (fx(x + w) if mirror else x), y + dy
            late = cut and g.late.get((c, r), False)
            end = c in (0, g.out_col)
            out.append(svg.rect(x, y, w, h, rx=8,
                                fill=PAPER if end else LATER_FILL if late or colour == LATER
                                else FILL,
                                stroke=LATER if late else colour, stroke_width=2,
                                stroke_dasharray="7 4" if late else None))
            out.append(label(x + w / 2, y + lay.big + 6, _fit(title, w - 12, lay.big),
                             lay.big, anchor="middle", bold=True, fill=colour))
            out.append(label(x + w / 2, y + lay.big + lay.small + 13,
                             _fit(lines[0], w - 12, lay.small), lay.small, anchor="middle",
                             fill=TEXT))
    return out


def _polyline(kind: str, pts: list, down: bool) -> list:
    """An edge's route as points: a curve sampled along the cubic _path draws."""
    if kind != "curve":
        return pts
    (x0, y0) = pts[0]
    c1, c2, (x1, y1) = _controls(pts, down)
    at = lambda t, a, b, c, d: ((1 - t) ** 3 * a + 3 * (1 - t) ** 2 * t * b
                                + 3 * (1 - t) * t * t * c + t ** 3 * d)
    return [(at(t / 12, x0, c1[0], c2[0], x1), at(t / 12, y0, c1[1], c2[1], y1))
            for t in range(13)]


def _meet(p, q, r, s) -> bool:
    """Whether segments pq and rs share a point: cross, touch or run along each other."""
    d = lambda a, b, c: (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    on = lambda a, b, c: (min(a[0], b[0]) - .5 <= c[0] <= max(a[0], b[0]) + .5
                          and min(a[1], b[1]) - .5 <= c[1] <= max(a[1], b[1]) + .5)
    d1, d2, d3, d4 = d(r, s, p), d(r, s, q), d(p, q, r), d(p, q, s)
    if d1 * d2 < 0 and d3 * d4 < 0:
        return True
    return any(abs(dv) < 1e-6 and on(a, b, c) for dv, a, b, c in
               ((d1, r, s, p), (d2, r, s, q), (d3, p, q, r), (d4, p, q, s)))


def _meets(rows: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
    """_meet of every segment of `rows` against every one of `cols` (rows itself if None) at
    once: each an (n, 4) array of (px, py, qx, qy); entry [i, j] says whether rows[i] and
    cols[j] share a point. The same arithmetic as _meet, in the same order, so the same
    answers."""
    cols = rows if cols is None else cols
    p, q = (rows[:, 0, None], rows[:, 1, None]), (rows[:, 2, None], rows[:, 3, None])   # pq
    r, s = (cols[None, :, 0], cols[None, :, 1]), (cols[None, :, 2], cols[None, :, 3])   # rs
    d = lambda a, b, c: (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    on = lambda a, b, c: ((np.minimum(a[0], b[0]) - .5 <= c[0])
                          & (c[0] <= np.maximum(a[0], b[0]) + .5)
                          & (np.minimum(a[1], b[1]) - .5 <= c[1])
                          & (c[1] <= np.maximum(a[1], b[1]) + .5))
    d1, d2, d3, d4 = d(r, s, p), d(r, s, q), d(p, q, r), d(p, q, s)
    return (((d1 * d2 < 0) & (d3 * d4 < 0))
            | ((abs(d1) < 1e-6) & on(r, s, p)) | ((abs(d2) < 1e-6) & on(r, s, q))
            | ((abs(d3) < 1e-6) & on(p, q, r)) | ((abs(d4) < 1e-6) & on(p, q, s)))


def crossings(g: JaxprGraph, lay: _Layout, down: bool) -> int:
    """How many pairs of edges cross or touch as drawn (edges that share a box meet there,
    which is not counted): two lines that touch read as one. (Every segment against every
    other at once, with numpy: untangled scores up to 2000 orders of a graph, and a segment
    at a time it took seconds a slide.)"""
    lines = [_polyline(*lay.route(e), down) for e in g.edges]
    owner = [k for k, a in enumerate(lines) for _ in a[1:]]
    if not owner:
        return 0
    segs = np.array([(*p, *q) for a in lines for p, q in zip(a, a[1:])], dtype=float)
    one = np.zeros((len(lines), len(owner)))
    one[owner, range(len(owner))] = 1
    # [i, j] > 0: a segment of edge i meets one of edge j. 256 segments' rows at a time, so a
    # graph of 400 edges (4800 segments) needs megabytes, not gigabytes
    met = np.zeros((len(lines), len(lines)))
    for a in range(0, len(owner), 256):
        met += one[:, a:a + 256] @ _meets(segs[a:a + 256], segs) @ one.T
    met = met > 0
    return sum(bool(met[i, j]) for i, e in enumerate(g.edges) for j, f in enumerate(g.edges)
               if i < j and not {e[0], e[1]} & {f[0], f[1]})


def _reordered(g: JaxprGraph, orders: list) -> JaxprGraph:
    """g with each column's boxes in the given order (orders[c]: old rows, new order)."""
    new = {(c, old): (c, r) for c, order in enumerate(orders) for r, old in enumerate(order)}
    return JaxprGraph(columns=[[g.columns[c][old] for old in order]
                               for c, order in enumerate(orders)],
                      edges=[(new[a], new[b], *rest) for a, b, *rest in g.edges],
                      late={new[k]: v for k, v in g.late.items()}, known=g.known,
                      unknown=g.unknown, residuals=g.residuals, names=g.names)


def untangled(g: JaxprGraph, lay_of, down: bool) -> JaxprGraph:
    """g with the boxes of each column but the outputs' reordered so that the fewest edges
    cross as drawn: every order where there are few (a slide's jaxpr), else the order by the
    mean row of each box's neighbours, swept both ways. Ties keep the jaxpr's order."""
    from itertools import permutations, product
    sizes = [len(c) for c in g.columns]
    free = range(len(sizes) - 1)
    if math.prod(math.factorial(sizes[c]) for c in free) <= 2000:
        choices = product(*[list(permutations(range(sizes[c]))) if c in free
                            else [tuple(range(sizes[c]))] for c in range(len(sizes))])
        candidates = [_reordered(g, list(o)) for o in choices]
    else:
        candidates, cur = [g], g
        for sweep in range(4):
            cols = list(free)[1:] if sweep % 2 == 0 else list(free)[::-1]
            for c in cols:
                def mean_row(r, c=c, cur=cur, back=sweep % 2 == 1):
                    near = [b[1] if a == (c, r) else a[1] for a, b, *_ in cur.edges
                            if (a == (c, r) and (b[0] > c) == back)
                            or (b == (c, r) and (a[0] < c) != back)]
                    return sum(near) / len(near) if near else r
                order = sorted(range(sizes[c]), key=mean_row)
                cur = _reordered(cur, [order if k == c else list(range(sizes[k]))
                                       for k in range(len(sizes))])
            candidates.append(cur)
    scored = [(crossings(h, lay_of(h), down), i) for i, h in enumerate(candidates)]
    return candidates[min(scored)[1]]


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
               unknowns: list[bool] | None = None, title: str = "") -> Picture:
    """A jaxpr drawn as the dataflow graph it is.

    Inputs on the left, one box per equation in the column after the last equation it reads
    from, the outputs on the right, an arrow per variable read. An equation's box is titled
    with its primitive and names the variable it defines and its type (~ marks a weak type,
    which the text form hides); a literal is written in the box that uses it: add(·, 2.0).
    An input's box names the variable and the function's own parameter. The boxes of each
    column but the outputs' are reordered so that few arrows cross (the fewest, for a jaxpr
    as short as a slide's); the facts keep the jaxpr's order.

    With `unknowns`, the graph shows partial evaluation's cut: an equation is unknown when
    any of its inputs is, known ones stay blue, unknown ones are purple (they run later), and
    each known value an unknown equation reads is a residual (a thick orange arrow: the
    slide's point). The split drawn is checked against pe.partial_eval_jaxpr_nounits (the
    primitives on each side, the number of residuals).

    Args:
        jaxpr: what `jax.make_jaxpr(f)(...)` returns, or a `jax.jit(f).trace(...)` result.
        down: if True, draw the levels top to bottom with larger type (for a short jaxpr on
            a slide); else left to right. Defaults to False.
        box_w: the narrowest a box may be, in px, left to right. Defaults to 110.
        gap: the px between two columns, left to right. Defaults to 44.
        unknowns: one bit per input of the jaxpr, True for unknown (the consts the jaxpr
            carries are known), or None for no cut. Defaults to None.
        title: a caption line above the graph, saying what it is (two graphs on two slides,
            a program and its transpose, need their names on them). Defaults to "".

    Returns:
        A `Picture` captioned "dataflow: N input(s) → N equation(s) in N column(s) → N
        output(s)", its facts: "columns" (each column's box titles, in the jaxpr's order)
        and "edges" (the variable each arrow carries); with `unknowns`, also "known" and
        "unknown" (the primitives on each side of the cut) and "residuals" (their names).

    Raises:
        TypeError: `jaxpr` is neither a jaxpr nor a jit trace.
        ValueError: `unknowns` does not have one bit per input; both `unknowns` and `title`
            are given; or partial evaluation splits the jaxpr otherwise than drawn (as for a
            nested jit, cond or scan, which it splits inside).

    Example:
        >>> def f(x, y):
        ...     return jnp.sin(x) * y
        >>> graph = show_graph(jax.make_jaxpr(f)(1.0, 2.0))
        >>> graph
        dataflow: 2 input(s) → 2 equation(s) in 2 column(s) → 1 output(s)
        >>> graph.facts["columns"]
        [['a', 'b'], ['sin'], ['mul'], ['out']]
        >>> cut = show_graph(jax.make_jaxpr(f)(1.0, 2.0), unknowns=[False, True])
        >>> cut.facts["known"], cut.facts["unknown"], cut.facts["residuals"]
        (['sin'], ['mul'], ['c'])
    """
    inner = _jaxpr_of(jaxpr)
    if unknowns is not None and len(unknowns) != len(inner.invars):
        raise ValueError(f"unknowns has {len(unknowns)} bit(s); the jaxpr has "
                         f"{len(inner.invars)} input(s)")
    g = jaxpr_graph(inner, unknowns)
    cut = unknowns is not None
    if cut:
        check_split(inner, unknowns, g)
    if cut and title:
        raise ValueError("show_graph draws a cut's legend or a title, not both")
    top = 34 if cut or title else 0         # a legend line, or the title
    lay_of = ((lambda h: _layout_down(h, top, 680 if cut else 0)) if down
              else (lambda h: _layout_right(h, box_w, gap, top)))
    drawn = untangled(g, lay_of, down)   # (the facts keep the jaxpr's order)
    lay = lay_of(drawn)
    out = [label(2, 24, ["blue: known now · ", svg.tspan("purple: unknown until later",
                                                         fill=LATER), " · ",
                         svg.tspan("thick orange: residuals", fill=HERE)],
                 MIN_PX, font=SANS)] if cut else []
    if title:
        lay.width = max(lay.width, _chars(title, MIN_PX) + 4)   # (monospace widths: room to spare)
        out.append(label(2, 24, title, MIN_PX, font=SANS))
    out += _draw_graph(drawn, lay, down, cut)
    facts = {"columns": [[t for t, _, _ in column] for column in g.columns],
             "edges": [e[2] for e in g.edges]}
    if cut:
        facts.update(known=g.known, unknown=g.unknown,
                     residuals=[g.names[v] for v in g.residuals])
    n_eqns = sum(len(c) for c in g.columns[1:g.out_col])
    caption = (f"dataflow: {len(g.columns[0])} input(s) → {n_eqns} equation(s) in "
               f"{g.out_col - 1} column(s) → {len(g.columns[g.out_col])} output(s)")
    picture = svg.svg(lay.width, lay.height, out, defs=[svg.arrowhead("graphhead", INK, 11)],
                      shown=grown(lay.width, lay.height, tall=GRAPH_TALL))
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
    """One function's derivative both ways, as dataflow: forward-mode above, reverse below.

    Above, after f's own equations ran once, the linear function `jax.linearize(f, *args)`
    returns (its jaxpr: the tangent program), read left to right: tangents in, tangents out.
    Below, that program transposed by `jax.linear_transpose`, read right to left:
    cotangents in at the right, cotangents out at the left. The residuals the forward pass
    saved (a, b, …: the consts of both programs) are written, by name, in the boxes that use
    them, and listed under the graphs. The ends are named after f's parameters.

    Args:
        f: the function to differentiate, of array arguments.
        *args: the point to linearize `f` at.

    Returns:
        A `Picture` captioned with the primitives each way, its facts: "primal" (f's own
        primitives), "forward" and "backward" (each program's primitives, in order),
        "residuals" (each residual's type, by name) and "primal_out" (the type of f's
        output).

    Example:
        >>> def f(x):
        ...     return jnp.sin(x) * x
        >>> pic = show_ad_flow(f, 2.0)
        >>> pic
        f: tangents through mul, mul, mul, add_any; cotangents back through mul, mul, mul, add_any
        >>> pic.facts["primal"], pic.facts["residuals"], pic.facts["primal_out"]
        (['sin', 'mul'], {'a': 'f32[]', 'b': 'f32[]'}, 'f32[]')
    """
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
                     MIN_PX + 2, font=SANS, fill=LATER, anchor="end"))
    out += _draw_graph(bwd, lays[1], False, False, mirror=True, colour=LATER,
                       head="cotanhead", dy=2 * title_h + h0)
    saved = [fwd.names[v] + (f" = {float(c):.3g}" if getattr(c, "shape", None) == () else "")
             for v, c in zip(lin.jaxpr.constvars, lin.consts)]
    if saved:
        said = f"residuals {', '.join(saved)}: kept by the forward pass, read by both programs"
        out.append(label(2, height - 12, _fit(said, width - 4, MIN_PX - 2), MIN_PX, font=SANS,
                         fill=TEXT))
    prims = lambda j: [e.primitive.name for e in j.eqns]
    typ = lambda v: v.aval.str_short(short_dtypes=True)
    facts = {"primal": primal, "forward": prims(lin), "backward": prims(tr),
             "residuals": {fwd_names[v]: typ(v) for v in lin.jaxpr.constvars},
             "primal_out": jax.typeof(y).str_short(short_dtypes=True)}
    caption = (f"{name}: tangents through {', '.join(facts['forward'])}; cotangents back "
               f"through {', '.join(facts['backward'])}")
    heads = [svg.arrowhead("tangenthead", INK, 11), svg.arrowhead("cotanhead", LATER, 11)]
    return Picture(svg.svg(width, height, out, defs=heads), caption, facts)
