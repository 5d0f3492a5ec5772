"""show_source, the station helpers, trimming and refuses: what a slide relies on."""
from __future__ import annotations

import inspect
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from workshop import (
    ClaimFailed,
    palette,
    refuses,
    show,
    show_cost,
    show_hlo,
    show_jaxpr,
    show_source,
    show_stablehlo,
    trim,
)


def test_show_source_gives_real_path_and_line_numbers():
    from jax._src import xla_bridge
    s = show_source(xla_bridge.backends_are_initialized, docstring=True)
    path = inspect.getsourcefile(xla_bridge.backends_are_initialized)
    lines = open(path).read().split("\n")
    assert s.title.startswith("jax/_src/xla_bridge.py:")
    for n, text in zip(s.numbers, s.lines):
        assert lines[n - 1] == text
    assert "def backends_are_initialized" in str(s)


def test_show_source_by_name_window_marks_and_folded_docstring():
    s = show_source("jax._src.core.Primitive.bind", start="prev_trace = trace_ctx.trace",
                    stop="finally:", mark="bind_with_trace")
    # stop="finally:" would end on a header with no body: the excerpt stops before it
    assert s.lines[0].strip() == "prev_trace = trace_ctx.trace" and len(s.lines) == 4
    assert s.lines[-1].strip().startswith("return self.bind_with_trace")
    assert len(s.marked) == 1 and "▶" in str(s)
    j = show_source(jax.jit, max_lines=18)
    assert "⋮ docstring" in str(j) and j.notes and "more lines (to line" in j.notes[0]
    assert str(j).split("\n")[-1] == j.cut and j.cut.startswith("⋯ not shown: ")


def test_show_source_html_is_highlighted_inline_for_export():
    html = show_source(jax.jit, max_lines=5)._repr_html_()
    assert "style=" in html and "class=" not in html.replace("class='workshop-shown'", "")
    assert "jax/_src/api.py" in html


def test_a_marked_line_is_tinted_whole_not_only_its_number():
    s = show_source("jax._src.core.Primitive.bind", start="prev_trace = trace_ctx.trace",
                    stop="finally:", mark="bind_with_trace")
    rows = s._repr_html_().split("\n")
    tinted = [r for r in rows if f"background:{palette.MARK}" in r]
    assert len(tinted) == 1
    # the tint wraps the row: gutter and code inside one span that starts the line
    whole = re.match(rf"(?:<div[^>]*>)?(?:<pre[^>]*>)?<span style='background:{palette.MARK}"
                     r"[^']*'>(.*)</span>$", tinted[0].split("</pre>")[0])
    assert whole and "▶" in whole.group(1) and "bind_with_trace" in whole.group(1), tinted[0]


def test_the_ellipsis_of_a_cut_line_is_quiet_not_a_red_error_box():
    # Python's lexer reads … as an error token, which pygments' default style boxes in red
    s = trim("result = some_function(first_argument, second_argument, third)", width=30,
             lexer="python")
    assert s.lines[0].endswith("…")
    page = s._repr_html_()
    assert "border" not in page and "#FF0000" not in page.upper()
    assert re.search(r"<span style=\"color: #666\">…</span>", page), page


def test_a_cells_temporary_file_reads_as_the_handouts_print_it(capsys):
    # deck 03's explain_cache_misses names where the function was defined: live, the kernel's
    # temp file (/tmp/ipykernel_PID/HASH.py) was on the slide, where the handout says ‹cell›
    from workshop.tools.builder import render
    line = "  for step defined at /tmp/ipykernel_10804/2215316448.py:3:8 because:"
    live = str(trim(line, width=78))
    assert "ipykernel" not in live and "‹cell›:3:8" in live
    assert live == render.clean(line)
    capsys.readouterr()
    with refuses(ValueError):
        raise ValueError('at "C:/Users/a/AppData/Local/Temp/ipykernel_7/123.py", line 3')
    assert 'at "‹cell›", line 3' in capsys.readouterr().out


@pytest.mark.parametrize("kw", [{"mark": "no such line"}, {"start": "nope"}, {"stop": "nope"}])
def test_show_source_fails_loudly_when_jax_changed(kw):
    with pytest.raises(LookupError, match="not found"):
        show_source(jax.jit, **kw)


def test_a_mark_past_the_cut_is_an_error():
    with pytest.raises(ValueError, match="past max_lines"):
        show_source(jax.jit, mark="return", max_lines=3)


def test_show_source_folds_upstream_todos_and_cuts_wide_lines():
    from jax._src.interpreters import partial_eval as pe
    fn = pe.DynamicJaxprTrace.default_process_primitive
    src, first = inspect.getsourcelines(fn)
    todos = [first + i for i, t in enumerate(src) if t.lstrip().startswith("# TODO")]
    assert todos, "the fixture needs an upstream TODO in the installed source"
    s = show_source(fn, max_lines=None)
    assert "# TODO" not in s.text and not set(todos) & set(s.numbers)
    folded = [t for t in s.lines if "# ⋮ upstream TODO" in t]
    assert folded and sum(int(re.search(r"(\d+) line", t).group(1)) for t in folded) >= len(todos)
    kept = [n for n in s.numbers if n is not None]
    assert kept == sorted(kept) and kept[0] == first        # real numbers, in order
    narrow = show_source(fn, max_lines=None, width=40)
    assert max(map(len, narrow.lines)) == 40
    whole = show_source(fn, max_lines=None, width=None)
    assert not whole.notes and max(map(len, whole.lines)) > 40
    assert f"{sum(len(t) > 40 for t in whole.lines)} line ends (…)" in narrow.notes


def test_trim_drops_terminal_colours():
    assert trim("\x1b[34;1mlambda\x1b[39;22m x").text == "lambda x"


def test_trim_marks_what_it_cut():
    s = trim("\n".join("x" * (100 if i % 2 else 5) for i in range(20)), max_lines=5, width=10)
    assert s.lines == ["xxxxx", "x" * 9 + "…", "xxxxx", "x" * 9 + "…", "xxxxx"]
    assert s.notes == ["15 more lines of 20", "2 line ends (…)"]
    # what was cut is one quiet line after the block, in the text and in the slide's HTML
    assert str(s).split("\n")[-1] == "⋯ not shown: 15 more lines of 20, 2 line ends (…)"
    assert s._repr_html_().count("not shown") == 1
    assert trim("short").notes == [] and trim("a\nb", max_lines=2).notes == []
    assert trim("short").cut == "" and "not shown" not in str(trim("short"))


def test_trim_keeps_the_line_the_slide_is_about_whole():
    text = "\n".join([f"  line {i}" for i in range(20)]
                     + ["  %all-reduce = f32[8] all-reduce(x), channel_id=1, "
                        "replica_groups={{0,1,2,3},{4,5,6,7}}, to_apply=%add"] + ["}"])
    s = trim(text, max_lines=8, width=40, keep="all-reduce")
    joined = "".join(line.strip() for line in s.lines)
    assert "replica_groups={{0,1,2,3},{4,5,6,7}}" in joined   # wrapped, never cut
    assert max(map(len, s.lines)) <= 40 and not any(line.endswith("…") for line in s.lines)
    assert s.lines[:6] == [f"  line {i}" for i in range(6)] and s.lines[6] == "  ⋯"
    assert s.notes == ["14 more lines of 22"]
    # the kept line within the first lines: cut as any other would be, but wrapped
    near = trim(text, max_lines=30, width=40, keep="all-reduce")
    assert "  ⋯" not in near.lines and len(near.lines) > 22
    # a keep that matches nothing fails (the slide's point left the output)
    with pytest.raises(LookupError, match="keep='all-gather' matches no line"):
        trim(text, keep="all-gather")


def test_a_source_excerpt_never_ends_on_a_dangling_header():
    # a max_lines cut that would end on `else:` (05's slide did) or `def f():` backs up to the
    # last line with a body shown; the note counts what went
    import textwrap
    src = textwrap.dedent('''
        def f(x):
            if x:
                y = 1
            else:
                y = 2
            return y
        ''').strip("\n").split("\n")
    for n in range(2, 7):
        rows = [(i + 1, t) for i, t in enumerate(src)]
        got, notes = show._cut(rows, n, set(), "f")
        assert not show._dangles(got[-1][1]) or len(got) == 1, (n, got)
        assert (notes == []) == (len(got) == len(src))
    got, _ = show._cut([(i + 1, t) for i, t in enumerate(src)], 4, {4}, "f")
    assert got[-1][1].strip() == "else:"    # unless that line is the one the slide marks


def test_the_four_stations_helpers():
    traced = jax.jit(lambda x: jnp.sin(x).sum()).trace(jnp.ones(4))
    assert "2 equations" in show_jaxpr(traced).title
    assert show_jaxpr(jax.make_jaxpr(jnp.sin)(1.0)).title == "jaxpr · 1 equation"
    lowered = traced.lower()
    assert "stablehlo.sine" in str(show_stablehlo(lowered, max_lines=None, width=None))
    compiled = lowered.compile()
    h = show_hlo(compiled, max_lines=None, width=None)
    assert "ENTRY" in h.text and "FileNames" not in h.text and "metadata={" not in h.text
    assert any("other computation" in n for n in h.notes)
    assert "argument bytes" in str(show_cost(compiled)) and "16" in str(show_cost(compiled))


def test_refuses_shows_the_expected_error(capsys):
    with refuses(ZeroDivisionError, match="division"):
        1 / 0
    assert capsys.readouterr().out.startswith("✗ refused — ZeroDivisionError")


@pytest.mark.parametrize("body,why", [
    (lambda: None, "nothing was raised"),
    (lambda: [][1], "got IndexError"),
    (lambda: 1 / 0, "does not match"),
])
def test_refuses_fails_the_claim(body, why):
    with pytest.raises(ClaimFailed, match=why):
        with refuses(ZeroDivisionError if "match" in why else TypeError, match="nomatch"
                     if "match" in why else None):
            body()


def test_show_source_finds_a_function_behind_a_cpp_cache_by_its_name():
    from jax._src.interpreters import pxla
    assert not hasattr(pxla._cached_compilation, "__wrapped__")   # why the fallback exists
    s = show_source("jax._src.interpreters.pxla._cached_compilation",
                    stop="compile_or_get_cached(", mark="@weakref_lru_cache")
    assert s.lines[0] == "@weakref_lru_cache" and s.lines[1].startswith("def _cached_compilation(")
    assert s.title.startswith("jax/_src/interpreters/pxla.py:") and len(s.marked) == 1
    with pytest.raises(TypeError, match="dotted name"):
        show_source(pxla._cached_compilation)
    with pytest.raises(LookupError, match="cannot find"):
        show_source("jax._src.interpreters.pxla._no_such_function_here")


def test_stations_picture_draws_what_each_station_produced():
    from xml.etree import ElementTree

    from workshop import show_stations
    from workshop.pictures import flow

    def g(x, y):
        return jnp.sin(x) * y
    pic = show_stations(g, jnp.arange(3.0), jnp.ones(3))
    traced = jax.jit(g).trace(jnp.arange(3.0), jnp.ones(3))
    assert pic.facts["equations"] == [e.primitive.name for e in traced.jaxpr.eqns]
    assert pic.facts["stablehlo"] == ["sine", "multiply"]
    hlo = traced.lower().compile().as_text()
    assert pic.facts["hlo"] and all(f"%{n} = " in hlo for n in pic.facts["hlo"])
    assert pic.facts["result"] == ["f32[3]"]
    root = ElementTree.fromstring(pic.svg)          # well-formed, five boxes
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}rect")) == 5 and len(root.findall(f"{ns}line")) == 4
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "g(x, y)" in texts and "2 equations" in texts and ".compile()" in texts
    assert pic._repr_svg_() == pic.svg and "→ f32[3]" in repr(pic)
    # a name too long for its box is cut with a visible mark, never silently
    long = flow([("a", ["x" * 40]), ("b", ["y"])], ["go"])
    assert "x" * 40 not in long and "…" in long
    # more names than lines: counted, then summarised
    from workshop.pictures import _list
    assert _list(["add", "add", "mul", "sin", "cos", "exp"], 3) == ["add ×2", "mul", "+3 more"]


def test_a_graphs_boxes_are_ordered_so_that_no_edges_cross_or_touch():
    # deck 04's linear jaxpr and its transpose: in the jaxpr's order, edges crossed, and two
    # skip edges met on one lane (reading as one line); drawn, none do
    from jax import lax

    from workshop import dataflow
    from workshop.artefacts import jaxpr_graph
    _, f_vjp = jax.vjp(lambda x: lax.mul(lax.sin(x), x), 2.0)
    lay_of = lambda h: dataflow._layout_right(h, 110, 44, 34)
    before = []
    for j in (f_vjp.jaxpr, jax.make_jaxpr(f_vjp)(1.0).jaxpr):
        g = jaxpr_graph(j)
        u = dataflow.untangled(g, lay_of, False)
        before.append(dataflow.crossings(g, lay_of(g), False))
        assert dataflow.crossings(u, lay_of(u), False) == 0
        # the same boxes in the same columns, the same edges, the outputs where they were
        assert [sorted(c) for c in u.columns] == [sorted(c) for c in g.columns]
        assert [e[2:] for e in u.edges] == [e[2:] for e in g.edges]
        assert u.columns[-1] == g.columns[-1]
        for (a, b, *_), (a2, b2, *_) in zip(g.edges, u.edges):
            assert u.columns[a2[0]][a2[1]] == g.columns[a[0]][a[1]]
            assert u.columns[b2[0]][b2[1]] == g.columns[b[0]][b[1]]
    assert before == [1, 2]
    # a touch counts: two routes that meet at one point (not at a box they share)
    assert dataflow._meet((0, 0), (10, 0), (10, 0), (10, 10))
    assert not dataflow._meet((0, 0), (10, 0), (0, 5), (10, 5))


def test_crossings_counts_what_meet_says_pair_by_pair():
    # crossings tests every segment against every other at once (numpy); _meet is the one-pair
    # test it must agree with, on graphs drawn both ways and in many orders of their boxes
    import itertools

    from workshop import dataflow
    from workshop.artefacts import jaxpr_graph

    def by_pairs(g, lay, down):
        lines = [(e, dataflow._polyline(*lay.route(e), down)) for e in g.edges]
        return sum(any(dataflow._meet(p, q, r, s) for p, q in zip(a, a[1:])
                       for r, s in zip(b, b[1:]))
                   for i, (e, a) in enumerate(lines) for f, b in lines[i + 1:]
                   if not {e[0], e[1]} & {f[0], f[1]})

    # every pair of segments between points of a grid: crossing, touching at an end, a T,
    # running along each other, parallel, apart, and 0.5 px past either end (_meet's
    # tolerance); all at once, and in blocks of rows as crossings asks
    grid = [(x, y) for x in (0.0, 0.5, 5.0, 5.5) for y in (0.0, 0.5, 5.0, 5.5)]
    segs = [(p, q) for p in grid for q in grid if p != q]
    arr = np.array([(*p, *q) for p, q in segs])
    met = dataflow._meets(arr)
    assert [[bool(m) for m in row] for row in met] == \
        [[dataflow._meet(p, q, r, s) for r, s in segs] for p, q in segs]
    assert 0 < met.sum() < met.size
    assert (np.vstack([dataflow._meets(arr[a:a + 7], arr) for a in range(0, len(arr), 7)])
            == met).all()
    seen = []
    for f, args in [(lambda x, y: jnp.sin(jnp.cos(jnp.exp(x))) * y + x, (1.0, 2.0)),
                    (lambda x, y: (jnp.cos(x) * 3.0 + y, x.sum(), jnp.sin(y) * x),
                     (jnp.ones(3), 2.0)),
                    (lambda x, y: jnp.sin(jnp.cos(x) * jnp.exp(y)) + x, (1.0, 2.0))]:
        g = jaxpr_graph(jax.make_jaxpr(f)(*args).jaxpr)
        sizes = [len(c) for c in g.columns]
        orders = itertools.product(*[itertools.permutations(range(n)) for n in sizes[:-1]])
        for order in itertools.islice(orders, 40):
            h = dataflow._reordered(g, [list(o) for o in order] + [list(range(sizes[-1]))])
            for down, lay_of in ((False, lambda h: dataflow._layout_right(h, 110, 44, 34)),
                                 (True, lambda h: dataflow._layout_down(h, 34, 0))):
                lay = lay_of(h)
                seen.append(dataflow.crossings(h, lay, down))
                assert seen[-1] == by_pairs(h, lay, down), (f, order, down)
    assert len(seen) > 80 and max(seen) >= 3 and 0 in seen, seen   # orders that cross, and not


def test_graph_names_what_the_printed_jaxpr_names():
    import re

    from workshop import show_graph
    table = jnp.arange(3.0)
    j = jax.make_jaxpr(lambda x, y: (jnp.cos(x) * 3.0 * table + y, x.sum()))(jnp.ones(3), 2.0)
    g = show_graph(j)
    text = str(j)
    printed = re.findall(r"^\s+(\w+):f32\[\d*\] = (\w+)", text, re.M)
    titles = [t for c in g.facts["columns"][1:-1] for t in c]
    assert sorted(t.split("(")[0] for t in titles) == sorted(p for _, p in printed)
    assert "mul(·, 3.0)" in titles and "3.0:f32[]" in text   # the literal, in its box
    for var, _ in printed:                      # the binder names are the printer's
        assert f">{var}: " in g.svg, var
    consts_and_args = re.match(r"\{ lambda (.*?)\. let", text.replace("\x1b", "")).group(1)
    assert g.facts["columns"][0] == re.findall(r"(\w+)\W*:", consts_and_args)
    assert g.facts["columns"][-1] == ["out", "out"] and ">const: f32[3]<" in g.svg
    assert ">y: ~f32[]<" in g.svg               # the weak type the text hides
    # an edge per variable read: every non-literal input of every equation, and each output
    from jax._src.core import Literal
    reads = sum(not isinstance(v, Literal) for e in j.eqns for v in e.invars)
    assert len(g.facts["edges"]) == reads + 2
    from xml.etree import ElementTree
    down = show_graph(j, down=True)                 # same graph, levels top to bottom
    assert down.facts == g.facts and ElementTree.fromstring(down.svg) is not None


def test_pictures_hold_on_awkward_programs():
    import re

    from jax import lax

    from workshop import show_graph, show_stations

    def binders(j):                   # top-level equation binders, as str(jaxpr) prints them
        return [re.findall(r"(\w+):", lhs) for lhs in
                re.findall(r"^    (\S.*?) = \w+", str(j).split("} in\n")[-1], re.M)]

    def drawn(j):
        return [re.findall(r"(\w+): ", line) for line in
                re.findall(rf"font-size='18' fill='{palette.TEXT}'>([^<]*)</text>",
                           show_graph(j).svg)]

    grad = jax.make_jaxpr(jax.grad(lambda x, y: jnp.sin(x) * y))(1.0, 2.0)   # an unused _
    loop = jax.make_jaxpr(lambda x: lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1] + 1.0)(1.0)
    inner = jax.jit(lambda v: jnp.cos(v) * v)
    shared = jax.make_jaxpr(lambda x: inner(inner(x)))(jnp.ones(3))         # printed first
    for j in (grad, loop, shared):
        n_in = len(j.jaxpr.invars) + len(j.jaxpr.constvars)
        assert sorted(drawn(j)[n_in:n_in + len(j.eqns)]) == sorted(binders(j)), str(j)
    assert "while(0, ·)" in show_graph(loop).facts["columns"][1]      # a literal, as printed
    key = show_stations(lambda s: jax.random.key(s), 0)                # no value line for a key
    assert key.facts["result"] == ["key<fry>[]"]
    assert show_stations(lax.erf, 1.0).facts["stablehlo"] == ["chlo.erf"]
    assert show_stations(jnp.argmax, jnp.ones(3)).facts["stablehlo"] == ["call @argmax"]
    looped = show_stations(lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, x), 0.0)
    assert looped.facts["stablehlo"] == ["while"]                      # not its region's ops
    from workshop.pictures import hlo_entry  # a tuple-typed ROOT
    pair = jax.jit(lambda x: (x, x * 2)).lower(jnp.ones(3)).compile()
    assert "tuple" in [op for _, op in hlo_entry(pair)]


def test_graph_draws_the_partial_eval_cut_and_refuses_one_it_cannot_draw():
    from jax._src.interpreters import partial_eval as pe

    from workshop import show_graph
    c = jax.make_jaxpr(lambda x, y: jnp.sin(x) * jnp.cos(y) + x)(1.0, 2.0)
    g = show_graph(c, unknowns=[False, True])
    known, unknown, _, res = pe.partial_eval_jaxpr_nounits(c, [False, True], instantiate=False)
    assert g.facts["known"] == [e.primitive.name for e in known.eqns] == ["sin"]
    assert g.facts["unknown"] == [e.primitive.name for e in unknown.eqns]
    assert g.facts["residuals"] == ["c", "a"] and len(res) == 2
    assert g.svg.count("stroke-width='4'") == 2 and g.svg.count("stroke-dasharray") == 5
    # a nested jit is split inside by its own rule: one box cannot be half known
    nested = jax.make_jaxpr(lambda x, y: jax.jit(lambda a, b: jnp.sin(a) * b)(x, y))(1.0, 2.0)
    with pytest.raises(ValueError, match="partial evaluation splits this jaxpr as"):
        show_graph(nested, unknowns=[False, True])
    # one class on 0.12: the consts ride on the jaxpr (drawn known), .jaxpr is the jaxpr itself
    assert c.jaxpr is c and show_graph(c.jaxpr, unknowns=[False, True]).facts == g.facts
    scale = jnp.arange(3.0)
    f = lambda x, y: x * scale + y * scale
    k = jax.make_jaxpr(f)(jnp.ones(3), 2.0)
    assert len(k.consts) == 1 and k.constvars == k.all_invars[:1]
    kg = show_graph(k, unknowns=[False, True])                # the const crosses the cut
    assert kg.facts["residuals"] == ["a", "d"] and kg.facts["known"] == ["mul"]
    assert show_graph(jax.jit(f).trace(jnp.ones(3), 2.0), unknowns=[False, True]).facts == kg.facts
    with pytest.raises(TypeError, match="needs a jaxpr"):
        show_graph(jax.jit(f).lower(jnp.ones(3), 2.0), unknowns=[False, True])


def test_collectives_picture_reads_all_three_replica_group_forms():
    from xml.etree import ElementTree

    from workshop import show_collectives
    from workshop.labs import j4
    from workshop.pictures import replica_groups
    cols = [[0, 4], [1, 5], [2, 6], [3, 7]]
    rows = [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert replica_groups("{{0,4},{1,5},{2,6},{3,7}}") == cols
    assert replica_groups("[4,2]<=[2,4]T(1,0)") == cols and replica_groups("[2,4]<=[8]") == rows
    assert replica_groups("mesh['axis_0'=2,'axis_1'=4] {'axis_0'}") == cols
    assert replica_groups("mesh['axis_0'=2,'axis_1'=4] {'axis_1'}") == rows
    assert replica_groups("mesh['a'=2,'b'=2,'c'=2] {'a','c'}") == [[0, 1, 4, 5], [2, 3, 6, 7]]
    mesh, _ = j4.make_meshes()
    seen = {}
    for text, fn, args in j4._cases():         # what the lab's reader is tried on
        compiled = jax.jit(fn).lower(*args).compile()
        pic = show_collectives(compiled, mesh)
        kinds = {c["kind"] for c in pic.facts["collectives"]}
        assert kinds == j4.hlo_collectives(compiled) - {"collective-permute"}, text
        assert all(sorted(sum(c["groups"], [])) == list(range(8))
                   for c in pic.facts["collectives"]), text      # each device once per op
        ElementTree.fromstring(pic.svg)
        seen[text] = pic.facts["collectives"]
    assert seen["a psum_scatter in shard_map"] == [
        {"kind": "reduce-scatter", "groups": [list(range(8))]}]
    with pytest.raises(ValueError, match="2-D mesh"):
        show_collectives(compiled, jax.make_mesh((8,), ("i",)))


def test_tree_picture_has_one_box_per_treedef_node():
    import collections

    from jax import tree_util as tu

    from workshop import show_tree
    Pair = collections.namedtuple("Pair", "x y")
    trees = [[1.0, None, (2.0, {"b": 3.0, "a": 4.0})],
             {"w": jnp.ones((3, 2)), "b": Pair(jnp.zeros(2), 7), "n": None, "e": []},
             5, [], (None,)]
    for tree in trees:
        pic = show_tree(tree)
        treedef = tu.tree_structure(tree)
        assert pic.facts["nodes"] == treedef.num_nodes, tree
        assert len(pic.facts["leaves"]) == treedef.num_leaves, tree
        assert pic.svg.count("<rect") - pic.svg.count("class='label'") == treedef.num_nodes
    pic = show_tree(trees[1])
    assert pic.facts["leaves"] == ["f32[2]", "7", "f32[3,2]"]       # dict keys sorted
    assert pic.facts["keys"] == ["['b']", ".x", ".y", "['e']", "['n']", "['w']"]
    # a namedtuple whose children hold no leaves keeps each field's own key (the case
    # flatten_one_level_with_keys got wrong on 0.10.2)
    Three = collections.namedtuple("Three", "a b c")
    empty = show_tree(Three(None, [], 1.0))
    assert empty.facts["keys"] == [".a", ".b", ".c"], empty.facts["keys"]
    # is_leaf stops the flattening: the tuple is one leaf
    cut = show_tree(trees[0], is_leaf=lambda n: isinstance(n, tuple))
    assert cut.facts["nodes"] == 4 and cut.facts["leaves"][-1].startswith("(2.0")


def test_collectives_with_device_ids_or_pairs_are_drawn_or_named_never_dropped():
    import numpy as np
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    from workshop import show_collectives
    from workshop.pictures import replica_groups
    assert replica_groups("mesh['axis_0'=2,'axis_1'=2,'axis_2'=2], device_ids=([2,4]T(1,0)) "
                          "{'axis_0'}") == [[0, 2], [4, 6], [1, 3], [5, 7]]
    m = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(jnp.arange(32.0), NamedSharding(m, P("y")))
    pic = show_collectives(jax.jit(lambda v: v.reshape(2, 16).sum(0)).lower(a).compile(), m)
    assert [c["kind"] for c in pic.facts["collectives"]] == ["all-reduce", "all-gather"]
    shift = jax.shard_map(lambda v: jax.lax.ppermute(v, "y", [(i, (i + 1) % 4) for i in range(4)]),
                          mesh=m, in_specs=P("x", "y"), out_specs=P("x", "y"))
    x = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(m, P("x", "y")))
    pairs = show_collectives(jax.jit(shift).lower(x).compile(), m)
    assert pairs.facts == {"collectives": [], "not_drawn": ["collective-permute"]}
    assert "not drawn: collective-permute" in pairs.svg


def test_every_highlight_colour_reads_on_a_marked_lines_tint():
    # axe-core's contrast rule (4.5:1) on the site's pages: pygments' default purple (`in`,
    # `not`) and red (an exception's name) came to 4.4 on palette.MARK, a marked line's tint
    import re

    from pygments.styles.default import DefaultStyle

    from workshop import palette, show
    ratio = lambda c: (show._luminance(palette.MARK) + 0.05) / (show._luminance(c) + 0.05)
    colours = lambda styles: [re.search(r"#\w{6}", v)[0] for v in styles.values()
                              if re.search(r"#\w{6}", v)]
    assert [c for c in colours(show._style().styles) if ratio(c) < 4.5] == []
    assert [c for c in colours(DefaultStyle.styles) if ratio(c) < 4.5], "the test sees one"
