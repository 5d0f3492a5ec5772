"""Lab L2 "Interpret a jaxpr": the checks. The tasks are in exercises/L2-interpret-a-jaxpr.ipynb."""
from __future__ import annotations

from collections import Counter
from unittest import mock

import jax
import jax.numpy as jnp
import numpy as np

from . import Task, Wrong, close

LAB = "L2"


# ----------------------------------------------------------------- task 1: an evaluator

_TABLE = np.arange(4.0, dtype=np.float32)


def _with_consts(x):
    return jnp.tanh(x) * jnp.asarray(_TABLE) + 2.0           # a constvar and a literal


def _with_nested(x):
    inner = jax.jit(lambda v: jnp.cos(v) * v)
    return inner(x) + inner(x * 3.0)                          # two nested jaxprs


def _many_out(x):
    a, b = jnp.split(x, 2)                                    # a multiple-results primitive
    return a * b, jnp.sum(b)


_EVAL_CASES = [(_with_consts, (np.linspace(-1, 1, 4, dtype=np.float32),)),
               (_with_nested, (np.linspace(0, 2, 3, dtype=np.float32),)),
               (_many_out, (np.linspace(1, 2, 6, dtype=np.float32),)),
               (lambda x, y: (x @ y).max(), (np.ones((2, 3), np.float32),
                                            np.full((3, 2), 0.5, np.float32)))]


def _refuse(*a, **k):
    raise Wrong("use your own loop over the equations, not JAX's eval_jaxpr or jit")


def _check_eval(my_eval) -> str:
    if not callable(my_eval):
        raise Wrong("pass your function itself: q1.check(my_eval)")
    import contextlib

    import jax.core as public_core
    from jax._src import core
    for f, args in _EVAL_CASES:
        closed = jax.make_jaxpr(f)(*args)
        want = jax.tree_util.tree_leaves(f(*args))
        with contextlib.ExitStack() as stack:
            for module in (core, public_core):
                for name in ("eval_jaxpr", "jaxpr_as_fun"):
                    if hasattr(module, name):
                        stack.enter_context(mock.patch.object(module, name, _refuse))
            got = my_eval(closed, *args)
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            raise Wrong(f"{f.__name__}: expected a list of {len(want)} output(s), got "
                        f"{type(got).__name__} of length "
                        f"{len(got) if hasattr(got, '__len__') else '?'}")
        for i, (g, w_) in enumerate(zip(got, want)):
            if not close(g, w_):
                raise Wrong(f"{f.__name__}: output {i} is {np.asarray(g).tolist()}, JAX says "
                            f"{np.asarray(w_).tolist()}")
    return ("your loop agrees with JAX on constants, literals, nested jit and a "
            "multiple-results primitive")


q1 = Task(LAB, 1, "An evaluator", _check_eval, [
    "Keep a dict from variable to value: write constvars and invars first, then each "
    "equation's outvars; a core.Literal is its own value (.val).",
    "Apply an equation with eqn.primitive.bind(*values, **eqn.params); when "
    "primitive.multiple_results is True it returns a list. For `jit`, run "
    "eqn.params['jaxpr'] (a core.Jaxpr with its own .consts) with your own function.",
])


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


_COUNT_CASES = [(_count_subject, (True, np.ones(3, np.float32))),
                (lambda x: jnp.sin(x) + jnp.sin(x) * x, (np.ones(2, np.float32),))]


def _check_count(count_prims) -> str:
    if not callable(count_prims):
        raise Wrong("pass your function itself: q2.check(count_prims)")
    for f, args in _COUNT_CASES:
        closed = jax.make_jaxpr(f)(*args)
        want = reference_count(closed)
        got = count_prims(closed)
        try:
            got = Counter(dict(got))
        except (TypeError, ValueError):
            raise Wrong(f"count_prims should return a dict of name → count, got "
                        f"{type(got).__name__}") from None
        if got != want:
            missing = sorted(set(want) - set(got))
            wrong = sorted(k for k in want if k in got and got[k] != want[k])
            extra = sorted(set(got) - set(want))
            raise Wrong(f"on a function with jit, cond and a loop: missing {missing}, "
                        f"miscounted {wrong}, unexpected {extra}")
    return "counted every primitive, inside every nested jaxpr too"


q2 = Task(LAB, 2, "A counting interpreter", _check_count, [
    "Count eqn.primitive.name for each equation, then look inside the jaxprs an equation "
    "carries in its params.",
    "core.jaxprs_in_params(eqn.params) yields every nested Jaxpr (a jit body, each cond "
    "branch, a loop body); count the outer equation itself as well.",
])


# ----------------------------------------------------------------- task 3: predict a split

def split_me(x, y):
    """The function task 3 asks about: x is known, y is unknown."""
    a = jnp.exp(x)
    b = jnp.sin(a) * y
    c = jnp.log(a + 1.0)
    return b + c


def known_half() -> list[str]:
    from jax._src.interpreters import partial_eval as pe
    closed = jax.make_jaxpr(split_me)(1.0, 2.0)
    known, *_ = pe.partial_eval_jaxpr_nounits(closed, [False, True], instantiate=False)
    return [e.primitive.name for e in known.eqns]


def _check_split(prediction) -> str:
    if prediction is None or isinstance(prediction, str) or not hasattr(prediction, "__iter__"):
        raise Wrong("the prediction should be a list of primitive names, e.g. ['exp', ...]")
    got, want = Counter(prediction), Counter(known_half())
    if got != want:
        if got - want:
            raise Wrong(f"{sorted((got - want).elements())} cannot run now: "
                        "something it reads depends on y")
        raise Wrong(f"{len(list((want - got).elements()))} more equation(s) depend only on x "
                    "and run now")
    return (f"the known half is {known_half()}: everything that reads only x; what crosses "
            "the cut are the residuals")


q3 = Task(LAB, 3, "Predict the known half", _check_split, [
    "Write split_me's jaxpr down (or print it) and mark each variable known or unknown.",
    "An equation is known when all its inputs are known; literals are known.",
])
