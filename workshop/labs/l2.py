"""Lab L2 "Interpret a jaxpr": the checks. The tasks are in exercises/L2-interpret-a-jaxpr.ipynb."""
from __future__ import annotations

import sys
from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import core
from jax._src.interpreters import mlir

from . import Task, Wrong, as_array, close

LAB = "L2"


# ----------------------------------------------------------------- task 1: an evaluator

_TABLE = np.arange(4.0, dtype=np.float32)

# A primitive of the check's own inside every nested jaxpr: its Python impl runs only when
# an evaluator binds it itself, with values. Binding the enclosing `jit` instead compiles it,
# and the impl never runs.
probe_p = core.Primitive("probe")
probe_p.def_impl(lambda x: _PROBED.append(1) or x)
probe_p.def_abstract_eval(lambda x: x)
mlir.register_lowering(probe_p, mlir.lower_fun(lambda x: x, multiple_results=False))
_PROBED: list = []


def _probe(x):
    return probe_p.bind(x)


def _with_consts(x):
    return jnp.tanh(x) * jnp.asarray(_TABLE) + 2.0           # a constvar and a literal


def _with_nested(x):
    inner = jax.jit(lambda v: _probe(jnp.cos(v)) * v)
    return inner(x) + inner(x * 3.0)                          # one body, used twice


def _deep(x):
    inner = jax.jit(lambda v: _probe(v * (_TABLE[:3] + 1.0)))  # a nested jaxpr with a const
    middle = jax.jit(lambda v: inner(v) - jnp.sin(v))
    outer = jax.jit(lambda v: middle(v) * 2.0 + inner(v))     # three levels deep
    return outer(x), x + 1.0


def _many_out(x):
    a, b = jnp.split(x, 2)                                    # a multiple-results primitive
    return a * b, jnp.sum(b)


_EVAL_CASES = [(_with_consts, (np.linspace(-1, 1, 4, dtype=np.float32),)),
               (_with_nested, (np.linspace(0, 2, 3, dtype=np.float32),)),
               (_deep, (np.linspace(-1, 1, 3, dtype=np.float32),)),
               (_many_out, (np.linspace(1, 2, 6, dtype=np.float32),)),
               (lambda x, y: (x @ y).max(), (np.ones((2, 3), np.float32),
                                            np.full((3, 2), 0.5, np.float32)))]


def _n_probes(jaxpr) -> int:
    return sum(e.primitive is probe_p for e in _walk(jaxpr))


def _walk(jaxpr):
    for e in jaxpr.eqns:
        yield e
        for sub in core.jaxprs_in_params(e.params):
            yield from _walk(sub)


def _jax_evaluators():
    """The code objects of JAX's own evaluators, however they were imported."""
    codes = set()
    for fn in (core.eval_jaxpr, core.jaxpr_as_fun):
        while hasattr(fn, "func") or hasattr(fn, "__wrapped__"):
            fn = getattr(fn, "func", None) or fn.__wrapped__
        if hasattr(fn, "__code__"):
            codes.add(fn.__code__)
    return codes


def _run_watched(my_eval, jaxpr, args):
    """my_eval(jaxpr, *args), noting whether JAX's eval_jaxpr ran inside it."""
    banned, seen = _jax_evaluators(), []

    def watch(frame, event, arg):
        if event == "call" and frame.f_code in banned:
            seen.append(frame.f_code.co_name)
    old = sys.getprofile()
    sys.setprofile(watch)
    try:
        got = my_eval(jaxpr, *args)
    finally:
        sys.setprofile(old)
    return got, seen


def _check_eval(my_eval) -> str:
    for f, args in _EVAL_CASES:
        closed = jax.make_jaxpr(f)(*args)
        want = jax.tree_util.tree_leaves(f(*args))
        del _PROBED[:]
        got, seen = _run_watched(my_eval, closed, args)
        if seen:
            raise Wrong(f"your evaluator calls JAX's {seen[0]}: walk the equations with "
                        "your own loop")
        if isinstance(got, (list, tuple)) and len(_PROBED) < _n_probes(closed):
            raise Wrong(f"{f.__name__}: the equations inside a nested jit never ran one by one "
                        "in your loop: binding the `jit` equation hands the whole body to "
                        "JAX. Run eqn.params['jaxpr'] with your own function")
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            raise Wrong(f"{f.__name__}: expected a list of {len(want)} output(s), got "
                        f"{type(got).__name__} of length "
                        f"{len(got) if hasattr(got, '__len__') else '?'}")
        for i, (g, w_) in enumerate(zip(got, want)):
            g = as_array(g, f"{f.__name__}: output {i}")
            if not close(g, w_):
                raise Wrong(f"{f.__name__}: output {i} is {g.tolist()}, JAX says "
                            f"{np.asarray(w_).tolist()}")
    return ("your loop agrees with JAX on constants, literals, jits nested three deep (one "
            "with its own constants, one body used twice) and a multiple-results primitive")


q1 = Task(LAB, 1, "An evaluator", _check_eval, [
    "Keep a dict from variable to value: write constvars and invars first, then each "
    "equation's outvars; a core.Literal is its own value (.val).",
    "Apply an equation with eqn.primitive.bind(*values, **eqn.params); when "
    "primitive.multiple_results is True it returns a list. For `jit`, run "
    "eqn.params['jaxpr'] (a core.Jaxpr with its own .consts) with your own function.",
    "The shape of it: a function run(jaxpr, consts, args) that fills env, loops over "
    "jaxpr.eqns, and calls itself for a `jit` equation; my_eval calls it once.",
], takes="my_eval")


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


_COUNT_CASES = [(_count_subject, (True, np.ones(3, np.float32))),
                (_count_deep, (np.linspace(-1, 1, 4, dtype=np.float32),)),
                (lambda x: jnp.sin(x) + jnp.sin(x) * x, (np.ones(2, np.float32),))]


def _check_count(count_prims) -> str:
    for f, args in _COUNT_CASES:
        closed = jax.make_jaxpr(f)(*args)
        want = reference_count(closed)
        got = count_prims(closed)
        try:
            got = Counter(dict(got))
        except (TypeError, ValueError):
            raise Wrong(f"count_prims should return a dict of name → count, got "
                        f"{type(got).__name__}") from None
        if not all(isinstance(k, str) for k in got):
            kind = next(type(k).__name__ for k in got if not isinstance(k, str))
            raise Wrong(f"the keys should be primitive names (strings, eqn.primitive.name), "
                        f"yours include a {kind}")
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool)
                   for n in got.values()):
            raise Wrong("the values should be whole numbers: how many equations apply it")
        if got != want:
            missing = sorted(set(want) - set(got))
            wrong = sorted(k for k in want if k in got and got[k] != want[k])
            extra = sorted(set(got) - set(want))
            raise Wrong(f"on a function with {f.__doc__ or 'jit, cond and loops'}: missing "
                        f"{missing}, miscounted {wrong}, unexpected {extra}")
    return "counted every primitive, inside every nested jaxpr too"


q2 = Task(LAB, 2, "A counting interpreter", _check_count, [
    "Count eqn.primitive.name for each equation, then look inside the jaxprs an equation "
    "carries in its params.",
    "core.jaxprs_in_params(eqn.params) yields every nested Jaxpr (a jit body, each cond "
    "branch, a loop body); count the outer equation itself as well.",
    "The shape of it: a recursive count(jaxpr) that adds one per equation, then adds "
    "count(sub) for each nested jaxpr; a jit body used twice is counted twice.",
], takes="count_prims")


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
    prediction = list(prediction)
    if not all(isinstance(p, str) for p in prediction):
        raise Wrong("the prediction should hold primitive names as strings, e.g. 'exp'")
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


# ----------------------------------------------------------------- task 4: a transformation

def _lu():
    from jax._src import api_util
    from jax._src import linear_util as lu
    return lu, api_util


_RUNS: list = []      # one entry each time the cached "tracer" below really runs


def _make_tracer():
    """A stand-in for a trace cache: an lu.cache'd function of a WrappedFun (as pmap's
    _cached_shard_map is on JAX 0.12; jit's trace_to_jaxpr is a weakref LRU cache on the plain
    function instead) that calls it and records that it ran."""
    lu, _ = _lu()

    @lu.cache
    def trace(fun, n):
        _RUNS.append(n)
        return tuple(np.asarray(v) for v in fun.call_wrapped(*[np.float32(i + 1)
                                                                 for i in range(n)]))
    return trace


def _lu_subjects():
    return [
        ("a dict of a pair and a scalar", lambda a, b: {"p": (a * b, a - b), "s": a + b}, 2),
        ("a bare scalar", lambda a: a * 3.0, 1),
        ("a list holding None and a nested tuple",
         lambda a, b, c: [None, (a, (b * c,)), c], 3),
        ("an empty tuple", lambda a: (), 1),
    ]


def _check_transformation(flatten_outputs) -> str:
    import inspect
    if not inspect.signature(flatten_outputs).parameters:
        raise Wrong("flatten_outputs takes (f, store, *args): the next function, the store "
                    "for the aux output, and the arguments")
    lu, api_util = _lu()
    transform = lu.transformation_with_aux2(flatten_outputs)
    trace = _make_tracer()
    for text, f, n in _lu_subjects():
        args = [np.float32(i + 1) for i in range(n)]
        want_leaves, want_tree = jax.tree.flatten(f(*args))
        results = []
        del _RUNS[:]
        for call in range(2):       # equal WrappedFuns: the second call is a cache hit
            fun = lu.wrap_init(f, debug_info=api_util.debug_info("lab L2", f, args, {}))
            fun, aux = transform(fun)
            out = trace(fun, n)
            try:
                tree = aux()
            except lu.StoreException:
                raise Wrong(f"for {text}: the store is empty after the call"
                            + (" that lu.cache answered from its cache" if call else "")
                            + ": put the tree in `store` with store.store(...); a variable "
                            "of your own is not copied back on a cache hit") from None
            results.append((out, tree))
        if len(_RUNS) != 1:
            raise Wrong(f"for {text}: two equal wrapped functions ran {len(_RUNS)} times "
                        "under lu.cache: the second should be a cache hit")
        for out, tree in results:
            if not isinstance(tree, jax.tree_util.PyTreeDef) or tree != want_tree:
                raise Wrong(f"for {text}: the aux output is {tree!r}, not the output's "
                            f"tree structure {want_tree!r}")
            if len(out) != len(want_leaves) or not all(
                    close(g, w) for g, w in zip(out, want_leaves)):
                raise Wrong(f"for {text}: the transformed function should return the "
                            f"{len(want_leaves)} leaves of f's output, flat")
        rebuilt = jax.tree.unflatten(results[1][1], results[1][0])
        if jax.tree.structure(rebuilt) != want_tree:
            raise Wrong(f"for {text}: unflattening your leaves with your tree does not give "
                        "f's output back")
    return ("leaves out, the tree in the store; on a cache hit your generator did not run, "
            "and lu.cache copied the cached store into the new one (populate_stores)")


q4 = Task(LAB, 4, "A transformation with aux output", _check_transformation, [
    "lu.transformation_with_aux2(gen) turns gen(f, store, *args) into a transformation: f is "
    "the next function in the stack, store is where the aux output goes, and what gen "
    "returns is what the transformed function returns.",
    "Call f(*args), flatten what it returns with jax.tree.flatten, store one of the two "
    "results, return the other. This is api_util.flatten_fun_nokwargs.",
    "On a cache hit lu.cache does not call your generator: it copies the stores it kept from "
    "the first call. So the only place the tree may live is `store`.",
], takes="flatten_outputs")
