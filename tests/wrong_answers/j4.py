"""Plausible wrong answers for lab J4 "Eight fake devices": each must be rejected with a hint."""
from __future__ import annotations

import re

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def _starter(*args, **kwargs):
    raise NotImplementedError()


# --------------------------------------------------------------- q1: three placements

def _place_with(rows, cols, blocks):
    def place(x, mesh):
        def put(spec):
            return jax.device_put(x, NamedSharding(mesh, spec))
        return {"rows": put(rows), "cols": put(cols), "blocks": put(blocks)}
    return place


_rows_over_x_only = _place_with(P("x", None), P(None, "y"), P("x", "y"))   # 2 ways, not 8
_cols_over_x = _place_with(P(("x", "y"), None), P(None, "x"), P("x", "y"))  # wrong mesh axis
_blocks_swapped = _place_with(P(("x", "y"), None), P(None, "y"), P("y", "x"))  # 4×2 grid


def _place_numpy(x, mesh):                  # never placed on the devices
    x = np.asarray(x)
    return {"rows": x, "cols": x, "blocks": x}


def _place_transposed(x, mesh):             # "cols" as the rows of x.T
    def put(a, spec):
        return jax.device_put(a, NamedSharding(mesh, spec))
    return {"rows": put(x, P(("x", "y"), None)), "cols": put(x.T, P("y", None)),
            "blocks": put(x, P("x", "y"))}


# --------------------------------------------------------------- q2: predictions

_RIGHT = {"scale": set(), "sum0": {"all-reduce"}, "matmul_w": {"all-gather"},
          "x_xt": {"all-gather", "all-reduce"}}


def _predict(**changes):
    def predict():
        return {**_RIGHT, **changes}
    return predict


_pred_none = _predict(sum0=set(), matmul_w=set(), x_xt=set())     # "jit hides it all"
_pred_matmul_reduce = _predict(matmul_w={"all-reduce"})            # partial products added
_pred_xxt_gather_only = _predict(x_xt={"all-gather"})              # forgets the contraction
_pred_sum_scatter = _predict(sum0={"reduce-scatter"})              # output split over y
_pred_missing_key = lambda: {k: v for k, v in _RIGHT.items() if k != "scale"}  # noqa: E731


# --------------------------------------------------------------- q3: the HLO reader

def _reader_stablehlo(f, *args):            # reads the module before partitioning
    text = jax.jit(f).lower(*args).as_text()
    return set(re.findall(r"stablehlo\.(all_reduce|all_gather|reduce_scatter|all_to_all)",
                          text))


def _reader_all_reduce_only(f, *args):      # knows one collective
    text = jax.jit(f).lower(*args).compile().as_text()
    return {"all-reduce"} if "all-reduce(" in text else set()


def _reader_loose(f, *args):                # any word that mentions a collective
    text = jax.jit(f).lower(*args).compile().as_text()
    return {k for k in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                        "collective-permute") if k in text or k.replace("-", "_") in text
            or k.split("-")[-1] in text}


def _reader_first_only(f, *args):           # re.search: stops at the first match
    text = jax.jit(f).lower(*args).compile().as_text()
    m = re.search(r"\b(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)\(",
                  text)
    return {m.group(1)} if m else set()


def _reader_entry_only(f, *args):          # reads the ENTRY computation only
    text = jax.jit(f).lower(*args).compile().as_text()
    entry = text[text.index("ENTRY"):]
    entry = entry[:entry.index("\n}")]
    return set(re.findall(r"\b(all-reduce|all-gather|reduce-scatter|all-to-all|"
                          r"collective-permute)(?:-start)?\(", entry))


def _reader_three_kinds(f, *args):         # knows three of the five collectives
    text = jax.jit(f).lower(*args).compile().as_text()
    return set(re.findall(r"\b(all-reduce|all-gather|reduce-scatter)\(", text))


def _reader_names(f, *args):               # instruction names, not opcodes
    text = jax.jit(f).lower(*args).compile().as_text()
    return {m.replace("_", "-") for m in re.findall(
        r"%(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)", text)}


# --------------------------------------------------------------- q4: a reduce-scatter

def _colsum_plain(x):                       # XLA inserts an all-reduce
    return x.sum(0)


def _colsum_resharded(x):                   # all-reduce, then keep a slice
    mesh = jax.typeof(x).sharding.mesh
    return jax.sharding.reshard(x.sum(0), NamedSharding(mesh, P(("x", "y"))))


def _colsum_psum(x):                        # psum in shard_map is an all-reduce
    return jax.shard_map(lambda r: jax.lax.psum(r.sum(0), ("x", "y")),
                         mesh=jax.typeof(x).sharding.mesh, in_specs=P(("x", "y"), None),
                         out_specs=P())(x)


def _colsum_psum_then_scatter(x):           # all-reduce over x, reduce-scatter over y
    def per_device(r):
        return jax.lax.psum_scatter(jax.lax.psum(r.sum(0), "x"), "y", tiled=True)
    return jax.shard_map(per_device, mesh=jax.typeof(x).sharding.mesh,
                         in_specs=P(("x", "y"), None), out_specs=P("y"))(x)


def _colsum_scatter_x_only(x):              # forgets the y partial sums
    def per_device(r):
        return jax.lax.psum_scatter(r.sum(0), "x", tiled=True)
    return jax.shard_map(per_device, mesh=jax.typeof(x).sharding.mesh,
                         in_specs=P(("x", "y"), None), out_specs=P("x"),
                         check_vma=False)(x)


def _colsum_untiled(x):                     # psum_scatter without tiled=True
    def per_device(r):
        return jax.lax.psum_scatter(r.sum(0), ("x", "y"))
    return jax.shard_map(per_device, mesh=jax.typeof(x).sharding.mesh,
                         in_specs=P(("x", "y"), None), out_specs=P(("x", "y")))(x)


WRONG = {
    "q1": [_starter, _rows_over_x_only, _cols_over_x, _blocks_swapped, _place_numpy,
           _place_transposed],
    "q2": [_starter, {}, _pred_none, _pred_matmul_reduce, _pred_xxt_gather_only,
           _pred_sum_scatter, _pred_missing_key, _predict(scale="none")],
    "q3": [_starter, _reader_stablehlo, _reader_all_reduce_only, _reader_loose,
           _reader_first_only, _reader_entry_only, _reader_three_kinds, _reader_names],
    "q4": [_starter, _colsum_plain, _colsum_resharded, _colsum_psum,
           _colsum_psum_then_scatter, _colsum_scatter_x_only, _colsum_untiled],
}


def _place_by_tree(x, mesh):
    specs = {"rows": P(("x", "y")), "cols": P(None, "y"), "blocks": P("x", "y")}
    return jax.tree.map(lambda spec: jax.device_put(x, NamedSharding(mesh, spec)), specs,
                        is_leaf=lambda v: isinstance(v, P))


def _reader_lines(f, *args):
    found = set()
    for line in jax.jit(f).lower(*args).compile().as_text().splitlines():
        m = re.search(r"\s(all-reduce|all-gather|reduce-scatter|all-to-all|"
                      r"collective-permute)(-start)?\(", line)
        if m:
            found.add(m.group(1))
    return found


def _reader_hlo_modules(f, *args):
    compiled = jax.jit(f).lower(*args).compile()
    text = "\n".join(m.to_string() for m in compiled.runtime_executable().hlo_modules())
    return set(re.findall(r"\b(all-reduce|all-gather|reduce-scatter|all-to-all|"
                          r"collective-permute)(?:-start)?\(", text))


def _colsum_scatter_dim(x):
    mesh = jax.typeof(x).sharding.mesh
    axes = tuple(mesh.axis_names)
    f = jax.shard_map(lambda r: jax.lax.psum_scatter(jnp_sum0(r), axes, scatter_dimension=0,
                                                     tiled=True),
                      mesh=mesh, in_specs=P(axes, None), out_specs=P(axes))
    return f(x)


def jnp_sum0(r):
    return r.sum(axis=0)


def _colsum_jitted_inside(x):
    mesh = jax.typeof(x).sharding.mesh

    @jax.jit
    def per_device(r):
        return jax.lax.psum_scatter(r.sum(0, keepdims=True)[0], ("x", "y"), tiled=True)
    return jax.shard_map(per_device, mesh=mesh, in_specs=P(("x", "y"), None),
                         out_specs=P(("x", "y")))(x)


RIGHT = {
    "q1": [_place_with(P(("x", "y")), P(None, "y"), P("x", "y")), _place_by_tree],
    "q2": [_RIGHT, {"scale": [], "sum0": "all_reduce", "matmul_w": ["All-Gather"],
                    "x_xt": ("all-reduce", "all-gather"), "extra": 0}],
    "q3": [_reader_lines, _reader_hlo_modules],
    "q4": [_colsum_scatter_dim, _colsum_jitted_inside],
}
