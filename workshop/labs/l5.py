"""Lab L5 "Carry types and custom pytrees": the checks.
The tasks are in exercises/L5-carry-types-and-custom-pytrees.ipynb."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util as tu

from . import Task, Wrong, all_eqns, as_array, close

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
    "tu.register_pytree_with_keys(Pair, flatten_with_keys, unflatten): flatten_with_keys "
    "returns ((key, child) pairs, aux). Which of tu's key classes names an attribute? (A "
    "dataclass with tu.register_dataclass works too.)",
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
             np.linspace(2.0, -2.0, 50, dtype=np.float32),
             np.array([-2.5e38, -3e38, -1e30], np.float32),       # below any "small" start
             np.array([-np.inf, -np.inf, -1.0, -np.inf], np.float32),
             np.array([-42.0], np.float32),                        # one element
             np.random.default_rng(5).normal(size=17).astype(np.float32) * 1e4 - 3e4]


def _check_scan(running_max) -> str:
    for xs in _RM_CASES:
        got = as_array(running_max(jnp.asarray(xs)), f"running_max of {len(xs)} elements")
        want = np.maximum.accumulate(xs)
        if got.shape != want.shape:
            raise Wrong(f"for {len(xs)} elements it returns shape {got.shape}, not "
                        f"{want.shape}: one running maximum per element")
        if not close(got, want):
            raise Wrong(f"on {xs[:6].tolist()}… it gives {got.reshape(-1)[:6].tolist()}…")
    prims = _prims(running_max, jnp.asarray(_RM_CASES[2]))
    if {"cummax", "cumsum", "cumlogsumexp"} & {e.primitive.name for e in all_eqns(
            jax.make_jaxpr(running_max)(jnp.asarray(_RM_CASES[2])))}:
        raise Wrong("the staged program uses a cumulative primitive (lax.cummax): write the "
                    "loop yourself, as a scan")
    if "scan" not in prims:
        raise Wrong(f"the right numbers, but the staged program has no scan "
                    f"({len(prims)} equations): the loop was unrolled or replaced")
    if len(prims) > 10:
        raise Wrong(f"there is a scan, but {len(prims)} equations around it for 50 elements: "
                    "part of the loop is still unrolled")
    return "one scan equation, traced once, whatever the length"


q2 = Task(LAB, 2, "A Python loop as a scan", _check_scan, [
    "jax.lax.scan(step, init, xs): step(carry, x) returns (new carry, y); the ys are stacked.",
    "The carry is the best so far; what should it start at so that any input works, even "
    "-inf or the most negative float32?",
], takes="running_max")


# ----------------------------------------------------------------- task 3: differentiable loop

def newton_sqrt(a):
    """The iteration task 3 starts from: converges, but reverse mode refuses it."""
    return jax.lax.while_loop(lambda x: jnp.abs(x * x - a) > 1e-6 * a,
                              lambda x: 0.5 * (x + a / x), a)


def _check_diff(fn) -> str:
    for a in (2.0, 9.0, 0.25, 150.0, 0.01, 2500.0, 1.0, 1e6, 1e-4):
        val = as_array(fn(jnp.float32(a)), f"at a={a}, the result")
        if val.shape != ():
            raise Wrong(f"at a={a} it returns shape {val.shape}, not a scalar")
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
    every = {e.primitive.name for e in all_eqns(jax.make_jaxpr(fn)(jnp.float32(2.0)))}
    if every & {"sqrt", "rsqrt", "pow", "cbrt", "custom_jvp_call", "custom_vjp_call"}:
        raise Wrong(f"the staged program computes a root directly "
                    f"({', '.join(sorted(every & {'sqrt', 'rsqrt', 'pow', 'cbrt'})) or 'a '
                    'custom rule'}): keep Newton's step x → (x + a/x)/2 from x = a, in a loop")
    if "while" in prims or "scan" not in prims:
        raise Wrong("the numbers are right, but keep the Newton iteration as a loop with a "
                    "fixed number of steps (a scan in the staged program, no while)")
    return "a bounded loop: a scan, which reverse mode differentiates"


q3 = Task(LAB, 3, "Make a while_loop differentiable", _check_diff, [
    "Reverse mode needs a known number of iterations: keep the Newton step, bound the loop.",
    "jax.lax.fori_loop with static (Python int) bounds is a scan underneath; how many "
    "steps does Newton need from x = a when a is a million, or 0.0001?",
], takes="newton_sqrt_differentiable")


# ----------------------------------------------------------------- task 4: a carry type

def mean_so_far_broken(xs):
    """The scan task 4 starts from: the mean of xs[:i+1] for every i. scan refuses it."""
    def step(carry, x):
        total, n = carry
        total, n = total + x, n + 1
        return (total, n), total / n
    return jax.lax.scan(step, (0, 0), xs)[1]


def _mean_ref(xs):
    xs = np.asarray(xs, np.float64)
    return np.cumsum(xs, axis=0) / np.arange(1, len(xs) + 1).reshape((-1,) + (1,) * (xs.ndim - 1))


def _mean_cases():
    rng = np.random.default_rng(9)
    return [("7 float32 numbers", jnp.asarray(rng.normal(size=7), jnp.float32)),
            ("5 bfloat16 numbers", jnp.asarray(rng.normal(size=5), jnp.bfloat16)),
            ("6 rows of 3 float32", jnp.asarray(rng.normal(size=(6, 3)), jnp.float32)),
            ("4 float16 rows of 2", jnp.asarray(rng.normal(size=(4, 2)), jnp.float16))]


def _check_carry(mean_so_far) -> str:
    for text, xs in _mean_cases():
        try:
            got = mean_so_far(xs)
        except TypeError as e:
            if "carry" in str(e):
                raise Wrong(f"for {text}, scan still refuses the carry: "
                            f"{str(e).splitlines()[0][:120]}") from None
            raise
        got_arr = as_array(got, f"for {text}, the result")
        if got_arr.shape != xs.shape:
            raise Wrong(f"for {text} the result has shape {got_arr.shape}, not {xs.shape}: one "
                        "mean per step, of the same shape as an element")
        if jnp.result_type(got) != xs.dtype:
            raise Wrong(f"for {text} the result is {jnp.result_type(got)}, not {xs.dtype}: "
                        "the carry should take its type from xs, not fix one")
        tol = 1e-5 if xs.dtype == jnp.float32 else 2e-2
        if not close(got_arr.astype(np.float64), _mean_ref(xs.astype(jnp.float32)), tol=tol):
            raise Wrong(f"for {text} the means are wrong")
    every = {e.primitive.name for e in all_eqns(jax.make_jaxpr(mean_so_far)(_mean_cases()[0][1]))}
    if "scan" not in every or "cumsum" in every:
        raise Wrong("the right means, but not from the scan: keep the loop, fix its carry")
    return ("the carry starts with the type the body gives back, whatever the dtype and "
            "shape of xs")


q4 = Task(LAB, 4, "Fix a carry type", _check_carry, [
    "Run mean_so_far_broken and read the error: scan compares the carry's type going in "
    "with the type coming out of the body, field by field (shape, dtype, weak type).",
    "scan lets a weakly typed Python 0 take the dtype the body gives back, but never a new "
    "shape; and a strongly typed start (jnp.zeros(()) is float32) fixes the dtype of all "
    "that follows. Start total as what it will become: one element of xs.",
    "The shape of it: an init built from xs (its dtype, xs.shape[1:]) for the total; "
    "the count may stay a Python int.",
], takes="mean_so_far")
