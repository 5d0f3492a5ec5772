"""Lab J4 "Eight fake devices": the checks.
The tasks are in exercises/J4-eight-fake-devices.ipynb.

Every check builds its own mesh and inputs. Task 1 reads where the shards landed; tasks 2–4
read the HLO that XLA really compiled: a prediction is compared with what the partitioner
did, not with an answer key.
"""
from __future__ import annotations

import functools
import re
from contextlib import contextmanager

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ..artefacts import COLLECTIVES as KINDS
from . import Edge, Task, Wrong, as_now, call_as, close, fits

LAB = "J4"
# the checks' own reader (task 3 asks the attendee to write one): only the names are shared
_OPCODE = re.compile(rf"\b({'|'.join(KINDS)})(?:-start)?\(")


def make_meshes():
    """The lab's two 2×4 meshes: `mesh` (make_mesh's default, Explicit) and `auto` (Auto)."""
    n = len(jax.devices())
    if n < 8:
        raise Wrong(f"JAX started with {n} device(s), and this lab needs 8: restart the "
                    "kernel and run the setup cell first, before anything imports jax")
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    return mesh, auto


def hlo_collectives(compiled) -> set[str]:
    """The collective kinds in a compiled executable's HLO (the checks' own reader)."""
    return set(_OPCODE.findall(compiled.as_text()))


def _compiled(fn, *args):
    return jax.jit(fn).lower(*args).compile()


def _rng_array(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _fmt(s) -> str:
    return "{" + ", ".join(sorted(s)) + "}" if s else "{} (none)"


def _as_kinds(value, what: str) -> set[str]:
    """An answer's set of collective names, normalised; Wrong if it is not one."""
    if isinstance(value, str):
        value = {value}
    try:
        items = list(value)
    except TypeError:
        raise Wrong(f"{what} should be a set of collective names such as "
                    f"{{'all-gather'}}, not {type(value).__name__}") from None
    kinds = set()
    for item in items:
        if not isinstance(item, str):
            raise Wrong(f"{what} should hold collective names (strings), it holds "
                        f"{type(item).__name__}")
        name = item.strip().lower().replace("_", "-")
        if name not in KINDS:
            raise Wrong(f"{what} holds {item!r}, which is not one of the HLO collective "
                        f"names {', '.join(KINDS)}")
        kinds.add(name)
    return kinds


# ----------------------------------------------------------------- task 1: three placements

def _shard_map_of(arr) -> dict:
    """Each distinct block (its index, as bounds) -> the ids of the devices holding it."""
    held: dict = {}
    for s in arr.addressable_shards:
        key = tuple((sl.start, sl.stop) for sl in s.index)
        held.setdefault(key, []).append(s.device.id)
    return held


def _bounds(index, shape) -> tuple:
    return tuple(sl.indices(dim)[:2] for sl, dim in zip(index, shape))


def _where(arr, name, mesh, spec, shape) -> None:
    """Wrong if arr's blocks are not on the devices where `spec` on `mesh` puts them."""
    got = {d.id: _bounds(i, shape) for d, i in arr.sharding.devices_indices_map(shape).items()}
    want = {d.id: _bounds(i, shape)
            for d, i in NamedSharding(mesh, spec).devices_indices_map(shape).items()}
    if got != want:
        block = next(b for d, b in sorted(got.items()) if want.get(d) != b)
        on = sorted(d for d, b in got.items() if b == block)
        there = sorted(d for d, b in want.items() if b == block)
        (r0, r1), (c0, c1) = block
        raise Wrong(f"'{name}' splits x as asked, but not over the mesh it is given: rows "
                    f"{r0}–{r1 - 1}, columns {c0}–{c1 - 1} are on device(s) {on}, where "
                    f"that mesh puts them on {there}")


def _meshes_to_place_on():
    """The lab's mesh, and one with its devices in another order (what place is given must
    be what it uses)."""
    mesh, _ = make_meshes()
    other = Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), ("x", "y"),
                 axis_types=(AxisType.Explicit,) * 2)
    return [mesh, other]


def _check_place(place) -> str:
    meshes = _meshes_to_place_on()
    for seed, ((n, m), mesh) in enumerate(zip([(16, 8), (32, 24)], meshes)):
        x = _rng_array((n, m), seed)
        out = call_as(place, "place(x, mesh)", jnp.asarray(x), mesh)
        if not isinstance(out, dict):
            raise Wrong(f"place should return a dict with keys 'rows', 'cols', 'blocks', "
                        f"not {type(out).__name__}")
        missing = [k for k in ("rows", "cols", "blocks") if k not in out]
        if missing:
            raise Wrong(f"the dict has no {', '.join(map(repr, missing))}")
        # name -> (per-device shape, number of distinct blocks, copies of each block)
        want = {"rows": ((n // 8, m), 8, 1), "cols": ((n, m // 4), 4, 2),
                "blocks": ((n // 2, m // 4), 8, 1)}
        for name, (shape, distinct, copies) in want.items():
            arr = out[name]
            if not isinstance(arr, jax.Array):
                raise Wrong(f"'{name}' is of type {type(arr).__name__}, not a jax.Array "
                            "placed on the devices (jax.device_put)")
            if arr.dtype != x.dtype:
                raise Wrong(f"'{name}' has dtype {arr.dtype}, x has {x.dtype}: placing an "
                            "array must not change it")
            if not close(arr, x):
                raise Wrong(f"'{name}' holds other numbers than x (shape {np.shape(arr)}): "
                            "placing an array must not change it")
            ndev = len(arr.sharding.device_set)
            if ndev != 8:
                raise Wrong(f"'{name}' lives on {ndev} device(s), not on all eight")
            shapes = {s.data.shape for s in arr.addressable_shards}
            if shapes != {shape}:
                got = ", ".join(map(str, sorted(shapes)))
                raise Wrong(f"for a {n}×{m} array, each device holds {got} in '{name}'; "
                            f"the task asks for {shape}")
            held = _shard_map_of(arr)
            if len(held) != distinct or any(len(v) != copies for v in held.values()):
                raise Wrong(f"'{name}' has {len(held)} distinct blocks; the task asks for "
                            f"{distinct}, each on {copies} device(s)")
        # the rows may go over the eight devices in any order; a column block's copies on
        # the devices that differ in x, and the tiles where the grid puts them
        _where(out["cols"], "cols", mesh, P(None, "y"), (n, m))
        _where(out["blocks"], "blocks", mesh, P("x", "y"), (n, m))
    return "rows over all eight devices, column blocks copied over x, and a 2×4 grid of tiles"


q1 = Task(LAB, 1, "Shard one array three ways", _check_place, [
    "jax.device_put(x, NamedSharding(mesh, P(...))): one PartitionSpec entry per array axis, "
    "naming the mesh axis (or axes) that axis is split over; None keeps it whole.",
    "A tuple of mesh axes in one entry, P(('x', 'y'), None), splits that array axis over "
    "both (8 ways); a mesh axis you leave out means copies along it.",
], takes="place")


# ----------------------------------------------------------------- task 2: predictions

OPS = {
    "scale": ("x * 2 + 1", lambda x, w: x * 2 + 1),
    "sum0": ("x.sum(axis=0)", lambda x, w: x.sum(axis=0)),
    "matmul_w": ("x @ w (w replicated)", lambda x, w: x @ w),
    "x_xt": ("x @ x.T", lambda x, w: x @ x.T),
}


def prediction_inputs(seed: int = 0):
    """x (16×8) as a 2×4 grid of tiles on the Auto mesh, and w (8×8) copied on every device."""
    _, auto = make_meshes()
    x = jax.device_put(_rng_array((16, 8), seed), NamedSharding(auto, P("x", "y")))
    w = jax.device_put(_rng_array((8, 8), seed + 1), NamedSharding(auto, P()))
    return x, w


def inserted(name: str, seed: int = 0) -> set[str]:
    """What XLA inserted for OPS[name] on prediction_inputs(): the checks' own reading."""
    x, w = prediction_inputs(seed)
    return hlo_collectives(_compiled(OPS[name][1], x, w))


@contextmanager
def _lowerings():
    """The names of the functions lowered in the block (jit(f).lower(...), and so any
    .compile() of one)."""
    from jax._src import stages
    names, lower = [], stages.Traced.lower

    def recording(self, *args, **kwargs):
        names.append(getattr(self, "fun_name", "?"))
        return lower(self, *args, **kwargs)
    stages.Traced.lower = recording
    try:
        yield names
    finally:
        stages.Traced.lower = lower


def _check_predictions(predictions) -> str:
    if callable(predictions):
        with _lowerings() as lowered:
            predictions = call_as(predictions, "predict()")
        if lowered:
            raise Wrong(f"your predict() lowered {len(lowered)} program(s) to read what XLA "
                        "does: that is task 3. Here, predict from how x and w are placed, "
                        "before compiling anything")
    if not isinstance(predictions, dict):
        raise Wrong("predictions should be a dict: operation name -> set of collectives, "
                    f"not a {type(predictions).__name__}")
    missing = [k for k in OPS if k not in predictions]
    if missing:
        raise Wrong(f"no prediction for {', '.join(map(repr, missing))}")
    for name, (text, _) in OPS.items():
        said = _as_kinds(predictions[name], f"predictions[{name!r}]")
        did = inserted(name)
        if said == did:
            continue
        if did - said and said - did:
            raise Wrong(f"for {text}: XLA inserted a collective you did not predict, and "
                        f"you predicted {_fmt(said - did)}, which it did not insert")
        if did - said:
            raise Wrong(f"for {text}: you predicted {_fmt(said)}, but XLA inserted "
                        f"{len(did - said)} more kind(s) of collective than that")
        raise Wrong(f"for {text}: you predicted {_fmt(said - did)}, which XLA did not insert")
    return "all four predictions match the compiled HLO"


q2 = Task(LAB, 2, "Predict the collectives", _check_predictions, [
    "For each op ask: does any device need numbers another device holds? A reduction over an "
    "axis that is split needs partial results combined; a contraction over a split axis needs "
    "either the operand gathered or the partial products added.",
    "Each device holds a 8×2 tile of x. x.sum(0) leaves partial sums per x row; x @ w needs a "
    "full row of x against w; x @ x.T needs full rows of x against full rows of x.",
])


# ----------------------------------------------------------------- task 3: read the HLO

def _in_a_loop(a):
    """A collective that lives in the while loop's body computation, not in ENTRY."""
    return jax.lax.fori_loop(0, 3, lambda i, c: c + jnp.tanh(a * c).sum(0),
                             jnp.zeros(a.shape[1], a.dtype))


@functools.lru_cache(maxsize=4)
def _programs(mesh, auto):
    """The reader's test programs for these meshes, made once: the same function objects on
    every check, so JAX compiles each once per session (for the check and the reader alike)."""
    scatter = jax.shard_map(lambda b: jax.lax.psum_scatter(b.sum(0), ("x", "y"), tiled=True),
                            mesh=mesh, in_specs=P(("x", "y"), None), out_specs=P(("x", "y")))
    to_cols = jax.jit(lambda a: a, out_shardings=NamedSharding(auto, P(None, "x")))
    ring = jax.shard_map(lambda b: jax.lax.ppermute(b, "y", [(i, (i + 1) % 4) for i in range(4)]),
                         mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    swap = jax.shard_map(lambda b: jax.lax.all_to_all(b, "y", 0, 1, tiled=True), mesh=mesh,
                         in_specs=P("x", "y"), out_specs=P("x", "y"))
    rows = NamedSharding(auto, P("x", None))
    return {
        "x * 2 + 1 on tiles": lambda a: a * 2 + 1,
        # the function itself asks for a placement: compiled for unplaced copies of x, it
        # still needs a collective; the module before partitioning has none
        "a sum after a sharding constraint": lambda a: jax.lax.with_sharding_constraint(
            a, rows).sum(0),
        "a sum over axis 1 of tiles": lambda a: a.sum(axis=1),
        "x @ w with w replicated": lambda a, b: a @ b,
        "x @ x.T on tiles": lambda a: a @ a.T,
        "a psum_scatter in shard_map": scatter,
        "moving row blocks to column blocks": to_cols,
        "a sum inside a fori_loop": _in_a_loop,
        "a ppermute around a ring": ring,
        "an all_to_all": swap,
    }


def _cases():
    """(description, function, args) the reader is tried on; the truth comes from the HLO."""
    mesh, auto = make_meshes()
    x, w = prediction_inputs(seed=7)
    rows = jax.device_put(_rng_array((16, 8), 8), NamedSharding(mesh, P(("x", "y"), None)))
    tall = jax.device_put(_rng_array((16, 8), 9), NamedSharding(auto, P("x", None)))
    tiles = jax.device_put(_rng_array((16, 16), 10), NamedSharding(mesh, P("x", "y")))
    args = {"x @ w with w replicated": (x, w), "a psum_scatter in shard_map": (rows,),
            "moving row blocks to column blocks": (tall,), "a ppermute around a ring": (tiles,),
            "an all_to_all": (tiles,)}
    programs = _programs(mesh, auto)
    again = [(e.name, programs[e.value[0]],
              (jax.device_put(_rng_array((16, 8), 12), NamedSharding(auto, e.value[1])),))
             for e in EDGES["q3"]]
    return [(text, fn, args.get(text, (x,))) for text, fn in programs.items()] + again


# The inputs task 3's words call for that ordinary inputs leave untried: a row each, with its
# reason (tests/wrong_answers/j4.py holds for each a wrong answer that only it rejects); a row's
# value: the program (by its name above) and how its argument is placed
EDGES = {
    "q3": (Edge("a sum over axis 1 again, of rows split on both axes",
                "the collectives depend on how the arguments are placed, not on the function "
                "alone: the same function object, called again on x split by rows only, "
                "needs none (a reader that remembers its answer by function gives the old one)",
                ("a sum over axis 1 of tiles", P(("x", "y"), None))),),
}


_STABLEHLO = re.compile(rf"stablehlo\.({'|'.join(k.replace('-', '_') for k in KINDS)})\b")


def _before_partitioning(fn, args) -> set[str]:
    """The collectives in the module before XLA's partitioner: only those the code wrote."""
    text = jax.jit(fn).lower(*args).as_text()
    return {k.replace("_", "-") for k in _STABLEHLO.findall(text)}


def _for_unplaced_copies(fn, args) -> set[str] | None:
    """What XLA compiles for copies of the arguments that carry no sharding (None: it
    cannot compile them)."""
    try:
        return hlo_collectives(_compiled(fn, *[np.asarray(a) for a in args]))
    except Exception:
        return None


def _in_entry(fn, args) -> set[str]:
    """The collectives of the compiled HLO's ENTRY computation only."""
    text = _compiled(fn, *args).as_text()
    entry = text[text.index("\nENTRY"):]
    return set(_OPCODE.findall(entry[:entry.index("\n}")]))


# misreadings of the HLO: what a reader that makes one answers, for the kinds it looks for
_MISREADINGS = [
    (_before_partitioning, "what the module before XLA's partitioner holds (the lowered "
                           "StableHLO): only the collectives a program writes itself, not those "
                           "XLA inserts"),
    (_for_unplaced_copies, "what XLA compiles for copies of the arguments that carry no "
                           "sharding (NumPy arrays, or shapes without one): compile f for the "
                           "arguments as given, so that the partitioner sees how they are "
                           "placed"),
    (_in_entry, "what the compiled HLO's ENTRY computation holds alone; a loop body is a "
                "computation of its own"),
]
_RAISED = "raised"


def _answer(fn, *args):
    try:
        return fn(*args)
    except Exception:
        return _RAISED


def _misreading(collectives, cases) -> str | None:
    """The one misreading that gives the reader's answers on every program, of the kinds the
    reader ever reports (None if no one does, or several do)."""
    def reads(fn, args):
        return _as_kinds(collectives(fn, *args), "the reader's result")
    answers = [_answer(reads, fn, args) for _, fn, args in cases]
    looks_for = set().union(*(a for a in answers if a != _RAISED))
    fits = []
    for model, what in _MISREADINGS:
        for (_, fn, args), got in zip(cases, answers):
            said = _answer(model, fn, args)
            if (got == _RAISED) != (said in (_RAISED, None)) or (
                    got != _RAISED and said & looks_for != got):
                break
        else:
            fits.append(what)
    return fits[0] if len(fits) == 1 and looks_for else None


def _check_reader(collectives) -> str:
    cases, reported = _cases(), set()
    for text, fn, args in cases:
        call = f"collectives(f, {', '.join(['x', 'w'][:len(args)])})"
        got = _as_kinds(call_as(collectives, call, fn, *args),
                        f"the reader's result for {text}")
        want = hlo_collectives(_compiled(fn, *args))
        if got == want:
            reported |= got
            continue
        if got - want:
            raise Wrong(f"for {text} your reader reports {_fmt(got - want)}, which the "
                        "compiled HLO does not have")
        missed = want - got
        found = (f"finds {_fmt(got)} and misses a kind that the compiled HLO has" if got else
                 "finds no collectives, but the compiled HLO has some")
        why = _misreading(collectives, cases)
        if why:
            raise Wrong(f"for {text} your reader {found}. On all {len(cases)} programs, "
                        f"its answers (of the kinds it reports at all) are {why}")
        if not missed & reported:
            found += (f", {'one' if got else 'of a kind' if len(missed) == 1 else 'of kinds'}"
                      " your reader has reported for no program so far")
        raise Wrong(f"for {text} your reader {found}")
    return (f"your reader agrees with the compiled HLO on {len(cases)} programs, one with its "
            "collective inside a loop body")


q3 = Task(LAB, 3, "Read the collectives from the compiled HLO", _check_reader, [
    "jax.jit(f).lower(*args) is StableHLO, before partitioning: it holds only the collectives "
    "you wrote (a psum is a stablehlo.all_reduce). .compile().as_text() is the per-device HLO: "
    "it holds all of them, including those XLA inserted.",
    "Instruction names such as %all-reduce.1, and the operands that refer to them "
    "(fusion(%all-gather)), also contain the words: what comes right after the opcode of "
    "an instruction and nowhere else? And read every computation, not only ENTRY: a loop "
    "body is one of its own.",
], takes="collectives")


# ----------------------------------------------------------------- task 4: a reduce-scatter

def reduce_scatter_input(n: int = 16, m: int = 8, seed: int = 0):
    """An n×m array split by rows over all eight devices of the Explicit mesh."""
    mesh, _ = make_meshes()
    return jax.device_put(_rng_array((n, m), seed), NamedSharding(mesh, P(("x", "y"), None)))


def _sums_of_some_devices(out, x) -> bool:
    """Whether each number of `out` is its column's sum over the rows of only some of the
    eight devices (a proper, non-empty subset), as when some partial sums are not added."""
    blocks = np.asarray(x, np.float64).reshape(8, -1, x.shape[1]).sum(1)     # device × column
    subsets = np.array([[(k >> d) & 1 for d in range(8)] for k in range(1, 255)], np.float64)
    partial = subsets @ blocks                                               # subset × column
    hit = np.isclose(partial, np.asarray(out, np.float64)[None, :], rtol=1e-4, atol=1e-4)
    return bool(hit.any(0).all())


def _check_reduce_scatter(colsum) -> str:
    colsum = as_now(colsum)    # as it is now: a helper redefined since is seen
    for seed, (n, m) in enumerate([(16, 8), (64, 16)]):
        x = reduce_scatter_input(n, m, seed + 3)
        fits(colsum, "colsum(x)", x)
        compiled = _compiled(colsum, x)
        out = compiled(x)
        if np.shape(out) != (m,):
            raise Wrong(f"for a {n}×{m} input the result has shape {np.shape(out)}; the "
                        f"column sums x.sum(0) have shape ({m},)")
        want = np.asarray(x).sum(0)
        if not close(out, want, tol=1e-4):
            if close(np.sort(np.asarray(out)), np.sort(want), tol=1e-4):
                raise Wrong(f"for a {n}×{m} input the column sums are all there, but not in "
                            "their order: which slice does each device keep, and in what "
                            "order does out_specs put the slices together?")
            if _sums_of_some_devices(out, x):
                raise Wrong(f"for a {n}×{m} input each number is its column's sum over the "
                            "rows of only some of the eight devices: the partial sums of "
                            "all eight must be added")
            raise Wrong(f"for a {n}×{m} input the shape is right but the numbers are not the "
                        "column sums x.sum(0)")
        kinds = hlo_collectives(compiled)
        if "reduce-scatter" not in kinds:
            raise Wrong(f"the right sums, but the compiled HLO has {_fmt(kinds)} and no "
                        "reduce-scatter")
        if "all-reduce" in kinds:
            raise Wrong("there is a reduce-scatter, but also an all-reduce: every device "
                        "should end up with only its slice of the sums")
        if kinds != {"reduce-scatter"}:
            raise Wrong(f"there is a reduce-scatter, but also {_fmt(kinds - {'reduce-scatter'})}"
                        ": the reduce-scatter alone should add the partial sums, each device "
                        "receiving only those of its slice")
        shapes = {s.data.shape for s in out.addressable_shards}
        if shapes != {(m // 8,)}:
            raise Wrong(f"each device holds {shapes} of the result, not a 1/8 slice")
    return "a reduce-scatter, and each device keeps one eighth of the column sums"


q4 = Task(LAB, 4, "A reduce-scatter on purpose", _check_reduce_scatter, [
    "On CPU, XLA does not rewrite all-reduce + slice into a reduce-scatter: ask for one "
    "explicitly, in per-device code.",
    "In jax.shard_map over both mesh axes, each device sums its own rows; one collective "
    "then adds those partial sums and leaves each device a slice (lax has it by name; mind "
    "its `tiled` flag). out_specs says how the result is split.",
], takes="colsum")
