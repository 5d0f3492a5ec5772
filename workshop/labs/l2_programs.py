"""Lab L2: the programs its checks run an answer on, and how JAX's own answers on them are made.
Each program holds something an interpreter must handle (constants, literals, several results,
nested jits, loops); a probe primitive inside every nested jit tells whether an evaluator ran
the jit's body itself. The tasks and their checks are in l2.py."""
from __future__ import annotations

from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import core
from jax._src.interpreters import mlir

# ----------------------------------------------------------------- task 1: an evaluator

_TABLE = np.arange(4.0, dtype=np.float32)

# A primitive of the check's own inside every nested jit: its Python impl runs only when an
# evaluator binds it itself, with values. Binding the enclosing `jit` instead compiles it, and
# the impl never runs.
probe_p = core.Primitive("probe")
probe_p.def_impl(lambda x: _PROBED.append(1) or x)
probe_p.def_abstract_eval(lambda x: x)
mlir.register_lowering(probe_p, mlir.lower_fun(lambda x: x, multiple_results=False))
_PROBED: list = []


def _probe(x):
    return probe_p.bind(x)


def _with_consts(x):
    return jnp.tanh(x) * jnp.asarray(_TABLE) + 2.0           # a constvar and a literal


def _literal_out(x):
    return jnp.sin(x) * 3.0, 1.0                              # an output that is a Literal


def _many_out(x):
    a, b = jnp.split(x, 2)                                    # a multiple-results primitive
    return a * b, jnp.sum(b)


def _one_result(x):
    # cond has multiple_results: it returns a list, here of one value; both branches are taken
    up = jax.lax.cond(x.sum() > 0, lambda v: v + 1.0, lambda v: v * 2.0, x)
    down = jax.lax.cond(x.sum() < 0, lambda v: v + 1.0, lambda v: v * 2.0, x)
    return up * 3.0 - down


def _with_nested(x):
    inner = jax.jit(lambda v: (_probe(jnp.cos(v)) * v, 2.0))  # a literal among its outputs
    a, two = inner(x)
    b, _ = inner(x * 3.0)                                     # one body, used twice
    return a + b * two


def _deep(x):
    inner = jax.jit(lambda v: _probe(v * (_TABLE[::-1] + 1.0)))  # a nested jaxpr, a const
    middle = jax.jit(lambda v: inner(v) - jnp.sin(v))
    outer = jax.jit(lambda v: middle(v) * 2.0 + inner(v))     # three levels deep
    return outer(x), x + 1.0


def _scans(x):
    inner = jax.jit(lambda c: _probe(c * 0.5) + 1.0)
    c = jax.lax.fori_loop(0, 3, lambda i, c: inner(c), x)     # a scan over nothing: a counter
    def step(carry, xi):
        return carry * 0.9 + xi, carry - xi
    last, ys = jax.lax.scan(step, 0.0, c, reverse=True)       # a carry and stacked outputs
    return ys, last


def _whiles(x):
    k = x.max() + 2.0                       # a value from outside, read by cond and body
    grow = jax.lax.while_loop(lambda c: c.sum() < 20.0 * k, lambda c: c * k + 1.0, x)
    never = jax.lax.while_loop(lambda c: c.sum() < 0.0, lambda c: c + 1.0, x)  # runs 0 times
    return grow - never


def _for_grad(x):
    inner = jax.jit(lambda v: jnp.sin(v) * v)
    return (inner(x) + jnp.cos(x) * 2.0).sum()


def _for_grad_derivative(x):
    return np.cos(x) * x + np.sin(x) - 2.0 * np.sin(x)


_EVAL_CASES = [
    (_with_consts, "a program with a constant (a constvar) and a literal among an equation's "
                   "inputs", (np.linspace(-1, 1, 4, dtype=np.float32),)),
    (_literal_out, "a program with a literal among its outputs",
     (np.linspace(0, 1, 4, dtype=np.float32),)),
    (_many_out, "a program with a primitive of two results (`split`)",
     (np.linspace(1, 2, 8, dtype=np.float32),)),
    (_one_result, "a program with a `cond` (multiple_results, returning a list of one value)",
     (np.linspace(0.5, 1, 4, dtype=np.float32),)),
    (_with_nested, "a program with a nested jit used twice (a literal among its outputs)",
     (np.linspace(0, 2, 4, dtype=np.float32),)),
    (_deep, "a program with jits nested three deep, one with its own constant",
     (np.linspace(-1, 1, 4, dtype=np.float32),)),
    (_scans, "a program with loops (`scan`: a fori_loop with a jit in its body, and a "
             "reverse scan)", (np.linspace(1, 2, 4, dtype=np.float32),)),
    (_whiles, "a program with `while` loops (one runs 3 times and reads a value from "
              "outside the loop, one runs 0 times)",
     (np.linspace(0, 1, 4, dtype=np.float32),)),
    (lambda x, y: (x @ y).max(), "a program of two inputs, with dot_general and reduce_max",
     (np.linspace(-1, 1, 4, dtype=np.float32),
      np.arange(16, dtype=np.float32).reshape(4, 4) / 8)),
]


def _eval_reference(f, args):
    """The case's jaxpr, and JAX's outputs on it."""
    closed = jax.make_jaxpr(f)(*args)
    return closed, [np.asarray(v) for v in core.eval_jaxpr(closed, closed.consts, *args)]


_GRAD_AT = np.linspace(-1, 1, 4, dtype=np.float32)
_GRAD_CASE = "a program with a nested jit, under jax.grad (the cell after the check runs one)"


def _grad_reference():
    """The case's jaxpr, and its derivative worked out by hand (JAX's would compile more)."""
    return (jax.make_jaxpr(_for_grad)(_GRAD_AT),
            _for_grad_derivative(_GRAD_AT.astype(np.float64)))


# ----------------------------------------------------------------- task 2: count primitives

def reference_count(jaxpr) -> Counter:
    from jax._src import core
    counts = Counter()
    for eqn in jaxpr.eqns:
        counts[eqn.primitive.name] += 1
        for sub in core.jaxprs_in_params(eqn.params):
            counts += reference_count(sub)
    return counts


def _count_subject(p, x):
    y = jax.jit(lambda v: jnp.sin(v) * 2.0)(x)
    z = jax.lax.cond(p, lambda v: jnp.exp(v) + 1.0, lambda v: -v, y)
    return jax.lax.fori_loop(0, 3, lambda i, c: c * jnp.cos(c), z).sum()


def _count_deep(x):
    inner = jax.jit(lambda v: jnp.tanh(v) * 2.0)
    def body(c, xi):                                          # a jit inside a cond in a scan
        c = jax.lax.cond(xi > 0, lambda c: inner(c) + xi, lambda c: c - xi, c)
        return c, inner(c)
    c, ys = jax.lax.scan(body, x[0], x)
    return c + inner(ys).sum()                                # one jit body, used thrice


def _count_while(x, n):
    small = jax.jit(lambda v: jnp.abs(v).max())
    def body(c):                                              # a cond in the body
        return jax.lax.cond(small(c) > 1.0, lambda v: v * 0.5, lambda v: jnp.exp(v), c)
    y = jax.lax.while_loop(lambda c: small(c) < 4.0, body, x)  # a jit in the condition
    i, z = jax.lax.fori_loop(0, n, lambda i, c: (c[0] + 1, jnp.log1p(c[1])), (0, y))
    return z * i


def _count_custom(x):
    return jax.nn.relu(x) + jax.checkpoint(lambda v: jnp.sin(v) * 2.0)(x)


_COUNT_CASES = [
    (_count_subject, "a function with jit, cond and a loop", (True, np.ones(3, np.float32))),
    (_count_deep, "a function with a jit inside a cond inside a scan",
     (np.linspace(-1, 1, 4, dtype=np.float32),)),
    (_count_while, "a function with `while` loops (a jit in one's condition, a cond in its "
                   "body)", (np.linspace(-1, 1, 4, dtype=np.float32), 5)),
    (lambda x: jnp.sin(x) + jnp.sin(x) * x, "a function that applies sin twice",
     (np.ones(2, np.float32),)),
    (_count_custom, "a function with a custom_jvp (jax.nn.relu: its call_jaxpr holds a jit) "
                    "and a jax.checkpoint", (np.linspace(-1, 1, 4, dtype=np.float32),)),
]


def _count_reference(f, args):
    closed = jax.make_jaxpr(f)(*args)
    return closed, reference_count(closed)


# ----------------------------------------------------------------- task 4: a transformation

def _lu_subjects():
    return [
        # its keys not in sorted order: jax.tree.flatten sorts them
        ("a dict of a scalar and a pair", lambda a, b: {"s": a + b, "p": (a * b, a - b)}, 2),
        ("a bare scalar", lambda a: a * 3.0, 1),
        ("a list holding None and a nested tuple",
         lambda a, b, c: [None, (a, (b * c,)), c], 3),
        ("an empty tuple", lambda a: (), 1),
    ]
