"""The pictures of what surrounds a jaxpr: a mesh's collectives, a sharding's blocks, a
pytree's nodes, the caches under a jit call, and where vmap keeps the batch axis. Style and
`Picture`: pictures.py."""
from __future__ import annotations

import re

from . import svg
from .artefacts import batch_dims, collective_groups
from .palette import (
    BATCH,
    BATCH_FILL,
    FILL,
    HIT,
    HIT_FILL,
    INK,
    MISS,
    MISS_FILL,
    MUTED,
    PAPER,
    TEXT,
)
from .pictures import (
    EM,
    GRAPH_TALL,
    MIN_PX,
    SANS,
    SLIDE_W,
    Picture,
    _chars,
    _fit,
    _n,
    grown,
    label,
)

CELL_W, CELL_H, PAD = 150, 84, 16          # a device's box on the mesh, the panel's margin


# --------------------------------------------------------------------------- collectives

def _mesh(x0: float, y0: float, groups: list, grid, cell: tuple[float, float],
          one_line: bool = False) -> list:
    """The mesh's devices as boxes from (x0, y0), each naming its device and its group (on
    one line, or two), and each group a dashed outline (a block of the grid) or a line
    through its devices in order (scattered)."""
    rows, cols = grid.shape
    cell_w, cell_h = cell
    where = {i: divmod(i, cols) for i in range(rows * cols)}   # logical id -> (row, col)
    group_of = {i: k for k, group in enumerate(groups) for i in group}
    out = []
    for i, (r, c) in where.items():
        x, y = x0 + c * cell_w, y0 + r * cell_h
        out.append(svg.rect(x + 10, y + 10, cell_w - 20, cell_h - 20, rx=6, fill=FILL, stroke=INK))
        name = f"dev {grid.flat[i].id}"
        if one_line:    # each device says its group: the outlines need no colours
            out.append(label(str(x + cell_w / 2), str(y + cell_h / 2 + 7),
                             [name, svg.tspan(f" · group {group_of[i]}", fill=TEXT)]
                             if i in group_of else name, 20, anchor="middle"))
            continue
        out.append(label(str(x + cell_w / 2), str(y + cell_h / 2 - 1), name, 20, anchor="middle"))
        if i in group_of:
            out.append(label(str(x + cell_w / 2), str(y + cell_h / 2 + 21),
                             f"group {group_of[i]}", 20, anchor="middle", fill=TEXT))
    for group in groups:
        rs, cs = [where[i][0] for i in group], [where[i][1] for i in group]
        if (max(rs) - min(rs) + 1) * (max(cs) - min(cs) + 1) == len(group):   # a block
            out.append(svg.rect(x0 + min(cs) * cell_w + 3, y0 + min(rs) * cell_h + 3,
                                (max(cs) - min(cs) + 1) * cell_w - 6,
                                (max(rs) - min(rs) + 1) * cell_h - 6, rx=10, fill="none",
                                stroke=INK, stroke_width=3, stroke_dasharray="8 4"))
        else:
            pts = " ".join(f"{x0 + where[i][1] * cell_w + cell_w / 2},"
                           f"{y0 + where[i][0] * cell_h + cell_h / 2}" for i in group)
            out.append(svg.polyline(pts, fill="none", stroke=INK, stroke_width=3,
                                    stroke_dasharray="8 4"))
    return out


def _sizes(groups: list) -> str:
    return f"{_n(len(groups), 'group')} of {'/'.join(map(str, sorted({len(g) for g in groups})))}"


def _panel(x0: int, kind: str, groups: list, grid, names: tuple[str, str]) -> list:
    """One collective on the mesh, its title above it. Coordinates are written as Python
    prints them (77.0), as this picture always has."""
    out = [label(x0, 22, f"{kind}: {_sizes(groups)} · rows {names[0]}, columns {names[1]}",
                 20, font=SANS)]
    return out + _mesh(x0 + PAD, 34 + PAD, groups, grid, (CELL_W, CELL_H))


def _rows(found: list, grid, names: tuple[str, str]) -> tuple[list, float]:
    """Each collective a row across the slide: its kind and groups at the left, the mesh
    beside them with cells as wide as the row leaves (one line each where it fits); the
    mesh's axes said once above. Returns the elements and the height."""
    rows, cols = grid.shape
    label_w = max(_chars(k, 22) for k, _ in found) + 24
    label_w = max(label_w, max(_chars(_sizes(g), 20) for _, g in found) + 24)
    cell_w = (SLIDE_W - 4 - label_w) / cols
    longest = max(len(f"dev {d.id} · group {len(g) - 1}") for d in grid.flat for _, g in found)
    one = longest * EM * 20 <= cell_w - 28
    cell_h = 56 if one else CELL_H
    out = [label(2, 24, f"mesh rows {names[0]} ({rows}), columns {names[1]} ({cols}) · "
                 "each dashed outline: one group that combines its values", 20, font=SANS)]
    y, row_h = 40, rows * cell_h + 14
    for kind, groups in found:
        out.append(label(2, y + row_h / 2 - 4, kind, 22, font=SANS, bold=True))
        out.append(label(2, y + row_h / 2 + 22, _sizes(groups), 20, font=SANS, fill=TEXT))
        out += _mesh(2 + label_w, y + 7, groups, grid, (cell_w, cell_h), one)
        y += row_h + 8
    return out, y - 8


def show_collectives(compiled, mesh) -> Picture:
    """Who talks to whom: each collective of the compiled HLO drawn on a 2-D mesh.

    One panel per collective (all-reduce, all-gather, reduce-scatter, all-to-all; an async
    one by its -start), in the HLO's order, side by side where they fit the slide at their
    size, else one row each across the slide (text at 20 px): the mesh's devices as boxes,
    each naming its device id and its group, and one dashed outline per group of devices
    that combine their values (a line through them, in order, where the group is not a block
    of the mesh). The groups are read from each collective's replica_groups; they count
    positions in `mesh.devices`, row by row. A collective it cannot draw
    (collective-permute names pairs, not groups) is listed as not drawn, never dropped
    silently.

    Args:
        compiled: a `jax.jit(f).lower(...).compile()` result, partitioned over `mesh`.
        mesh: the 2-D `jax.sharding.Mesh` it runs on (its axis names label the panels).

    Returns:
        A `Picture` captioned "kind: groups [...]" per collective ("no collectives" when
        there are none), its facts: "collectives" (a {"kind", "groups"} dict per panel) and
        "not_drawn" (the kinds of collective it could not draw, sorted).

    Raises:
        ValueError: the mesh is not 2-D.

    Example:
        >>> from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
        >>> mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        >>> x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("y")))
        >>> show_collectives(jax.jit(jnp.sum).lower(x).compile(), mesh)
        all-reduce: groups [[0, 1, 2, 3], [4, 5, 6, 7]]
    """
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
    if width > SLIDE_W:      # side by side they would shrink: a row each, across the slide
        out, panel_h = _rows(found, grid, names)
        width = SLIDE_W
    else:
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
    height = panel_h + (30 if found and left else 4)
    return Picture(svg.svg(width, height, out, shown=grown(width, height)), caption, facts)


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
            if hasattr(v, "shape"):
                return jax.typeof(v).str_short(short_dtypes=True)
            return _plain(v)
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
        aux = _aux(kind, data[1])           # a registered type's aux data: in the treedef
        nodes.append([None, depth, kind.__name__, aux and f"aux: {aux}", "node"])
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


def _plain(v) -> str:
    """A leaf's repr, or its type's name where the repr is the default one (an address)."""
    text = repr(v)
    return type(v).__name__ if " object at 0x" in text else text


BUILTIN = (dict, list, tuple)     # their node data is their keys (or nothing): no aux drawn


def _aux(kind: type, aux) -> str:
    """What a registered node keeps in the treedef besides its children: its aux data (a
    dataclass's static fields, a static type's instance), '' for the built-in containers."""
    if issubclass(kind, BUILTIN) or kind.__module__ == "collections" or aux is None:
        return ""
    return _plain(aux)


def show_tree(tree, is_leaf=None) -> Picture:
    """A pytree as tree_util sees it: one box per node of its treedef, each edge its key.

    Containers are boxes named by their type (a registered type's box also shows its aux
    data, what the treedef keeps of it: a dataclass's static fields, a static type's
    instance), a None is an empty (dashed) node, and each leaf is numbered in flatten order
    and shows its type (an array's short type, f32[2,3]) or its repr (an object's type name
    where its repr is only an address). Each edge is labelled with its key as
    `jax.tree_util.keystr` writes it (['w'], [0], .field). A small tree spreads over the
    slide's width, its text at 20 px; a tree of more than six slots is drawn wider and
    scaled down to the slide. Coordinates are written as Python prints them (12.0).

    Args:
        tree: the pytree to draw.
        is_leaf: as in `jax.tree_util`: a function of a subtree that returns True where the
            tree should stop (that subtree is drawn as one leaf), or None. Defaults to None.

    Returns:
        A `Picture` captioned "pytree: N nodes, K leaves: " and the leaves' paths, its facts:
        "nodes" (how many boxes), "leaves" (what each leaf box shows, in flatten order) and
        "keys" (each edge's key, in the treedef's order) and "aux" ((type name, aux data as
        drawn) for each registered node that keeps aux data, in the treedef's order).

    Example:
        >>> pic = show_tree({"w": jnp.ones((2, 3)), "b": None, "n": (1.0, 2)})
        >>> pic
        pytree: 6 nodes, 3 leaves: ['n'][0], ['n'][1], ['w']
        >>> pic.facts["leaves"], pic.facts["keys"]
        (['1.0', '2', 'f32[2,3]'], ["['b']", "['n']", '[0]', '[1]', "['w']"])
    """
    from jax import tree_util as tu

    treedef = tu.tree_structure(tree, is_leaf=is_leaf)
    nodes, edges = _tree_nodes(tree, treedef, is_leaf)
    slots = max(n[0] for n in nodes) + 1
    depth = max(n[1] for n in nodes) + 1
    px = 20
    slot = max(180, (SLIDE_W - 4) / slots)       # a small tree spreads over the slide
    box_w, box_h, level = min(slot - 20, 320), 52, 86    # short: under a class's code
    xy = lambda n: (2 + n[0] * slot + (slot - box_w) / 2, 4 + n[1] * level)
    out, keys = [], []
    for i, j, key in edges:
        (x0, y0), (x1, y1) = xy(nodes[i]), xy(nodes[j])
        x0, y0, x1 = x0 + box_w / 2, y0 + box_h, x1 + box_w / 2
        out.append(svg.line(str(x0), str(y0), str(x1), str(y1), stroke=INK, stroke_width=1.6))
        # the key on a card of its own, over every edge (no edge strikes it through), just
        # above its child: siblings' keys, a slot apart, never overlap
        text, ky = _fit(key, slot - 12, px), y1 - 12
        w = _chars(text, px)
        keys += [svg.rect(round(x1 - w / 2 - 4, 1), round(ky - 19, 1), round(w + 8, 1),
                          25, rx=4, fill=PAPER, stroke=INK, stroke_width=1,
                          **{"class": "label"}),   # over its edge on purpose
                 label(str(x1), str(ky), text, px, anchor="middle", fill=INK)]
    out += keys
    for n in nodes:
        (x, y), (_, _, title, detail, kind) = xy(n), n
        out.append(svg.rect(str(x), y, box_w, box_h, rx=8, fill=FILL if kind == "leaf" else PAPER,
                            stroke=INK, stroke_width=2,
                            stroke_dasharray="6 4" if kind == "none" else None))
        out.append(label(str(x + box_w / 2), y + (22 if detail else 33),
                         _fit(title, box_w - 10, px + 1), px + 1, anchor="middle", bold=True))
        if detail:
            out.append(label(str(x + box_w / 2), y + 45, _fit(detail, box_w - 10, px), px,
                             anchor="middle", fill=TEXT))
    edges.sort(key=lambda e: e[1])                        # in the treedef's order
    facts = {"nodes": len(nodes), "leaves": [n[3] for n in nodes if n[4] == "leaf"],
             "keys": [k for _, _, k in edges],
             "aux": [(n[2], n[3][5:]) for n in nodes if n[4] == "node" and n[3]]}
    paths = tu.tree_flatten_with_path(tree, is_leaf=is_leaf)[0]
    caption = (f"pytree: {len(nodes)} nodes, {treedef.num_leaves} leaves: "
               + ", ".join(tu.keystr(p) for p, _ in paths))
    picture = svg.svg(round(slots * slot + 4, 1), depth * level - (level - box_h) + 8, out)
    return Picture(picture, caption, facts)


# --------------------------------------------------------------------------- the jit caches

OUTCOME = {"hit": ("hit", HIT, HIT_FILL), "miss": ("miss", MISS, MISS_FILL),
           "·": ("·", MUTED, PAPER)}


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
        out.append(svg.rect(x + 14, mid - 16, cell - 28, 32, rx=16, fill=fill, stroke=colour,
                            stroke_width=1.5 if v == "·" else 3,
                            stroke_dasharray="5 4" if v == "·" else None))
        out.append(label(x + cell / 2, mid + 7, word, px, anchor="middle", fill=colour,
                         bold=v != "·"))
    return out


def _home(holder: str, name: str, width: float, px: float) -> list[str]:
    """Where a cache lives, as lines that fit `width`: its module's file, then the variable
    that holds it when that is not the name its box already shows."""
    module, variable = holder.split(".", 1)
    return _wrap(f"{module}.py", width, px) + (_wrap(variable, width, px) if variable != name
                                               else [])


def show_cache_chain(rows: dict[str, dict[str, str]], homes: bool = False) -> Picture:
    """The six in-process caches under a jit call, and which of them each call hit.

    The caches (jitcache.CHAIN, in the order a call meets them) are a chain of boxes, and
    each call of `rows` is a lane under the chain: green where a cache hit, red where it
    missed, grey where the call never reached it, the lane's line running as far as the call
    went. A repeat call stops at the first box; a new shape runs all the way down.

    Args:
        rows: {call label: what `workshop.jitcache.probe(f, *args)` returned for that call},
            in the order to draw them: each a {cache name: "hit", "miss" or "·"} dict over
            the six caches. May be empty: the chain alone.
        homes: if True, each box also says where its cache lives: the module, and the
            variable that holds it where that is not its name (jitcache.CHAIN's holders).
            Defaults to False.

    Returns:
        A `Picture` captioned with each call's outcomes (or the chain, with no calls), its
        facts: "caches" (the six names, in order), "calls" ({call label: [(cache, outcome),
        ...]}) and "homes" (each cache's holder, module.variable, when `homes`).

    Raises:
        ValueError: a row is not a probe result (other caches, or another outcome).

    Example:
        >>> from workshop.jitcache import probe
        >>> f = jax.jit(lambda x: jax.lax.sin(x))
        >>> x = jnp.ones(3)
        >>> rows = {"first call": probe(f, x), "repeat call": probe(f, x)}
        >>> pic = show_cache_chain(rows)
        >>> pic
        first call: miss miss miss miss miss miss; repeat call: hit · · · · ·
        >>> pic.facts["caches"][:3]
        ['C++ fast path', '_infer_params_cached', 'trace_to_jaxpr']
    """
    from .jitcache import CHAIN

    caches = [name for name, *_ in CHAIN]
    for call, verdict in rows.items():
        if sorted(verdict) != sorted(caches) or set(verdict.values()) - set(OUTCOME):
            raise ValueError(f"{call!r} is not a jitcache.probe result: {verdict}")
    px, gap = MIN_PX + 2, 10
    label_w = max([_chars(c, px) for c in rows] + [_chars("call", px)]) + 20 if rows else 0
    cell = (SLIDE_W - 4 - label_w - 5 * gap) / 6
    heads = [_wrap(c, cell - 14, px) for c in caches]
    holders = [name for _, name, *_ in CHAIN]
    where = [_home(h, label, cell - 14, px) if homes else [] for h, label in zip(holders, caches)]
    rows_in = max(map(len, heads)) + max(map(len, where))
    # a name part that cannot break (_compilation) sets the boxes' type a little smaller
    longest = max(len(line) for lines in heads + where for line in lines)
    hpx = max(MIN_PX, min(px, (cell - 12) / (EM * longest)))
    head_h = 16 + rows_in * (px + 5)
    top, lane_h = 34, 40           # lanes as close as their pills allow: slides hold 5
    xs = [2 + label_w + i * (cell + gap) for i in range(6)]
    out = [label(2, 24, ["a jit call meets six caches, left to right"] + ([
        " · ", svg.tspan("hit", fill=HIT, font_weight="bold"), " · ",
        svg.tspan("miss", fill=MISS, font_weight="bold"), " · ",
        svg.tspan("dashed: not reached", fill=MUTED)] if rows else []), px, font=SANS)]
    for i, (x, lines) in enumerate(zip(xs, heads)):
        out.append(svg.rect(x, top, cell, head_h, rx=8, fill=FILL, stroke=INK, stroke_width=2))
        out += [label(x + cell / 2, top + 24 + j * (px + 5), s, hpx, anchor="middle",
                      bold=True) for j, s in enumerate(lines)]
        out += [label(x + cell / 2, top + 24 + (len(lines) + j) * (px + 5), s, hpx,
                      anchor="middle", fill=TEXT) for j, s in enumerate(where[i])]
        if i < 5:
            y = top + head_h / 2
            out.append(svg.line(x + cell + 1, y, x + cell + gap - 1, y, stroke=INK,
                                stroke_width=2.5, marker_end="url(#chainhead)"))
    facts = {"caches": caches, "calls": {}} | ({"homes": holders} if homes else {})
    for k, (call, verdict) in enumerate(rows.items()):
        got = facts["calls"][call] = [(c, verdict[c]) for c in caches]
        mid = top + head_h + 10 + k * lane_h + lane_h / 2 - 2
        out.append(label(2, mid + 7, call, px))
        out += _lane(xs, cell, mid, got, px)
    caption = "; ".join(f"{call}: " + " ".join(OUTCOME[v][0] for _, v in got)
                        for call, got in facts["calls"].items()) or " → ".join(caches)
    height = top + head_h + 10 + len(rows) * lane_h + 4
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
    """One value as a row of its axes, the batch axis teal; and the x after it."""
    out = []
    for k, d in enumerate(dims):
        batch = k == b
        out.append(svg.rect(x, y, cell - 4, 48, rx=6, fill=BATCH_FILL if batch else FILL,
                            stroke=BATCH if batch else INK, stroke_width=3 if batch else 1.5))
        out.append(label(x + (cell - 4) / 2, y + 32, _fit(d, cell - 8, MIN_PX),
                         MIN_PX if len(d) > 3 else px, anchor="middle",
                         fill=BATCH if batch else INK, bold=batch))
        x += cell
    if not dims:
        out.append(label(x, y + 32, "scalar", MIN_PX, fill=TEXT))
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
    """Where vmap keeps the batch dimension, equation by equation.

    `f`'s own equations top to bottom (the jaxpr of one example), each value drawn as a row
    of its axes with the batch axis B, teal, where the equation's batching rule left it
    (read from the BatchTracers while jax.vmap(f) runs). A rule moves B when that is cheaper
    than moving it back; vmap moves it to out_axes=0 only at the end, which is the batched
    jaxpr's trailing transpose. The batched jaxpr's primitives are written under the rows.

    Args:
        f: the function to vmap, written for one example.
        *args: the arguments (arrays), each batched along its `in_axes` entry.
        in_axes: the batch axis of each argument: one int for all of them, or a list or
            tuple with an int or None (not batched) per argument, at least one int.
            Defaults to 0.

    Returns:
        A `Picture` captioned with where each equation left B, its facts: "inputs" (each
        argument's batch dim), "equations" ((primitive, its inputs' batch dims, its outputs')
        per equation), "batched" (the primitives of `jax.make_jaxpr(jax.vmap(f))`), "size"
        (the batch size) and "out" (the result's axes, B first).

    Raises:
        ValueError: `in_axes` has not one entry per argument, or batches none of them.

    Example:
        >>> def f(x):
        ...     return x.sum(0)
        >>> pic = show_batching(f, jnp.ones((3, 5, 4)), in_axes=2)
        >>> pic
        in: B at [2]; reduce_sum: B at [1]
        >>> pic.facts["batched"], pic.facts["out"]
        (['reduce_sum', 'transpose'], [['B=4', '5']])
    """
    import jax

    axes = _in_axes(in_axes, args)
    _, seen = batch_dims(f, args, axes)
    size = next(a.shape[ax] for a, ax in zip(args, axes) if ax is not None)
    batched = jax.make_jaxpr(jax.vmap(f, in_axes=tuple(axes)))(*args)
    moves = [e.primitive.name for e in batched.eqns]
    px, row_h, top = MIN_PX + 2, 64, 40
    name_w = max(_chars(s[0], px) for s in seen) + 30
    rows = _axes_rows(seen, batched.out_avals, size)
    widest = max(sum(len(d) for d, _ in v) + len(v) for _, v in rows)
    height = top + len(rows) * row_h + 46
    # at least as wide as 83 % of the slide when shown GRAPH_TALL px tall, and 1000 px (a
    # short one is shown no taller than 1.18 times itself): the axes' boxes grow (up to
    # 200 px) to fill it, not the margin
    least = max(1000, 0.83 * SLIDE_W * height / GRAPH_TALL)
    cell = min(200, max(58, (least - name_w - 40) / widest))
    width = max(name_w + widest * cell + 40, least)
    out = [label(2, 26, [svg.Raw("each value's axes after each equation · "),
                         svg.tspan("B", fill=BATCH, font_weight="bold"),
                         ": the batch axis vmap carries"], px, font=SANS)]
    for r, (prim, vals) in enumerate(rows):
        y = top + r * row_h + 8
        out.append(label(2, y + 34, prim, px, bold=True))
        x = name_w
        for dims, b in vals:
            drawn, x = _axes(x, y, dims, b, cell, px)
            out += drawn
    out.append(label(2, height - 14, _fit("batched jaxpr: " + " → ".join(moves), width - 4,
                                          MIN_PX), MIN_PX, fill=TEXT))
    facts = {"equations": [(p, i, o) for p, i, o, _ in seen[1:]], "inputs": seen[0][2],
             "batched": moves, "size": size, "out": [d for d, _ in rows[-1][1]]}
    caption = "; ".join(f"{p}: B at {o}" for p, _, o, _ in seen)
    return Picture(svg.svg(width, height, out, shown=grown(width, height, tall=GRAPH_TALL)),
                   caption, facts)


# --------------------------------------------------------------------------- a sharding

def _ranges(x) -> dict[int, tuple[tuple[int, int], ...]]:
    """Each device's block of `x`: (start, stop) per axis of the array, as its shard's index."""
    return {d.id: tuple(s.indices(n)[:2] for s, n in zip(index, x.shape))
            for d, index in x.sharding.devices_indices_map(x.shape).items()}


def _split(spec, axis: int, mesh_shape: dict) -> str:
    """How the spec splits one axis of the array: 'over x (2)', 'over x·y (8)' or 'not split'."""
    entry = tuple(spec)[axis] if spec is not None and axis < len(spec) else None
    if entry is None:
        return "not split"
    names = (entry,) if isinstance(entry, str) else tuple(entry)
    ways = 1
    for n in names:
        ways *= mesh_shape[n]
    return f"over {'·'.join(names)} ({ways})"


def _block(x0, y0, w, h, ids: list[int], where: str) -> list:
    """One block of the array: in its device's colour, named (dev 3) and its slice under it
    (beside it, on one line, when the block is short); a block held by several devices
    (copies) in the program's fill, a chip in each device's colour."""
    from .palette import DEVICES
    colour = lambda i: DEVICES[i % len(DEVICES)]
    out = [svg.rect(round(x0 + 3, 1), round(y0 + 3, 1), round(w - 6, 1), round(h - 6, 1), rx=8,
                    fill=colour(ids[0]) if len(ids) == 1 else FILL, stroke=INK, stroke_width=3)]
    chip_h, names = 36, [f"dev {i}" for i in ids]
    chip_w = [_chars(n, 26) + 18 for n in names]
    stacked = h - 6 >= len(ids) * (chip_h + 4) + 30
    if stacked:      # the chips one under another, the slice under them
        top = y0 + h / 2 - (len(ids) * (chip_h + 4) + 26) / 2
        at = [(x0 + w / 2, top + k * (chip_h + 4)) for k in range(len(ids))]
        tail = (x0 + w / 2, top + len(ids) * (chip_h + 4) + 20, "middle")
    else:            # one line: the chips side by side, then the slice
        run = sum(chip_w) + 6 * len(ids) + _chars(where, 20) + 10
        x, top = x0 + max(8, (w - run) / 2), y0 + h / 2 - chip_h / 2
        at = []
        for cw in chip_w:
            at.append((x + cw / 2, top))
            x += cw + 6
        tail = (x + 4, top + 25, "start")
    for (cx, y), i, name, cw in zip(at, ids, names, chip_w):
        if len(ids) > 1:
            out.append(svg.rect(round(cx - cw / 2, 1), round(y, 1), round(cw, 1), chip_h, rx=6,
                                fill=colour(i), stroke=INK, stroke_width=1.5))
        out.append(label(round(cx, 1), round(y + 27, 1), name, 26, anchor="middle", bold=True))
    room = w - 10 if stacked else x0 + w - tail[0] - 6
    out.append(label(round(tail[0], 1), round(tail[1], 1), _fit(where, room, 20), 20,
                     anchor=tail[2], fill=TEXT))
    return out


def show_sharding(x, tall: float = 440) -> Picture:
    """Which device holds which block of an array: the array as a grid, each block drawn in
    its device's colour and named after it, as large as the slide allows.

    Reads `x.sharding.devices_indices_map(x.shape)`: every device and the slice of `x` it
    holds. A block held by one device is filled in that device's colour (the same colour for
    that device in every grid); a block several devices hold (the copies a spec makes by
    leaving a mesh axis out) is drawn once, with a chip in each holder's colour. The rows'
    and columns' ranges label the grid's sides; the line above it says how the spec splits
    each axis. A 1-D array is drawn as one row.

    Args:
        x: a `jax.Array` of one or two dimensions, on any sharding.
        tall: the picture's height in slide px (its width is the slide's). Defaults to 440.

    Returns:
        A `Picture` captioned with the array's type and its blocks, its facts: "index" (each
        device id's (start, stop) per axis, as its shard's index), "holders" (each distinct
        block, as the same ranges, and the sorted ids of the devices that hold it) and
        "split" (how the spec splits each axis, as drawn: 'over x (2)', 'not split').

    Raises:
        ValueError: `x` has more than two dimensions.

    Example:
        >>> from jax.sharding import NamedSharding, PartitionSpec as P
        >>> mesh = jax.make_mesh((2, 4), ("x", "y"))
        >>> a = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P(None, "y")))
        >>> pic = show_sharding(a)
        >>> pic
        float32[8,8@y]: 4 blocks of 8×2, each on 2 devices
        >>> pic.facts["holders"][((0, 8), (0, 2))], pic.facts["split"]
        ([0, 4], ['not split', 'over y (4)'])
    """
    import jax

    if x.ndim > 2:
        raise ValueError(f"show_sharding draws a 1-D or 2-D array; this one is {x.ndim}-D")
    index = _ranges(x)
    rows, cols = (1, *x.shape) if x.ndim == 1 else x.shape
    grid = {i: ((0, 1), *r) if x.ndim == 1 else r for i, r in index.items()}
    holders: dict = {}
    for i, r in sorted(index.items()):
        holders.setdefault(r, []).append(i)
    spec = getattr(x.sharding, "spec", None)
    shape = dict(getattr(getattr(x.sharding, "mesh", None), "shape", {}))
    split = [_split(spec, a, shape) for a in range(x.ndim)]
    width, left, top = SLIDE_W - 4, 0 if x.ndim == 1 else 150, 84
    ux, uy = (width - left) / cols, (tall - top - 6) / rows
    sizes = {tuple(b - a for a, b in r) for r in holders}
    copies = {len(v) for v in holders.values()}
    each = "one device each" if copies == {1} else \
        f"each on {'/'.join(map(str, sorted(copies)))} devices"
    block = "/".join("×".join(map(str, s)) for s in sorted(sizes))
    head = f"{jax.typeof(x)}: {_n(len(holders), 'block')} of {block}, {each}"
    where = " · ".join(f"{name} {s}" for name, s in zip(("rows", "columns")[-x.ndim:], split))
    out = [label(2, 26, f"{where}: each block in its device's colour", 22, font=SANS)]
    for (r0, r1), (c0, c1) in sorted({grid[i] for i in grid}):
        ids = holders[index[next(i for i in grid if grid[i] == ((r0, r1), (c0, c1)))]]
        slc = ", ".join(f"{a}:{b}" for a, b in index[ids[0]])
        out += _block(left + c0 * ux, top + r0 * uy, (c1 - c0) * ux, (r1 - r0) * uy, ids,
                      f"[{slc}]")
    for c0, c1 in sorted({g[1] for g in grid.values()}):
        out.append(label(round(left + (c0 + c1) / 2 * ux, 1), top - 12,
                         _fit(f"cols {c0}:{c1}", (c1 - c0) * ux, 20), 20, anchor="middle",
                         fill=TEXT))
    if x.ndim == 2:
        for r0, r1 in sorted({g[0] for g in grid.values()}):
            out.append(label(left - 12, round(top + (r0 + r1) / 2 * uy + 7, 1),
                             f"rows {r0}:{r1}", 20, anchor="end", fill=TEXT))
    facts = {"index": index, "holders": {r: ids for r, ids in holders.items()}, "split": split}
    return Picture(svg.svg(width + 4, tall, out), head, facts)


# --------------------------------------------------------------------------- records inside

SHOWN_PARAMS = ("length", "num_carry", "manual_axes")    # said in an equation's title


def _bodies(eqn) -> list[tuple[str, object]]:
    """The jaxprs an equation holds, (param label, jaxpr) each: branches[0], body_jaxpr…"""
    from jax._src import core

    out = []
    for name, value in eqn.params.items():
        items = [(name, value)] if not isinstance(value, (tuple, list)) else [
            (f"{name}[{i}]", v) for i, v in enumerate(value)]
        out += [(k, v) for k, v in items         # a jaxpr, or a closed one around it
                if isinstance(getattr(v, "jaxpr", v), core.Jaxpr)]
    return out


def _body_lines(jaxpr) -> list[str]:
    """A body as jaxpr text, one line per equation, its variables named a, b, c… in order
    of appearance as JAX's printer names them, each equation by its primitive only."""
    from jax._src import core

    j = getattr(jaxpr, "jaxpr", jaxpr)
    names: dict = {}

    def name(v, typed=False) -> str:
        if isinstance(v, core.Literal):     # a scalar as Python writes it: 1, not TypedInt(1…)
            val = v.val.item() if hasattr(v.val, "item") else v.val
            return str(next((k(val) for k in (bool, int, float, complex)
                             if isinstance(val, k)), val))
        if v not in names:
            k = len(names)
            names[v] = "abcdefghijklmnopqrstuvwxyz"[k % 26] * (1 + k // 26)
        short = v.aval.str_short(short_dtypes=True) if typed else ""
        return f"{names[v]}:{short}" if typed else names[v]

    lines = ["in  " + " ".join(name(v, True) for v in j.invars)]
    for e in j.eqns:
        outs = " ".join(name(v, True) for v in e.outvars)
        lines.append(f"{outs} = {e.primitive.name} " + " ".join(name(v) for v in e.invars))
    return lines + ["out " + " ".join(name(v) for v in j.outvars)]


def show_bodies(jaxpr, across: bool = False) -> Picture:
    """The records inside the record: each equation of `jaxpr` that holds jaxprs (cond's
    branches, while's cond_jaxpr and body_jaxpr, scan's and shard_map's jaxpr) drawn as a box
    with one panel per jaxpr it holds, in the order of its params, each panel that body's
    equations as jaxpr text (variables named a, b, c… in each body, equations by their
    primitive). The outer jaxpr's equations are listed above, in order.

    Args:
        jaxpr: what `jax.make_jaxpr(f)(...)` returns, with at least one equation holding a
            jaxpr.
        across: if True, the equations' boxes side by side in one row (each as wide as its
            share of the panels), not one under another: for two or three short bodies under
            a few lines of code. Defaults to False.

    Returns:
        A `Picture` captioned with the outer equations and each body's primitives, its
        facts: "equations" (the outer jaxpr's primitives), "bodies" ((primitive, param
        label, the body's primitives) per panel) and "lines" (each panel's text, as drawn).

    Raises:
        ValueError: no equation of `jaxpr` holds a jaxpr.

    Example:
        >>> c = jax.make_jaxpr(lambda p, x: jax.lax.cond(p, jnp.sin, jnp.cos, x))(True, 1.0)
        >>> pic = show_bodies(c)
        >>> pic.facts["bodies"]
        [('cond', 'branches[0]', ['cos']), ('cond', 'branches[1]', ['sin'])]
    """
    j = getattr(jaxpr, "jaxpr", jaxpr)
    holders = [(e, _bodies(e)) for e in j.eqns if _bodies(e)]
    if not holders:
        raise ValueError("show_bodies draws equations that hold jaxprs (cond, while, scan, "
                         "shard_map…); this jaxpr has none")
    px, line_h, width = 20, 30, SLIDE_W
    prims = [e.primitive.name for e in j.eqns]
    out = [label(2, 24, "the jaxpr: " + " → ".join(prims), px + 2, font=SANS)]
    facts = {"equations": prims, "bodies": [], "lines": []}
    x0, y, total = 2, 42, sum(len(b) for _, b in holders)
    most = max(len(_body_lines(b)) for _, bs in holders for _, b in bs)   # lines, across
    for eqn, bodies in holders:
        said = [f"{k}={_plain(eqn.params[k])}" for k in SHOWN_PARAMS if k in eqn.params]
        texts = [_body_lines(b) for _, b in bodies]
        box_w = ((width - 4 - 12 * (len(holders) - 1)) * len(bodies) / total if across
                 else width - 4)
        panel_w = (box_w - 30 - 16 * (len(bodies) - 1)) / len(bodies)
        box_h = 52 + 34 + (most if across else max(map(len, texts))) * line_h + 26
        out.append(svg.rect(round(x0, 1), y, round(box_w, 1), box_h, rx=12, fill=PAPER,
                            stroke=INK, stroke_width=2.5))
        out.append(label(round(x0 + 16, 1), y + 34, [
            svg.tspan(eqn.primitive.name, font_weight="bold"), "  " + " · ".join(said)], px + 2))
        for n, ((key, body), lines) in enumerate(zip(bodies, texts)):
            x = x0 + 14 + n * (panel_w + 16)
            top = y + 52
            out.append(svg.rect(round(x, 1), top, round(panel_w, 1), box_h - 66, rx=8,
                                fill=FILL, stroke=INK, stroke_width=1.5))
            out.append(label(round(x + 12, 1), top + 26, key, px, bold=True))
            out += [label(round(x + 12, 1), top + 34 + (k + 0.8) * line_h,
                          _fit(s, panel_w - 20, px), px, fill=TEXT if k in (0, len(lines) - 1)
                          else INK) for k, s in enumerate(lines)]
            inner = getattr(body, "jaxpr", body)
            facts["bodies"].append((eqn.primitive.name, key,
                                    [e.primitive.name for e in inner.eqns]))
            facts["lines"].append(lines)
        x0, y = (x0 + box_w + 12, y) if across else (x0, y + box_h + 12)
    y += box_h + 12 if across else 0
    caption = ("; ".join(f"{p} {k}: {' '.join(b) or 'no equations'}"
                         for p, k, b in facts["bodies"]))
    return Picture(svg.svg(width, y - 8, out), caption, facts)


# --------------------------------------------------------------------------- a call's time, staged

# the compile stages jax.monitoring times (dispatch.py's event names, last part), as drawn
STAGES = {"jaxpr_trace_duration": "trace", "jaxpr_to_mlir_module_duration": "lower",
          "backend_compile_duration": "compile"}


def _timed(f, args) -> tuple[float, list]:
    """One call of `f`: its wall time in s, and the compile stages jax.monitoring reported
    while it ran, each (stage, start, seconds) with times from the call's start (a stage's
    event arrives as it ends)."""
    import time

    import jax
    from jax import monitoring
    seen, t0 = [], time.perf_counter()

    def on_event(name, secs, **kw):
        stage = STAGES.get(name.split("/")[-1])
        if stage:
            seen.append((stage, time.perf_counter() - t0 - secs, secs))

    monitoring.register_event_duration_secs_listener(on_event)
    try:
        jax.block_until_ready(f(*args))
    finally:
        monitoring.unregister_event_duration_listener(on_event)
    return time.perf_counter() - t0, seen


def _bar(y: float, x0: float, w: float, text: str, px: float, colour: str, fill: str,
         right: float) -> list:
    """A bar from x0, `w` wide (at least 3), its time written after it, or inside its end
    where the picture has no room after it."""
    w = max(w, 3)
    out = [svg.rect(x0, y, w, 32, rx=4, fill=fill, stroke=colour, stroke_width=2.5)]
    if x0 + w + 12 + _chars(text, px) <= right:
        out.append(label(x0 + w + 12, y + 24, text, px, fill=colour, bold=True))
    else:
        out.append(label(x0 + w - 12, y + 24, text, px, fill=colour, bold=True, anchor="end"))
    return out


def show_call_stages(f, *args) -> Picture:
    """Two calls of a jitted `f`, on one time axis: the first, and the compile stages that
    jax.monitoring timed inside it (trace, lower to StableHLO, XLA compile), each a bar where
    it ran; then the repeat call, which times no stage, only its dispatch and run.

    Args:
        f: a jitted function that has not yet been called with arguments like these.
        *args: the arguments of both calls.

    Returns:
        A `Picture` captioned with each bar's milliseconds, its facts: "stages" ([(stage, ms)]
        in the order they ran), "starts" (each stage's start, ms from the call's start),
        "first_ms", "again_ms" (the two calls' wall times) and "again_stages" (the stages
        timed in the repeat call: none when it hit the cache).

    Example:
        >>> pic = show_call_stages(jax.jit(lambda x: jnp.sin(x) + 1), jnp.ones(9))
        >>> [s for s, _ in pic.facts["stages"]], pic.facts["again_stages"]
        (['trace', 'lower', 'compile'], [])
    """
    first, stages = _timed(f, args)
    again, repeat = _timed(f, args)
    px, left, right, row = MIN_PX + 2, 190, SLIDE_W - 4, 46
    scale = (right - left - 8) / first
    rows = [("1st call", 0.0, first, INK, FILL)] + [
        (stage, start, secs, MISS, MISS_FILL) for stage, start, secs in stages] + [
        ("2nd call", 0.0, again, HIT, HIT_FILL)]
    out = [label(2, 24, "one jit function called twice, timed by jax.monitoring (to scale)",
                 px, font=SANS)]
    for i, (name, start, secs, colour, fill) in enumerate(rows):
        y = 44 + i * row + (12 if i == len(rows) - 1 else 0)
        indent = 0 if i in (0, len(rows) - 1) else 28
        out.append(label(2 + indent, y + 24, name, px, bold=indent == 0, fill=colour))
        out += _bar(y, left + start * scale, secs * scale, f"{secs * 1e3:.2f} ms", px, colour,
                    fill, right)
    height = 44 + len(rows) * row + 12
    facts = {"stages": [(s, secs * 1e3) for s, _, secs in stages],
             "starts": [start * 1e3 for _, start, _ in stages],
             "first_ms": first * 1e3, "again_ms": again * 1e3,
             "again_stages": [s for s, *_ in repeat]}
    caption = "; ".join(f"{name} {secs * 1e3:.2f} ms" for name, _, secs, *_ in rows)
    return Picture(svg.svg(SLIDE_W, height, out), caption, facts)


# --------------------------------------------------------------------------- where a call runs

def _where(x) -> tuple[bool, list[int]]:
    """(committed, the device ids it is on) of an argument; a NumPy array is on none."""
    devices = getattr(x, "devices", None)
    if devices is None:
        return False, []
    return bool(x.committed), sorted(d.id for d in devices())


def _placed(f, args) -> dict:
    """What one call of `f` did with its arguments' places: each argument's, the result's
    devices, or the error that refused it."""
    import jax
    try:
        out = jax.block_until_ready(f(*args))
        result, error = sorted(d.id for d in out.devices()), None
    except ValueError as e:
        result, error = [], str(e).split(". ")[0]
    return {"args": [_where(a) for a in args], "result": result, "error": error}


def show_placement(f, calls: dict) -> Picture:
    """Where each argument of a jitted call lives and where the call ran: a row for each
    argument and one for the result, across a column for each device. A committed argument is
    a solid box on its device; an uncommitted one is dashed (a NumPy array, on no device, is
    drawn dashed where the call put it); a call that jit refused says so in red.

    Args:
        f: a jitted function.
        calls: {label: the arguments of one call}, in the order to draw them.

    Returns:
        A `Picture` captioned with where each call ran, its facts: "devices" (the device ids,
        in column order) and "calls" ({label: {"args": [(committed, [device ids])], "result":
        [device ids], "error": the refusal's first line or None}}).

    Example:
        >>> devs = jax.devices()
        >>> on3 = jax.device_put(jnp.ones(2), devs[3])
        >>> show_placement(jax.jit(lambda a, b: a + b), {"on3 + numpy": (on3, np.ones(2))})
        on3 + numpy: runs on device 3
    """
    import jax

    from .pictures import _name_and_params
    devices = sorted(d.id for d in jax.devices())
    names = _name_and_params(f)[1].split(", ")
    px, left, row = MIN_PX + 2, 300, 37
    cell = (SLIDE_W - 4 - left) / len(devices)
    out = [label(left + (i + 0.5) * cell, 26, f"{jax.devices()[0].platform.upper()} {d}", px,
                 anchor="middle", fill=TEXT) for i, d in enumerate(devices)]
    facts, y = {"devices": devices, "calls": {}}, 44
    for call, args in calls.items():
        got = facts["calls"][call] = _placed(f, args)
        out.append(label(2, y + 26, call, px, bold=True))
        y += row
        for k, (committed, on) in enumerate(got["args"]):
            name = names[k] if k < len(names) else f"arg {k}"
            out.append(label(28, y + 26, f"{name}: {'committed' if committed else 'uncommitted'}",
                             px, fill=TEXT))
            for d in on or got["result"]:
                x = left + devices.index(d) * cell
                out.append(svg.rect(x + 8, y + 4, cell - 16, 30, rx=15, fill=FILL, stroke=INK,
                                    stroke_width=2.5, stroke_dasharray=None if committed
                                    else "6 4"))
                out.append(label(x + cell / 2, y + 26, name, px, anchor="middle", bold=True))
            y += row
        colour = MISS if got["error"] else HIT
        out.append(label(28, y + 26, "result" if not got["error"] else "refused", px,
                         fill=colour, bold=True))
        if got["error"]:
            out.append(label(left + 8, y + 26, _fit(got["error"], SLIDE_W - left - 12, px), px,
                             fill=MISS))
        for d in got["result"]:
            x = left + devices.index(d) * cell
            out.append(svg.rect(x + 8, y + 4, cell - 16, 30, rx=15, fill=HIT_FILL, stroke=HIT,
                                stroke_width=3))
            out.append(label(x + cell / 2, y + 26, "out", px, anchor="middle", fill=HIT,
                             bold=True))
        y += row + 8
    caption = "; ".join(f"{c}: " + ("refused" if g["error"] else "runs on device " + ", ".join(
        map(str, g["result"]))) for c, g in facts["calls"].items())
    return Picture(svg.svg(SLIDE_W, y - 8, out), caption, facts)


# --------------------------------------------------------------------------- eager compiles

def show_eager_compiles(calls: dict) -> Picture:
    """Eager calls, one lane each: the primitives the call applied (its jaxpr's equations), each
    red where XLA compiled a program for it while the call ran, green where the per-primitive
    cache already held one.

    Args:
        calls: {label: a function of no arguments that makes the eager call}, in the order to
            run and draw them.

    Returns:
        A `Picture` captioned with each call's primitives and outcomes, its facts: "calls"
        ({label: [(primitive, "compiled" or "cached")]}, a program compiled for a primitive
        that the jaxpr folded away first) and "compiled" (the programs the
        monitoring listener counted, in order, e.g. "jit(iota)").

    Example:
        >>> pic = show_eager_compiles({"sin": lambda: jax.lax.sin(jnp.ones(13)),
        ...                            "sin again": lambda: jax.lax.sin(jnp.ones(13))})
        >>> pic.facts["calls"]["sin again"]
        [('broadcast_in_dim', 'cached'), ('sin', 'cached')]
    """
    import jax

    from .jitcache import compiles
    px, left, lane = MIN_PX + 2, 300, 50
    facts, out = {"calls": {}, "compiled": []}, [label(
        2, 24, ["each primitive runs as its own small program: ",
                svg.tspan("compiled", fill=MISS, font_weight="bold"), " · ",
                svg.tspan("cached", fill=HIT, font_weight="bold")], px, font=SANS)]
    for k, (call, thunk) in enumerate(calls.items()):
        with compiles() as c:
            thunk()
        prims = [e.primitive.name for e in jax.make_jaxpr(thunk)().eqns]
        # a program compiled for a primitive the jaxpr folded away (a constant's conversion)
        prims = [n[4:-1] for n in c.names if n[4:-1] not in prims] + prims
        got = facts["calls"][call] = [(p, "compiled" if f"jit({p})" in c.names else "cached")
                                      for p in prims]
        facts["compiled"] += c.names
        y = 44 + k * lane
        out.append(label(2, y + 27, call, px, bold=True))
        x = left
        for p, outcome in got:
            w = _chars(f"{p} {outcome}", px) + 36
            colour, fill = (MISS, MISS_FILL) if outcome == "compiled" else (HIT, HIT_FILL)
            out.append(svg.rect(x, y + 2, w, 36, rx=18, fill=fill, stroke=colour,
                                stroke_width=3))
            out.append(label(x + 18, y + 27, [p + " ", svg.tspan(outcome, font_weight="bold")],
                             px, fill=colour))
            x += w + 14
    caption = "; ".join(f"{call}: " + ", ".join(f"{p} {o}" for p, o in got)
                        for call, got in facts["calls"].items())
    return Picture(svg.svg(SLIDE_W, 44 + len(calls) * lane, out), caption, facts)
