"""Lab L2 "Interpret a jaxpr": the checks. The tasks are in exercises/L2-interpret-a-jaxpr.ipynb.
The programs the checks run an answer on, and JAX's answers on them, are in l2_programs.py."""
from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Mapping
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import core

from . import Edge, Task, Wrong, as_array, close, exact, first_line, raised_in_attendee_code
from .l2_programs import (
    _COUNT_CASES,
    _EVAL_CASES,
    _GRAD_AT,
    _GRAD_CASE,
    _PROBED,
    _count_reference,
    _eval_reference,
    _grad_reference,
    _lu_subjects,
    probe_p,
)

LAB = "L2"
_REFS: dict = {}


def _reference(name: str, build, *args):
    """What build(*args) makes, made once in JAX's default context (32 bits, jit on): the check's
    own programs and JAX's answers on them, which an attendee's global setting (x64 turned on,
    jit disabled) cannot change."""
    if name not in _REFS:
        with jax.enable_x64(False), jax.disable_jit(False):
            _REFS[name] = build(*args)
    return _REFS[name]


# ----------------------------------------------------------------- task 1: an evaluator

def _copied(jaxpr, every: bool = True, made: dict | None = None):
    """A copy of one of the check's programs for the answer, which may change what it is given
    (pop its equations, rebind a list) without changing the program the check keeps for its
    next call: new lists of variables and equations, and a copy of each nested jaxpr (every:
    all of them; else only the bodies of `jit` equations, which an evaluator walks itself,
    so that cond, scan and while keep the bodies JAX has compiled). A jaxpr used twice is
    copied once (`made`), so it is one object in the copy too, as it prints. Variables,
    primitives and constants are shared: nothing changes them in place."""
    made = {} if made is None else made
    if id(jaxpr) in made:
        return made[id(jaxpr)]

    def param(v):
        if isinstance(v, core.Jaxpr):
            return _copied(v, every, made)
        if isinstance(v, (tuple, list)) and any(isinstance(x, core.Jaxpr) for x in v):
            return type(v)(param(x) for x in v)
        return v
    eqns = [e.replace(params={k: param(v) for k, v in e.params.items()})
            if every or e.primitive.name == "jit" else e for e in jaxpr.eqns]
    made[id(jaxpr)] = core.Jaxpr(
        constvars=list(jaxpr.constvars), invars=list(jaxpr.invars),
        outvars=list(jaxpr.outvars), eqns=eqns, effects=jaxpr.effects,
        debug_info=jaxpr.debug_info, is_high=jaxpr.is_high, consts=list(jaxpr.consts))
    return made[id(jaxpr)]


def _n_probes(jaxpr) -> int:
    """How many probes an evaluator that runs each nested jit itself runs: those inside jits
    (the bodies of cond, scan and while are JAX's to run)."""
    n = 0
    for e in jaxpr.eqns:
        n += e.primitive is probe_p
        if e.primitive.name == "jit":
            n += _n_probes(e.params["jaxpr"])
    return n


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


def _crashed(e: Exception, where: str) -> Wrong:
    """What the attendee's code raising `e` on the program `where` is, in their terms."""
    first = first_line(e)
    key = e.args[0] if isinstance(e, KeyError) and e.args else None
    if isinstance(key, core.Var):
        return Wrong(f"on {where}: your code read a {key.aval.str_short()} variable that your "
                     "environment has no value for (KeyError)")
    if isinstance(e, TypeError) and "'Literal'" in first:
        return Wrong(f"on {where}: your code raised {type(e).__name__}: {first} (a "
                     "core.Literal is not a variable: it carries its value, .val)")
    return Wrong(f"on {where}: your code raised {type(e).__name__}: {first}")


def _attendee(call, where: str):
    """call(), with what the attendee's code raises told in their terms, on `where`."""
    try:
        return call()
    except NotImplementedError:
        raise
    except Exception as e:
        if not raised_in_attendee_code(e):
            raise
        raise _crashed(e, where) from None


def _check_eval(my_eval) -> str:
    for f, where, args in _EVAL_CASES:
        closed, want = _reference(where, _eval_reference, f, args)
        del _PROBED[:]
        got, seen = _attendee(partial(_run_watched, my_eval, _copied(closed, False), args),
                              where)
        if seen:
            raise Wrong(f"your evaluator calls JAX's {seen[0]}: walk the equations with "
                        "your own loop")
        if isinstance(got, (list, tuple)) and len(_PROBED) < _n_probes(closed):
            raise Wrong(f"on {where}: the equations inside a nested jit never ran one by one "
                        "in your loop: binding the `jit` equation hands the whole body to "
                        "JAX. Run eqn.params['jaxpr'] with your own function")
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            raise Wrong(f"on {where}: expected a list of {len(want)} output(s), got "
                        f"{type(got).__name__} of length "
                        f"{len(got) if hasattr(got, '__len__') else '?'}")
        for i, (g, w_) in enumerate(zip(got, want)):
            g = as_array(g, f"on {where}: output {i}")
            if not close(g, w_):
                raise Wrong(f"on {where}: output {i} is {g.tolist()}, JAX says "
                            f"{np.asarray(w_).tolist()}")
    # the same loop on tracers: an evaluator that binds each primitive to the values it is
    # given runs under a transformation too; one that turns them into NumPy arrays does not.
    # (Not watched: JAX's own rules for some derivatives run eval_jaxpr.)
    closed, want = _reference(_GRAD_CASE, _grad_reference)
    mine = _copied(closed, False)
    got = _attendee(lambda: jax.grad(lambda v: my_eval(mine, v)[0])(_GRAD_AT), _GRAD_CASE)
    if not close(as_array(got, f"on {_GRAD_CASE}: the derivative"), want):
        raise Wrong(f"on {_GRAD_CASE}: the derivative is {np.asarray(got).tolist()}, not "
                    f"{want.tolist()}")
    return ("your loop agrees with JAX on constants, literals (among inputs and outputs), "
            "primitives of several results and of a list of one, jits nested three deep (one "
            "with its own constants, one body used twice), cond, scan and while (one reading "
            "a value from outside), and runs under jax.grad too")


q1 = Task(LAB, 1, "An evaluator", _check_eval, [
    "Keep a dict from variable to value: write constvars and invars first, then each "
    "equation's outvars; a core.Literal is its own value (.val), wherever it appears, the "
    "jaxpr's outputs included.",
    "Apply an equation with eqn.primitive.bind(*values, **eqn.params); when "
    "primitive.multiple_results is True it returns a list (perhaps of one value), whatever "
    "len(eqn.outvars) is. For `jit`, run eqn.params['jaxpr'] (a core.Jaxpr with its own "
    ".consts) with your own function; cond, scan and while you bind like any other "
    "primitive, and JAX runs their bodies.",
    "The shape of it: a function run(jaxpr, consts, args) that fills env, loops over "
    "jaxpr.eqns, and calls itself for a `jit` equation only; my_eval calls it once.",
], takes="my_eval")


# ----------------------------------------------------------------- task 2: count primitives

def _check_count(count_prims) -> str:
    for f, where, args in _COUNT_CASES:
        closed, want = _reference(where, _count_reference, f, args)
        got = count_prims(_copied(closed))
        if not isinstance(got, Mapping):
            raise Wrong(f"count_prims should return a dict of name → count, got "
                        f"{type(got).__name__}")
        got = Counter(got)
        if not all(isinstance(k, str) for k in got):
            kind = next(type(k).__name__ for k in got if not isinstance(k, str))
            raise Wrong(f"the keys should be primitive names (strings, eqn.primitive.name), "
                        f"yours include a {kind}")
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool)
                   for n in got.values()):
            raise Wrong("the values should be whole numbers: how many equations apply it")
        got = Counter(exact(dict(got)))   # (what they hold, not what their own __eq__ says)
        if got != want:
            missing = sorted(set(want) - set(got))
            wrong = sorted(k for k in want if k in got and got[k] != want[k])
            extra = sorted(set(got) - set(want))
            raise Wrong(f"on {where}: missing {missing}, miscounted {wrong}, "
                        f"unexpected {extra}")
    return ("counted every primitive, inside every nested jaxpr too (jit bodies, cond "
            "branches, scan bodies, while conditions and bodies, a custom_jvp's and a "
            "checkpoint's jaxprs)")


q2 = Task(LAB, 2, "A counting interpreter", _check_count, [
    "Count eqn.primitive.name for each equation, then look inside the jaxprs an equation "
    "carries in its params.",
    "core.jaxprs_in_params(eqn.params) yields every nested Jaxpr (a jit body, each cond "
    "branch, a scan body, a while's condition and body, a custom_jvp's call_jaxpr), "
    "whatever the param is called; count the outer equation itself as well.",
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
    return list(_reference("split", _split)[0])


def _split():
    """The primitives of the known half, and those of split_me's whole jaxpr."""
    from jax._src.interpreters import partial_eval as pe
    closed = jax.make_jaxpr(split_me)(1.0, 2.0)
    known, *_ = pe.partial_eval_jaxpr_nounits(closed, [False, True], instantiate=False)
    return [e.primitive.name for e in known.eqns], [e.primitive.name for e in closed.eqns]


def _check_split(prediction) -> str:
    if prediction is None or isinstance(prediction, str) or not hasattr(prediction, "__iter__"):
        raise Wrong("the prediction should be a list of primitive names, e.g. ['exp', ...]")
    prediction = list(prediction)
    if not all(isinstance(p, str) for p in prediction):
        raise Wrong("the prediction should hold primitive names as strings, e.g. 'exp'")
    prediction = exact(prediction)
    known, whole = _reference("split", _split)
    got, want, every = Counter(prediction), Counter(known), Counter(whole)
    if got != want:
        strange = sorted(set(got) - set(every))
        if strange:
            raise Wrong(f"{strange}: split_me's jaxpr has no equation of that name: print it "
                        "and copy the names it shows")
        over = sorted(k for k in got if got[k] > every[k])
        if over:
            raise Wrong("; ".join(f"you list {k} {got[k]} times, but split_me's jaxpr has "
                                  f"{every[k]} {k} equation(s)" for k in over)
                        + ": one entry per equation")
        extra = got - want
        if extra:
            raise Wrong(f"{sorted(extra.elements())} cannot run now: "
                        + "; ".join(f"{every[k] - want[k]} of split_me's {every[k]} {k} "
                                    "equation(s) reads something that depends on y"
                                    for k in sorted(extra)))
        raise Wrong(f"{len(list((want - got).elements()))} more equation(s) depend only on x "
                    "and run now")
    return (f"the known half is {known}: everything that reads only x; what crosses "
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


def _refuse_not_a_generator(flatten_outputs, lu) -> None:
    """Whether flatten_outputs is a plain generator of (f, store, *args), not a transformation."""
    import functools
    import inspect
    if isinstance(flatten_outputs, functools.partial) and \
            getattr(flatten_outputs.func, "__module__", "") == lu.__name__:
        raise Wrong(f"flatten_outputs is already a transformation: a decorator "
                    f"(@lu.{flatten_outputs.func.__name__}) made your generator one. Pass the "
                    "generator itself, undecorated: the check applies "
                    "lu.transformation_with_aux2 to it")
    if not inspect.signature(flatten_outputs).parameters:
        raise Wrong("flatten_outputs takes (f, store, *args): the next function, the store "
                    "for the aux output, and the arguments")


def _call_twice(transform, trace, text, f, n, args) -> tuple[list, list]:
    """Whether the store holds a tree after each of two equal calls (a miss, then a hit)."""
    import functools
    lu, api_util = _lu()
    results, calls = [], []
    del _RUNS[:]

    @functools.wraps(f)
    def counted(*a, f=f, calls=calls):
        calls.append(1)
        return f(*a)
    for call in range(2):       # equal WrappedFuns: the second call is a cache hit
        fun = lu.wrap_init(counted, debug_info=api_util.debug_info("lab L2", f, args, {}))
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
    return results, calls


def _check_counts(text, calls) -> None:
    """Whether the second call was a cache hit, and the generator called f once."""
    if len(_RUNS) != 1:
        raise Wrong(f"for {text}: two equal wrapped functions ran {len(_RUNS)} times "
                    "under lu.cache: the second should be a cache hit")
    if len(calls) != 1:
        raise Wrong(f"for {text}: your generator called f {len(calls)} times for one call "
                    "of the transformed function: call it once and take the leaves and "
                    "the tree from that one result (each call of f runs the rest of the "
                    "stack again)")


def _check_results(text, results, want_leaves, want_tree) -> None:
    """Whether each call gave f's leaves, flat, and f's tree, and the two rebuild f's output."""
    for out, tree in results:
        if not isinstance(tree, jax.tree_util.PyTreeDef) or tree != want_tree:
            raise Wrong(f"for {text}: the aux output is {tree!r}, not the output's "
                        f"tree structure {want_tree!r}")
        if len(out) != len(want_leaves):
            raise Wrong(f"for {text}: the transformed function should return the "
                        f"{len(want_leaves)} leaves of f's output, flat")
        for i, (g, w) in enumerate(zip(out, want_leaves)):
            if not close(g, w):
                raise Wrong(f"for {text}: leaf {i} is {np.asarray(g).tolist()}, but leaf "
                            f"{i} of f's output in jax.tree.flatten's order (the order "
                            f"of the tree you store) is {np.asarray(w).tolist()}")
    rebuilt = jax.tree.unflatten(results[1][1], results[1][0])
    if jax.tree.structure(rebuilt) != want_tree:
        raise Wrong(f"for {text}: unflattening your leaves with your tree does not give "
                    "f's output back")


def _under_jit(transform, e: Edge) -> None:
    """Wrong unless the transformed function runs inside jax.jit, where f's outputs are
    tracers, and gives f's leaves and its tree there too."""
    lu, api_util = _lu()
    text, f, n = e.value
    args = [np.float32(i + 1) for i in range(n)]
    want_leaves, want_tree = jax.tree.flatten(f(*args))
    fun, aux = transform(lu.wrap_init(f, debug_info=api_util.debug_info("lab L2", f, args, {})))
    try:
        out = jax.jit(lambda *a: tuple(fun.call_wrapped(*a)))(*args)
    except Exception as err:
        if not raised_in_attendee_code(err):
            raise
        raise Wrong(f"{e.name}, for {text}: your generator raised {type(err).__name__} "
                    f"({first_line(err, 120)}). Inside jit, f's outputs are tracers, not "
                    "arrays: hand the leaves on as they are, with no NumPy conversion") from None
    if aux() != want_tree or len(out) != len(want_leaves) or not all(
            close(g, w) for g, w in zip(out, want_leaves)):
        raise Wrong(f"{e.name}, for {text}: the leaves or the tree differ from f's output's")


def _check_transformation(flatten_outputs) -> str:
    lu, _ = _lu()
    _refuse_not_a_generator(flatten_outputs, lu)
    transform = lu.transformation_with_aux2(flatten_outputs)
    trace = _make_tracer()
    for text, f, n in _lu_subjects():
        args = [np.float32(i + 1) for i in range(n)]
        want_leaves, want_tree = jax.tree.flatten(f(*args))
        results, calls = _call_twice(transform, trace, text, f, n, args)
        _check_counts(text, calls)
        _check_results(text, results, want_leaves, want_tree)
    for e in EDGES["q4"]:
        _under_jit(transform, e)
    return ("leaves out, the tree in the store, under jit too; on a cache hit your generator "
            "did not run, and lu.cache copied the cached store into the new one "
            "(populate_stores)")


# The inputs each task's words call for that ordinary inputs leave untried: a row each, with
# its reason (tests/wrong_answers/l2.py holds for each a wrong answer that only it rejects)
EDGES = {
    "q4": (Edge("under jit", "the lab is about the wrappers jit puts around a function: under "
                "jit the transformed function gets tracers, and its generator must hand f's "
                "outputs on as they are (the stand-in trace above runs it on numbers)",
                ("a dict of a scalar and a pair",
                 lambda a, b: {"s": a + b, "p": (a * b, a - b)}, 2)),),
}


q4 = Task(LAB, 4, "A transformation with aux output", _check_transformation, [
    "lu.transformation_with_aux2(gen) turns gen(f, store, *args) into a transformation: f is "
    "the next function in the stack, store is where the aux output goes, and what gen "
    "returns is what the transformed function returns.",
    "Call f(*args), flatten what it returns with jax.tree.flatten, store one of the two "
    "results, return the other. api_util.flatten_fun_nokwargs does this, after unflattening "
    "the inputs.",
    "On a cache hit lu.cache does not call your generator: it copies the stores it kept from "
    "the first call. So the only place the tree may live is `store`.",
], takes="flatten_outputs")
