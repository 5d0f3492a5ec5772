"""Lab L5: plausible wrong answers its checks must reject, and right answers written
differently from the solution that they must accept (tests/test_labs.py runs both)."""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from workshop.labs import l5


def _starter(*args, **kwargs):
    raise NotImplementedError()


def _pair_class(register=None):
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    if register:
        register(Pair)
    return Pair


def _no_keys(P):
    jax.tree_util.register_pytree_node(P, lambda p: ((p.a, p.b), None),
                                       lambda aux, ch: P(*ch))


def _swapped(P):
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("a"), p.a), (K("b"), p.b)), None), lambda aux, ch: P(ch[1], ch[0]))


def _b_static(P):
    jax.tree_util.register_pytree_node(P, lambda p: ((p.a,), float(p.b)),
                                       lambda aux, ch: P(ch[0], aux))


def _dict_keys(P):              # key paths that read ['a'], ['b']
    K = jax.tree_util.DictKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("a"), p.a), (K("b"), p.b)), None), lambda aux, ch: P(*ch))


def _one_leaf(P):               # half-done: a and b as one tuple leaf
    jax.tree_util.register_pytree_node(P, lambda p: (((p.a, p.b),), None),
                                       lambda aux, ch: P(*ch[0]))


def _scan_from(init, combine):
    def running(xs):
        def step(c, x):
            c = combine(c, x)
            return c, c
        return jax.lax.scan(step, jnp.array(init, xs.dtype), xs)[1]
    return running


def _scan_last_only(xs):        # half-done: returns the final carry, not the ys
    return jax.lax.scan(lambda c, x: (jnp.maximum(c, x), None), -jnp.inf, xs)[0]


def _newton(steps, step=lambda a, x: 0.5 * (x + a / x), start=lambda a: a):
    return lambda a: jax.lax.fori_loop(0, steps, lambda i, x: step(a, x), start(a))


WRONG = {
    "q1": [_pair_class(), _pair_class(_no_keys), _pair_class(_swapped), _pair_class(_b_static),
           _pair_class(_dict_keys), _pair_class(_one_leaf), "Pair"],
    "q2": [_starter, l5.running_max_python, _scan_from(0.0, jnp.maximum),
           _scan_from(-10.0, jnp.maximum),                         # boundary: a "small" start
           _scan_from(-1e30, jnp.maximum),
           _scan_from(float(np.finfo(np.float32).min), jnp.maximum),  # boundary: -inf inputs
           _scan_from(0.0, jnp.add), jax.lax.cummax, _scan_last_only],
    "q3": [_starter, l5.newton_sqrt, _newton(2), _newton(8), jnp.sqrt,
           _newton(20, lambda a, x: x - 0.1 * (x * x - a)),
           _newton(3, start=jnp.sqrt),                             # sidestep: starts at √a
           lambda a: jax.lax.fori_loop(0, 20, lambda i, x: 0.5 * (x + a / x), a ** 0.5)],
    "q4": [_starter, l5.mean_so_far_broken,
           lambda xs: jnp.cumsum(xs, 0) / jnp.arange(1, len(xs) + 1).reshape(
               (-1,) + (1,) * (xs.ndim - 1)),                      # sidestep: no scan
           lambda xs: jax.lax.scan(lambda c, x: ((c[0] + x, c[1] + 1), (c[0] + x) / (c[1] + 1)),
                                   (jnp.zeros(xs.shape[1:]), 0), xs)[1],   # float32 carry
           lambda xs: jax.lax.scan(lambda c, x: ((c[0] + x, c[1] + 1), c[0] / c[1]),
                                   (jnp.zeros(xs.shape[1:], xs.dtype), 0), xs)[1],  # off by one
           lambda xs: l5.mean_so_far_broken(xs.reshape(len(xs), -1)[:, 0]),  # first column
           lambda xs: jax.lax.scan(lambda c, x: ((c[0] + x, c[1] + 1), c[0] + x),
                                   (jnp.zeros_like(xs[0]), 0), xs)[1]],      # totals only
}


@dataclasses.dataclass
class _DataPair:
    a: jax.Array
    b: jax.Array


jax.tree_util.register_dataclass(_DataPair, data_fields=["a", "b"], meta_fields=[])


def _keys_class():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        Pair, lambda p: ([(K("a"), p.a), (K("b"), p.b)], ()),
        lambda aux, ch: Pair(ch[0], ch[1]))
    return Pair


def _running_max_from_first(xs):
    def step(best, x):
        best = jnp.where(x > best, x, best)
        return best, best
    _, ys = jax.lax.scan(step, xs[0], xs[1:])
    return jnp.concatenate([xs[:1], ys])


def _newton_scan(a):
    x, _ = jax.lax.scan(lambda x, _: (0.5 * (x + a / x), None), a, None, length=25)
    return x


def _mean_with_count_float(xs):
    def step(carry, x):
        total, n = carry
        return (total + x, n + 1.0), (total + x) / (n + 1.0)
    init = (jnp.zeros_like(xs[0]), jnp.zeros((), xs.dtype))
    return jax.lax.scan(step, init, xs)[1]


def _mean_running(xs):          # carries the mean itself
    def step(carry, x):
        mean, n = carry
        n = n + 1
        mean = mean + (x - mean) / n
        return (mean, n), mean
    return jax.lax.scan(step, (jnp.zeros(xs.shape[1:], xs.dtype), jnp.int32(0)), xs)[1]


RIGHT = {
    "q1": [_DataPair, _keys_class()],
    "q2": [_running_max_from_first, _scan_from(-np.inf, jnp.maximum)],
    "q3": [_newton_scan, _newton(30)],
    "q4": [_mean_with_count_float, _mean_running],
}
