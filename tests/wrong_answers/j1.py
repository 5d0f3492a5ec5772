"""Lab J1: plausible wrong answers its checks must reject, and right answers written
differently from the solution that they must accept (tests/test_labs.py runs both)."""
from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np

from workshop.labs import j1
from wrong_answers import LiarInt, LiarSet, W


def _starter(*args, **kwargs):
    raise NotImplementedError()


def _count_lines(f, *a):         # counts printed lines, not equations
    return len(str(jax.make_jaxpr(f)(*a)).split("\n")) - 2


def _count_deep(f, *a):          # looks inside the nested jit
    def n(jaxpr):
        return sum(1 + (n(e.params["jaxpr"]) if "jaxpr" in e.params else 0)
                   for e in jaxpr.eqns)
    return n(jax.make_jaxpr(f)(*a))


def _count_kinds(f, *a):         # distinct primitives, not equations
    return len({e.primitive.name for e in jax.make_jaxpr(f)(*a).eqns})


def _count_no_jit(f, *a):        # half-done: skips the nested-jit equations
    return sum(e.primitive.name != "jit" for e in jax.make_jaxpr(f)(*a).eqns)


_COUNTED: dict = {}
_WEAK_SEEN: dict = {}


def _count_by_function(f, *a):   # remembers each function's count: the same f, other args
    if id(f) not in _COUNTED:
        _COUNTED[id(f)] = len(jax.make_jaxpr(f)(*a).eqns)
    return _COUNTED[id(f)]


def _weak_by_function(f, *a):    # remembers each function's positions: the same f, other args
    if id(f) not in _WEAK_SEEN:
        _WEAK_SEEN[id(f)] = {i for i, v in enumerate(jax.make_jaxpr(f)(*a).in_avals)
                             if v.weak_type}
    return _WEAK_SEEN[id(f)]


def _weak_by_python_type(f, *a):
    return {i for i, x in enumerate(a) if isinstance(x, (int, float, complex))}


def _weak_scalars_not_bool(f, *a):   # Python scalars except bool: misses weak arrays
    return {i for i, x in enumerate(a)
            if isinstance(x, (int, float, complex)) and not isinstance(x, bool)}


def _weak_float_only(f, *a):
    return {i for i, x in enumerate(a) if isinstance(x, float)}


def _weak_not_array(f, *a):
    return {i for i, x in enumerate(a) if not hasattr(x, "dtype")}


def _clip_only(x, t):
    return jnp.clip(x, -t, t)


def _branch_swapped(x, t):
    return jnp.where(x.sum() > t, jnp.zeros_like(x), jnp.clip(x, -t, t))


def _float_of_sum(x, t):
    return jnp.clip(x, -t, t) if float(x.sum()) > t else jnp.zeros_like(x)


def _at_or_above(x, t):          # boundary: >= where the original says >
    return jnp.where(x.sum() >= t, jnp.clip(x, -t, t), jnp.zeros_like(x))


def _callback(x, t):             # sidestep: the Python branch, called back from the program
    spec = jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x))
    return jax.pure_callback(lambda x, t: np.asarray(j1.clip_or_zero(x, t), spec.dtype),
                             spec, x, t)


def _returns_nothing(x, t):      # half-done: computes, forgets to return
    jnp.where(x.sum() > t, jnp.clip(x, -t, t), jnp.zeros_like(x))


def _count_equals(f, *a):        # counts " = " in the printout: nested bodies' lines too
    return str(jax.make_jaxpr(f)(*a)).count(" = ")


def _count_of_jit(f, *a):        # traces jit(f): always the one jit equation
    return len(jax.make_jaxpr(jax.jit(f))(*a).eqns)


def _count_with_consts(f, *a):   # counts the captured constants as equations
    closed = jax.make_jaxpr(f)(*a)
    return len(closed.eqns) + len(closed.consts)


def _weak_flags(f, *a):          # a flag per input, not the positions
    return [v.weak_type for v in jax.make_jaxpr(f)(*a).in_avals]


def _weak_strong(f, *a):         # the inputs that were NOT weak
    return {i for i, v in enumerate(jax.make_jaxpr(f)(*a).in_avals) if not v.weak_type}


def _weak_one_based(f, *a):
    return {i + 1 for i, v in enumerate(jax.make_jaxpr(f)(*a).in_avals) if v.weak_type}


def _weak_outputs(f, *a):        # the outputs' weak types, not the inputs'
    return {i for i, v in enumerate(jax.make_jaxpr(f)(*a).out_avals) if v.weak_type}


def _weak_attribute(f, *a):      # reads .weak_type off the inputs: Python scalars have none
    return {i for i, x in enumerate(a) if getattr(x, "weak_type", False)}


def _where_inverted(x, t):       # NaN <= t is False: a NaN sum takes the clip branch
    return jnp.where(x.sum() <= t, 0.0, jnp.minimum(jnp.maximum(x, -t), t)).astype(x.dtype)


def _nested_where_clip(x, t):    # a hand-written clip: the bounds' order matters when t < 0
    return jnp.where(x.sum() > t, jnp.where(x < -t, -t, jnp.where(x > t, t, x)),
                     jnp.zeros_like(x))


def _abs_clip(x, t):             # "fixes" the bounds: clips to [-|t|, |t|]
    return jnp.where(x.sum() > t, jnp.clip(x, -jnp.abs(t), jnp.abs(t)), jnp.zeros_like(x))


def _max_of_min(x, t):           # min first, then max: another clip when the bounds cross
    return jnp.where(x.sum() > t, jnp.maximum(jnp.minimum(x, t), -t), jnp.zeros_like(x))


def _zeros_as_0x(x, t):          # 0 * x for the zeros: NaN where x is inf
    return jnp.where(x.sum() > t, jnp.clip(x, -t, t), 0 * x)


def _mask_times_clip(x, t):      # a 0/1 mask times the clip: 0 * NaN is NaN
    return jnp.where(x.sum() > t, 1.0, 0.0) * jnp.clip(x, -t, t)


def _bool_times_clip(x, t):      # the same with the comparison itself as the mask
    return (x.sum() > t) * jnp.clip(x, -t, t)


def _epsilon(x, t):              # "safe" float comparison: an epsilon on the threshold
    return jnp.where(x.sum() > t + 1e-6, jnp.clip(x, -t, t), jnp.zeros_like(x))


def _tiny_epsilon(x, t):         # a smaller epsilon: wrong only where the sum is small
    return jnp.where(x.sum() > t + 1e-9, jnp.clip(x, -t, t), jnp.zeros_like(x))


def _isclose(x, t):              # "not close to t" as a tie-breaker
    s = x.sum()
    return jnp.where((s > t) & ~jnp.isclose(s, t), jnp.clip(x, -t, t), jnp.zeros_like(x))


# ring 2 (issue 29): written by a tester who is not the checker's author

def _count_loop_bodies(f, *a):       # "a loop's body is part of the program": counts it too
    def n(jaxpr):
        return sum(1 + sum(n(sub) for k, sub in e.params.items()
                           if k in ("body_jaxpr", "cond_jaxpr") or
                           (k == "jaxpr" and e.primitive.name == "scan"))
                   for e in jaxpr.eqns)
    return n(jax.make_jaxpr(f)(*a))


def _count_outvars(f, *a):           # counts variables defined, not equations
    return sum(len(e.outvars) for e in jax.make_jaxpr(f)(*a).eqns)


def _count_np_args(f, *a):           # traces NumPy copies: weak Python scalars made strong
    return len(jax.make_jaxpr(f)(*[np.asarray(v) for v in a]).eqns)


def _count_no_casts(f, *a):          # "a cast is not an equation"
    return sum(e.primitive.name != "convert_element_type"
               for e in jax.make_jaxpr(f)(*a).eqns)


def _count_under_disable_jit(f, *a):  # traces with jit disabled: nested jits inlined
    with jax.disable_jit():
        return len(jax.make_jaxpr(f)(*a).eqns)


def _count_stablehlo_ops(f, *a):     # sidestep: counts lowered StableHLO ops, not jaxpr eqns
    text = jax.jit(f).lower(*a).as_text()
    body = text.split("func.func public @main", 1)[1].split("\n  }", 1)[0]
    return sum(" = " in line for line in body.splitlines())


def _weak_np_args(f, *a):            # traces NumPy copies: a Python scalar is no longer weak
    avals = jax.make_jaxpr(f)(*[np.asarray(v) for v in a]).in_avals
    return {i for i, v in enumerate(avals) if v.weak_type}


def _weak_flags_dict(f, *a):         # half-done: a dict of flags; its keys are every position
    return {i: v.weak_type for i, v in enumerate(jax.make_jaxpr(f)(*a).in_avals)}


def _weak_first_only(f, *a):         # half-done: assumes one weak input, returns the first
    avals = jax.make_jaxpr(f)(*a).in_avals
    return {next((i for i, v in enumerate(avals) if v.weak_type), None)} - {None}


def _weak_numbers_number(f, *a):     # guesses: any number that is not a bool (NumPy's too)
    return {i for i, v in enumerate(a)
            if isinstance(v, numbers.Number) and not isinstance(v, (bool, np.bool_))}


def _weak_exact_python_type(f, *a):  # sidestep: guesses from exact Python types (+ weak arrays)
    return {i for i, v in enumerate(a)
            if type(v) in (int, float, complex) or getattr(v, "weak_type", False)}


def _weak_scalar_avals(f, *a):       # "weak = a scalar of a default dtype": guesses from avals
    avals = jax.make_jaxpr(f)(*a).in_avals
    return {i for i, v in enumerate(avals)
            if v.shape == () and v.dtype in (jnp.int32, jnp.float32, jnp.complex64)}


def _clip_sign_magnitude(x, t):      # sign(x) * min(|x|, t): differs for t < 0
    return jnp.where(x.sum() > t, jnp.sign(x) * jnp.minimum(jnp.abs(x), t), jnp.zeros_like(x))


def _mean_times_n(x, t):             # the sum as mean * size: rounds differently on the boundary
    return jnp.where(jnp.mean(x) * x.size > t, jnp.clip(x, -t, t), jnp.zeros_like(x))


def _cond_not_at_most(x, t):         # lax.cond on `sum <= t`, branches swapped: NaN sum clips
    return jax.lax.cond(x.sum() <= t, lambda: jnp.zeros_like(x), lambda: jnp.clip(x, -t, t))


def _sum_in_float32(x, t):           # "sums in float32 for accuracy": not the original's sum
    return jnp.where(x.sum(dtype=jnp.float32) > t, jnp.clip(x, -t, t), jnp.zeros_like(x))


def _result_float32(x, t):           # "float32 to be safe": the right numbers, not x's dtype
    return jnp.where(x.sum() > t, jnp.clip(x, -t, t), jnp.zeros_like(x)).astype(jnp.float32)


def _x64_inside(x, t):               # turns x64 on "to compare exactly", and leaves it on
    jax.config.update("jax_enable_x64", True)
    return jnp.where(x.sum() > t, jnp.clip(x, -t, t), jnp.zeros_like(x))


def _sum_per_column(x, t):           # half-done: sums along axis 0, fine only for vectors
    return jnp.where(x.sum(axis=0) > t, jnp.clip(x, -t, t), jnp.zeros_like(x))


_F16 = "float16 x: in float16 the sum and t both are 1024"   # (the rows of j1.EDGES)

WRONG = {
    "q1": [W(4, "too few"), W(6, "too many"), W(3, "too few"), W(0, "too few"),
           W(7, "too many"),                    # counted the `let` and `in` lines too
           W(8, "too many"),                    # one per element
           W(5.0, "whole number, not float"), W("5", "whole number, not str"),
           W(True, "whole number, not bool"), W(None, "whole number, not NoneType"),
           W(np.float64(5.0), "whole number, not float64"), W([5], "whole number, not list"),
           W(2, "too few"), W(1, "too few"), W(10, "too many"),
           W(np.float32(5.0), "whole number, not float32"), W((5,), "whole number, not tuple"),
           W(5.5, "whole number, not float"),
           W(LiarInt(0), "0 is too few")],   # hostile: claims to equal every count
    "q2": [W(_starter, "not done yet"),
           W(_count_lines, "it says 6; the jaxpr has 3 top-level"),
           W(_count_deep, "it says 7; the jaxpr has 4 top-level"),
           W(_count_kinds, "it says 3; the jaxpr has 4 top-level"),
           W(_count_no_jit, "it says 3; the jaxpr has 4 top-level"),
           W(lambda f, *a: max(1, len(jax.make_jaxpr(f)(*a).eqns)),   # boundary: no equations
             "(no equations) it says 1; the jaxpr has 0 top-level", edge="no equations"),
           W(lambda f, *a: len(a), "it says 1; the jaxpr has 3 top-level"),
           W(lambda f, *a: 3.0, "should return an int, it returned float"),
           W(lambda f, *a: len(jax.make_jaxpr(f)(*a).invars),
             "it says 1; the jaxpr has 3 top-level"),
           W(_count_equals, "it says 7; the jaxpr has 4 top-level"),
           W(_count_of_jit, "it says 1; the jaxpr has 3 top-level"),
           W(_count_with_consts, "it says 3; the jaxpr has 2 top-level"),
           W(_count_loop_bodies, "it says 3; the jaxpr has 1 top-level"),
           W(_count_outvars, "it says 2; the jaxpr has 1 top-level"),
           W(_count_np_args, "it says 3; the jaxpr has 4 top-level"),
           W(_count_no_casts, "it says 3; the jaxpr has 4 top-level"),
           W(_count_under_disable_jit, "it says 6; the jaxpr has 4 top-level"),
           W(_count_stablehlo_ops, "it says 4; the jaxpr has 3 top-level"),
           W(lambda f, *a: LiarInt(9), "it says 9; the jaxpr has 3 top-level"),   # hostile
           W(_count_by_function, "(the same function again, on two float32s) it says 2",
             edge="the same function again, on two float32s")],
    "q3": [W(_starter, "not done yet"),
           W(_weak_by_python_type, "disagrees about input 0 (bool)"),
           W(_weak_scalars_not_bool, "disagrees about input 1 (ArrayImpl)"),
           W(_weak_float_only, "disagrees about input 0 (int)"),
           W(_weak_not_array, "disagrees about input 0 (bool)"),
           W(lambda f, *a: set(), "disagrees about input 1 (float)"),
           W(lambda f, *a: 1, "a set of positions, got int"),
           W(_weak_flags, "positions (ints), not bool"),
           W(_weak_strong, "disagrees about input 0 (ndarray), input 1 (float)"),
           W(_weak_one_based, "disagrees about input 1 (float), input 2"),
           W(_weak_outputs, "disagrees about input 1 (float)"),
           W(_weak_attribute, "disagrees about input 1 (float)"),
           W(_weak_np_args, "disagrees about input 1 (float)"),
           W(_weak_flags_dict, "a set of positions, got dict"),
           W(_weak_first_only, "disagrees about input 2 (float)"),
           W(_weak_numbers_number, "disagrees about input 2 (float32)"),
           W(_weak_exact_python_type, "(an IntEnum) it says []; the trace disagrees about "
             "input 0 (Level)", edge="an IntEnum"),
           W(_weak_scalar_avals, "disagrees about input 2 (float32)"),
           W(lambda f, *a: LiarSet(), "disagrees about input 1 (float)"),     # hostile: the set
           W(lambda f, *a: {LiarInt(7)}, "disagrees about input 1 (float), input 7"),  # an item
           W(_weak_by_function, "(the same function again, its arguments swapped) it says "
             "[1]; the trace disagrees about input 0 (float), input 1 (ndarray)",
             edge="the same function again, its arguments swapped")],
    "q4": [W(_starter, "not done yet"), W(j1.clip_or_zero, "jit still refuses it"),
           W(_clip_only, "where the original gives [0.0, 0.0, 0.0]"),
           W(_branch_swapped, "where the original gives [1.0, -1.0, 0.5]"),
           W(_float_of_sum, "jit still refuses it (ConcretizationTypeError"),
           W(_at_or_above, "(the sum equals t)"),
           W(_callback, "calls back into Python (pure_callback)"),
           W(_returns_nothing, "the result is None"),
           W("not a function", "pass your function itself"),
           W(_where_inverted, "(inf and -inf in x: the sum is NaN)"),
           W(_nested_where_clip, "(t < 0: the bounds -t and t cross)"),
           W(_abs_clip, "(t < 0: the bounds -t and t cross)"),
           W(_max_of_min, "(t < 0: the bounds -t and t cross)"),
           W(_zeros_as_0x, "(-inf in x: the sum is -inf)"),
           W(_mask_times_clip, "(NaN in x)"),
           W(_bool_times_clip, "(NaN in x)"),
           W(_epsilon, "(t one float32 ulp below the sum)"),
           W(_tiny_epsilon, "(t one float32 ulp below a small sum)"),
           W(_isclose, "(t one float32 ulp below the sum)"),
           W(_x64_inside, "turns jax_enable_x64 on while jit traces it"),
           W(_clip_sign_magnitude, "(t < 0: the bounds -t and t cross)"),
           W(_mean_times_n, "x=[0.25, 0.25, 3.0], t=3.5 (the sum equals t)"),
           W(_cond_not_at_most, "(inf and -inf in x: the sum is NaN)"),
           W(_sum_in_float32, "(float16 x: in float16 the sum and t both are 1024)", edge=_F16),
           W(_result_float32, f"({_F16}) the result is float32 where the original's is "
             "float16", edge=_F16),
           W(_sum_per_column, "where the original gives [[2.0, -2.5], [2.5, 0.0]]")],
}


def _cond(x, t):
    return jax.lax.cond(x.sum() > t, lambda: jnp.clip(x, -t, t), lambda: jnp.zeros_like(x))


def _minmax_where(x, t):        # the clip written out, min of max as jnp.clip does it
    keep = jnp.sum(x) > t
    return jnp.where(keep, jnp.minimum(jnp.maximum(x, -t), t), 0.0).astype(x.dtype)


def _select(x, t):              # lax.select with the condition broadcast
    keep = jnp.broadcast_to(x.sum() > t, x.shape)
    return jax.lax.select(keep, jnp.clip(x, -t, t), jnp.zeros_like(x))


RIGHT = {
    "q1": [5, np.int64(5)],
    "q2": [lambda f, *a: sum(1 for _ in jax.make_jaxpr(f)(*a).eqns),
           lambda f, *a: len(jax.jit(f).trace(*a).jaxpr.eqns)],
    "q3": [lambda f, *a: {i for i, v in enumerate(jax.make_jaxpr(f)(*a).invars)
                          if v.aval.weak_type},
           lambda f, *a: [i for i, v in enumerate(jax.jit(f).trace(*a).jaxpr.in_avals)
                          if v.weak_type]],
    "q4": [_cond, _minmax_where, _select],
}
