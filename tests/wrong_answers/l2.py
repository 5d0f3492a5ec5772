"""Lab L2: plausible wrong answers its checks must reject, each with the words its rejection
must say, and right answers written differently from the solution that they must accept
(tests/test_labs.py runs both)."""
from __future__ import annotations

import re
from collections import Counter

import jax
import numpy as np
from jax._src import core
from jax._src import linear_util as lu
from jax._src.core import eval_jaxpr  # imported by name before any check could patch it

from wrong_answers import LiarInt, W


def _starter(*args, **kwargs):
    raise NotImplementedError()


# ----------------------------------------------------------------- task 1: an evaluator

def _evaluator(literals=True, literal_outputs=True, consts=True, multi=True, nested=True,
               outputs=None, bind_jit=False, inner_consts=True, one_level=False,
               any_jaxpr=False, multi_by_outvars=False, open_cond=False, flip_branches=False,
               open_while=False, do_while=False, unwrap_one=False):
    """The solution's shape, with one mistake switched on by name."""
    def my_eval(closed, *args):
        def run(jaxpr, cs, xs, depth=0):
            env = {}

            def read(v):
                return v.val if literals and isinstance(v, core.Literal) else env[v]

            def read_out(v):
                return read(v) if literal_outputs else env[v]
            if consts:
                env.update(zip(jaxpr.constvars, cs))
            env.update(zip(jaxpr.invars, xs))
            for eqn in jaxpr.eqns:
                ins = [read(v) for v in eqn.invars]
                inner = eqn.params.get("jaxpr")
                name = eqn.primitive.name
                if any_jaxpr and inner is not None:             # a scan body too
                    outs = run(inner, inner.consts, ins, depth + 1)
                elif name == "jit" and nested and not bind_jit and not (one_level and depth):
                    outs = run(inner, inner.consts if inner_consts else [], ins, depth + 1)
                elif name == "jit" and not nested:
                    outs = ins
                elif name == "cond" and open_cond:
                    index, *ops = ins
                    branch = eqn.params["branches"][
                        (1 - int(index)) if flip_branches else int(index)]
                    outs = run(branch, branch.consts, ops, depth + 1)
                elif name == "while" and open_while:
                    p = eqn.params
                    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
                    cc = ins[:p["cond_nconsts"]]
                    bc = ins[p["cond_nconsts"]:p["cond_nconsts"] + p["body_nconsts"]]
                    carry = ins[p["cond_nconsts"] + p["body_nconsts"]:]
                    if do_while:                                # the body runs at least once
                        carry = run(bj, bj.consts, [*bc, *carry], depth + 1)
                    while bool(run(cj, cj.consts, [*cc, *carry], depth + 1)[0]):
                        carry = run(bj, bj.consts, [*bc, *carry], depth + 1)
                    outs = carry
                else:
                    outs = eqn.primitive.bind(*ins, **eqn.params)
                    several = (len(eqn.outvars) > 1 if multi_by_outvars
                               else eqn.primitive.multiple_results)
                    outs = outs if (several and multi) else [outs]
                env.update(zip(eqn.outvars, outs))
            res = [read_out(v) for v in jaxpr.outvars]
            return res[:outputs] if outputs else res
        res = run(closed, closed.consts, args)
        return res[0] if unwrap_one and len(res) == 1 else res
    return my_eval


def _uses_jax(closed, *args):
    return core.eval_jaxpr(closed, closed.consts, *args)


def _uses_jax_by_name(closed, *args):          # sidestep: the name imported before the check
    return eval_jaxpr(closed, closed.consts, *args)


def _uses_jaxpr_as_fun(closed, *args):         # sidestep: JAX's other evaluator
    return core.jaxpr_as_fun(closed)(*args)


# ----------------------------------------------------------------- task 2: count primitives

def _count(recurse=True, outer=True, only_jit=False, one_level=False, primitive_keys=False,
           unique=False, params=None, per_output=False, as_float=False, trips=False):
    """The solution's shape, with one mistake switched on by name. params: the names of the
    params it looks in for nested jaxprs (None: core.jaxprs_in_params, all of them)."""
    def count_prims(closed):
        seen = set()

        def subjaxprs(eqn):
            if params is None:
                return list(core.jaxprs_in_params(eqn.params))
            found = []
            for k in params:
                v = eqn.params.get(k)
                found += list(v) if isinstance(v, tuple) else [] if v is None else [v]
            return found

        def go(jaxpr, depth=0):
            c = Counter()
            for eqn in jaxpr.eqns:
                subs = subjaxprs(eqn) if recurse else []
                if only_jit and eqn.primitive.name != "jit":
                    subs = []
                if one_level and depth:
                    subs = []
                if outer or not subs:
                    n = len(eqn.outvars) if per_output else 1
                    c[eqn.primitive if primitive_keys else eqn.primitive.name] += n
                times = eqn.params.get("length", 1) if trips else 1   # a scan's trip count
                for sub in subs:
                    if unique and id(sub) in seen:
                        continue
                    seen.add(id(sub))
                    for _ in range(times):
                        c += go(sub, depth + 1)
            return {k: float(v) for k, v in c.items()} if as_float else c
        return dict(go(closed))
    return count_prims


# ----------------------------------------------------------------- task 4: a transformation

def _flatten(store_what="tree", return_what="leaves", store_twice=False):
    def flatten_outputs(f, store, *args):
        ans = f(*args)
        leaves, tree = jax.tree.flatten(ans)
        if store_what == "tree":
            store.store(tree)
        elif store_what == "count":
            store.store(len(leaves))
        elif store_what == "output":
            store.store(ans)
        elif store_what == "leaves' tree":
            store.store(jax.tree.structure(leaves))
        elif store_what == "args' tree":
            store.store(jax.tree.structure(args))
        if store_twice:
            store.store(tree)
        return leaves if return_what == "leaves" else ans
    return flatten_outputs


_KEPT = {}


def _flatten_in_a_dict(f, store, *args):       # sidestep: aux kept outside the store
    leaves, _KEPT["tree"] = jax.tree.flatten(f(*args))
    store.store(_KEPT["tree"]) if False else None
    return leaves


def _flatten_by_hand(f, store, *args):         # flattens tuples only, one level
    ans = f(*args)
    leaves = list(ans) if isinstance(ans, (tuple, list)) else [ans]
    store.store(jax.tree.structure(ans))
    return leaves


def _flatten_none_a_leaf(f, store, *args):     # None is an empty subtree, not a leaf
    leaves, tree = jax.tree.flatten(f(*args), is_leaf=lambda x: x is None)
    store.store(tree)
    return leaves


# ----------------------------------------------------------------- ring 2
# Wrong answers written by an independent tester after reading the tasks and their checks
# (tests/wrong_answers/ring2/l2.py, issue 29), moved here with their code unchanged.


# ------------------------------------------------- ring 2, q1: an evaluator


def _read(env, v):
    return v.val if isinstance(v, core.Literal) else env[v]


# Recurses into any equation that has a "jaxpr" param, not only `jit`: a scan's body then
# runs once, on the whole xs, instead of once per element.
def eval_any_jaxpr_param(closed, *args):
    def run(jaxpr, consts, xs):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, xs))
        for eqn in jaxpr.eqns:
            ins = [_read(env, v) for v in eqn.invars]
            inner = eqn.params.get("jaxpr")
            if inner is not None:                       # jit, scan, remat2, ...
                outs = run(inner, inner.consts, ins)
            else:
                outs = eqn.primitive.bind(*ins, **eqn.params)
                outs = outs if eqn.primitive.multiple_results else [outs]
            env.update(zip(eqn.outvars, outs))
        return [_read(env, v) for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


# Decides "several results" by counting the equation's outvars: a multiple-results primitive
# with one output (cond, while, a one-output scan) gets its list wrapped in another list.
def eval_multi_by_outvars(closed, *args):
    def run(jaxpr, consts, xs):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, xs))
        for eqn in jaxpr.eqns:
            ins = [_read(env, v) for v in eqn.invars]
            if eqn.primitive.name == "jit":
                inner = eqn.params["jaxpr"]
                outs = run(inner, inner.consts, ins)
            else:
                outs = eqn.primitive.bind(*ins, **eqn.params)
                outs = outs if len(eqn.outvars) > 1 else [outs]
            env.update(zip(eqn.outvars, outs))
        return [_read(env, v) for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


# Reads literals among an equation's inputs, but looks every output up in env: a function
# that returns a constant (a Literal among jaxpr.outvars) raises (a Literal is unhashable).
def eval_literal_outputs(closed, *args):
    def run(jaxpr, consts, xs):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, xs))
        for eqn in jaxpr.eqns:
            ins = [_read(env, v) for v in eqn.invars]
            if eqn.primitive.name == "jit":
                inner = eqn.params["jaxpr"]
                outs = run(inner, inner.consts, ins)
            else:
                outs = eqn.primitive.bind(*ins, **eqn.params)
                outs = outs if eqn.primitive.multiple_results else [outs]
            env.update(zip(eqn.outvars, outs))
        return [env[v] for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


# "Run nested jaxprs with my own function", generalised: any equation that carries a jaxpr
# runs the first one it carries. Right for jit; for cond it runs branch 0 on the index, for
# while it runs the loop's condition once, for scan the body once.
def eval_first_nested(closed, *args):
    def run(jaxpr, consts, xs):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, xs))
        for eqn in jaxpr.eqns:
            ins = [_read(env, v) for v in eqn.invars]
            subs = list(core.jaxprs_in_params(eqn.params))
            if subs:
                outs = run(subs[0], subs[0].consts, ins)
            else:
                outs = eqn.primitive.bind(*ins, **eqn.params)
                outs = outs if eqn.primitive.multiple_results else [outs]
            env.update(zip(eqn.outvars, outs))
        return [_read(env, v) for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


# Keeps plain NumPy values in env (np.asarray on every write): the numbers are right, but
# the interpreter no longer composes with transforms: jax.grad(lambda x: my_eval(j, x)[0])
# (the lab's next cell) raises TracerArrayConversionError.
def eval_numpy_env(closed, *args):
    def run(jaxpr, consts, xs):
        env = {}

        def write(vs, vals):
            for v, val in zip(vs, vals):
                env[v] = np.asarray(val)
        write(jaxpr.constvars, consts)
        write(jaxpr.invars, xs)
        for eqn in jaxpr.eqns:
            ins = [_read(env, v) for v in eqn.invars]
            if eqn.primitive.name == "jit":
                inner = eqn.params["jaxpr"]
                outs = run(inner, inner.consts, ins)
            else:
                outs = eqn.primitive.bind(*ins, **eqn.params)
                outs = outs if eqn.primitive.multiple_results else [outs]
            write(eqn.outvars, outs)
        return [_read(env, v) for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


# Sidestep: the primitives it knows are computed with NumPy instead of bound; bind is only
# the fallback. Right numbers on concrete inputs, but jax.grad / jax.jit through it fail
# (np.sin of a tracer), and it evaluates none of those equations the JAX way.
_NUMPY = {"sin": np.sin, "cos": np.cos, "tanh": np.tanh, "exp": np.exp, "log": np.log,
          "mul": np.multiply, "add": np.add, "sub": np.subtract, "neg": np.negative,
          "max": np.maximum}


def eval_numpy_table(closed, *args):
    def run(jaxpr, consts, xs):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, xs))
        for eqn in jaxpr.eqns:
            ins = [_read(env, v) for v in eqn.invars]
            name = eqn.primitive.name
            if name == "jit":
                inner = eqn.params["jaxpr"]
                outs = run(inner, inner.consts, ins)
            elif name in _NUMPY:
                outs = [_NUMPY[name](*ins)]
            else:
                outs = eqn.primitive.bind(*ins, **eqn.params)
                outs = outs if eqn.primitive.multiple_results else [outs]
            env.update(zip(eqn.outvars, outs))
        return [_read(env, v) for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


# Runs `while` itself (condition and body with its own function) but takes every input of
# the equation as the carry: right while the loop closes over nothing, wrong when it reads a
# value from outside (cond_nconsts / body_nconsts > 0):
# lax.while_loop(lambda c: c.sum() < k * 5, lambda c: c * k, x) with k an argument.
def eval_own_while_no_consts(closed, *args):
    def run(jaxpr, consts, xs):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, xs))
        for eqn in jaxpr.eqns:
            ins = [_read(env, v) for v in eqn.invars]
            name = eqn.primitive.name
            if name == "jit":
                inner = eqn.params["jaxpr"]
                outs = run(inner, inner.consts, ins)
            elif name == "while":
                cj, bj = eqn.params["cond_jaxpr"], eqn.params["body_jaxpr"]
                outs = ins
                while run(cj, cj.consts, outs)[0]:
                    outs = run(bj, bj.consts, outs)
            else:
                outs = eqn.primitive.bind(*ins, **eqn.params)
                outs = outs if eqn.primitive.multiple_results else [outs]
            env.update(zip(eqn.outvars, outs))
        return [_read(env, v) for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


# (right) Runs `while` itself, splitting off the condition's and the body's constants.
def eval_own_while(closed, *args):
    def run(jaxpr, consts, xs):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, xs))
        for eqn in jaxpr.eqns:
            ins = [_read(env, v) for v in eqn.invars]
            name = eqn.primitive.name
            if name == "jit":
                inner = eqn.params["jaxpr"]
                outs = run(inner, inner.consts, ins)
            elif name == "while":
                p = eqn.params
                cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
                cc, bc = ins[:p["cond_nconsts"]], ins[p["cond_nconsts"]:][:p["body_nconsts"]]
                outs = ins[p["cond_nconsts"] + p["body_nconsts"]:]
                while run(cj, cj.consts, [*cc, *outs])[0]:
                    outs = run(bj, bj.consts, [*bc, *outs])
            else:
                outs = eqn.primitive.bind(*ins, **eqn.params)
                outs = outs if eqn.primitive.multiple_results else [outs]
            env.update(zip(eqn.outvars, outs))
        return [_read(env, v) for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


# ------------------------------------------------- ring 2, q2: count primitives


def _counter(subjaxprs, name):
    """count_prims that looks for nested jaxprs with subjaxprs(eqn) only."""
    def count_prims(closed):
        def go(jaxpr):
            c = Counter()
            for eqn in jaxpr.eqns:
                c[eqn.primitive.name] += 1
                for sub in subjaxprs(eqn):
                    c += go(sub)
            return c
        return dict(go(closed))
    count_prims.__name__ = count_prims.__qualname__ = name
    return count_prims


# Looks inside params["jaxpr"] and params["branches"] only: a while loop's cond_jaxpr and
# body_jaxpr, and a custom_jvp/custom_vjp's call_jaxpr, are never counted.
def _jaxpr_and_branches(eqn):
    p = eqn.params
    return ([p["jaxpr"]] if "jaxpr" in p else []) + list(p.get("branches", ()))


count_jaxpr_and_branches = _counter(_jaxpr_and_branches, "count_jaxpr_and_branches")


# A hand-written list of param names that knows while's body but not its condition, nor
# custom_jvp_call's call_jaxpr (jax.nn.relu is one).
def _named_params(eqn):
    p = eqn.params
    subs = [p[k] for k in ("jaxpr", "body_jaxpr") if k in p]
    return subs + list(p.get("branches", ()))


count_named_params = _counter(_named_params, "count_named_params")


# A complete-looking list of param names (jit's and scan's jaxpr, cond's branches, while's
# cond_jaxpr and body_jaxpr) without custom_jvp_call's / custom_vjp_call's call_jaxpr:
# jax.nn.relu(x) (a custom_jvp around a jit around max) counts custom_jvp_call only.
def _known_param_names(eqn):
    p = eqn.params
    subs = [p[k] for k in ("jaxpr", "cond_jaxpr", "body_jaxpr") if k in p]
    return subs + list(p.get("branches", ()))


count_known_param_names = _counter(_known_param_names, "count_known_param_names")


# Recurses into a param only when the param itself is a jaxpr: cond's `branches` is a tuple
# of jaxprs, so no branch is ever counted.
def _jaxpr_params_no_tuples(eqn):
    return [v for v in eqn.params.values() if isinstance(v, core.Jaxpr)]


count_no_tuples = _counter(_jaxpr_params_no_tuples, "count_no_tuples")


# Counts a loop body once per iteration (scan's `length` times): the task counts equations,
# not executions.
def count_loop_iterations(closed):
    def go(jaxpr):
        c = Counter()
        for eqn in jaxpr.eqns:
            c[eqn.primitive.name] += 1
            times = eqn.params.get("length", 1) if eqn.primitive.name == "scan" else 1
            for sub in core.jaxprs_in_params(eqn.params):
                for _ in range(times):
                    c += go(sub)
        return c
    return dict(go(closed))


# Sidestep: counts the primitive names after "=" in the printed jaxpr. The printer shows a
# jit body used twice once, as `let lambda = { ... } in`, so its equations count once.
_EQN = re.compile(r"=\s+([a-z_][a-z0-9_]*)\b")


def count_from_text(closed):
    return dict(Counter(_EQN.findall(str(closed))))


# ------------------------------------------------- ring 2, q3: predict the split
# The known half of split_me is ["exp", "sin", "add", "log"] (any order).

PRED_TYPO = ["exp", "sin", "add", "logg"]                     # a typo in a right prediction
PRED_DUPLICATE = ["exp", "exp", "sin", "add", "log"]          # one name written twice
PRED_LOG1P = ["exp", "sin", "add", "log1p"]                   # jnp's idea of log(a + 1)
PRED_CONVERT = ["exp", "sin", "add", "log", "convert_element_type"]   # a convert for 1.0
PRED_OPERATORS = ["exp", "sin", "+", "log"]                   # the Python operator, not add
PRED_NO_SIN = ["exp", "add", "log"]                           # sin(a) * y taken as one step
PRED_CAPITALISED = ["Exp", "Sin", "Add", "Log"]               # names in another case


# ------------------------------------------------- ring 2, q4: aux output

# Decorated like the lab's scale_inputs example: flatten_outputs is then already a
# transformation (it takes a WrappedFun), not the generator the task asks for.
@lu.transformation_with_aux2
def flatten_decorated(f, store, *args):
    leaves, tree = jax.tree.flatten(f(*args))
    store.store(tree)
    return leaves


# Calls f twice (once for the leaves, once for the tree): under a trace every equation of f
# is traced twice, and a side effect in f (a print, an append) happens twice per call.
def flatten_calls_twice(f, store, *args):
    store.store(jax.tree.structure(f(*args)))
    return jax.tree.leaves(f(*args))


# Flattens by hand, recursively, visiting a dict in insertion order; JAX flattens a dict in
# sorted key order. Right on {"p": ..., "s": ...} (already sorted), wrong on
# lambda a, b: {"s": a + b, "p": a * b}: the leaves come out in another order than the tree.
def flatten_recursive_by_hand(f, store, *args):
    out = f(*args)

    def leaves(v):
        if v is None:
            return []
        if isinstance(v, (tuple, list)):
            return [x for item in v for x in leaves(item)]
        if isinstance(v, dict):
            return [x for item in v.values() for x in leaves(item)]
        return [v]
    store.store(jax.tree.structure(out))
    return leaves(out)


# Treats None as a leaf (is_leaf=lambda v: v is None): an output holding None returns one
# leaf too many, and a tree that does not match JAX's (f = lambda a: [None, a]).
def flatten_none_as_leaf(f, store, *args):
    leaves, tree = jax.tree.flatten(f(*args), is_leaf=lambda v: v is None)
    store.store(tree)
    return leaves


# Stores the tree of the arguments instead of the output's.
def flatten_stores_input_tree(f, store, *args):
    store.store(jax.tree.structure(args))
    return jax.tree.leaves(f(*args))


# Flattens one level only: the children of the top container are the "leaves"
# ({"p": (a, b), "s": c} gives [(a, b), c]).
def flatten_one_level(f, store, *args):
    out = f(*args)
    leaves, tree = jax.tree.flatten(out, is_leaf=lambda v: v is not out)
    store.store(tree)
    return leaves


def _flatten_numpy_leaves(f, store, *args):    # a tuple of NumPy leaves, the tree stored last
    leaves, treedef = jax.tree.flatten(f(*args))
    try:
        return tuple(np.asarray(leaf) for leaf in leaves)
    finally:
        store.store(treedef)


WRONG = {
    "q1": [
        W(_starter, "not done yet"),
        # a Literal used as a key of the environment, on an equation's input 2.0
        W(_evaluator(literals=False), "unhashable type: 'Literal'"),
        # constvars never written: jnp.asarray(_TABLE) is read from an empty slot
        W(_evaluator(consts=False), "a constant (a constvar)"),
        # split's list of two written as one value: the second result never written
        W(_evaluator(multi=False), "two results"),
        # a jit taken for the identity: its two outputs come from one input
        W(_evaluator(nested=False), "nested jit used twice"),
        # the first output only, on a program of two outputs
        W(_evaluator(outputs=1), "expected a list of 2 output(s)"),
        # binds the jit equation: JAX compiles the body, the loop never runs it
        W(_evaluator(bind_jit=True), "never ran one by one"),
        # a nested jit's own .consts not passed: its constvar is read unwritten
        W(_evaluator(inner_consts=False), "one with its own constant"),
        # opens the outer jit only: the ones inside it are bound whole
        W(_evaluator(one_level=True), "jits nested three deep"),
        W(_uses_jax, "calls JAX's eval_jaxpr"),
        W(_uses_jax_by_name, "calls JAX's eval_jaxpr"),
        W(_uses_jaxpr_as_fun, "calls JAX's eval_jaxpr"),
        # recurses into any `jaxpr` param: a scan's body runs once, on the whole of xs
        W(_evaluator(any_jaxpr=True), "loops (`scan`"),
        # "several results" taken from len(eqn.outvars): cond's list of one kept as a list
        W(_evaluator(multi_by_outvars=True), "a list of one value"),
        # literals read as values in equations' inputs but looked up in env as outputs
        W(_evaluator(literal_outputs=False), "a literal among its outputs"),
        # opens cond itself, taking branches as (true, false): index 0 is the false branch
        W(_evaluator(open_cond=True, flip_branches=True), "`cond`"),
        # opens while itself as a do-while: a loop whose condition is false at once still
        # runs its body
        W(_evaluator(open_while=True, do_while=True), "one runs 0 times"),
        # a program of one output returned bare, not as a list of one
        W(_evaluator(unwrap_one=True), "expected a list of 1 output(s), got ArrayImpl"),
        # ring 2
        W(eval_any_jaxpr_param, "loops (`scan`"),
        W(eval_multi_by_outvars, "a list of one value"),
        W(eval_literal_outputs, "a literal among its outputs"),
        W(eval_first_nested, "on a program with a `cond`"),
        W(eval_numpy_env, "under jax.grad"),
        W(eval_numpy_table, "under jax.grad"),
        W(eval_own_while_no_consts, "reads a value from outside the loop"),
    ],
    "q2": [
        W(_starter, "not done yet"),
        W(_count(recurse=False), "missing ['add', 'cos', 'exp', 'mul', 'neg', 'sin']"),
        W(_count(outer=False), "missing ['cond', 'jit', 'scan']"),
        W(_count(only_jit=True), "missing ['add', 'cos', 'exp', 'neg']"),
        W(_count(one_level=True), "a jit inside a cond inside a scan"),
        W(_count(primitive_keys=True), "yours include a Primitive"),
        W(_count(unique=True), "miscounted ['mul', 'tanh']"),
        W(lambda closed: Counter(e.primitive.name for e in closed.eqns).most_common(),
          "should return a dict of name → count, got list"),
        # looks in params named `jaxpr` and `branches` only: while's cond_jaxpr and
        # body_jaxpr are missed
        W(_count(params=("jaxpr", "branches")), "`while` loops"),
        # looks in params named `jaxpr` only: cond's branches are missed
        W(_count(params=("jaxpr",)), "missing ['exp', 'neg']"),
        # a while's body counted, its condition not
        W(_count(params=("jaxpr", "branches", "body_jaxpr")), "a jit in one's condition"),
        # a scan body counted once per trip: executions, not equations
        W(_count(trips=True), "miscounted ['add', 'cos', 'mul']"),
        # one per output variable, not one per equation (a scan has two)
        W(_count(per_output=True), "miscounted ['scan']"),
        W(_count(as_float=True), "whole numbers"),
        # ring 2
        W(count_jaxpr_and_branches, "`while` loops"),
        W(count_named_params, "missing ['lt']"),
        W(count_known_param_names, "a custom_jvp"),
        W(count_no_tuples, "missing ['exp', 'neg']"),
        W(count_loop_iterations, "miscounted ['add', 'cos', 'mul']"),
        W(count_from_text, "miscounted ['mul', 'tanh']"),
        # hostile: every name, each count a value that claims to equal any count
        W(lambda closed: {k: LiarInt(0) for k in _count_stack(closed)}, "miscounted ['"),
    ],
    "q3": [
        W(["exp", "sin", "mul", "add", "log"], "['mul'] cannot run now"),
        W(["exp"], "3 more equation(s) depend only on x"),
        W(["exp", "sin", "add", "log", "add"], "['add'] cannot run now: 1 of split_me's 2 add"),
        W("exp sin add log", "a list of primitive names"),
        W(None, "a list of primitive names"),
        W([["exp"], "sin", "add", "log"], "names as strings"),
        W(["exp", "sin", "log"], "1 more equation(s) depend only on x"),
        # a typo: no primitive of that name in the jaxpr (was told "depends on y")
        W(["exp", "sine", "add", "log"], "['sine']: split_me's jaxpr has no equation of that"),
        # names written as the jnp functions, capitalised
        W(["Exp", "Sin", "Add", "Log"], "has no equation of that name"),
        # a name listed twice that the jaxpr applies once (was told "depends on y")
        W(["exp", "exp", "sin", "add", "log"], "you list exp 2 times, but split_me's jaxpr "
                                               "has 1 exp"),
        W(["exp", "sin", "add", "log", "log"], "you list log 2 times"),
        # the whole program
        W(["exp", "sin", "mul", "add", "log", "add"], "cannot run now"),
        # the unknown half instead of the known one
        W(["mul", "add"], "['mul'] cannot run now"),
        # ring 2
        W(PRED_TYPO, "['logg']: split_me's jaxpr has no equation of that name"),
        W(PRED_DUPLICATE, "you list exp 2 times"),
        W(PRED_LOG1P, "['log1p']: split_me's jaxpr has no equation of that name"),
        W(PRED_CONVERT, "['convert_element_type']: split_me's jaxpr has no equation"),
        W(PRED_OPERATORS, "['+']: split_me's jaxpr has no equation"),
        W(PRED_NO_SIN, "1 more equation(s) depend only on x"),
        W(PRED_CAPITALISED, "has no equation of that name"),
    ],
    "q4": [
        W(_starter, "not done yet"),
        W(_flatten(store_what="none"), "the store is empty after the call"),
        W(_flatten(store_what="count"), "the aux output is 3, not the output's tree"),
        W(_flatten(return_what="tree"), "should return the 3 leaves"),
        W(_flatten(store_twice=True), "Store occupied"),
        W(_flatten_in_a_dict, "a variable of your own is not copied back"),
        W(_flatten_by_hand, "should return the 3 leaves"),
        W(lambda: None, "flatten_outputs takes (f, store, *args)"),
        # the output itself stored, not its structure
        W(_flatten(store_what="output"), "the aux output is {'s'"),
        # the structure of the flat list of leaves, not of the output
        W(_flatten(store_what="leaves' tree"), "the aux output is PyTreeDef([*, *, *])"),
        # the structure of the arguments
        W(_flatten(store_what="args' tree"), "the aux output is PyTreeDef((*, *))"),
        # None flattened as a leaf
        W(_flatten_none_a_leaf, "for a list holding None"),
        # ring 2
        W(flatten_decorated, "already a transformation"),
        W(flatten_calls_twice, "called f 2 times"),
        W(flatten_recursive_by_hand, "in jax.tree.flatten's order"),
        W(flatten_none_as_leaf, "for a list holding None"),
        W(flatten_stores_input_tree, "the aux output is PyTreeDef((*, *))"),
        W(flatten_one_level, "the aux output is PyTreeDef({'p': *, 's': *})"),
        # NumPy copies of the leaves "to be safe": right on numbers, refused under jit (the
        # review's; the kit's own right answer did this too)
        W(_flatten_numpy_leaves, "under jit, for a dict of a scalar and a pair: your generator "
          "raised TracerArrayConversionError", edge="under jit"),
    ],
}


# ----------------------------------------------------------------- right answers

def _eval_recursive_env(closed, *args):
    def run(jaxpr, consts, args):
        env = dict(zip([*jaxpr.constvars, *jaxpr.invars], [*consts, *args]))
        for eqn in jaxpr.eqns:
            vals = [v.val if type(v) is core.Literal else env[v] for v in eqn.invars]
            if eqn.primitive.name == "jit":
                out = run(eqn.params["jaxpr"], eqn.params["jaxpr"].consts, vals)
            else:
                out = eqn.primitive.bind(*vals, **eqn.params)
                if not eqn.primitive.multiple_results:
                    out = [out]
            for v, x in zip(eqn.outvars, out):
                env[v] = x
        return [v.val if isinstance(v, core.Literal) else env[v] for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


def _eval_stack(closed, *args):                # the nested jaxprs kept on an explicit stack
    def run(jaxpr, consts, args):
        env = {}
        def write(vs, xs):
            for v, x in zip(vs, xs):
                env[v] = x
        write(jaxpr.constvars, consts)
        write(jaxpr.invars, args)
        for eqn in jaxpr.eqns:
            ins = [env[v] if not isinstance(v, core.Literal) else v.val for v in eqn.invars]
            sub = eqn.params.get("jaxpr") if eqn.primitive.name == "jit" else None
            outs = run(sub, sub.consts, ins) if sub is not None else \
                eqn.primitive.bind(*ins, **eqn.params)
            write(eqn.outvars, outs if (sub is not None or eqn.primitive.multiple_results)
                  else [outs])
        return [env[v] if not isinstance(v, core.Literal) else v.val for v in jaxpr.outvars]
    return run(closed, closed.consts, args)


def _eval_var_check(closed, *args):            # tells a Var from a Literal, not the reverse
    def run(jaxpr, consts, args):
        env = dict(zip(jaxpr.all_invars, [*consts, *args]))
        get = lambda v: env[v] if isinstance(v, core.Var) else v.val
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "jit":
                sub = eqn.params["jaxpr"]
                outs = run(sub, sub.consts, map(get, eqn.invars))
            else:
                outs = eqn.primitive.bind(*map(get, eqn.invars), **eqn.params)
                if not eqn.primitive.multiple_results:
                    outs = (outs,)
            env.update(zip(eqn.outvars, outs))
        return list(map(get, jaxpr.outvars))
    return run(closed, closed.consts, list(args))


def _count_stack(closed):
    counts, todo = {}, [closed]
    while todo:
        jaxpr = todo.pop()
        for eqn in jaxpr.eqns:
            counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
            todo.extend(core.jaxprs_in_params(eqn.params))
    return counts


def _count_params_by_hand(closed):             # finds nested jaxprs in params without help
    def subs(value):
        if isinstance(value, core.Jaxpr):
            yield value
        elif isinstance(value, (tuple, list)):
            for v in value:
                yield from subs(v)

    def count(jaxpr, c):
        for eqn in jaxpr.eqns:
            c[eqn.primitive.name] += 1
            for value in eqn.params.values():
                for sub in subs(value):
                    count(sub, c)
        return c
    return count(closed, Counter())


def _flatten_leaves_tree(f, store, *args):
    out = f(*args)
    store.store(jax.tree_util.tree_structure(out))
    return jax.tree_util.tree_leaves(out)


def _flatten_generator_style(f, store, *args):
    leaves, treedef = jax.tree_util.tree_flatten(f(*args))
    store.store(treedef)
    return list(leaves)


def _flatten_tuple(f, store, *args):           # a tuple of leaves, the tree stored last
    leaves, treedef = jax.tree.flatten(f(*args))
    try:
        return tuple(leaves)
    finally:
        store.store(treedef)


RIGHT = {
    # the last one opens cond and while itself, running their bodies with its own loop
    "q1": [_eval_recursive_env, _eval_stack, _eval_var_check,
           _evaluator(open_cond=True, open_while=True),
           eval_own_while],                # ring 2's RIGHT_NEW: runs while itself
    "q2": [_count_stack, _count_params_by_hand, lambda closed: Counter(
        e.primitive.name for e in __import__("workshop.labs", fromlist=["all_eqns"])
        .all_eqns(closed))],
    "q3": [["log", "exp", "add", "sin"], ("sin", "exp", "log", "add"),
           {"exp", "sin", "add", "log"}],
    "q4": [_flatten_leaves_tree, _flatten_generator_style, _flatten_tuple],
}
