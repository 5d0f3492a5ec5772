"""Lab L5: plausible wrong answers its checks must reject (tests/test_labs.py runs them)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from workshop.labs import l5


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


def _scan_from(init, combine):
    def running(xs):
        def step(c, x):
            c = combine(c, x)
            return c, c
        return jax.lax.scan(step, jnp.array(init, xs.dtype), xs)[1]
    return running


def _newton(steps, step=lambda a, x: 0.5 * (x + a / x)):
    return lambda a: jax.lax.fori_loop(0, steps, lambda i, x: step(a, x), a)


WRONG = {
    "q1": [_pair_class(), _pair_class(_no_keys), _pair_class(_swapped), _pair_class(_b_static),
           "Pair"],
    "q2": [l5.running_max_python, _scan_from(0.0, jnp.maximum), _scan_from(0.0, jnp.add),
           jax.lax.cummax],
    "q3": [l5.newton_sqrt, _newton(2), jnp.sqrt, _newton(20, lambda a, x: x - 0.1 * (x * x - a))],
}
