"""Lab J1: plausible wrong answers its checks must reject (tests/test_labs.py runs them)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from workshop.labs import j1


def _count_lines(f, *a):         # counts printed lines, not equations
    return len(str(jax.make_jaxpr(f)(*a)).split("\n")) - 2


def _count_deep(f, *a):          # looks inside the nested jit
    def n(jaxpr):
        return sum(1 + (n(e.params["jaxpr"].jaxpr) if "jaxpr" in e.params else 0)
                   for e in jaxpr.eqns)
    return n(jax.make_jaxpr(f)(*a).jaxpr)


def _weak_by_python_type(f, *a):
    return {i for i, x in enumerate(a) if isinstance(x, (int, float, complex))}


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


WRONG = {
    "q1": [4, 6, 3, 5.0, "5", True],
    "q2": [_count_lines, _count_deep, lambda f, *a: len(a), lambda f, *a: 3.0,
           lambda f, *a: len(jax.make_jaxpr(f)(*a).jaxpr.invars)],
    "q3": [_weak_by_python_type, _weak_float_only, _weak_not_array, lambda f, *a: set(),
           lambda f, *a: 1],
    "q4": [j1.clip_or_zero, _clip_only, _branch_swapped, _float_of_sum, "not a function"],
}
