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
from .palette import FILL, HERE, HERE_FILL, INK, LATER, LATER_FILL, PAPER, QUIET, TEXT
from .pictures import GRAPH_TALL, MIN_PX, SANS, SLIDE_W, Picture, _chars, _fit, grown, label


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
                colour: str = INK, head: str = "graphhead", dy: float = 0, dx: float = 0) -> list:
    """The boxes and edges of a laid-out graph (purple and dashed: unknown until later when
    `cut`; thick orange: an edge that crosses the cut, the slide's point), in `colour`
    otherwise. `mirror` flips it left to right, so it reads right to left; `dy` moves it
    down, `dx` right."""
    fx = (lambda x: lay.width - x + dx) if mirror else (lambda x: x + dx)
    out = []
    for edge in g.edges:
        kind, pts = lay.route(edge)
        d = _path(kind, [(fx(x), y + dy) for x, y in pts], down)
        out.append(svg.path(d, fill="none", stroke=HERE if edge[3] else colour,
                            stroke_width=4 if edge[3] else 1.8, marker_end=f"url(#{head})"))
    for c, column in enumerate(g.columns):
        for r, (title, lines, _) in enumerate(column):
            x, y, w, h = lay.box(c, r)
            x, y = (fx(x + w) if mirror else fx(x)), y + dy
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
    mean row of each box's neighbours, swept both ways. Ties keep the jaxpr's order, so the
    first order found with no crossing is the answer: the search stops there (deck 02's
    linear program, 480 orders, took 3 s to score them all)."""
    from itertools import permutations, product
    sizes = [len(c) for c in g.columns]
    free = range(len(sizes) - 1)
    if math.prod(math.factorial(sizes[c]) for c in free) <= 2000:
        choices = product(*[list(permutations(range(sizes[c]))) if c in free
                            else [tuple(range(sizes[c]))] for c in range(len(sizes))])
        candidates = (_reordered(g, list(o)) for o in choices)
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
    best, fewest = g, math.inf
    for h in candidates:
        n = crossings(h, lay_of(h), down)
        if n < fewest:
            best, fewest = h, n
        if n == 0:
            break
    return best


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


# both programs drawn AD_W wide (the columns spread out, or wider where they need it) and shown
# AD_SCALE times that: the slide's width, and its 18 px boxes' text at 20 px
AD_W, AD_SCALE = 1065, 1.112


def _spread(g: JaxprGraph) -> _Layout:
    """g left to right, its columns spread over AD_W px (the gaps between them wider, never
    narrower than 36 px), so forward and backward each fill the picture's width."""
    narrow = _layout_right(g, 100, 36, 0)
    if len(g.columns) < 2 or narrow.width >= AD_W:
        return narrow
    return _layout_right(g, 100, 36 + (AD_W - narrow.width) / (len(g.columns) - 1), 0)


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
        "residuals" (each residual's type, by name), "values" (each scalar residual's value
        as written under the graphs, None for an array) and "primal_out" (the type of f's
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
    lays = [_spread(g) for g in (fwd, bwd)]
    width = max(AD_W, *(lay.width for lay in lays))
    for lay in lays:
        lay.width = width
    # each title in a 31 px band, the program under it drawn 12 px up into the band (its
    # layout leaves 17 px above its first row)
    title_h, up, h0 = 31, 12, lays[0].height
    height = 2 * (title_h - up) + h0 + lays[1].height + 32
    name = getattr(f, "__name__", "f")
    primal = [e.primitive.name for e in jax.make_jaxpr(f)(*args).eqns]
    said = f"forward: jax.linearize ran {name} ({', '.join(primal)}); tangents flow →"
    out = [label(2, 24, _fit(said, width - 4, MIN_PX + 1), MIN_PX + 2, font=SANS)]
    out += _draw_graph(fwd, lays[0], False, False, head="tangenthead", dy=title_h - up)
    out.append(label(width - 2, title_h - up + h0 + 25,
                     "backward: jax.linear_transpose; cotangents flow ←",
                     MIN_PX + 2, font=SANS, fill=LATER, anchor="end"))
    out += _draw_graph(bwd, lays[1], False, False, mirror=True, colour=LATER,
                       head="cotanhead", dy=2 * (title_h - up) + h0)
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
             "values": {fwd_names[v]: float(c) if getattr(c, "shape", None) == () else None
                        for v, c in zip(lin.jaxpr.constvars, lin.consts)},
             "primal_out": jax.typeof(y).str_short(short_dtypes=True)}
    caption = (f"{name}: tangents through {', '.join(facts['forward'])}; cotangents back "
               f"through {', '.join(facts['backward'])}")
    heads = [svg.arrowhead("tangenthead", INK, 11), svg.arrowhead("cotanhead", LATER, 11)]
    return Picture(svg.svg(width, height, out, defs=heads, shown=width * AD_SCALE), caption,
                   facts)


# --------------------------------------------------------------------------- lowering

def _main_ops(lowered) -> list[tuple[str, str, str]]:
    """(op, result type, location) of each top-level op of @main, `return` left out: the
    location names the equation the op was written for (jit(f)/tanh) and where in the
    source it was traced, so the ops of one equation share one."""
    module = lowered.compiler_ir()
    main = next(op for op in module.body.operations
                if str(op.attributes["sym_name"]).strip('"') == "main")
    out = []
    for op in main.regions[0].blocks[0].operations:
        name = op.operation.name
        if name.endswith("return"):
            continue
        typ = str(op.results[0].type) if len(op.results) else ""
        out.append((name.removeprefix("stablehlo.").removeprefix("func."), typ,
                    str(op.location)))
    return out


def lowering_of(traced) -> list[tuple]:
    """(equation, [(op, result type, name stack)]) for each equation of `traced.jaxpr`: the
    ops of @main its lowering rule wrote. JAX lowers the equations in order and each op
    carries its equation's location (its name stack, jit(f)/tanh, and source position), so
    the ops are cut into runs of one location and each run given to the next equation whose
    primitive ends that name stack. A literal's constant carries the function's own name
    stack (no equation's): it goes with the equation after it, the one that reads it.
    Raises ValueError where some op is left over."""
    runs: list[list] = []
    for op, typ, loc in _main_ops(traced.lower()):
        stack = loc.split('"', 2)[1] if '"' in loc else loc
        if runs and runs[-1][0][3] == loc:
            runs[-1].append((op, typ, stack, loc))
        else:
            runs.append([(op, typ, stack, loc)])
    eqns = traced.jaxpr.eqns
    mine: list[list] = [[] for _ in eqns]
    k, pending = 0, []
    for run in runs:
        stack = run[0][2]
        if "/" not in stack:                  # a literal's constant, hoisted before its use
            pending += run
            continue
        while k < len(eqns) and eqns[k].primitive.name != stack.split("/")[-1].split("(")[0]:
            k += 1                            # an equation that wrote no op
        if k == len(eqns):
            raise ValueError(f"ops of @main no equation of the jaxpr accounts for: "
                             f"{[op for op, *_ in run]} ({stack})")
        mine[k] += [(op, typ, stack) for op, typ, stack, _ in pending + run]
        k, pending = k + 1, []
    if pending:
        raise ValueError(f"ops of @main no equation reads: {[op for op, *_ in pending]}")
    return list(zip(eqns, mine))


def _fused(compiled) -> list[tuple[str, str, list[str]]]:
    """(name, opcode, name stacks) of each instruction of the compiled ENTRY but its
    parameters: the op_name metadata of the instruction and of every instruction of the
    computation it calls (a fusion's body): which equations XLA put in it."""
    import re

    text = compiled.as_text()
    bodies = dict(re.findall(r"\n%([\w.\-]+) \([^\n]*\{\n(.*?)\n\}", text, re.S))
    entry = text.split("\nENTRY ", 1)[1].split("\n}", 1)[0]
    out = []
    for line in entry.split("\n")[1:]:
        m = re.match(r"\s*(?:ROOT )?%([\w.\-]+) = \S+ ([a-z][\w\-]*)\(", line)
        if not m or m.group(2) == "parameter":
            continue
        called = re.search(r"calls=%([\w.\-]+)", line)
        said = (bodies.get(called.group(1), "") if called else "") + "\n" + line  # body first
        names = list(dict.fromkeys(n for n in re.findall(r'op_name="([^"]+)"', said)
                                   if "/" in n))
        out.append((m.group(1), m.group(2), names))
    return out


def _box(x, y, w, h, title, line, colour=INK, fill=FILL) -> list:
    px = 20
    return [svg.rect(x, y, w, h, rx=8, fill=fill, stroke=colour, stroke_width=2),
            label(x + w / 2, y + px + 6, _fit(title, w - 12, px), px, anchor="middle",
                  bold=True, fill=colour),
            label(x + w / 2, y + 2 * px + 13, _fit(line, w - 12, px), px, anchor="middle",
                  fill=TEXT)]


def _row_of_boxes(boxes: list, centres: list[float], gap: float, left: float = 2) -> list[float]:
    """The left x of each box (its width given) near its wanted centre, in order, never
    overlapping: each one right of the one before, the first not left of `left`."""
    xs, end = [], left - gap
    for w, c in zip(boxes, centres):
        x = max(c - w / 2, end + gap)
        xs.append(x)
        end = x + w
    return xs


def _lowering_rows(pairs: list, names: dict, gap: float = 28, left: float = 150) -> tuple:
    """The jaxpr row and the StableHLO row: each equation's box over the ops its rule wrote,
    in a slot as wide as the wider of the two. Returns (boxes, ops, width): boxes are
    (x, w, title, line), ops (x, w, op, type, name stack, equation index)."""
    width = lambda *texts: max(_chars(t, 20) for t in texts) + 24
    x, boxes, ops = left, [], []
    for i, (eqn, mine) in enumerate(pairs):
        outs = ", ".join(f"{names[o]}: {o.aval.str_short(short_dtypes=True)}"
                         for o in eqn.outvars)
        we = width(eqn.primitive.name, outs)
        wo = [width(op, typ) for op, typ, _ in mine]
        group = sum(wo) + 12 * (len(wo) - 1) if wo else 0
        slot = max(we, group)
        boxes.append((x + (slot - we) / 2, we, eqn.primitive.name, outs))
        ox = x + (slot - group) / 2
        for w, (op, typ, stack) in zip(wo, mine):
            ops.append((ox, w, op, typ, stack, i))
            ox += w + 12
        x += slot + gap
    return boxes, ops, x - gap


def _draw_lowering(boxes: list, ops: list, hlo: list, width: float) -> tuple:
    """The rows of show_lowering, drawn: the equations, the ops under them, and the HLO
    instructions (each as near under its ops as the others leave room for), an arrow from
    each equation to its ops and from each op to the instruction that holds it. Returns
    (elements, width, height)."""
    box_h, step, top = 68, 68 + 50, 44
    prim = lambda stack: stack.split("/")[-1]
    held = [f"{op}: {', '.join(map(prim, s))}" for _, op, s in hlo]
    hlo_w = [max(_chars(n, 20), _chars(line, 20)) + 24 for (n, _, _), line in zip(hlo, held)]
    centre = lambda s: (np.mean([o[0] + o[1] / 2 for o in ops if o[4] in s])
                        if any(o[4] in s for o in ops) else width)
    hx = _row_of_boxes(hlo_w, [centre(s) for _, _, s in hlo], 28)
    width = max([width] + [x + w for x, w in zip(hx, hlo_w)]) + 2
    rows = ["jaxpr", "StableHLO"] + (["HLO"] if hlo else [])
    said = ("each equation → the StableHLO ops its rule wrote"
            + (" → XLA's compiled HLO" if hlo else ""))
    out = [label(2, 26, _fit(said, width, MIN_PX + 2), MIN_PX + 2, font=SANS)]
    out += [label(2, top + k * step + box_h / 2 + 7, name, 20, font=SANS, bold=True)
            for k, name in enumerate(rows)]
    edge = lambda a, b: svg.path(_path("curve", [a, b], True), fill="none", stroke=INK,
                                 stroke_width=1.8, marker_end="url(#lowerhead)")
    for x, w, _, _, stack, i in ops:
        bx, bw = boxes[i][:2]
        out.append(edge((bx + bw / 2, top + box_h), (x + w / 2, top + step - 2)))
        out += [edge((x + w / 2, top + step + box_h), (x1 + w1 / 2, top + 2 * step - 2))
                for (_, _, s), x1, w1 in zip(hlo, hx, hlo_w) if stack in s]
    for x, w, title, line in boxes:
        out += _box(x, top, w, box_h, title, line)
    for x, w, op, typ, _, _ in ops:
        out += _box(x, top + step, w, box_h, op, typ)
    for (n, _, _), line, x, w in zip(hlo, held, hx, hlo_w):
        out += _box(x, top + 2 * step, w, box_h, n, line)
    return out, width, top + len(rows) * step - 50 + 4


def show_lowering(traced, compiled=None) -> Picture:
    """A jit trace lowered, drawn: each jaxpr equation over the StableHLO ops its lowering
    rule wrote into @main, an arrow from one to the other; with `compiled`, a third row: the
    compiled ENTRY's instructions, each with an arrow from every op XLA put in it (by the
    op_name metadata XLA keeps: a fusion holds several).

    Args:
        traced: what `jax.jit(f).trace(...)` returns (it is lowered here).
        compiled: its `.lower().compile()`, or None for two rows. Defaults to None.

    Returns:
        A `Picture` captioned "lowering: N equation(s) → N StableHLO op(s)" (and "→ N HLO
        instruction(s)"), its facts: "equations" (the primitives, in order), "stablehlo"
        (each equation's ops, in order) and, with `compiled`, "hlo" (each ENTRY
        instruction's name: the primitives whose ops it holds).

    Raises:
        ValueError: an op of @main that no equation accounts for (lowering_of).

    Example:
        >>> def f(x, w):
        ...     return jnp.tanh(x @ w).sum()
        >>> pic = show_lowering(jax.jit(f).trace(jnp.ones((8, 4)), jnp.ones((4, 2))))
        >>> pic.facts["stablehlo"]
        [['dot_general'], ['tanh'], ['constant', 'reduce']]
    """
    pairs = lowering_of(traced)
    boxes, ops, width = _lowering_rows(pairs, printer_names(traced.jaxpr))
    hlo = _fused(compiled) if compiled is not None else []
    out, width, height = _draw_lowering(boxes, ops, hlo, width)
    facts = {"equations": [e.primitive.name for e, _ in pairs],
             "stablehlo": [[op for op, _, _ in mine] for _, mine in pairs]}
    caption = f"lowering: {len(pairs)} equation(s) → {len(ops)} StableHLO op(s)"
    if hlo:
        facts["hlo"] = {n: [s.split("/")[-1] for s in stacks] for n, _, stacks in hlo}
        caption += f" → {len(hlo)} HLO instruction(s)"
    picture = svg.svg(width, height, out, defs=[svg.arrowhead("lowerhead", INK, 11)],
                      shown=grown(width, height, tall=GRAPH_TALL))
    return Picture(picture, caption, facts)


# --------------------------------------------------------------------------- nested jaxprs

def _box_of(g: JaxprGraph, eqn) -> tuple[int, int]:
    """(column, row) of the box `g` draws for `eqn`: the one naming its first output."""
    from jax._src import core

    out = next(o for o in eqn.outvars if not isinstance(o, core.DropVar))
    head = f"{g.names[out]}: "
    return next((c, r) for c, column in enumerate(g.columns[1:-1], 1)
                for r, (_, lines, _) in enumerate(column) if lines[0].startswith(head))


def _nested_frames(outer: JaxprGraph, lay: _Layout, jaxpr, y0: float) -> tuple:
    """Below the outer graph, one framed graph per jaxpr an equation carries in its params,
    each as near under its equation's box as the others leave room for. Returns (elements,
    right edge, bottom, [(primitive, [its primitives]) per inner jaxpr])."""
    from jax._src import core

    frames = []
    for eqn in jaxpr.eqns:
        inners = list(core.jaxprs_in_params(eqn.params))
        for k, inner in enumerate(inners):
            g = jaxpr_graph(inner)
            lay_of = lambda h: _layout_right(h, 60, 28, 0)
            drawn = untangled(g, lay_of, False)
            name = eqn.primitive.name
            said = (f"{name} branch {k}" if "branches" in eqn.params
                    else f"{name}'s jaxpr" + (f" {k}" if len(inners) > 1 else ""))
            w = max(lay_of(drawn).width, _chars(said, MIN_PX + 2) * 0.8) + 16
            frames.append((eqn, said, drawn, lay_of(drawn), w, inner))
    bx = [lay.box(*_box_of(outer, eqn)) for eqn, *_ in frames]
    widths = [f[4] for f in frames]
    xs = _row_of_boxes(widths, [x + w / 2 for x, _, w, _ in bx], 16)
    packed = _row_of_boxes(widths, [0] * len(widths), 16)
    if xs and xs[-1] + widths[-1] > max(lay.width, packed[-1] + widths[-1]):
        xs = packed                         # under their boxes would widen the picture
    out, right, bottom, facts = [], lay.width, y0, []
    for (eqn, said, drawn, il, w, inner), x, (ox, oy, ow, oh) in zip(frames, xs, bx):
        h = il.height + 28
        out.append(svg.path(f"M{ox + ow / 2:g},{oy + oh:g} L{x + w / 2:g},{y0:g}", fill="none",
                            stroke=QUIET, stroke_width=2, stroke_dasharray="6 4"))
        out.append(svg.rect(x, y0, w, h, rx=12, fill=PAPER, stroke=QUIET, stroke_width=2,
                            **{"class": "frame"}))
        out.append(label(x + 10, y0 + 26, said, MIN_PX + 2, font=SANS, fill=QUIET, bold=True))
        out += _draw_graph(drawn, il, False, False, dy=y0 + 30, dx=x + 8)
        right, bottom = max(right, x + w + 2), max(bottom, y0 + h + 2)
        facts.append((eqn.primitive.name, [e.primitive.name for e in inner.eqns]))
    return out, right, bottom, facts


def show_nested(jaxpr, tall: float = GRAPH_TALL) -> Picture:
    """A jaxpr and the jaxprs its equations carry: the outer dataflow graph on top and, framed
    below it, each jaxpr a higher-order equation holds in its params (a jit's one, a cond's
    one per branch: what core.jaxprs_in_params finds), each joined to its equation's box by a
    dashed line. One level deep: a jaxpr inside an inner one is not opened.

    Args:
        jaxpr: what `jax.make_jaxpr(f)(...)` returns, or a `jax.jit(f).trace(...)` result.
        tall: the most px tall it is shown (under more lines of code: less). Defaults to
            GRAPH_TALL.

    Returns:
        A `Picture` captioned "nested: N equation(s), N of them carry N jaxpr(s)", its facts:
        "outer" (the primitives, in order) and "inner" ((primitive, the inner jaxpr's
        primitives) for each jaxpr carried, in order).

    Example:
        >>> inner = jax.jit(lambda v: jnp.cos(v) * v)
        >>> pic = show_nested(jax.make_jaxpr(lambda x: inner(x) + 1.0)(jnp.ones(3)))
        >>> pic.facts
        {'outer': ['jit', 'add'], 'inner': [('jit', ['cos', 'mul'])]}
    """
    from jax._src import core

    top = 34
    inner = _jaxpr_of(jaxpr)
    g = jaxpr_graph(inner)
    lay_of = lambda h: _layout_right(h, 110, 60, top)
    drawn = untangled(g, lay_of, False)
    lay = lay_of(drawn)
    out = [label(2, 24, "the jaxpr; below, the jaxprs its equations carry in their params",
                 MIN_PX + 2, font=SANS)]
    out += _draw_graph(drawn, lay, False, False)
    frames, right, bottom, inners = _nested_frames(drawn, lay, inner, lay.height + 28)
    out += frames
    owners = sum(1 for e in inner.eqns if any(True for _ in core.jaxprs_in_params(e.params)))
    facts = {"outer": [e.primitive.name for e in inner.eqns], "inner": inners}
    caption = (f"nested: {len(inner.eqns)} equation(s), {owners} of them carry "
               f"{len(inners)} jaxpr(s)")
    width = max(right, _chars("the jaxpr; below, the jaxprs its equations carry", MIN_PX + 2))
    picture = svg.svg(width, bottom, out, defs=[svg.arrowhead("graphhead", INK, 11)],
                      shown=grown(width, bottom, tall=tall))
    return Picture(picture, caption, facts)


def _what(source: str) -> str:
    """saved_residuals' description, short: "argument W", or the primitive that made it."""
    import re

    found = re.match(r"from the argument (\S+)", source) or re.match(r"output of (\S+)", source)
    if not found:
        return source.split(" from ")[0]
    return f"argument {found.group(1)}" if source.startswith("from") else found.group(1)


def _residual_column(x: float, w: float, name: str, kept: list, px: float) -> list:
    """One function's residuals: its name and counts, then a box per residual (an argument's
    dashed: the caller's own array; a computed one's orange: new memory)."""
    made = sum(not what.startswith("argument ") for _, what in kept)
    out = [label(x + w / 2, 62, _fit(name, w, px + 2), px + 2, anchor="middle", bold=True),
           label(x + w / 2, 88, f"{len(kept)} kept, {made} computed", px, font=SANS,
                 anchor="middle", fill=TEXT)]
    for k, (typ, what) in enumerate(kept):
        y, arg = 102 + k * 48, what.startswith("argument ")
        out.append(svg.rect(x, y, w, 40, rx=8, fill=PAPER if arg else HERE_FILL,
                            stroke=INK if arg else HERE, stroke_width=1.5 if arg else 2.5,
                            stroke_dasharray="6 4" if arg else None))
        out.append(label(x + 12, y + 27, _fit(f"{typ}  {what}", w - 20, px), px))
    return out


def show_residuals(fns: dict, *args) -> Picture:
    """What the backward pass keeps, for each version of one function, side by side.

    A column per function: its name, how many residuals the backward pass would keep and how
    many of them are computed (new memory), and a box per residual with its type and where it
    comes from, as `jax.ad_checkpoint.print_saved_residuals` lists them: an argument (dashed:
    the caller's own array) or the primitive whose output it is (orange). Put a function and
    its `jax.checkpoint` versions side by side to see what each policy keeps.

    Args:
        fns: {column name: function}, in the order to draw them; each takes `args`.
        *args: the arguments to differentiate each function at.

    Returns:
        A `Picture` captioned with each column's count, its facts: "kept" ({name: [(type,
        source), ...]}, in saved_residuals' order, the source shortened to "argument W" or
        the primitive's name) and "computed" ({name: how many are not arguments}).

    Example:
        >>> def f(x):
        ...     return jnp.sin(jnp.sin(x))
        >>> pic = show_residuals({"plain": f, "checkpoint": jax.checkpoint(f)}, 1.0)
        >>> pic
        plain: 2 kept, 2 computed; checkpoint: 1 kept, 0 computed
        >>> pic.facts["kept"]["checkpoint"]
        [('f32[]', 'argument x')]
    """
    from jax._src.ad_checkpoint import saved_residuals

    kept = {name: [(aval.str_short(short_dtypes=True), _what(source))
                   for aval, source in saved_residuals(f, *args)] for name, f in fns.items()}
    computed = {name: sum(not w.startswith("argument ") for _, w in k)
                for name, k in kept.items()}
    px, gap = MIN_PX + 2, 28
    col_w = (SLIDE_W - 4 - (len(kept) - 1) * gap) / max(1, len(kept))
    out = [label(2, 24, ["what the backward pass keeps · ",
                         svg.tspan("orange: computed, new memory", fill=HERE),
                         " · dashed: an argument, the caller's own"], px, font=SANS)]
    for i, (name, k) in enumerate(kept.items()):
        out += _residual_column(2 + i * (col_w + gap), col_w, name, k, px)
    height = 102 + max(map(len, kept.values()), default=0) * 48 + 4
    caption = "; ".join(f"{name}: {len(k)} kept, {computed[name]} computed"
                        for name, k in kept.items())
    return Picture(svg.svg(SLIDE_W, height, out), caption, {"kept": kept, "computed": computed})


# --------------------------------------------------------------------------- the split

def _split_graphs(inner, unknowns) -> tuple:
    """partial_eval_jaxpr_nounits' two programs as graphs, their ends named: the known one's
    inputs and the unknown one's after f's parameters, the known one's last outputs and the
    unknown one's first inputs (the residuals, as pe orders them) by the known one's names."""
    from jax._src import core
    from jax._src.interpreters import partial_eval as pe

    known, unknown, _, res = pe.partial_eval_jaxpr_nounits(inner, unknowns=list(unknowns),
                                                           instantiate=False)
    n = len(res)
    outs = known.outvars[len(known.outvars) - n:]
    names = printer_names(known)
    rename = {u: names[o] for u, o in zip(unknown.invars[:n], outs)
              if not isinstance(o, core.Literal)}
    gk, gu = jaxpr_graph(known), jaxpr_graph(unknown, rename=rename)
    params = list(getattr(inner.debug_info, "arg_names", None) or [])
    params += [f"args[{i}]" for i in range(len(params), len(unknowns))]
    typ = lambda lines: lines[0][lines[0].index(":"):]
    gk.columns[0] = [(t, [p + typ(lines)], ins) for p, (t, lines, ins)
                     in zip([p for p, u in zip(params, unknowns) if not u], gk.columns[0])]
    late = [p for p, u in zip(params, unknowns) if u]
    gu.columns[0] = [(f"residual {t}", [typ(lines)[2:]], ins) if r < n else
                     (t, [late[r - n] + typ(lines)], ins)
                     for r, (t, lines, ins) in enumerate(gu.columns[0])]
    k_out = len(gk.columns[-1]) - n
    gk.columns[-1] = [("residual" if r >= k_out else t, lines, ins)
                      for r, (t, lines, ins) in enumerate(gk.columns[-1])]
    return known, unknown, gk, gu, n


def show_split(jaxpr, unknowns: list[bool]) -> Picture:
    """Partial evaluation's two programs side by side: on the left the known one (it runs
    now), on the right the unknown one (purple: it runs later), and a thick orange arrow
    for each residual, from the known program's output to the unknown program's input: what
    crosses the cut. Drawn from pe.partial_eval_jaxpr_nounits itself.

    Args:
        jaxpr: what `jax.make_jaxpr(f)(...)` returns, or a `jax.jit(f).trace(...)` result.
        unknowns: one bit per input, True for unknown.

    Returns:
        A `Picture` captioned "split: N known equation(s) → N residual(s) → N unknown
        equation(s)", its facts: "known" and "unknown" (each program's primitives, in
        order) and "residuals" (the residuals' names, as the known program's outputs).

    Example:
        >>> c = jax.make_jaxpr(lambda x, y: jnp.sin(x) * jnp.cos(y) + x)(1.0, 2.0)
        >>> show_split(c, [False, True]).facts
        {'known': ['sin'], 'unknown': ['cos', 'mul', 'add'], 'residuals': ['b', 'a']}
    """
    inner = _jaxpr_of(jaxpr)
    known, unknown, gk, gu, n = _split_graphs(inner, unknowns)
    top, gap = 36, 64
    lay_of = lambda h: _layout_right(h, 80, 36, top)
    dk, du = untangled(gk, lay_of, False), untangled(gu, lay_of, False)
    lk, lu = lay_of(dk), lay_of(du)
    dx = lk.width + gap
    out = [label(2, 26, "known: runs now", MIN_PX + 2, font=SANS, bold=True),
           label(dx, 26, "unknown: runs later", MIN_PX + 2, font=SANS, bold=True, fill=LATER)]
    for r in range(n):           # the residual edges first: under the boxes' borders
        kr = dk.columns[-1].index(gk.columns[-1][len(gk.columns[-1]) - n + r])
        ur = du.columns[0].index(gu.columns[0][r])
        x0, y0, w0, h0 = lk.box(dk.out_col, kr)
        x1, y1, _, h1 = lu.box(0, ur)
        out.append(svg.path(_path("curve", [(x0 + w0, y0 + h0 / 2), (dx + x1 - 2, y1 + h1 / 2)],
                                  False), fill="none", stroke=HERE, stroke_width=4,
                            marker_end="url(#residualhead)"))
    out += _draw_graph(dk, lk, False, False)
    out += _draw_graph(du, lu, False, False, colour=LATER, head="laterhead", dx=dx)
    width, height = dx + lu.width, max(lk.height, lu.height)
    facts = {"known": [e.primitive.name for e in known.eqns],
             "unknown": [e.primitive.name for e in unknown.eqns],
             "residuals": [lines[0] for _, lines, _ in gk.columns[-1][len(gk.columns[-1]) - n:]]}
    caption = (f"split: {len(facts['known'])} known equation(s) → {n} residual(s) → "
               f"{len(facts['unknown'])} unknown equation(s)")
    heads = [svg.arrowhead("graphhead", INK, 11), svg.arrowhead("laterhead", LATER, 11),
             svg.arrowhead("residualhead", HERE, 13)]
    picture = svg.svg(width, height, out, defs=heads, shown=grown(width, height, tall=GRAPH_TALL))
    return Picture(picture, caption, facts)
