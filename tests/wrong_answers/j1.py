"""Lab J1: plausible wrong answers its checks must reject, and right answers written
differently from the solution that they must accept (tests/test_labs.py runs both)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from workshop.labs import j1


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


WRONG = {
    "q1": [4, 6, 3, 5.0, "5", True, None],
    "q2": [_starter, _count_lines, _count_deep, _count_kinds, _count_no_jit,
           lambda f, *a: max(1, len(jax.make_jaxpr(f)(*a).eqns)),   # boundary: no equations
           lambda f, *a: len(a), lambda f, *a: 3.0,
           lambda f, *a: len(jax.make_jaxpr(f)(*a).invars)],
    "q3": [_starter, _weak_by_python_type, _weak_scalars_not_bool, _weak_float_only,
           _weak_not_array, lambda f, *a: set(), lambda f, *a: 1],
    "q4": [_starter, j1.clip_or_zero, _clip_only, _branch_swapped, _float_of_sum, _at_or_above,
           _callback, _returns_nothing, "not a function"],
}


def _cond(x, t):
    return jax.lax.cond(x.sum() > t, lambda: jnp.clip(x, -t, t), lambda: jnp.zeros_like(x))


def _where_inverted(x, t):
    return jnp.where(x.sum() <= t, 0.0, jnp.minimum(jnp.maximum(x, -t), t)).astype(x.dtype)


RIGHT = {
    "q1": [5, np.int64(5)],
    "q2": [lambda f, *a: sum(1 for _ in jax.make_jaxpr(f)(*a).eqns),
           lambda f, *a: len(jax.jit(f).trace(*a).jaxpr.eqns)],
    "q3": [lambda f, *a: {i for i, v in enumerate(jax.make_jaxpr(f)(*a).invars)
                          if v.aval.weak_type},
           lambda f, *a: [i for i, v in enumerate(jax.jit(f).trace(*a).jaxpr.in_avals)
                          if v.weak_type]],
    "q4": [_cond, _where_inverted],
}
