"""Lab LAB_ID "LAB_TITLE": the checks. The tasks are in exercises/LAB_NAME.ipynb.

Written by `workshop new lab` as a working example of the kit's lab idiom (a checker that
raises Wrong in the attendee's terms, hints that step toward the answer, inputs the attendee did
not choose, reaching every boundary): replace its tasks with your own.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import Task, Wrong, as_array, close

LAB = "LAB_ID"


def cube(x):
    """The function the tasks differentiate."""
    return x ** 3 - 2.0 * x


_POINTS = [-2.0, -1e-3, 0.0, 1.0, 3.0]   # a sign change, zero, a tiny value


def _check_slope(slope) -> str:
    for x in _POINTS:
        got = as_array(slope(jnp.float32(x)), f"slope({x})")
        if got.shape != ():
            raise Wrong(f"slope({x}) should be one number, not an array of shape {got.shape}")
        if not close(got, 3 * x * x - 2, 1e-4):
            raise Wrong(f"slope({x}) gives {float(got):.6g}, not the derivative of cube there")
    return "the slope of cube at every point, from JAX's own derivative"


q1 = Task(LAB, 1, "The slope of cube", _check_slope, [
    "jax.grad(f) is a new function: x ↦ f'(x).",
    "Differentiate cube itself, exactly: no step size, no formula by hand.",
], takes="slope")


def _check_slopes(slopes) -> str:
    for n in (1, 7):   # one point, and several
        xs = jnp.linspace(-2.0, 3.0, n, dtype=jnp.float32)
        got = as_array(slopes(xs), f"slopes of {n} points")
        if got.shape != (n,):
            raise Wrong(f"for {n} points you return shape {got.shape}: one slope per point")
        if not close(got, 3 * np.asarray(xs) ** 2 - 2, 1e-4):
            raise Wrong(f"for {n} points the slopes are not cube's derivative at each point")
    return "one slope per point, from one batched program"


q2 = Task(LAB, 2, "Every point at once", _check_slopes, [
    "jax.grad wants a function with one number out; jax.vmap runs a function over an axis.",
    "Batch the function of task 1 over the points' axis.",
], takes="slopes")


def _check_count(prediction) -> str:
    if not isinstance(prediction, (int, np.integer)) or isinstance(prediction, bool):
        raise Wrong(f"the prediction should be a whole number, not {type(prediction).__name__}")
    real = len(jax.make_jaxpr(jax.grad(cube))(1.0).eqns)
    if prediction != real:
        side = "too many" if prediction > real else "too few"
        raise Wrong(f"{prediction} is {side}: print jax.make_jaxpr(jax.grad(cube))(1.0)")
    return f"{real} equations: the forward pass and the backward pass, in one program"


q3 = Task(LAB, 3, "Predict the gradient's size", _check_count, [
    "The gradient's program holds cube's own equations and the backward ones.",
    "Count cube's primitives, then what each one's backward rule needs.",
])
