"""Lab J1 "Trace, read, raw": the checks. The tasks are in exercises/J1-trace-read-raw.ipynb."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import CALLBACKS, Task, Wrong, all_eqns, as_array, close

LAB = "J1"


# ----------------------------------------------------------------- task 1: predict a count

def h(x):
    """The function task 1 asks about."""
    y = jnp.sin(x) * 2.0 + x
    return jnp.sum(y) / x.shape[0]


def _check_prediction(prediction) -> str:
    if not isinstance(prediction, (int, np.integer)) or isinstance(prediction, bool):
        raise Wrong(f"the prediction should be a whole number, not {type(prediction).__name__}")
    real = len(jax.make_jaxpr(h)(jnp.ones(8)).eqns)
    if prediction != real:
        side = "too many" if prediction > real else "too few"
        raise Wrong(f"{prediction} is {side}: print jax.make_jaxpr(h)(jnp.ones(8)) and count "
                    "the lines with an `=` between `let` and `in`")
    return f"{real} equations: one per primitive applied; the shape and the Python 2.0 left none"


q1 = Task(LAB, 1, "Predict the equation count", _check_prediction, [
    "Each jnp call becomes one or more primitives; `x.shape[0]` is a Python int at trace time.",
    "sin, mul, add, a reduction, a division: is any of them missing or extra?",
])


# ----------------------------------------------------------------- task 2: count equations

def _nested(x):
    inner = jax.jit(lambda v: jnp.cos(v) * v)
    return inner(x) + inner(x * 2.0)


def _deep(x):
    inner = jax.jit(lambda v: jnp.sin(v) + 1.0)
    outer = jax.jit(lambda v: inner(v) * inner(v * 2.0))
    return outer(x) - outer(x + 1.0)


_TABLE = np.arange(5.0, dtype=np.float32)


_COUNT_CASES = [
    (lambda x: jnp.tanh(x) @ x.T, (np.ones((3, 3), np.float32),), 3),
    (lambda x, y: jnp.where(x > y, x, y).sum(), (np.ones(4, np.float32), 1.0), None),
    (_nested, (np.ones(5, np.float32),), None),
    (lambda x: x, (np.ones(2, np.float32),), 0),
    (_deep, (np.ones(5, np.float32),), None),                    # jit inside jit, reused
    (lambda x: jnp.sum(x * jnp.asarray(_TABLE)), (np.ones(5, np.float32),), None),  # a const
    (lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x), (np.ones(2, np.float32),),
     None),
]


def _check_count(count_eqns) -> str:
    for f, args, _ in _COUNT_CASES:
        want = len(jax.make_jaxpr(f)(*args).eqns)
        got = count_eqns(f, *args)
        if not isinstance(got, (int, np.integer)) or isinstance(got, bool):
            raise Wrong(f"count_eqns should return an int, it returned {type(got).__name__}")
        if got != want:
            raise Wrong(f"on a function of inputs shaped {[np.shape(a) for a in args]} it says "
                        f"{got}; the jaxpr has {want} top-level equations")
    return ("it agrees with JAX on seven functions, including nested jits (each a single "
            "equation with its own jaxpr inside), a constant and a loop")


q2 = Task(LAB, 2, "Count the equations", _check_count, [
    "jax.make_jaxpr(f)(*args) gives a core.Jaxpr; its .eqns is the list of equations.",
    "Count only the top level: a nested jit is one equation, whatever its body holds; "
    "the printed text has lines that are not equations.",
], takes="count_eqns")


# ----------------------------------------------------------------- task 3: weak types

_WEAK_CASES = [
    (lambda a, b: a * b, (np.ones(3, np.float32), 2.0)),
    (lambda a, b, c: a + b + c, (3, np.ones(2, np.int32), np.float32(1.5))),
    (lambda a, b: a + b, (True, jnp.asarray(2.0))),
    (lambda a, b, c: a * b * c, (np.int32(2), 1j, jnp.ones(2))),
    (lambda a, b, c: a - b * c, (jnp.asarray(3), np.float64(2.0), 2.5)),
    (lambda a, b: a + b, (np.ones(2, np.float16), False)),
]


def _check_weak(weak_inputs) -> str:
    for f, args in _WEAK_CASES:
        want = {i for i, a in enumerate(jax.make_jaxpr(f)(*args).in_avals) if a.weak_type}
        got = weak_inputs(f, *args)
        try:
            got = set(got)
        except TypeError:
            raise Wrong(f"weak_inputs should return a set of positions, got "
                        f"{type(got).__name__}") from None
        if got != want:
            kinds = ", ".join(type(a).__name__ for a in args)
            raise Wrong(f"for inputs of types ({kinds}) it says {sorted(got, key=repr)}; "
                        f"the trace disagrees")
    return "weak types found by asking the trace, not by guessing from Python types"


q3 = Task(LAB, 3, "Which inputs were weak-typed?", _check_weak, [
    "The trace knows: each input's abstract value (aval) has a weak_type flag.",
    "A Python bool is not weak; an array can be (jnp.asarray(2.0)); NumPy scalars are not.",
], takes="weak_inputs")


# ----------------------------------------------------------------- task 4: make it traceable

def clip_or_zero(x, t):
    """The function task 4 starts from: fine in Python, refused by jit."""
    if x.sum() > t:
        return jnp.clip(x, -t, t)
    return jnp.zeros_like(x)


def _clip_cases():
    """Fixed cases, two on the threshold itself (x.sum() == t exactly), and random ones."""
    cases = [(np.array([3.0, -1.0, 0.5], np.float32), 1.0),
             (np.array([-3.0, 1.0, 0.5], np.float32), 0.5),
             (np.array([0.25, 0.75], np.float32), 1.0),                 # sum == t
             (np.array([0.5, -0.5, 0.0], np.float32), 0.0),             # sum == t == 0
             (np.array([[2.0, -4.0], [5.0, 0.0]], np.float32), 2.5)]
    rng = np.random.default_rng(41)
    for n, f in ((1, 0.6), (4, 1.4), (7, 0.7), (6, 1.0)):
        x = (rng.normal(size=n) * 3).astype(np.float32)
        x = x if x.sum() > 0 else -x
        cases.append((x, float(x.sum(dtype=np.float32) * np.float32(f))))  # f=1: sum == t
    return cases


_CLIP_CASES = _clip_cases()


def _check_traceable(fn) -> str:
    jitted = jax.jit(fn)
    for x, t in _CLIP_CASES:
        try:
            got = jitted(x, t)
        except (jax.errors.ConcretizationTypeError,
                jax.errors.TracerBoolConversionError) as e:
            raise Wrong(f"jit still refuses it ({type(e).__name__}): some Python decision "
                        "depends on a traced value") from None
        got = as_array(got, f"on x={x.tolist()}, t={t}, the result")
        want = clip_or_zero(x, t)
        if not close(got, want):
            raise Wrong(f"traceable now, but on x={x.tolist()}, t={t} it gives "
                        f"{np.asarray(got).tolist()} where the original gives "
                        f"{np.asarray(want).tolist()}")
    jaxpr = jax.make_jaxpr(fn)(*_CLIP_CASES[0])
    prims = {e.primitive.name for e in all_eqns(jaxpr)}
    if prims & CALLBACKS:
        raise Wrong("the staged program calls back into Python "
                    f"({', '.join(sorted(prims & CALLBACKS))}): the Python branch is still "
                    "there, run outside the program. Make the choice a JAX operation")
    if not prims & {"select_n", "cond"}:
        raise Wrong("the right values, but the staged program has no choice in it (no "
                    "select_n, no cond): what decides between the two results?")
    n = len(jaxpr.eqns)
    return f"jit traces it once for any value of x and t ({n} equations, no Python branch)"


q4 = Task(LAB, 4, "Make a refused function traceable", _check_traceable, [
    "Under jit, `x.sum() > t` is a tracer: Python's `if` cannot ask it for True or False.",
    "Compute both results and let the data choose: jnp.where(cond, a, b) "
    "(or jax.lax.cond).",
], takes="clip_or_zero_traceable")
