"""Lab LAB_ID: wrong answers its checks must reject, each with what its
rejection must say, and right answers written differently from the solution that they must
accept (tests/test_labs.py runs both). Written by `workshop new lab` with its example tasks:
replace them with your tasks' own."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from workshop.labs import mylab
from wrong_answers import W


def _starter(*args, **kwargs):
    raise NotImplementedError()


_real = len(jax.make_jaxpr(jax.grad(mylab.cube))(1.0).eqns)
_slopes = jax.vmap(jax.grad(mylab.cube))
NOT_SLOPE, NOT_SLOPES = "not the derivative of cube", "not cube's derivative"

WRONG = {
    "q1": [W(_starter, "not done yet"),
           W(mylab.cube, NOT_SLOPE),
           W(lambda x: 3 * x ** 2, NOT_SLOPE),                      # half-done: no -2
           W(jax.grad(lambda x: x ** 3), NOT_SLOPE),                # another function
           W(lambda x: (mylab.cube(x + 0.1) - mylab.cube(x)) / 0.1, NOT_SLOPE),   # a step size
           W(lambda x: abs(jax.grad(mylab.cube)(x)), NOT_SLOPE),     # wrong where it is < 0
           W(lambda x: jnp.reshape(jax.grad(mylab.cube)(x), (1,)), "should be one number"),
           W(lambda x: None, "is None"),                            # forgets to return
           W(lambda x: "10", "not an array of numbers"),
           W("jax.grad(cube)", "pass your function itself")],      # not a function
    "q2": [W(_starter, "not done yet"),
           W(jax.grad(mylab.cube), "TypeError"),                     # grad of a vector output
           W(jax.vmap(mylab.cube), NOT_SLOPES),
           W(lambda xs: 3 * xs ** 2, NOT_SLOPES),
           W(lambda xs: _slopes(xs).astype(jnp.int32), NOT_SLOPES),
           W(lambda xs: _slopes(xs)[::-1], NOT_SLOPES),             # right for one point only
           W(lambda xs: jnp.sum(_slopes(xs)), "one slope per point"),
           W(lambda xs: _slopes(xs)[:-1], "one slope per point"),   # misses the boundary
           W(lambda xs: _slopes(xs)[None], "one slope per point"),
           W(lambda xs: None, "is None")],
    "q3": [W(None, "not NoneType"), W(_real - 1, "too few"), W(0, "too few"),
           W(_real + 1, "too many"), W(2 * _real, "too many"), W(float(_real), "not float"),
           W(str(_real), "not str"), W(True, "not bool"), W([_real], "not list"),
           W(np.float64(_real), "not float64")],
}

RIGHT = {
    "q1": [lambda x: jax.jvp(mylab.cube, (x,), (1.0,))[1],
           lambda x: jax.vjp(mylab.cube, x)[1](1.0)[0]],
    "q2": [jax.grad(lambda xs: jnp.sum(mylab.cube(xs))),
           lambda xs: jax.jvp(jax.vmap(mylab.cube), (xs,), (jnp.ones_like(xs),))[1]],
    "q3": [_real, jnp.int32(_real).item()],
}
