"""The pictures: each one's facts against the live JAX objects it was drawn from, its text
big enough for a projector, and no edge drawn underneath a box."""
from __future__ import annotations

import collections
import dataclasses
import re
from xml.etree import ElementTree

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from workshop import (
    Picture,
    show_ad_flow,
    show_batching,
    show_bodies,
    show_cache_chain,
    show_call_stages,
    show_collectives,
    show_eager_compiles,
    show_graph,
    show_placement,
    show_residuals,
    show_sharding,
    show_stations,
    show_tree,
)
from workshop.jitcache import CHAIN, probe
from workshop.pictures import MIN_PX, SLIDE_W

NS = "{http://www.w3.org/2000/svg}"
CACHES = [label for label, *_ in CHAIN]


def prims(jaxpr) -> list[str]:
    return [e.primitive.name for e in jaxpr.eqns]


def nets() -> dict:
    """Deck 04's three-layer net, plain and checkpointed two ways."""
    def net(w, x):
        for _ in range(3):
            x = jnp.tanh(w @ x)
        return jnp.sum(x)

    dots = jax.checkpoint(net, policy=jax.checkpoint_policies.dots_saveable)
    return {"no checkpoint": net, "jax.checkpoint": jax.checkpoint(net), "dots_saveable": dots}


def cache_rows() -> dict:
    """What deck 03 probes: a first call, a repeat, and the changes that miss."""
    p = jax.jit(lambda x, n: lax.integer_pow(lax.sin(x), n), static_argnums=1)
    x = jnp.ones(3)
    return {"first call": probe(p, x, 2), "repeat call": probe(p, x, 2),
            "new shape": probe(p, jnp.ones(4), 2), "new static n": probe(p, x, 3),
            "jnp.float32(2)": probe(p, jnp.float32(2.0), 2)}


def placements() -> tuple:
    """Deck 03's committed arguments: one call that runs where its committed argument lives,
    one that jit refuses."""
    devs = jax.devices()
    on3, on5 = (jax.device_put(np.ones(4, np.float32), devs[i]) for i in (3, 5))
    return jax.jit(lambda a, b: a + b), {"on3 + numpy": (on3, np.ones(4)), "on3 + on5": (on3, on5)}


def three_collectives(mesh):
    """Deck 06's body: a psum, an all_gather and a psum_scatter over y, compiled."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    def body(a):
        return (lax.psum(a, "y") + lax.all_gather(a, "y", tiled=True)[:4]
                + lax.psum_scatter(a, "y", tiled=True))
    x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("x", "y")))
    f = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    return jax.jit(f).lower(x).compile()


class Point:
    """Deck 05's registered types (at module level: a dataclass's repr names its qualname):
    a class with flatten functions, a dataclass with a static field, a static type."""
    def __init__(self, x, y):
        self.x, self.y = x, y


jax.tree_util.register_pytree_node(Point, lambda p: ((p.x, p.y), None), lambda _, ch: Point(*ch))


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Layer:
    w: jax.Array
    name: str = dataclasses.field(default="dense", metadata=dict(static=True))


@jax.tree_util.register_static
@dataclasses.dataclass(frozen=True)
class Config:
    depth: int


class Opaque:
    """An object nobody registered: a leaf."""


def registered():
    return [Point(1.0, 2.0), Layer(jnp.ones(2)), Config(3)]


def deck_pictures() -> dict[str, Picture]:
    """Each picture as a deck draws it (or close): what must read well on a projector."""
    def f(x, w):
        return jnp.tanh(x @ w).sum()

    def g(x, y):
        return jnp.sin(x) * y + 2.0

    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    from workshop.labs import j4
    mesh, _ = j4.make_meshes()
    fn, args = {text: (fn, args) for text, fn, args in j4._cases()}["a psum_scatter in shard_map"]
    m = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(jnp.arange(32.0), NamedSharding(m, P("y")))
    two = jax.jit(lambda v: v.reshape(2, 16).sum(0)).lower(a).compile()   # two panels
    c = jax.make_jaxpr(lambda x, y: jnp.sin(x) * jnp.cos(y) + x)(1.0, 2.0)
    table = jnp.arange(3.0)
    wide = jax.make_jaxpr(lambda x, y: (jnp.cos(x) * 3.0 * table + y, x.sum()))(jnp.ones(3), 2.0)
    return {
        "stations": show_stations(f, jnp.ones((8, 4)), jnp.ones((4, 2))),
        "graph down": show_graph(jax.make_jaxpr(g)(jnp.arange(3.0), 4.0), down=True),
        "graph right": show_graph(wide),
        "cut": show_graph(c, down=True, unknowns=[False, True]),
        "tree": show_tree([1.0, None, (2.0, {"b": 3.0, "a": 4.0})]),
        "collectives": show_collectives(jax.jit(fn).lower(*args).compile(), mesh),
        "two collectives": show_collectives(two, m),
        "three collectives": show_collectives(three_collectives(m), m),
        "registered tree": show_tree(registered()),
        "bodies": show_bodies(jax.make_jaxpr(lambda x: lax.while_loop(
            lambda c: c < 10.0, lambda c: c * 2.0, x))(1.0)),
        "cache chain": show_cache_chain(cache_rows()),
        "ad flow": show_ad_flow(lambda x: jnp.sin(x) * x, 2.0),
        "batching": show_batching(lambda x: x.sum(0), jnp.ones((3, 5, 4)), in_axes=2),
        "cache homes": show_cache_chain({}, homes=True),
        "call stages": show_call_stages(jax.jit(lambda x: jnp.tanh(x) * 2), jnp.ones(7)),
        "placement": show_placement(*placements()),
        "eager compiles": show_eager_compiles({"ones": lambda: jnp.ones(17),
                                               "ones again": lambda: jnp.ones(17)}),
        "residuals": show_residuals(nets(), jnp.ones((4, 4)) / 4, jnp.ones(4)),
        "sharding": show_sharding(jax.device_put(jnp.ones((8, 8)), NamedSharding(m, P("x", "y")))),
        "copies": show_sharding(jax.device_put(jnp.ones((8, 8)), NamedSharding(m, P(None, "y"))),
                                tall=300),
        **machine_pictures(f),
    }


def nested_h():
    """Deck 02's nested jaxprs: a jit and a cond of two branches."""
    def h(p, x):
        return lax.cond(p, jnp.sin, jnp.cos, jax.jit(lambda v: v * 2.0)(x))
    return jax.make_jaxpr(h)(True, 1.0)


def two_transforms():
    """Deck 02's WrappedFun: two transformations stacked by hand."""
    from jax._src import api_util
    from jax._src import linear_util as lu

    @lu.transformation2
    def add_one(f, x):
        return f(x + 1)

    @lu.transformation2
    def double(f, x):
        return f(x * 2)

    dbg = api_util.debug_info("demo", lambda x: x, (1,), {})
    return double(add_one(lu.wrap_init(lambda x: x, debug_info=dbg)))


def two_outputs(x, y):
    """Deck 02's first function: five equations, two outputs."""
    z = jnp.sin(x) * y
    return z + 1.0, z.sum()


def machine_pictures(f) -> dict[str, Picture]:
    """Decks 01 and 02's pictures of the machine: the lowering, nested jaxprs, the trace
    chain, a WrappedFun's stack."""
    from jax._src import core

    from workshop.dataflow import show_lowering, show_nested, show_split
    from workshop.pictures import (
        show_bind,
        show_jaxpr_objects,
        show_rules,
        show_run,
        show_staging,
        show_trace_chain,
        show_transforms,
    )

    traced = jax.jit(f).trace(jnp.ones((8, 4)), jnp.ones((4, 2)))
    current = []
    jax.jit(jax.vmap(lambda x: current.append(core.trace_ctx.trace) or x))(jnp.ones(2))
    inner = jax.jit(lambda v: jnp.cos(v) * v)
    return {
        "lowering": show_lowering(traced),
        "lowering to HLO": show_lowering(traced, traced.lower().compile()),
        "nested jit": show_nested(jax.make_jaxpr(lambda x: inner(x) + 1.0)(jnp.ones(3))),
        "nested": show_nested(nested_h()),
        "trace chain": show_trace_chain(current[0]),
        "transforms": show_transforms(two_transforms(), 3),
        "split": show_split(jax.make_jaxpr(lambda x, y: jnp.sin(x) * jnp.cos(y) + x)(1.0, 2.0),
                            [False, True]),
        "run": show_run(jax.make_jaxpr(lambda a, b: jnp.sin(a) * b + 1.0)(1.0, 2.0), 0.5, 3.0),
        "jaxpr objects": show_jaxpr_objects(jax.make_jaxpr(two_outputs)(jnp.ones(3), 2.0), 2),
        "rules": show_rules(lax.sin_p),
        "staging": show_staging(lambda v: lax.cos(jnp.sin(v)) * 2.0, jnp.ones(3)),
        "bind": show_bind(lax.sin, jnp.ones(3)),
    }


@pytest.fixture(scope="module")
def pictures():
    return deck_pictures()


def test_every_picture_reads_from_the_back_of_the_room(pictures):
    for name, pic in pictures.items():
        root = ElementTree.fromstring(pic.svg)          # well-formed
        sizes = [float(t.get("font-size")) for t in root.iter() if t.get("font-size")]
        width = float(root.get("viewBox").split()[2])      # drawn at; shown at `width` px
        shown = min(sizes) * min(float(root.get("width")), SLIDE_W) / width
        assert shown >= MIN_PX and pic.text_px() == pytest.approx(shown), (name, shown)
        w, h = pic.size()
        assert w <= SLIDE_W and h <= 520, (name, w, h)     # room for its cell on the slide
    # the opening picture: clearly bigger than the 182 px tall, 13 px text it was
    assert len(pictures["two collectives"].facts["collectives"]) == 2
    assert pictures["collectives"].facts["collectives"][0]["kind"] == "reduce-scatter"
    # a picture that would sit small under its line of code (one mesh, 636 px wide, 238 tall
    # in deck 06) is shown as wide as the slide or 400 px tall, whichever comes first
    w, h = pictures["collectives"].size()
    assert w > 1000 and (w == SLIDE_W or h == pytest.approx(400, abs=1)), (w, h)
    assert pictures["collectives"].text_px() >= 30
    # a graph drawn shorter than a slide leaves room for is shown GRAPH_TALL px tall, or as
    # wide as the slide
    from workshop.pictures import GRAPH_TALL
    for name in ("graph down", "cut", "batching"):
        root = ElementTree.fromstring(pictures[name].svg)
        drawn = float(root.get("viewBox").split()[3])
        w, h = pictures[name].size()
        assert drawn < GRAPH_TALL and (h == pytest.approx(GRAPH_TALL, abs=1) or w == SLIDE_W), \
            (name, drawn, w, h)
    stations = pictures["stations"]
    assert stations.text_px() >= 20 and stations.size()[1] >= 250, stations.size()


def test_a_small_tree_spreads_over_the_slide_and_shows_what_its_treedef_keeps(pictures):
    from jax import tree_util as tu
    tree = registered()
    pic = pictures["registered tree"]
    assert pic.size()[0] == SLIDE_W and pic.text_px() >= 20     # 5 slots, spread out
    assert pic.facts["aux"] == [("Layer", "('dense',)"), ("Config", "Config(depth=3)")]
    assert [c.node_data()[1] for c in tu.tree_structure(tree).children()[1:3]] == [
        ("dense",), type(tree[2])(3)]                           # what the treedef keeps
    assert pic.facts["leaves"] == ["1.0", "2.0", "f32[2]"]
    assert pic.facts["keys"] == ["[0]", "[<flat index 0>]", "[<flat index 1>]", "[1]", ".w",
                                 "[2]"]
    assert show_tree(["text", Opaque()]).facts["leaves"] == ["'text'", "Opaque"]  # no address
    texts = [t.text for t in ElementTree.fromstring(pic.svg).iter(f"{NS}text")]
    assert "aux: ('dense',)" in texts and "aux: Config(depth=3)" in texts
    assert "list" in texts and not any(t and t.startswith("aux") and "list" in t
                                       for t in texts)         # a list keeps no aux
    # the keys of two siblings never overlap, however long (flat indices)
    root = ElementTree.fromstring(pic.svg)
    cards = sorted((float(r.get("y")), float(r.get("x")), float(r.get("width")))
                   for r in root.iter(f"{NS}rect") if r.get("class") == "label")
    assert all(not (y0 == y1 and x0 + w0 > x1) for (y0, x0, w0), (y1, x1, _) in
               zip(cards, cards[1:])), cards


def test_bodies_draw_the_jaxprs_an_equation_holds(pictures):
    pic = pictures["bodies"]
    assert pic.size()[0] == SLIDE_W and pic.text_px() >= 20
    assert pic.facts["equations"] == ["while"]
    assert pic.facts["bodies"] == [("while", "cond_jaxpr", ["lt"]),
                                   ("while", "body_jaxpr", ["mul"])]
    assert pic.facts["lines"] == [["in  a:f32[]", "b:bool[] = lt a 10.0", "out b"],
                                  ["in  a:f32[]", "b:f32[] = mul a 2.0", "out b"]]
    texts = [t.text for t in ElementTree.fromstring(pic.svg).iter(f"{NS}text")]
    assert "b:bool[] = lt a 10.0" in texts and "cond_jaxpr" in texts
    # cond's branches in index order, a scan's length in its title, each from the live jaxpr
    c = jax.make_jaxpr(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(True, 1.0)
    assert show_bodies(c).facts["bodies"] == [
        ("cond", f"branches[{i}]", prims(b)) for i, b in enumerate(c.eqns[-1].params["branches"])]
    assert [b[2] for b in show_bodies(c).facts["bodies"]] == [["cos"], ["sin"]]
    s = jax.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + x, None), 0.0, xs))(jnp.ones(7))
    assert "length=7" in "".join(ElementTree.fromstring(show_bodies(s).svg).itertext())
    # a typed literal (fori_loop's counter step, a TypedInt on 0.12) reads as Python writes it
    f = jax.make_jaxpr(lambda c: lax.fori_loop(0, 5, lambda i, c: c * 2.0, c))(1.0)
    assert show_bodies(f).facts["lines"][0][1:3] == ["c:i32[] = add a 1", "d:f32[] = mul b 2.0"]
    # across: a scan's box beside a while's, one row as wide as the slide, the same facts
    two = jax.make_jaxpr(lambda c, n: (lax.fori_loop(0, 5, lambda i, c: c * 2.0, c),
                                       lax.fori_loop(0, n, lambda i, c: c * 2.0, c)))(1.0, 5)
    down, side = show_bodies(two), show_bodies(two, across=True)
    assert side.facts == down.facts and side.text_px() >= 20
    assert side.size()[0] == SLIDE_W and side.size()[1] < down.size()[1] * 0.6
    boxes = [r for r in ElementTree.fromstring(side.svg).iter(f"{NS}rect")
             if r.get("stroke-width") == "2.5"]
    assert [r.get("y") for r in boxes] == ["42", "42"]           # the two equations, one row
    assert float(boxes[1].get("x")) > float(boxes[0].get("x")) + float(boxes[0].get("width"))
    with pytest.raises(ValueError, match="hold jaxprs"):
        show_bodies(jax.make_jaxpr(jnp.sin)(1.0))


def test_collectives_that_do_not_fit_side_by_side_take_a_row_each(pictures):
    three = pictures["three collectives"]
    assert [c["kind"] for c in three.facts["collectives"]] == [
        "all-gather", "reduce-scatter", "all-reduce"]
    assert all(c["groups"] == [[0, 1, 2, 3], [4, 5, 6, 7]] for c in three.facts["collectives"])
    w, h = three.size()
    assert w == SLIDE_W and three.text_px() >= 20 and h <= 460, (w, h)   # not 12 px text
    texts = [t.text for t in ElementTree.fromstring(three.svg).iter(f"{NS}text")]
    assert [t for t in texts if t in ("all-gather", "reduce-scatter", "all-reduce")] == [
        "all-gather", "reduce-scatter", "all-reduce"]                  # one row each, in order
    cells = ["".join(t.itertext()) for t in ElementTree.fromstring(three.svg).iter(f"{NS}text")]
    assert sorted(t for t in cells if t.startswith("dev ")) == sorted(
        [f"dev {i} · group {i // 4}" for i in range(8)] * 3)          # each names its group
    assert pictures["collectives"].size()[0] > 1000               # one panel: as before


def test_text_px_is_measured_after_the_picture_is_scaled_to_the_slide():
    wide = Picture("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 2368 100' "
                   "width='2368'><text font-size='20'>x</text></svg>", "wide")
    assert wide.text_px() == 10 and wide.size() == (SLIDE_W, 50)


def _points(d: str, steps: int = 24) -> list[tuple[float, float]]:
    """Points along an SVG path made of M, L, Q and C commands."""
    out, here = [], None
    for cmd, nums in re.findall(r"([MLQC])([^MLQC]*)", d):
        pts = [tuple(map(float, p.split(","))) for p in nums.split()]
        if cmd == "M":
            here = pts[0]
            continue
        ctrl = [here, *pts]
        for i in range(steps + 1):
            t = i / steps
            if cmd == "L":
                (x0, y0), (x1, y1) = ctrl
                out.append((x0 + (x1 - x0) * t, y0 + (y1 - y0) * t))
            else:                      # Bézier by de Casteljau
                p = ctrl
                while len(p) > 1:
                    p = [(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)
                         for a, b in zip(p, p[1:])]
                out.append(p[0])
        here = pts[-1]
    return out


def edges_under_boxes(svg: str) -> list:
    """(edge, box) pairs where an edge (a path or a line) passes inside a box (a rect), more
    than 3 px in from its border: an edge touching its own boxes' borders is fine. A label's
    card (class label: a tree's key) sits on its edge on purpose, so no edge strikes the key;
    a frame (class frame: a nested jaxpr's) holds its graph's edges on purpose."""
    root = ElementTree.fromstring(svg)
    boxes = [tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
             for r in root.iter(f"{NS}rect") if r.get("class") not in ("label", "frame")]
    edges = [_points(p.get("d")) for p in root.iter(f"{NS}path") if p.get("fill") == "none"]
    edges += [_points(f"M{ln.get('x1')},{ln.get('y1')} L{ln.get('x2')},{ln.get('y2')}")
              for ln in root.iter(f"{NS}line")]
    return [(i, b) for i, pts in enumerate(edges) for b in boxes
            if any(b[0] + 3 < x < b[0] + b[2] - 3 and b[1] + 3 < y < b[1] + b[3] - 3
                   for x, y in pts)]


def test_no_edge_runs_underneath_a_box(pictures):
    skips = {
        "right": jax.make_jaxpr(lambda x, y: jnp.sin(jnp.cos(jnp.exp(x))) * y + x)(1.0, 2.0),
        "rows": jax.make_jaxpr(lambda x, y: (jnp.cos(x) * 3.0 + y, x.sum(), jnp.sin(y) * x))(
            jnp.ones(3), 2.0),
        "down": jax.make_jaxpr(lambda x, y: jnp.sin(jnp.cos(x) * jnp.exp(y)) + x)(1.0, 2.0),
    }
    drawn = dict(pictures)
    for name, j in skips.items():
        drawn[f"skip {name}"] = show_graph(j, down=name == "down")
        drawn[f"skip {name} other way"] = show_graph(j, down=name != "down")
    drawn["ad loss"] = show_ad_flow(lambda w, x: jnp.tanh(w * x) ** 2, 0.5, jnp.arange(4.0))
    for name, pic in drawn.items():
        assert edges_under_boxes(pic.svg) == [], name
    # the check sees one: a straight curve from the first column to the last, as the
    # left-to-right layout drew edges that skip columns before
    svg = drawn["skip right"].svg
    root = ElementTree.fromstring(svg)
    rects = [r for r in root.iter(f"{NS}rect")]
    a, z = rects[0], rects[-1]
    y = float(a.get("y")) + float(a.get("height")) / 2
    x0, x1 = float(a.get("x")) + float(a.get("width")), float(z.get("x"))
    m = (x0 + x1) / 2
    old = svg.replace("</svg>", f"<path d='M{x0},{y} C{m},{y} {m},{y} {x1},{y}' "
                      "fill='none'/></svg>")
    assert edges_under_boxes(old)


def test_cache_chain_draws_each_calls_probe():
    rows = cache_rows()
    pic = show_cache_chain(rows)
    assert pic.facts["caches"] == CACHES and len(CACHES) == 6
    assert list(pic.facts["calls"]) == list(rows)
    for call, got in pic.facts["calls"].items():
        assert got == [(c, rows[call][c]) for c in CACHES], call
    # a second call stops at the first cache; a new shape goes all the way down
    assert pic.facts["calls"]["repeat call"] == [(CACHES[0], "hit")] + [(c, "·")
                                                                         for c in CACHES[1:]]
    assert {v for _, v in pic.facts["calls"]["new shape"]} == {"miss"}
    assert "repeat call: hit · · · · ·" in repr(pic)
    with pytest.raises(ValueError, match="not a jitcache.probe result"):
        show_cache_chain({"bad": {"C++ fast path": "hit"}})


def test_ad_flow_draws_the_live_linear_and_transposed_programs():
    def f(x, y):
        return jnp.sin(x) * y

    args = (jnp.arange(3.0), 2.0)
    pic = show_ad_flow(f, *args)
    y, f_jvp = jax.linearize(f, *args)
    lin = jax.make_jaxpr(f_jvp)(*args)
    back = jax.make_jaxpr(jax.linear_transpose(f_jvp, *args))(y)
    assert pic.facts["primal"] == prims(jax.make_jaxpr(f)(*args))
    assert pic.facts["forward"] == prims(lin) and "add_any" in pic.facts["forward"]
    assert pic.facts["backward"] == prims(back) and "reduce_sum" in pic.facts["backward"]
    # the same backward program jax.vjp gives, up to order
    vjp = jax.make_jaxpr(jax.vjp(f, *args)[1])(y)
    assert collections.Counter(prims(vjp)) == collections.Counter(pic.facts["backward"])
    assert list(pic.facts["residuals"].values()) == [
        v.aval.str_short(short_dtypes=True) for v in lin.jaxpr.constvars]
    assert pic.facts["primal_out"] == "f32[3]"
    # a residual keeps its forward name in the backward boxes, though the transposed
    # program lists its consts in another order
    texts = [t.text for t in ElementTree.fromstring(pic.svg).iter(f"{NS}text")]
    for name in pic.facts["residuals"]:
        assert sum(name in re.findall(r"\w+", t) for t in texts
                   if t and t.startswith("mul(")) == 2, (name, texts)
    assert ElementTree.fromstring(pic.svg).find(f"{NS}defs") is not None
    one = show_ad_flow(lambda x: jnp.sin(x) * x, 2.0)      # deck 04's f
    assert one.facts["forward"] == ["mul", "mul", "mul", "add_any"]
    assert "x: ~f32[]" in one.svg and "c̄ x" in one.svg      # its ends named after x


def test_batching_reads_where_vmap_keeps_the_batch_axis():
    seen = {}

    def spy(x):                    # what deck 04 reads off the BatchTracers
        y = x.sum(0)
        seen.update(x=x.batch_dim, y=y.batch_dim)
        return y

    xs = jnp.ones((3, 5, 4))
    pic = show_batching(lambda x: x.sum(0), xs, in_axes=2)
    jax.vmap(spy, in_axes=2)(xs)
    assert pic.facts["inputs"] == [seen["x"]] == [2]
    assert pic.facts["equations"] == [("reduce_sum", [2], [seen["y"]])]
    batched = jax.make_jaxpr(jax.vmap(lambda x: x.sum(0), in_axes=2))(xs)
    assert pic.facts["batched"] == prims(batched) == ["reduce_sum", "transpose"]
    assert pic.facts["out"] == [["B=4", "5"]] and pic.facts["size"] == 4

    def k(x, w):
        return jnp.tanh(x @ w).sum(0)

    x, ws = jnp.ones((5, 3)), jnp.ones((3, 2, 4))
    two = show_batching(k, x, ws, in_axes=(None, 2))
    one = jax.make_jaxpr(k)(x, ws[:, :, 0])
    assert [p for p, _, _ in two.facts["equations"]] == prims(one)
    assert two.facts["inputs"] == [None, 2]
    assert [o for _, _, o in two.facts["equations"]] == [[2], [2], [1]]
    assert two.facts["batched"] == prims(jax.make_jaxpr(jax.vmap(k, in_axes=(None, 2)))(x, ws))
    out = jax.vmap(k, in_axes=(None, 2))(x, ws)
    assert [len(d) for d in two.facts["out"]] == [out.ndim] and out.shape[0] == 4
    assert np.shape(out) == (4, 2)
    # equations with their own jaxprs (a custom_jvp, a cond) are bound as eval_jaxpr binds them
    def h(v):
        return jax.nn.relu(v).sum() + lax.cond(v[0] > 0, jnp.sin, jnp.cos, v[0])

    nested = show_batching(h, jnp.ones((4, 3)))
    assert [p for p, _, _ in nested.facts["equations"]] == prims(jax.make_jaxpr(h)(jnp.ones(3)))
    assert ("cond", [0, 0], [0]) in nested.facts["equations"]
    with pytest.raises(ValueError, match="one in_axes entry per argument"):
        show_batching(jnp.sin, jnp.ones(3), in_axes=None)


def test_charts_after_setup_are_sized_for_a_projector():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import workshop
    with matplotlib.rc_context():
        workshop.setup(quiet=True)
        fig, ax = plt.subplots(figsize=(7, 2.6))
        ax.plot([1, 2, 3], label="a line")
        ax.set(xlabel="step", ylabel="count")
        ax.legend()
        fig.canvas.draw()
        px = lambda t: t.get_fontsize() * fig.dpi / 72
        texts = ([ax.xaxis.label, ax.yaxis.label] + ax.get_xticklabels()
                 + ax.get_yticklabels() + ax.get_legend().get_texts())
        assert texts and min(px(t) for t in texts) >= 18, sorted({px(t) for t in texts})
        assert ax.get_lines()[0].get_linewidth() >= 2.5
        plt.close(fig)


# ---------------------------------------------------------------- one colour system

COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b")


def colours(svg_text: str) -> set[str]:
    """Every colour a picture draws with (fill, stroke, in attributes or styles), lower case."""
    return {c.lower() for c in COLOUR.findall(svg_text)}


def test_no_colour_is_written_outside_the_palette():
    # one place for the colours (workshop/palette.py), so a meaning cannot drift apart in one
    # picture: a colour literal anywhere else in the package's drawing code fails
    from pathlib import Path

    import workshop
    quoted = re.compile(r"""(?<=['"=:])#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?\b""")
    strays = {p.name: quoted.findall(p.read_text(encoding="utf-8"))
              for p in [*Path(workshop.__file__).parent.glob("*.py"),   # and a lab's verdict
                        *Path(workshop.__file__).parent.glob("labs/*.py")]
              if p.name != "palette.py"}
    assert {k: v for k, v in strays.items() if v} == {}
    assert quoted.findall("fill='#abc' stroke=\"#123456\"") == ["#abc", "#123456"]   # it sees them


def test_every_picture_draws_only_the_palettes_colours_each_for_its_meaning(pictures):
    from workshop import palette as pal
    from workshop.filemap import file_map
    from workshop.show import show_source

    named = {v.lower() for v in pal.NAMED.values()}
    drawn = {name: colours(pic.svg) for name, pic in pictures.items()}
    drawn["file map"] = colours(file_map("jax._src.linear_util")._repr_html_())
    for name, used in drawn.items():
        assert used <= named, (name, sorted(used - named))
    # a source excerpt's marked line in the mark's colour (its syntax colours are the code's,
    # as JupyterLab's editor draws code: not the pictures' system)
    assert pal.MARK.lower() in colours(show_source(jax.jit, mark="def jit")._repr_html_())
    here, later, batch = pal.HERE.lower(), pal.LATER.lower(), pal.BATCH.lower()
    # unknown until later is purple, the residuals crossing the cut orange: never the batch axis
    assert {here, later} <= drawn["cut"] and batch not in drawn["cut"]
    # the batch axis is teal, and only the batch axis: no orange, no purple
    assert batch in drawn["batching"] and not {here, later} & drawn["batching"]
    # the backward program runs later (purple); nothing in it is the batch axis
    assert later in drawn["ad flow"] and batch not in drawn["ad flow"]
    # the collectives: the mesh in ink, each device naming its group; no colour means a group
    assert drawn["collectives"] <= {pal.INK.lower(), pal.FILL.lower(), pal.TEXT.lower(),
                                    pal.PAPER.lower()}
    assert "group 0" in pictures["collectives"].svg
    # a device's colour only in the sharding grids, a colour of its own for each device there
    devices = {c.lower() for c in pal.DEVICES}
    assert len(devices) == 8 and not devices & (named - devices)
    assert devices <= drawn["sharding"] and devices <= drawn["copies"]
    for name, used in drawn.items():
        if name not in ("sharding", "copies"):
            assert not devices & used, name
    # a cache's answer: green hit, red miss; nothing else is green or red (a call's stages:
    # the first call missed and did the red work, the repeat hit; a call that ran, or was refused)
    verdicts = ("cache chain", "call stages", "placement", "eager compiles")
    for name in verdicts:
        assert {pal.HIT.lower(), pal.MISS.lower()} <= drawn[name], name
    for name, used in drawn.items():
        if name not in verdicts:
            assert not {pal.HIT.lower(), pal.MISS.lower()} & used, name


def test_charts_draw_in_the_palettes_colours():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import workshop
    from workshop import palette as pal
    with matplotlib.rc_context():
        workshop.setup(quiet=True)
        fig, ax = plt.subplots()
        a, b = ax.plot([1, 2]), ax.plot([2, 1])
        assert [matplotlib.colors.to_hex(x[0].get_color()) for x in (a, b)] == [
            pal.INK, pal.HERE]
        plt.close(fig)


def test_sharding_grid_draws_each_devices_block_from_the_array():
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from workshop import palette as pal
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    x = jnp.arange(64.0).reshape(8, 8)
    for spec, split, blocks in ((P("x", "y"), ["over x (2)", "over y (4)"], 8),
                                (P(None, "y"), ["not split", "over y (4)"], 4),
                                (P(("x", "y"), None), ["over x·y (8)", "not split"], 8),
                                (P(), ["not split", "not split"], 1)):
        a = jax.device_put(x, NamedSharding(mesh, spec))
        pic = show_sharding(a)
        index = {s.device.id: tuple(i.indices(n)[:2] for i, n in zip(s.index, a.shape))
                 for s in a.addressable_shards}
        assert pic.facts["index"] == index and pic.facts["split"] == split, spec
        assert len(pic.facts["holders"]) == blocks, spec
        assert sorted(i for ids in pic.facts["holders"].values() for i in ids) == list(range(8))
        # each block as big as the slide allows: as wide as the slide, text 20 px or more
        assert pic.size()[0] >= 0.8 * SLIDE_W and pic.text_px() >= 20, (spec, pic.size())
        texts = [t.text for t in ElementTree.fromstring(pic.svg).iter(f"{NS}text")]
        assert sorted(t for t in texts if t and t.startswith("dev ")) == \
            [f"dev {i}" for i in range(8)], spec   # every device named once
    # one device a block: the block is filled in that device's colour
    one = show_sharding(jax.device_put(x, NamedSharding(mesh, P("x", "y"))))
    root = ElementTree.fromstring(one.svg)
    fills = [r.get("fill") for r in root.iter(f"{NS}rect")]
    assert fills == list(pal.DEVICES)          # in device order, dev 0 first
    assert repr(one) == "float32[8@x,8@y]: 8 blocks of 4×2, one device each"
    line = jax.device_put(jnp.ones(8), NamedSharding(jax.make_mesh((8,), ("i",)), P("i")))
    assert show_sharding(line, tall=200).facts["split"] == ["over i (8)"]
    with pytest.raises(ValueError, match="1-D or 2-D"):
        show_sharding(jnp.ones((2, 2, 2)))


def test_charts_and_captions_are_in_the_slides_one_sans_face():
    # the charts' words and the pictures' captions were in DejaVu Sans beside the slides'
    # Source Sans Pro (decks/rise.css): a second sans face on one slide
    import matplotlib
    from matplotlib import font_manager, ft2font

    from workshop import pictures
    from workshop.phasemap import show_phase_map
    from workshop.tools import paths
    assert '"Source Sans Pro"' in (paths.DECKS / "rise.css").read_text()
    with matplotlib.rc_context():
        pictures.projector_charts()
        face = font_manager.findfont(font_manager.FontProperties(
            family=matplotlib.rcParams["font.family"]), fallback_to_default=False)
        assert ft2font.FT2Font(face).family_name == "Source Sans Pro", face
    sans = [t.get("font-family") for t in ElementTree.fromstring(show_phase_map(2).svg).iter()
            if t.get("font-family") and "Mono" not in t.get("font-family")]
    assert sans and all(f.startswith("Source Sans Pro,") for f in sans), set(sans)


def test_the_chain_alone_says_where_each_cache_lives(pictures):
    pic = pictures["cache homes"]
    assert pic.facts == {"caches": CACHES, "calls": {}, "homes": [h for _, h, _ in CHAIN]}
    texts = "".join(t.text or "" for t in ElementTree.fromstring(pic.svg).iter(f"{NS}text"))
    for home in pic.facts["homes"]:           # each module's file, written in its box
        assert home.split(".")[0].replace("_", "") in texts.replace("_", "")
    assert "cpppjitcacheexplicitattributes" in texts.replace("_", "")   # the C++ one's holder
    assert "hit" not in texts and "miss" not in texts                  # no lanes, no legend
    assert "homes" not in show_cache_chain(cache_rows()).facts


def test_residuals_are_what_saved_residuals_lists(pictures):
    from jax._src.ad_checkpoint import saved_residuals

    pic, args = pictures["residuals"], (jnp.ones((4, 4)) / 4, jnp.ones(4))
    for (name, f), kept in zip(nets().items(), pic.facts["kept"].values()):
        live = saved_residuals(f, *args)
        assert [t for t, _ in kept] == [a.str_short(short_dtypes=True) for a, _ in live], name
        assert all(w == "argument " + s.split()[3] if s.startswith("from the argument") else
                   s.startswith(f"output of {w} ") for (_, w), (_, s) in zip(kept, live)), name
        assert pic.facts["computed"][name] == sum(not s.startswith("from the argument")
                                                  for _, s in live)
    assert list(pic.facts["computed"].values()) == [5, 0, 3]
    # each computed residual is an orange box, each argument a dashed one
    rects = [r for r in ElementTree.fromstring(pic.svg).iter(f"{NS}rect")]
    from workshop.palette import HERE
    assert sum(r.get("stroke") == HERE for r in rects) == 8
    assert sum(r.get("stroke-dasharray") is not None for r in rects) == 6
    assert repr(pic) == "no checkpoint: 7 kept, 5 computed; jax.checkpoint: 2 kept, " \
                        "0 computed; dots_saveable: 5 kept, 3 computed"


def test_ad_flow_writes_the_residuals_values_it_was_handed():
    pic = show_ad_flow(lambda x: jnp.sin(x) * x, jnp.float32(2.0))     # deck 04's f
    _, f_vjp = jax.vjp(lambda x: jnp.sin(x) * x, jnp.float32(2.0))
    kept = [float(r) for r in f_vjp.opaque_residuals] + [2.0]           # cos 2, sin 2, x
    assert sorted(pic.facts["values"].values()) == pytest.approx(sorted(kept))
    for name, value in pic.facts["values"].items():
        assert f"{name} = {value:.3g}" in pic.svg
    assert pic.size()[0] == SLIDE_W and pic.text_px() >= 20      # as wide as the slide
    arrays = show_ad_flow(lambda x, y: jnp.sin(x) * y, jnp.arange(3.0), 2.0).facts["values"]
    assert None in arrays.values()                                     # an array: no value


def test_batching_is_drawn_as_wide_as_most_of_the_slide():
    def layer(x, w):                                   # deck 04's layer, four rows of axes
        return jnp.tanh(x @ w).sum(0)

    pic = show_batching(layer, jnp.ones((5, 3)), jnp.ones((3, 2, 4)), in_axes=(None, 2))
    w, h = pic.size()
    assert w >= 0.8 * SLIDE_W and h <= 470.5 and pic.text_px() >= 20, (w, h)


def test_lowering_pairs_each_equation_with_the_ops_its_rule_wrote():
    from workshop.artefacts import hlo_entry, stablehlo_ops
    from workshop.dataflow import lowering_of, show_lowering

    inner = jax.jit(lambda v: jnp.cos(v) * v)
    cases = {   # (function, args): each equation's ops, as lowered on 0.12.0.1
        "literals": (lambda x: jnp.sin(x) * 2.0 * 3.0, (jnp.ones(3),), [
            ["sine"], ["constant", "broadcast_in_dim", "multiply"],
            ["constant", "broadcast_in_dim", "multiply"]]),
        "same primitive twice": (lambda x: x * x * x, (1.0,), [["multiply"], ["multiply"]]),
        "a nested jit": (lambda x: inner(x) + 1.0, (jnp.ones(3),), [
            ["call"], ["constant", "broadcast_in_dim", "add"]]),
    }
    for name, (fn, args, expected) in cases.items():
        traced = jax.jit(fn).trace(*args)
        compiled = traced.lower().compile()
        pic = show_lowering(traced, compiled)
        assert pic.facts["equations"] == prims(traced.jaxpr), name
        assert pic.facts["stablehlo"] == expected, name
        # every op of @main is drawn once, in order: the independent reader of the text agrees
        flat = [op for ops in pic.facts["stablehlo"] for op in ops]
        assert [o.split(" @")[0] for o in stablehlo_ops(traced.lower())] == flat, name
        assert list(pic.facts["hlo"]) == [n for n, op in hlo_entry(compiled) if op != "parameter"]
    # the deck's f: tanh fused into the sum; the dot in a custom fusion of its own
    traced = jax.jit(lambda x, w: jnp.tanh(x @ w).sum()).trace(jnp.ones((8, 4)), jnp.ones((4, 2)))
    assert show_lowering(traced, traced.lower().compile()).facts["hlo"] == {
        "ynn_fusion": ["dot_general"], "tanh_reduce_fusion": ["tanh", "reduce_sum"]}
    # an op no equation accounts for is refused, not drawn under the wrong one
    pairs = lowering_of(traced)
    assert [len(ops) for _, ops in pairs] == [1, 1, 2]
    fewer = traced.jaxpr.replace(eqns=traced.jaxpr.eqns[:2])
    with pytest.raises(ValueError, match="no equation of the jaxpr accounts for"):
        lowering_of(type("T", (), {"jaxpr": fewer, "lower": traced.lower})())


def test_nested_frames_each_jaxpr_an_equation_carries():
    from jax._src import core

    from workshop.dataflow import show_nested

    ch = nested_h()
    pic = show_nested(ch)
    assert pic.facts["outer"] == prims(ch)
    assert pic.facts["inner"] == [(e.primitive.name, prims(j)) for e in ch.eqns
                                  for j in core.jaxprs_in_params(e.params)]
    assert pic.facts["inner"] == [("jit", ["mul"]), ("cond", ["cos"]), ("cond", ["sin"])]
    assert "cond branch 0" in pic.svg and "cond branch 1" in pic.svg and "s jaxpr<" in pic.svg
    assert repr(pic) == "nested: 3 equation(s), 2 of them carry 3 jaxpr(s)"
    # one frame per jaxpr, joined to its equation by one dashed line
    root = ElementTree.fromstring(pic.svg)
    assert sum(p.get("stroke-dasharray") == "6 4" for p in root.iter(f"{NS}path")) == 3
    flat = show_nested(jax.make_jaxpr(lambda x: jnp.sin(x))(1.0))   # nothing nested
    assert flat.facts["inner"] == [] and "jaxpr" not in flat.caption.split(",")[0]


def test_trace_chain_and_transforms_are_drawn_from_the_live_objects():
    from jax._src import core

    from workshop.pictures import show_trace_chain, show_transforms

    seen = []
    jax.jit(jax.grad(lambda x: seen.append(core.trace_ctx.trace) or jnp.sin(x)))(1.0)
    chain, t = [], seen[0]
    while t is not None:
        chain.append(type(t).__name__)
        t = getattr(t, "parent_trace", None)
    assert show_trace_chain(seen[0]).facts["chain"] == chain
    assert chain[0] == "LinearizeTrace" and chain[-1] == "EvalTrace"
    wf = two_transforms()
    pic = show_transforms(wf, 3)
    assert pic.facts["stack"] == ["double", "add_one", "<lambda>"]
    assert pic.facts["calls"] == [("double", (3,), 7), ("add_one", (6,), 7), ("<lambda>", (7,), 7)]
    assert wf.call_wrapped(3) == 7 and "gets 6" in pic.svg
    assert "calls" not in show_transforms(wf).facts          # no args: the stack alone


def test_run_objects_and_rules_are_read_from_the_live_jaxpr_and_tables(pictures):
    import math

    from jax._src import core
    from jax._src.interpreters import ad, batching, mlir

    from workshop.pictures import show_run

    k = jax.make_jaxpr(lambda a, b: jnp.sin(a) * b + 1.0)(1.0, 2.0)
    run = pictures["run"]
    s = math.sin(0.5)
    assert run.facts["steps"] == [("sin", "c", f"{s:.4g}"), ("mul", "d", f"{s * 3:.4g}"),
                                  ("add", "e", f"{s * 3 + 1:.4g}")]
    assert run.facts["env"][:2] == [("a", "0.5"), ("b", "3.0")]
    assert run.facts["result"] == [f"{float(core.eval_jaxpr(k, k.consts, 0.5, 3.0)[0]):.4g}"]
    assert "e = add d 1.0" in run.svg and "read e" in run.svg
    with pytest.raises(ValueError, match="at the top level"):   # grad's trace got the binds
        jax.grad(lambda a: show_run(k, a, 3.0) and a)(0.5)
    boxes = dict(pictures["jaxpr objects"].facts["boxes"])
    assert list(boxes) == ["Jaxpr", "JaxprEqn", "Var", "ShapedArray"]
    assert boxes["JaxprEqn"] == ["primitive: mul", "invars: [c, d]", "outvars: [e]",
                                 "params: {out_dtype: None}"]
    assert boxes["Jaxpr"][1:4] == ["invars: [a, b]", "eqns: 5 JaxprEqns", "outvars: [f, g]"]
    assert boxes["ShapedArray"] == ["shape: (3,)", "dtype: float32", "weak_type: False"]
    rules = pictures["rules"].facts["rules"]
    assert rules["ad.primitive_jvps"] == ad.primitive_jvps[lax.sin_p].func.__name__
    assert rules["batching.fancy_primitive_batchers"] == \
        batching.fancy_primitive_batchers[lax.sin_p].func.__name__
    assert rules["mlir._lowerings"] == mlir._lowerings[lax.sin_p].rule.__name__ == "_sin_lowering"
    assert rules["ad.primitive_transposes"] is None and rules["pe.custom_staging_rules"] is None
    assert repr(pictures["rules"]) == "sin_p: 5 of 7 rules"
    # the staging paths: jnp.sin and * are inline jits (the rule writes their bodies), cos not
    from jax._src import pjit
    from jax._src.interpreters import partial_eval as pe
    staging = pictures["staging"].facts
    assert staging["calls"] == [("jit", pjit.pjit_staging_rule.__name__, ["sin"]),
                                ("cos", None, ["cos"]), ("jit", "pjit_staging_rule", ["mul"])]
    assert lax.cos_p not in pe.custom_staging_rules and staging["eqns"] == ["sin", "cos", "mul"]
    # one bind, from the live frames: the trace it asked is the jaxpr trace; twice is the same
    from workshop.pictures import show_bind
    calls = pictures["bind"].facts["calls"]
    assert [c[0] for c in calls] == ["Primitive.bind", "bind_with_trace", "process_primitive",
                                     "default_process_primitive"]
    assert {c[2] for c in calls[1:]} == {"DynamicJaxprTrace"} and {c[1] for c in calls} == {"sin"}
    assert show_bind(lax.sin, jnp.ones(3)).facts == pictures["bind"].facts   # no cache hides it
    with pytest.raises(ValueError, match="default path"):   # jnp.sin is a jit: its rule
        show_bind(jnp.sin, jnp.ones(3))


def test_split_draws_partial_evaluations_own_two_programs():
    from jax._src.interpreters import partial_eval as pe

    from workshop.dataflow import show_split

    cases = [(lambda x, y: jnp.sin(x) * jnp.cos(y) + x, (1.0, 2.0), [False, True]),
             (lambda x, y: (jnp.exp(x) * 2.0, jnp.sin(x) + y), (1.0, 2.0), [False, True]),
             (lambda x, y: jnp.cos(x) * y, (jnp.ones(3), 2.0), [True, False])]
    for fn, args, unknowns in cases:
        j = jax.make_jaxpr(fn)(*args)
        known, unknown, _, res = pe.partial_eval_jaxpr_nounits(j, unknowns, instantiate=False)
        pic = show_split(j, unknowns)
        assert (pic.facts["known"], pic.facts["unknown"]) == (prims(known), prims(unknown))
        assert len(pic.facts["residuals"]) == len(res)
        # one thick orange arrow per residual, each ending at a box named for it
        root = ElementTree.fromstring(pic.svg)
        thick = [p for p in root.iter(f"{NS}path") if p.get("stroke-width") == "4"]
        assert len(thick) == len(res)
        assert all(f"residual {r}" in pic.svg for r in pic.facts["residuals"])


def test_call_stages_are_what_monitoring_timed_in_each_call(pictures):
    from jax import monitoring
    from jax._src import dispatch

    from workshop.diagrams import STAGES
    events = (dispatch.JAXPR_TRACE_EVENT, dispatch.JAXPR_TO_MLIR_MODULE_EVENT,
              dispatch.BACKEND_COMPILE_EVENT)
    assert list(STAGES) == [e.split("/")[-1] for e in events]
    facts = pictures["call stages"].facts
    assert [s for s, _ in facts["stages"]] == ["trace", "lower", "compile"]
    assert facts["again_stages"] == [] and facts["first_ms"] > facts["again_ms"]
    ends = [s + ms for s, (_, ms) in zip(facts["starts"], facts["stages"])]
    assert facts["starts"] == sorted(facts["starts"]) and ends[-1] <= facts["first_ms"]
    # the durations are the events' own: a second listener hears the same three
    heard = []
    listen = lambda name, secs, **kw: heard.append((name, secs))
    monitoring.register_event_duration_secs_listener(listen)
    try:
        pic = show_call_stages(jax.jit(lambda x: jnp.sin(x) * 5), jnp.ones(3))
    finally:
        monitoring.unregister_event_duration_listener(listen)
    mine = [(n.split("/")[-1], secs * 1e3) for n, secs in heard if n in events]
    assert [(STAGES[n], ms) for n, ms in mine] == pic.facts["stages"]
    # a function already compiled for these arguments times no stage, even on its first call
    warm = jax.jit(lambda x: jnp.cos(x) * 5)
    warm(jnp.ones(3))
    assert show_call_stages(warm, jnp.ones(3)).facts["stages"] == []


def test_placement_draws_where_each_argument_lives_and_where_the_call_ran(pictures):
    add, calls = placements()
    facts = pictures["placement"].facts
    assert facts["devices"] == [d.id for d in jax.devices()]
    ran = facts["calls"]["on3 + numpy"]
    assert ran == {"args": [(True, [3]), (False, [])], "result": [3], "error": None}
    assert {d.id for d in add(*calls["on3 + numpy"]).devices()} == set(ran["result"])
    refused = facts["calls"]["on3 + on5"]
    assert refused["args"] == [(True, [3]), (True, [5])] and refused["result"] == []
    with pytest.raises(ValueError, match=refused["error"]):
        add(*calls["on3 + on5"])
    # an uncommitted jax.Array is drawn where it is, dashed; the result follows the committed
    loose = jnp.ones(4)
    got = show_placement(add, {"x": (calls["on3 + on5"][1], loose)}).facts["calls"]["x"]
    assert got["args"] == [(True, [5]), (False, [d.id for d in loose.devices()])]
    assert got["result"] == [5]
    assert "stroke-dasharray='6 4'" in pictures["placement"].svg


def test_eager_compiles_are_each_calls_primitives_compiled_or_cached(pictures):
    from jax._src import dispatch
    calls = pictures["eager compiles"].facts["calls"]
    assert calls["ones again"] == [("broadcast_in_dim", "cached")]
    assert calls["ones"][-1] == ("broadcast_in_dim", "compiled")
    assert {"jit(broadcast_in_dim)"} <= set(pictures["eager compiles"].facts["compiled"])
    # a primitive on a new shape is a new program: sin on 19 compiles, on 19 again it does not
    misses = dispatch.xla_primitive_callable.cache_info().misses
    pic = show_eager_compiles({"new": lambda: lax.sin(jnp.arange(19.0)),
                               "same": lambda: lax.sin(jnp.arange(19.0)),
                               "new shape": lambda: lax.sin(jnp.arange(23.0))})
    got = pic.facts["calls"]
    assert got["new"] == [("iota", "compiled"), ("sin", "compiled")], got
    assert got["same"] == [("iota", "cached"), ("sin", "cached")], got
    assert got["new shape"] == [("iota", "compiled"), ("sin", "compiled")], got
    assert pic.facts["compiled"] == ["jit(iota)", "jit(sin)"] * 2
    assert dispatch.xla_primitive_callable.cache_info().misses >= misses + 2   # iota, sin
