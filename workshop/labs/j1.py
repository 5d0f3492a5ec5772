"""Lab J1 "Trace, read, raw": the checks. The tasks are in exercises/J1-trace-read-raw.ipynb."""
from __future__ import annotations

import enum

import jax
import jax.numpy as jnp
import numpy as np

from . import CALLBACKS, Edge, Task, Wrong, all_eqns, as_array, as_now, exact, first_line, fresh

LAB = "J1"


# ----------------------------------------------------------------- task 1: predict a count

def h(x):
    """The function task 1 asks about."""
    y = jnp.sin(x) * 2.0 + x
    return jnp.sum(y) / x.shape[0]


def _check_prediction(prediction) -> str:
    if not isinstance(prediction, (int, np.integer)) or isinstance(prediction, bool):
        raise Wrong(f"the prediction should be a whole number, not {type(prediction).__name__}")
    prediction = exact(prediction)   # (what it holds, not what its own __ne__ says)
    with jax.enable_x64(False):          # the task's float32 input, whatever the kernel's
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


def _add(x, y):
    """x + y: a cast and an add for an int32 x and a Python float y, an add alone for two
    float32s (task 2's cases and its table's row "the same function again")."""
    return x + y


_COUNT_CASES = [
    (lambda x: jnp.tanh(x) @ x.T, (np.ones((3, 3), np.float32),), 3),
    (lambda x, y: jnp.where(x > y, x, y).sum(), (np.ones(4, np.float32), 1.0), None),
    (_nested, (np.ones(5, np.float32),), None),
    (_deep, (np.ones(5, np.float32),), None),                    # jit inside jit, reused
    (lambda x: jnp.sum(x * jnp.asarray(_TABLE)), (np.ones(5, np.float32),), None),  # a const
    (lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x), (np.ones(2, np.float32),),
     None),
    (lambda x, y: (x + y).astype(jnp.float32), (np.ones(3, np.float32), 1.5), None),
    (_add, (np.ones(3, np.int32), 1.5), None),      # a cast: an equation too
]


def _check_count(count_eqns) -> str:
    cases = [(*c, "") for c in _COUNT_CASES] + [(*e.value, e.name) for e in EDGES["q2"]]
    for f, args, _, edge in cases:
        want = len(jax.make_jaxpr(f)(*args).eqns)
        got = count_eqns(f, *fresh(args))   # (copies: the check's arrays are used again)
        if not isinstance(got, (int, np.integer)) or isinstance(got, bool):
            raise Wrong(f"count_eqns should return an int, it returned {type(got).__name__}")
        got = exact(got)
        if got != want:
            raise Wrong(f"on a function of inputs shaped {[np.shape(a) for a in args]}"
                        + (f" ({edge})" if edge else "")
                        + f" it says {got}; the jaxpr has {want} top-level equations")
    return (f"it agrees with JAX on {len(cases)} functions, including nested jits "
            "(each a single equation with its own jaxpr inside), a constant, a loop, a cast "
            "and weakly typed Python scalars")


q2 = Task(LAB, 2, "Count the equations", _check_count, [
    "jax.make_jaxpr(f)(*args) gives a core.Jaxpr; its .eqns is the list of equations.",
    "Count only the top level: a nested jit is one equation, whatever its body holds; "
    "the printed text has lines that are not equations.",
], takes="count_eqns")


# ----------------------------------------------------------------- task 3: weak types

_Level = enum.IntEnum("Level", "LOW HIGH")   # a Python int subclass: weak, as an int is

def _mul(a, b):
    """a * b (task 3's first case, and its table's row "the same function again")."""
    return a * b


_WEAK_CASES = [
    (_mul, (np.ones(3, np.float32), 2.0)),
    (lambda a, b, c: a + b + c, (3, np.ones(2, np.int32), np.float32(1.5))),
    (lambda a, b: a + b, (True, jnp.asarray(2.0))),
    (lambda a, b, c: a * b * c, (np.int32(2), 1j, jnp.ones(2))),
    (lambda a, b, c: a - b * c, (jnp.asarray(3), np.float64(2.0), 2.5)),
    (lambda a, b: a + b, (np.ones(2, np.float16), False)),
]


def _check_weak(weak_inputs) -> str:
    cases = [(*c, "") for c in _WEAK_CASES] + [(*e.value, e.name) for e in EDGES["q3"]]
    for f, args, edge in cases:
        want = {i for i, a in enumerate(jax.make_jaxpr(f)(*args).in_avals) if a.weak_type}
        got = weak_inputs(f, *fresh(args))   # (copies, as in task 2)
        try:
            if isinstance(got, dict):
                raise TypeError
            got = list(got)
        except TypeError:
            raise Wrong(f"weak_inputs should return a set of positions, got "
                        f"{type(got).__name__}") from None
        odd = sorted({type(i).__name__ for i in got
                      if not isinstance(i, (int, np.integer)) or isinstance(i, bool)})
        if odd:
            raise Wrong(f"weak_inputs should return positions (ints), not {', '.join(odd)}")
        got = {exact(i) for i in got}   # (the positions they hold, not their own __eq__)
        if got != want:
            kinds = ", ".join(type(a).__name__ for a in args)
            wrong = ", ".join(f"input {i}" + (f" ({type(args[i]).__name__})"
                                              if 0 <= i < len(args) else " (there is none)")
                              for i in sorted(got ^ want))
            raise Wrong(f"for inputs of types ({kinds})" + (f" ({edge})" if edge else "")
                        + f" it says {sorted(got)}; the trace "
                        f"disagrees about {wrong}")
    return (f"it agrees with the trace on all {len(cases)} calls: Python scalars, a bool, "
            "an IntEnum, NumPy scalars and arrays, a weakly typed jax array among the inputs")


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


def _ulp(s: float, toward: float) -> float:
    """The float32 next to `s` toward `toward`, as a Python float (exact in float32)."""
    return float(np.nextafter(np.float32(s), np.float32(toward)))


def _clip_cases():
    """(x, t, what is special about it): ordinary and random cases, then the edges of what the
    task says (every input): t < 0 (the bounds -t and t cross), t = 0, inf and NaN in x, a
    sum exactly on t and one float32 ulp either side of it. Every sum near t is exact in any
    order, so the answer's sum and the original's agree wherever XLA adds."""
    f32 = np.float32
    cases = [(np.array([3.0, -1.0, 0.5], f32), 1.0, ""),
             (np.array([-3.0, 1.0, 0.5], f32), 0.5, ""),
             (np.array([[2.0, -4.0], [5.0, 0.0]], f32), 2.5, "")]
    rng = np.random.default_rng(41)
    for n, f in ((3, 0.6), (7, 1.4), (2, 0.7)):          # sums far from t
        x = (rng.normal(size=n) * 3).astype(f32)
        x = x if x.sum() > 0 else -x
        cases.append((x, float(x.sum(dtype=f32) * f32(f)), ""))
    small = 2.0 ** -20 + 2.0 ** -21
    cases += [
        (np.array([0.25, 0.75], f32), 1.0, "the sum equals t"),
        (np.array([0.5, -0.5, 0.0], f32), 0.0, "t = 0 and the sum equals t"),
        (np.array([1.5, -0.5], f32), 0.0, "t = 0"),
        (np.array([0.5, 3.0, -3.0], f32), -1.0, "t < 0: the bounds -t and t cross"),
        (np.array([-3.0, 1.0], f32), -1.0, "t < 0 and the sum below it"),
        (np.array([np.inf, 1.0, -2.0], f32), 1.5, "inf in x: the sum is inf"),
        (np.array([-np.inf, 2.0, 1.0], f32), 1.0, "-inf in x: the sum is -inf"),
        (np.array([np.inf, -np.inf, 0.5], f32), 0.25, "inf and -inf in x: the sum is NaN"),
        (np.array([np.nan, 2.0, -1.0], f32), 0.5, "NaN in x"),
        (np.array([0.75, 0.25], f32), _ulp(1.0, 2.0), "t one float32 ulp above the sum"),
        (np.array([0.75, 0.25], f32), _ulp(1.0, 0.0), "t one float32 ulp below the sum"),
        (np.array([2.0 ** -20, 2.0 ** -21], f32), _ulp(small, 0.0),
         "t one float32 ulp below a small sum"),
        (np.array([2.0 ** -20, 2.0 ** -21], f32), _ulp(small, 1.0),
         "t one float32 ulp above a small sum"),
        # the sum of three, exactly t; computed another way (mean * 3) it comes out 1 ulp above
        (np.array([0.25, 0.25, 3.0], f32), 3.5, "the sum equals t"),
    ]
    return cases


_CLIP_CASES = _clip_cases()
_EDGES = ("t < 0, t = 0, inf and NaN in x, sums on t and one ulp either side of it, and a "
          "float16 x")


def _original(x, t):
    """What clip_or_zero gives, in NumPy: no JAX call, so nothing in the kernel (such as
    jax_enable_x64) changes it, and nothing to compile. Near t every sum is exact, so
    NumPy's order of adding does not matter (tests/test_labs.py compares it with
    clip_or_zero on every case)."""
    x = np.asarray(x)
    t = x.dtype.type(t)                   # a Python float takes x's dtype, as it does in JAX
    with np.errstate(invalid="ignore"):   # inf + -inf is NaN, as in JAX
        above = x.sum(dtype=x.dtype) > t
    if above:
        return np.clip(x, -t, t)          # crossed bounds (t < 0): all t, as jnp.clip gives
    return np.zeros_like(x)


def _check_traceable(fn) -> str:
    fn = as_now(fn)    # as it is now: a helper redefined since is seen
    jitted = jax.jit(fn)
    x64 = jax.config.jax_enable_x64
    cases = _CLIP_CASES + [(*e.value, e.name) for e in EDGES["q4"]]
    for x, t, what in cases:
        try:
            got = jitted(fresh(x), t)   # (with jax_disable_jit on, jit hands the answer x itself)
        except (jax.errors.ConcretizationTypeError,
                jax.errors.TracerBoolConversionError) as e:
            raise Wrong(f"jit still refuses it ({type(e).__name__}: {first_line(e)}): some Python "
                        "decision depends on a traced value") from None
        except Exception as e:
            if jax.config.jax_enable_x64 == x64:
                raise
            raise Wrong(f"your function turns jax_enable_x64 {'on' if not x64 else 'off'} "
                        "while jit traces it, and running what jit made of it then failed "
                        f"({type(e).__name__}): leave JAX's config alone inside a function"
                        ) from None
        got = as_array(got, f"on x={x.tolist()}, t={t!r}, the result")
        want = _original(x, t)
        # clip and zeros do no arithmetic: the right result is exact
        case = f"x={x.tolist()}, t={t!r}" + (f" ({what})" if what else "")
        if got.shape != want.shape or not np.array_equal(got.astype(np.float64), want):
            raise Wrong(f"traceable now, but on {case} it gives "
                        f"{np.asarray(got).tolist()} where the original gives {want.tolist()}")
        if got.dtype != want.dtype:
            raise Wrong(f"traceable now, and the right numbers, but on {case} the result is "
                        f"{got.dtype} where the original's is {want.dtype}: keep x's dtype")
    jaxpr = jax.make_jaxpr(fn)(*_CLIP_CASES[0][:2])
    prims = {e.primitive.name for e in all_eqns(jaxpr)}
    if prims & CALLBACKS:
        raise Wrong("the staged program calls back into Python "
                    f"({', '.join(sorted(prims & CALLBACKS))}): the Python branch is still "
                    "there, run outside the program. Make the choice a JAX operation")
    if not prims & {"select_n", "cond"}:
        raise Wrong("the right values, but the staged program has no choice in it (no "
                    "select_n, no cond): what decides between the two results?")
    n = len(jaxpr.eqns)
    return (f"jit accepts it ({n} equations, no Python branch), and it gives what "
            f"clip_or_zero gives on all {len(cases)} inputs tried, {_EDGES} included (and "
            "in x's dtype)")


# The inputs each task's words call for that ordinary inputs leave untried: a row each, with
# its reason (tests/wrong_answers/j1.py holds for each a wrong answer that only it rejects)
EDGES = {
    "q2": (Edge("no equations", "the task says count the equations, and a function that "
                "returns its input has none: zero is a count too",
                (lambda x: x, (np.ones(2, np.float32),), 0)),
           Edge("the same function again, on two float32s", "the task counts the "
                "equations of f traced with args: the same function object (x + y) casts an "
                "int32 x and a Python float, and nothing for two float32s, so a count "
                "remembered by function gives the old one",
                (_add, (np.ones(3, np.float32), np.float32(1.5)), 1))),
    "q3": (Edge("an IntEnum", "the task asks what the trace saw, not what the Python type "
                "says: an IntEnum is not exactly an int, yet weak as an int is",
                (lambda a, b: a * b, (_Level.HIGH, np.ones(2, np.float32)))),
           Edge("the same function again, its arguments swapped", "the task asks what "
                "tracing saw for these args: the same function object (a * b), its float "
                "now first, has its weak input at another position, so positions "
                "remembered by function give the old ones",
                (_mul, (2.0, np.ones(3, np.float32))))),
    "q4": (Edge("float16 x: in float16 the sum and t both are 1024",
                "the original compares in x's dtype and returns it: a float16 x whose sum "
                "is above t in float32 but equal to it in float16, and a result that must "
                "be float16 too",
                (np.array([1024.0, 0.3], np.float16), 1024.1)),),
}


q4 = Task(LAB, 4, "Make a refused function traceable", _check_traceable, [
    "Under jit, `x.sum() > t` is a tracer: Python's `if` cannot ask it for True or False.",
    "Compute both results and let the data choose: jnp.where(cond, a, b) "
    "(or jax.lax.cond).",
], takes="clip_or_zero_traceable")
