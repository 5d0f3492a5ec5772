"""Pictures for slides, drawn from live JAX objects: inline SVG, no files, no web fonts.

A `Picture` shows as SVG in Jupyter, RISE and the PDF handouts; its `facts` are the numbers and
names it drew, so a hidden check cell can pin what the picture claims.
"""
from __future__ import annotations

import html
import inspect
import re
from collections import Counter
from dataclasses import dataclass, field

from .show import hlo_text

INK, FILL, ACCENT = "#1f3b57", "#eef4fb", "#b5651d"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
SANS = "DejaVu Sans, Helvetica, Arial, sans-serif"
CHAR_W = 9.1      # width of one monospace character at 15 px
LINE_H = 22


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


def _fit(text: str, width: float, px: float = 15) -> str:
    """Cut `text` to what fits in `width` pixels of `px` monospace, with a visible …."""
    n = max(1, int(width // (CHAR_W * px / 15)))
    return text if len(text) <= n else text[: n - 1] + "…"


def _list(names: list[str], room: int) -> list[str]:
    """`room` lines for a list of names: repeated names counted, the rest summarised."""
    counted = [f"{n} ×{k}" if k > 1 else n for n, k in Counter(names).items()]
    if len(counted) <= room:
        return counted
    return counted[: room - 1] + [f"+{len(counted) - room + 1} more"]


def flow(boxes: list[tuple[str, list[str]]], arrows: list[str], box_w: int = 186,
         gap: int = 90, title: str = "") -> str:
    """A left-to-right chain of boxes (a title and detail lines each), arrows labelled."""
    rows = max(len(lines) for _, lines in boxes)
    top = 34 if title else 8
    box_h = 44 + rows * LINE_H
    width = len(boxes) * box_w + (len(boxes) - 1) * gap + 4
    height = top + box_h + 8
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' "
           f"width='{width}' style='max-width:100%;height:auto' role='img'>",
           "<defs><marker id='arrowhead' viewBox='0 0 10 10' refX='9' refY='5' "
           "markerWidth='8' markerHeight='8' orient='auto'>"
           f"<path d='M0,0 L10,5 L0,10 z' fill='{INK}'/></marker></defs>"]
    if title:
        out.append(f"<text x='2' y='22' font-family=\"{SANS}\" font-size='18' "
                   f"fill='{INK}'>{html.escape(title)}</text>")
    for i, (name, lines) in enumerate(boxes):
        x = 2 + i * (box_w + gap)
        out.append(f"<rect x='{x}' y='{top}' width='{box_w}' height='{box_h}' rx='10' "
                   f"fill='{FILL}' stroke='{INK}' stroke-width='2'/>")
        out.append(f"<text x='{x + box_w / 2}' y='{top + 28}' text-anchor='middle' "
                   f"font-family=\"{SANS}\" font-size='19' font-weight='bold' "
                   f"fill='{INK}'>{html.escape(name)}</text>")
        for j, line in enumerate(lines):
            out.append(f"<text x='{x + 12}' y='{top + 56 + j * LINE_H}' "
                       f"font-family=\"{MONO}\" font-size='15' fill='#222'>"
                       f"{html.escape(_fit(line, box_w - 16))}</text>")
        if i < len(arrows):
            x0, x1, y = x + box_w + 4, x + box_w + gap - 4, top + box_h / 2
            out.append(f"<line x1='{x0}' y1='{y}' x2='{x1}' y2='{y}' stroke='{INK}' "
                       "stroke-width='2' marker-end='url(#arrowhead)'/>")
            out.append(f"<text x='{(x0 + x1) / 2}' y='{y - 10}' text-anchor='middle' "
                       f"font-family=\"{MONO}\" font-size='14' fill='{ACCENT}'>"
                       f"{html.escape(arrows[i])}</text>")
    out.append("</svg>")
    return "\n".join(out)


_MAIN_OP = re.compile(r'^    (?:%[\w#:]+(?:, %[\w#:]+)* = )?"?((?:\w+\.)+\w+|call)(?: (@\w+))?')
_HLO_OP = re.compile(r"^\s*(?:ROOT )?%([\w.\-]+) = (?:\([^()]*\)|\S+) ([a-z][\w\-]*)\(")


def _n(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


def stablehlo_ops(lowered) -> list[str]:
    """The top-level ops of the entry function @main, in order, `return` left out: ops
    nested in a region (a while body) are not listed; stablehlo. is dropped from the names,
    other dialects keep theirs (chlo.erf), a call names its callee (call @argmax)."""
    text = lowered.as_text()
    main = text.split("func.func public @main", 1)[1].split("\n  }\n", 1)[0]
    ops = []
    for line in main.split("\n")[1:]:
        m = _MAIN_OP.match(line)
        if not m or m.group(1).endswith("return"):
            continue
        op = m.group(1).removeprefix("stablehlo.").removeprefix("func.")
        ops.append(f"{op} {m.group(2)}" if op == "call" and m.group(2) else op)
    return ops


def hlo_entry(compiled) -> list[tuple[str, str]]:
    """(name, opcode) of each instruction of the compiled ENTRY, in order, parameters
    included. XLA names a loop fusion after what it fused: tanh_reduce_fusion."""
    text, _ = hlo_text(compiled)
    entry = text.split("\nENTRY ", 1)[1].split("\n}", 1)[0]
    return [m.groups() for line in entry.split("\n")[1:] if (m := _HLO_OP.match(line))]


def show_stations(fn, *args, room: int = 4) -> Picture:
    """The four stations of `jax.jit(fn)` on `args`, each box showing what it really produced:
    the jaxpr's primitives, @main's top-level ops, the names of the compiled ENTRY's
    instructions besides its parameters, the result's types (and value, for a scalar)."""
    import jax
    import numpy as np

    traced = jax.jit(fn).trace(*args)
    lowered = traced.lower()
    compiled = lowered.compile()
    result = compiled(*args)
    prims = [e.primitive.name for e in traced.jaxpr.eqns]
    entry = hlo_entry(compiled)
    ops = stablehlo_ops(lowered)
    hlo = [name for name, op in entry if op != "parameter"]
    n_params = len(entry) - len(hlo)
    leaves = jax.tree.leaves(result)
    shown = [f"{jax.typeof(v).str_short(short_dtypes=True)}" for v in leaves]
    value = []
    if len(leaves) == 1 and np.shape(leaves[0]) == ():
        try:
            value = [f"{np.asarray(leaves[0]).item():.6g}"]
        except (TypeError, ValueError):          # a PRNG key, or another opaque type
            pass
    name = getattr(fn, "__name__", type(fn).__name__)
    try:
        params = ", ".join(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = "…"
    facts = {"equations": prims, "stablehlo": ops, "hlo": hlo, "result": shown}
    boxes = [
        ("Python", [f"{name}({params})", "traced once", "per signature"]),
        ("jaxpr", [_n(len(prims), "equation")] + _list(prims, room)),
        ("StableHLO", [_n(len(ops), "op") + " in @main"] + _list(ops, room)),
        ("HLO", [f"ENTRY, {_n(n_params, 'param')} +"] + _list(hlo, room)),
        ("result", shown[:room] + value),
    ]
    svg = flow(boxes, [".trace()", ".lower()", ".compile()", "call"],
               title=f"jax.jit({name}): four stations, each hands you an artefact")
    caption = (f"jax.jit({name}): Python → jaxpr ({_n(len(prims), 'equation')}) → "
               f"StableHLO ({_n(len(ops), 'op')}) → HLO ({', '.join(hlo)}) → "
               f"{', '.join(shown)}")
    return Picture(svg, caption, facts)


def printer_names(jaxpr) -> dict:
    """Var -> the name `str(jaxpr)` gives it. Read from the printer's own naming context
    (unused results are _, names in nested and shared jaxprs are counted), by watching
    core.pp_toplevel_jaxpr create it while it prints."""
    from jax._src import core

    made = []
    real = core.JaxprPpContext

    class Watched(real):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            made.append(self)

    core.JaxprPpContext = Watched
    try:
        jaxpr.pretty_print()
    finally:
        core.JaxprPpContext = real
    return made[0].var_names


UNKNOWN_FILL = "#fdebd9"


def _jaxpr_of(x):
    """The core.Jaxpr to draw: `x` itself (what jax.make_jaxpr returns: one class, its consts
    attached) or the one a jit trace holds (jax.jit(f).trace(...).jaxpr)."""
    from jax._src import core

    jaxpr = x if isinstance(x, core.Jaxpr) else getattr(x, "jaxpr", None)
    if not isinstance(jaxpr, core.Jaxpr):
        raise TypeError(f"show_graph needs a jaxpr (what jax.make_jaxpr returns) or a jit "
                        f"trace, not a {type(x).__name__}")
    return jaxpr


def _split(jaxpr, unknowns, known_eqns, unknown_eqns, residuals) -> None:
    """Raise unless partial_eval_jaxpr_nounits splits `jaxpr` the way the picture does."""
    from jax._src.interpreters import partial_eval as pe

    known, unknown, _, res = pe.partial_eval_jaxpr_nounits(jaxpr, unknowns=list(unknowns),
                                                           instantiate=False)
    said = ([e.primitive.name for e in known.eqns], [e.primitive.name for e in unknown.eqns],
            len(res))
    drew = (known_eqns, unknown_eqns, len(residuals))
    if said != drew:
        raise ValueError(f"partial evaluation splits this jaxpr as {said} (known, unknown, "
                         f"residuals), not as drawn {drew}")


def show_graph(jaxpr, down: bool = False, box_w: int = 196, gap: int = 54,
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
    from jax._src import core

    inner = _jaxpr_of(jaxpr)
    names = list(getattr(inner.debug_info, "arg_names", None) or [])
    printed = printer_names(inner)
    name = lambda v: printed[v]
    lit = lambda x: x.pretty_print(None, print_dtype=False)
    typ = lambda v: ("~" if v.aval.weak_type else "") + v.aval.str_short(short_dtypes=True)
    col: dict = {}                 # Var -> column of the box that defines it
    place: dict = {}               # Var -> (column, row)
    columns: list[list[tuple[str, list[str], list]]] = [[]]
    if unknowns is not None and len(unknowns) != len(inner.invars):
        raise ValueError(f"unknowns has {len(unknowns)} bit(s); the jaxpr has "
                         f"{len(inner.invars)} input(s)")
    bits = [False] * len(inner.constvars) + list(unknowns or [False] * len(inner.invars))
    unk: dict = {}                 # Var -> unknown until later?
    boxes_unk: dict = {}           # (column, row) -> unknown?
    for i, v in enumerate(list(inner.constvars) + list(inner.invars)):
        const = i < len(inner.constvars)
        arg = "const" if const else (names[i - len(inner.constvars)] if
                                      i - len(inner.constvars) < len(names) else "arg")
        col[v] = 0
        place[v] = (0, len(columns[0]))
        unk[v] = boxes_unk[place[v]] = bits[i]
        columns[0].append((name(v), [f"{arg}: {typ(v)}"], []))
    edges = []
    known_eqns, unknown_eqns, residuals = [], [], []
    for eqn in inner.eqns:
        ins = [x for x in eqn.invars if not isinstance(x, core.Literal)]
        c = 1 + max((col[x] for x in ins), default=0)
        while len(columns) <= c:
            columns.append([])
        title = eqn.primitive.name
        if any(isinstance(x, core.Literal) for x in eqn.invars):   # add(·, 2.0)
            title += "(" + ", ".join(lit(x) if isinstance(x, core.Literal) else "·"
                                     for x in eqn.invars) + ")"
        outs = [o for o in eqn.outvars if not isinstance(o, core.DropVar)]
        lines = [", ".join(f"{name(o)}: {typ(o)}" for o in outs) or "_"]
        row = len(columns[c])
        columns[c].append((title, lines, ins))
        u = any(unk[x] for x in ins)
        boxes_unk[(c, row)] = u
        (unknown_eqns if u else known_eqns).append(eqn.primitive.name)
        for x in ins:
            crossing = u and not unk[x]
            if crossing and x not in residuals:
                residuals.append(x)
            edges.append((place[x], (c, row), name(x), crossing))
        for o in eqn.outvars:
            unk[o] = u
        for o in outs:
            col[o], place[o] = c, (c, row)
    out_col = len(columns)
    columns.append([])
    for o in inner.outvars:
        if isinstance(o, core.Literal):
            columns[out_col].append(("out", [lit(o)], []))
            continue
        columns[out_col].append(("out", [name(o)], [o]))
        boxes_unk[(out_col, len(columns[out_col]) - 1)] = unk[o]
        edges.append((place[o], (out_col, len(columns[out_col]) - 1), name(o), False))
    if unknowns is not None:
        _split(inner, unknowns, known_eqns, unknown_eqns, residuals)
    top = 34 if unknowns is not None else 0      # a legend line

    rows = max(len(c) for c in columns)
    if down:      # levels top to bottom, each level's boxes centred: larger type fits
        box_w, box_h, across, along, big, small = 270, 56, 30, 28, 20, 18
        span = rows * box_w + (rows - 1) * across
        pad = 60                   # room on the left for arrows that skip a level
        width = max(pad + span + 4, 660 if unknowns is not None else 0)
        height = top + len(columns) * (box_h + along) - along + 8

        def xy(c, r):
            n = len(columns[c])
            left = (span - (n * box_w + (n - 1) * across)) / 2
            return pad + left + r * (box_w + across), top + 4 + c * (box_h + along)
    else:
        box_h, vgap, big, small = 56, 26, 15, 14
        width = len(columns) * box_w + (len(columns) - 1) * gap + 4
        height = top + rows * box_h + (rows - 1) * vgap + 8
        xy = lambda c, r: (2 + c * (box_w + gap), top + 4 + r * (box_h + vgap))
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' "
           f"width='{width}' style='max-width:100%;height:auto' role='img'>",
           "<defs><marker id='graphhead' viewBox='0 0 10 10' refX='9' refY='5' "
           "markerUnits='userSpaceOnUse' markerWidth='11' markerHeight='11' orient='auto'>"
           f"<path d='M0,0 L10,5 L0,10 z' fill='{INK}'/></marker></defs>"]
    if unknowns is not None:
        out.append(f"<text x='2' y='22' font-family=\"{SANS}\" font-size='16' fill='{INK}'>"
                   f"blue: known now · <tspan fill='{ACCENT}'>orange: unknown until later"
                   "</tspan> · thick: residuals</text>")
    for (c0, r0), (c1, r1), _, crossing in edges:
        (x0, y0), (x1, y1) = xy(c0, r0), xy(c1, r1)
        if down and c1 - c0 > 1:   # skips a level: round the left side, not through boxes
            y0, y1, x1 = y0 + box_h / 2, y1 + box_h / 2, x1 - 2
            bend = min(x0, x1) - 55
            curve = f"C{bend},{y0} {bend},{y1} {x1},{y1}"
        elif down:
            x0, y0, x1, y1 = x0 + box_w / 2, y0 + box_h, x1 + box_w / 2, y1 - 2
            mid = (y0 + y1) / 2
            curve = f"C{x0},{mid} {x1},{mid} {x1},{y1}"
        else:
            x0, y0, x1, y1 = x0 + box_w, y0 + box_h / 2, x1 - 2, y1 + box_h / 2
            mid = (x0 + x1) / 2
            curve = f"C{mid},{y0} {mid},{y1} {x1},{y1}"
        out.append(f"<path d='M{x0},{y0} {curve}' fill='none' "
                   f"stroke='{ACCENT if crossing else INK}' "
                   f"stroke-width='{4 if crossing else 1.6}' marker-end='url(#graphhead)'/>")
    for c, column in enumerate(columns):
        for r, (title, lines, _) in enumerate(column):
            x, y = xy(c, r)
            late = unknowns is not None and boxes_unk[(c, r)]
            fill = "#fff" if c in (0, out_col) else UNKNOWN_FILL if late else FILL
            dash = " stroke-dasharray='7 4'" if late else ""
            out.append(f"<rect x='{x}' y='{y}' width='{box_w}' height='{box_h}' rx='8' "
                       f"fill='{fill}' stroke='{ACCENT if late else INK}' "
                       f"stroke-width='2'{dash}/>")
            out.append(f"<text x='{x + box_w / 2}' y='{y + big + 6}' text-anchor='middle' "
                       f"font-family=\"{MONO}\" font-size='{big}' font-weight='bold' "
                       f"fill='{ACCENT if c in (0, out_col) else INK}'>"
                       f"{html.escape(_fit(title, box_w - 12, big))}</text>")
            for j, line in enumerate(lines[:1]):
                out.append(f"<text x='{x + box_w / 2}' y='{y + 2 * big + 8 + j * (small + 3)}' "
                           f"text-anchor='middle' font-family=\"{MONO}\" "
                           f"font-size='{small}' fill='#222'>"
                           f"{html.escape(_fit(line, box_w - 12, small))}</text>")
    out.append("</svg>")
    boxes = [t for column in columns[1:out_col] for t, _, _ in column]
    facts = {"columns": [[t for t, _, _ in column] for column in columns],
             "edges": [e[2] for e in edges]}
    if unknowns is not None:
        facts.update(known=known_eqns, unknown=unknown_eqns,
                     residuals=[name(v) for v in residuals])
    caption = (f"dataflow: {len(columns[0])} input(s) → {len(boxes)} equation(s) in "
               f"{out_col - 1} column(s) → {len(columns[out_col])} output(s)")
    return Picture("\n".join(out), caption, facts)


_GROUPED = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")
_REPLICA_GROUPS = re.compile(r"replica_groups=(\{\{[\d,{}]*\}\}|\[[\d,]+\]<=\[[\d,]+\]"
                             r"(?:T\([\d,]+\))?|mesh\[[^\]]*\](?:, device_ids=\([^()]*"
                             r"(?:\([\d,]*\))?\))? \{[^}]*\})")
PALETTE = ["#b5651d", "#2e7d32", "#6a1b9a", "#1565c0", "#c62828", "#00838f", "#9e9d24",
           "#4e342e"]


def replica_groups(text: str) -> list[list[int]]:
    """The device groups of one replica_groups= value, in any of the three forms the
    compiled HLO writes: {{0,4},{1,5}}, an iota [4,2]<=[2,4]T(1,0), or the mesh-axes form
    mesh['x'=2,'y'=4] {'x'} (XLA on 0.12 writes the mesh's own axis names; optionally with
    device_ids=([2,4]T(1,0)), the ids in mesh order). Ids are logical: positions in the
    device assignment."""
    import numpy as np

    if text.startswith("{{"):
        return [[int(i) for i in g.split(",") if i] for g in text[2:-2].split("},{")]
    if text.startswith("["):
        m = re.fullmatch(r"\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", text)
        shape, dims = [list(map(int, g.split(","))) for g in m.groups()[:2]]
        ids = np.arange(int(np.prod(dims))).reshape(dims)
        if m.group(3):
            ids = ids.transpose([int(p) for p in m.group(3).split(",")])
        return ids.reshape(shape).tolist()
    m = re.fullmatch(r"mesh\[([^\]]*)\](?:, device_ids=\((.*)\))? \{([^}]*)\}", text)
    axes = re.findall(r"'(\w+)'=(\d+)", m.group(1))
    names, sizes = [a for a, _ in axes], [int(s) for _, s in axes]
    over = [names.index(a) for a in re.findall(r"'(\w+)'", m.group(3))]
    rest = [i for i in range(len(names)) if i not in over]
    ids = np.arange(int(np.prod(sizes)))
    if m.group(2):                 # the device ids, in mesh order: an iota, maybe transposed
        d = re.fullmatch(r"\[([\d,]+)\](?:T\(([\d,]+)\))?", m.group(2))
        ids = ids.reshape([int(k) for k in d.group(1).split(",")])
        if d.group(2):
            ids = ids.transpose([int(p) for p in d.group(2).split(",")])
    ids = ids.reshape(sizes).transpose(rest + over)
    return ids.reshape(-1, int(np.prod([sizes[i] for i in over]))).tolist()


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
    rows_name, cols_name = (str(a) for a in mesh.axis_names)
    found, left = [], []           # (kind, groups) drawn; kinds that name no groups
    for line in hlo_text(compiled)[0].split("\n"):
        m = _HLO_OP.match(line)
        kind = m and m.group(2).removesuffix("-start")
        if kind in _GROUPED + ("collective-permute",):
            groups = _REPLICA_GROUPS.search(line) if kind in _GROUPED else None
            if groups:
                found.append((kind, replica_groups(groups.group(1))))
            else:
                left.append(kind)
    left = sorted(set(left))
    cell_w, cell_h, pad, gap = 150, 84, 16, 40
    panel_w = max(cols * cell_w + 2 * pad, 470)
    panel_h = 34 + rows * cell_h + 2 * pad
    width = max(1, len(found)) * panel_w + (max(1, len(found)) - 1) * gap + 4
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {panel_h + 4}' "
           f"width='{width}' style='max-width:100%;height:auto' role='img'>"]
    where = {i: divmod(i, cols) for i in range(rows * cols)}   # logical id -> (row, col)
    for n, (kind, groups) in enumerate(found):
        x0 = 2 + n * (panel_w + gap)
        size = {len(g) for g in groups}
        out.append(f"<text x='{x0}' y='22' font-family=\"{SANS}\" font-size='20' "
                   f"fill='{INK}'>{html.escape(kind)}: {_n(len(groups), 'group')} of "
                   f"{'/'.join(map(str, sorted(size)))} · rows {html.escape(rows_name)}, "
                   f"columns {html.escape(cols_name)}</text>")
        for i, (r, c) in where.items():
            x, y = x0 + pad + c * cell_w, 34 + pad + r * cell_h
            out.append(f"<rect x='{x + 10}' y='{y + 10}' width='{cell_w - 20}' "
                       f"height='{cell_h - 20}' rx='6' fill='{FILL}' stroke='{INK}'/>")
            out.append(f"<text x='{x + cell_w / 2}' y='{y + cell_h / 2 + 7}' "
                       f"text-anchor='middle' font-family=\"{MONO}\" font-size='20' "
                       f"fill='{INK}'>dev {grid.flat[i].id}</text>")
        for k, group in enumerate(groups):
            colour = PALETTE[k % len(PALETTE)]
            rs, cs = [where[i][0] for i in group], [where[i][1] for i in group]
            box = (max(rs) - min(rs) + 1) * (max(cs) - min(cs) + 1) == len(group)
            if box:      # the group is a block of the grid: outline it
                x = x0 + pad + min(cs) * cell_w + 3
                y = 34 + pad + min(rs) * cell_h + 3
                out.append(f"<rect x='{x}' y='{y}' width='{(max(cs) - min(cs) + 1) * cell_w - 6}'"
                           f" height='{(max(rs) - min(rs) + 1) * cell_h - 6}' rx='10' "
                           f"fill='none' stroke='{colour}' stroke-width='3' "
                           "stroke-dasharray='8 4'/>")
            else:        # scattered: join its devices in order
                pts = " ".join(f"{x0 + pad + where[i][1] * cell_w + cell_w / 2},"
                               f"{34 + pad + where[i][0] * cell_h + cell_h / 2}" for i in group)
                out.append(f"<polyline points='{pts}' fill='none' stroke='{colour}' "
                           "stroke-width='3' stroke-dasharray='8 4'/>")
    if not found:
        say = ("not drawn: " + ", ".join(left) if left
               else "no collective: every device works alone")
        out.append(f"<text x='2' y='22' font-family=\"{SANS}\" font-size='18' "
                   f"fill='{INK}'>{html.escape(say)}</text>")
    elif left:
        out.append(f"<text x='2' y='{panel_h + 2}' font-family=\"{SANS}\" font-size='14' "
                   f"fill='{INK}'>not drawn: {html.escape(', '.join(left))}</text>")
    out.append("</svg>")
    facts = {"collectives": [{"kind": k, "groups": g} for k, g in found], "not_drawn": left}
    caption = "; ".join(f"{k}: groups {g}" for k, g in found) or "no collectives"
    return Picture("\n".join(out), caption, facts)


def show_tree(tree, is_leaf=None) -> Picture:
    """A pytree as tree_util sees it: one box per node of its treedef (containers by type,
    None as an empty node, leaves numbered in flatten order) and each edge labelled with its
    key: the one on the leaf paths (tree_flatten_with_path) where the child holds leaves,
    else flatten_one_level_with_keys' (on jaxlib 0.12 it names a namedtuple's fields
    right; 0.10.2's named every field after the first)."""
    import jax
    from jax import tree_util as tu

    treedef = tu.tree_structure(tree, is_leaf=is_leaf)
    none_too = (lambda x: x is None or is_leaf(x)) if is_leaf else (lambda x: x is None)
    paths = [p for p, _ in tu.tree_flatten_with_path(tree, is_leaf=none_too)[0]]
    nodes, edges = [], []          # node: (x, depth, title, detail, kind); edge: (i, j, key)
    leaf_no = iter(range(treedef.num_leaves))
    spot = iter(range(len(paths) + treedef.num_nodes))   # left-to-right slots

    def show(v):
        try:
            return jax.typeof(v).str_short(short_dtypes=True) if hasattr(v, "shape") else repr(v)
        except TypeError:
            return type(v).__name__

    def walk(t, value, at: int, depth: int) -> tuple[int, float]:
        """Draw treedef `t` of `value`, whose first position is paths[at]; return
        (positions, x)."""
        data = t.node_data()
        me = len(nodes)
        if data is None:                                   # a leaf
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
            if n:                      # the key on the paths through this child
                key = tu.keystr((paths[at + used][depth],))
            else:
                key = tu.keystr((kids[i][0],))
            edges.append((me, j, key))
            used += n
            xs.append(x)
        if not xs:
            nodes[me][0] = next(spot)
        else:
            nodes[me][0] = sum(xs) / len(xs)
        return used, nodes[me][0]

    walk(treedef, tree, 0, 0)
    box_w, box_h, slot, level = 150, 56, 172, 100
    slots = max(n[0] for n in nodes) + 1
    depth = max(n[1] for n in nodes) + 1
    width, height = slots * slot + 4, depth * level - (level - box_h) + 8
    xy = lambda n: (2 + n[0] * slot + (slot - box_w) / 2, 4 + n[1] * level)
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' "
           f"width='{width}' style='max-width:100%;height:auto' role='img'>"]
    for i, j, key in edges:
        (x0, y0), (x1, y1) = xy(nodes[i]), xy(nodes[j])
        x0, y0, x1 = x0 + box_w / 2, y0 + box_h, x1 + box_w / 2
        out.append(f"<line x1='{x0}' y1='{y0}' x2='{x1}' y2='{y1}' stroke='{INK}' "
                   "stroke-width='1.6'/>")
        out.append(f"<text x='{(x0 + x1) / 2 + 6}' y='{(y0 + y1) / 2 + 5}' "
                   f"font-family=\"{MONO}\" font-size='16' fill='{ACCENT}' "
                   f"stroke='#fff' stroke-width='4' paint-order='stroke'>"
                   f"{html.escape(_fit(key, slot, 16))}</text>")
    for n in nodes:
        x, y = xy(n)
        _, _, title, detail, kind = n
        fill = {"leaf": FILL, "none": "#fff", "node": "#fff"}[kind]
        dash = " stroke-dasharray='6 4'" if kind == "none" else ""
        out.append(f"<rect x='{x}' y='{y}' width='{box_w}' height='{box_h}' rx='8' "
                   f"fill='{fill}' stroke='{INK}' stroke-width='2'{dash}/>")
        out.append(f"<text x='{x + box_w / 2}' y='{y + (23 if detail else 34)}' "
                   f"text-anchor='middle' font-family=\"{MONO}\" font-size='17' font-weight='bold' "
                   f"fill='{INK}'>{html.escape(_fit(title, box_w - 10, 17))}</text>")
        if detail:
            out.append(f"<text x='{x + box_w / 2}' y='{y + 45}' text-anchor='middle' "
                       f"font-family=\"{MONO}\" font-size='15' fill='#222'>"
                       f"{html.escape(_fit(detail, box_w - 10))}</text>")
    out.append("</svg>")
    edges.sort(key=lambda e: e[1])                        # in the treedef's order
    facts = {"nodes": len(nodes), "leaves": [n[3] for n in nodes if n[4] == "leaf"],
             "keys": [k for _, _, k in edges]}
    caption = (f"pytree: {len(nodes)} nodes, {treedef.num_leaves} leaves: "
               + ", ".join(tu.keystr(p) for p, _ in tu.tree_flatten_with_path(
                   tree, is_leaf=is_leaf)[0]))
    return Picture("\n".join(out), caption, facts)
