"""Lab L5 "Carry types and custom pytrees": the checks.
The tasks are in exercises/L5-carry-types-and-custom-pytrees.ipynb."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util as tu

from . import Task, Wrong, close

LAB = "L5"


def _prims(fn, *args) -> list[str]:
    return [e.primitive.name for e in jax.make_jaxpr(fn)(*args).eqns]


# ----------------------------------------------------------------- task 1: a custom pytree

def _check_pair(Pair) -> str:
    if not isinstance(Pair, type):
        raise Wrong("pass the class itself: q1.check(Pair)")
    a, b = np.array([1.0, -2.0, 0.5], np.float32), np.float32(3.0)
    p = Pair(a, b)
    leaves = tu.tree_leaves(p)
    if len(leaves) != 2:
        raise Wrong(f"a Pair should flatten to its two leaves (a, b), it gives {len(leaves)}: "
                    "is it registered?")
    if not (close(leaves[0], a) and close(leaves[1], b)):
        raise Wrong("the leaves should come out in the order a, b")
    try:
        prod = jax.jit(lambda q: q.a * q.b)(p)
    except TypeError as e:
        raise Wrong(f"jit refused a Pair ({str(e).splitlines()[0][:80]})") from None
    if not close(prod, a * b):
        raise Wrong("jit of q.a * q.b gives the wrong numbers: does unflatten put a and b back "
                    "in their places?")
    g = jax.grad(lambda q: jnp.sum(q.a * q.b))(p)
    if not isinstance(g, Pair) or not (close(g.a, np.full(3, b)) and close(g.b, a.sum())):
        raise Wrong("grad with respect to a Pair should be a Pair of the two gradients")
    batch = Pair(np.ones((4, 3), np.float32), np.arange(4, dtype=np.float32))
    out = jax.vmap(lambda q: q.a * q.b)(batch)
    if not close(out, np.ones((4, 3)) * np.arange(4)[:, None]):
        raise Wrong("vmap over a batch of Pairs gives the wrong result")
    paths = [tu.keystr(k) for k, _ in tu.tree_flatten_with_path(p)[0]]
    if paths != [".a", ".b"]:
        raise Wrong(f"the key paths read {paths}; they should name the attributes "
                    "('.a', '.b')")
    return "jit, grad and vmap see a Pair, and its key paths read .a and .b"


q1 = Task(LAB, 1, "A custom pytree", _check_pair, [
    "Register the class so that flatten returns its children (a, b) and unflatten rebuilds "
    "a Pair; use a form that gives key paths.",
    "tu.register_pytree_with_keys(Pair, flatten_with_keys, unflatten) with children "
    "((GetAttrKey('a'), p.a), (GetAttrKey('b'), p.b)); or a dataclass with register_dataclass.",
])


# ----------------------------------------------------------------- task 2: a loop as a scan

def running_max_python(xs):
    """The Python loop task 2 starts from."""
    out, best = [], -jnp.inf
    for x in xs:
        best = jnp.maximum(best, x)
        out.append(best)
    return jnp.stack(out)


_RM_CASES = [np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], np.float32),
             np.array([-5.0, -7.0, -1.0, -3.0], np.float32),
             np.linspace(2.0, -2.0, 50, dtype=np.float32)]


def _check_scan(running_max) -> str:
    if not callable(running_max):
        raise Wrong("pass your function itself: q2.check(running_max)")
    for xs in _RM_CASES:
        got = running_max(jnp.asarray(xs))
        want = np.maximum.accumulate(xs)
        if not close(got, want):
            raise Wrong(f"on {xs[:6].tolist()}… it gives {np.asarray(got)[:6].tolist()}…")
    prims = _prims(running_max, jnp.asarray(_RM_CASES[2]))
    if "scan" not in prims:
        raise Wrong(f"the right numbers, but the staged program has no scan "
                    f"({len(prims)} equations): the loop was unrolled or replaced")
    if len(prims) > 10:
        raise Wrong(f"there is a scan, but {len(prims)} equations around it for 50 elements: "
                    "part of the loop is still unrolled")
    return "one scan equation, traced once, whatever the length"


q2 = Task(LAB, 2, "A Python loop as a scan", _check_scan, [
    "jax.lax.scan(step, init, xs): step(carry, x) returns (new carry, y); the ys are stacked.",
    "The carry is the best so far; what should it start at so that negative inputs work?",
])


# ----------------------------------------------------------------- task 3: differentiable loop

def newton_sqrt(a):
    """The iteration task 3 starts from: converges, but reverse mode refuses it."""
    return jax.lax.while_loop(lambda x: jnp.abs(x * x - a) > 1e-6 * a,
                              lambda x: 0.5 * (x + a / x), a)


def _check_diff(fn) -> str:
    if not callable(fn):
        raise Wrong("pass your function itself: q3.check(newton_sqrt_differentiable)")
    for a in (2.0, 9.0, 0.25, 150.0):
        val = fn(jnp.float32(a))
        if not close(val, np.sqrt(a), tol=1e-4):
            raise Wrong(f"at a={a} it gives {float(val):.6f}, not √a = {np.sqrt(a):.6f}: "
                        "enough iterations?")
        try:
            g = jax.grad(fn)(jnp.float32(a))
        except ValueError as e:
            raise Wrong(f"grad still refuses it: {str(e).splitlines()[0][:90]}") from None
        if not close(g, 0.5 / np.sqrt(a), tol=1e-3):
            raise Wrong(f"at a={a} the gradient is {float(g):.6f}, not 1/(2√a) = "
                        f"{0.5 / np.sqrt(a):.6f}")
    prims = _prims(fn, jnp.float32(2.0))
    if "while" in prims or "scan" not in prims:
        raise Wrong("the numbers are right, but keep the Newton iteration as a loop with a "
                    "fixed number of steps (a scan in the staged program, no while)")
    return "a bounded loop: a scan, which reverse mode differentiates"


q3 = Task(LAB, 3, "Make a while_loop differentiable", _check_diff, [
    "Reverse mode needs a known number of iterations: keep the Newton step, bound the loop.",
    "jax.lax.fori_loop(0, 20, lambda i, x: 0.5 * (x + a / x), a) has static bounds, so it "
    "is a scan underneath.",
])
