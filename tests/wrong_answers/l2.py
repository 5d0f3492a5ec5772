"""Lab L2: plausible wrong answers its checks must reject, and right answers written
differently from the solution that they must accept (tests/test_labs.py runs both)."""
from __future__ import annotations

from collections import Counter

import jax
from jax._src import core
from jax._src.core import eval_jaxpr  # imported by name before any check could patch it


def _starter(*args, **kwargs):
    raise NotImplementedError()


def _evaluator(literals=True, consts=True, multi=True, nested=True, outputs=None,
               bind_jit=False, inner_consts=True, one_level=False):
    def my_eval(closed, *args):
        def run(jaxpr, cs, xs, depth=0):
            env = {}
            read = (lambda v: v.val if isinstance(v, core.Literal) else env[v]) if literals \
                else (lambda v: env[v])
            if consts:
                env.update(zip(jaxpr.constvars, cs))
            env.update(zip(jaxpr.invars, xs))
            for eqn in jaxpr.eqns:
                ins = [read(v) for v in eqn.invars]
                inner = eqn.params.get("jaxpr")
                if eqn.primitive.name == "jit" and nested and not bind_jit \
                        and not (one_level and depth):
                    outs = run(inner, inner.consts if inner_consts else [], ins, depth + 1)
                elif eqn.primitive.name == "jit" and not nested:
                    outs = ins
                else:
                    outs = eqn.primitive.bind(*ins, **eqn.params)
                    outs = outs if (eqn.primitive.multiple_results and multi) else [outs]
                env.update(zip(eqn.outvars, outs))
            res = [read(v) for v in jaxpr.outvars]
            return res[:outputs] if outputs else res
        return run(closed, closed.consts, args)
    return my_eval


def _uses_jax(closed, *args):
    return core.eval_jaxpr(closed, closed.consts, *args)


def _uses_jax_by_name(closed, *args):          # sidestep: the name imported before the check
    return eval_jaxpr(closed, closed.consts, *args)


def _count(recurse=True, outer=True, only_jit=False, one_level=False, primitive_keys=False,
           unique=False):
    def count_prims(closed):
        seen = set()

        def go(jaxpr, depth=0):
            c = Counter()
            for eqn in jaxpr.eqns:
                subs = list(core.jaxprs_in_params(eqn.params)) if recurse else []
                if only_jit and eqn.primitive.name != "jit":
                    subs = []
                if one_level and depth:
                    subs = []
                if outer or not subs:
                    c[eqn.primitive if primitive_keys else eqn.primitive.name] += 1
                for sub in subs:
                    if unique and id(sub) in seen:
                        continue
                    seen.add(id(sub))
                    c += go(sub, depth + 1)
            return c
        return dict(go(closed))
    return count_prims


def _flatten(store_what="tree", return_what="leaves", store_twice=False):
    def flatten_outputs(f, store, *args):
        ans = f(*args)
        leaves, tree = jax.tree.flatten(ans)
        if store_what == "tree":
            store.store(tree)
        elif store_what == "count":
            store.store(len(leaves))
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


WRONG = {
    "q1": [_starter, _evaluator(literals=False), _evaluator(consts=False),
           _evaluator(multi=False), _evaluator(nested=False), _evaluator(outputs=1),
           _evaluator(bind_jit=True), _evaluator(inner_consts=False),
           _evaluator(one_level=True), _uses_jax, _uses_jax_by_name],
    "q2": [_starter, _count(recurse=False), _count(outer=False), _count(only_jit=True),
           _count(one_level=True), _count(primitive_keys=True), _count(unique=True),
           lambda closed: Counter(e.primitive.name for e in closed.eqns).most_common()],
    "q3": [["exp", "sin", "mul", "add", "log"], ["exp"], ["exp", "sin", "add", "log", "add"],
           "exp sin add log", None, [["exp"], "sin", "add", "log"], ["exp", "sin", "log"]],
    "q4": [_starter, _flatten(store_what="none"), _flatten(store_what="count"),
           _flatten(return_what="tree"), _flatten(store_twice=True), _flatten_in_a_dict,
           _flatten_by_hand, lambda: None],
}


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


def _count_stack(closed):
    counts, todo = {}, [closed]
    while todo:
        jaxpr = todo.pop()
        for eqn in jaxpr.eqns:
            counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
            todo.extend(core.jaxprs_in_params(eqn.params))
    return counts


def _flatten_leaves_tree(f, store, *args):
    out = f(*args)
    store.store(jax.tree_util.tree_structure(out))
    return jax.tree_util.tree_leaves(out)


def _flatten_generator_style(f, store, *args):
    leaves, treedef = jax.tree_util.tree_flatten(f(*args))
    store.store(treedef)
    return list(leaves)


RIGHT = {
    "q1": [_eval_recursive_env, _eval_stack],
    "q2": [_count_stack, lambda closed: Counter(
        e.primitive.name for e in __import__("workshop.labs", fromlist=["all_eqns"])
        .all_eqns(closed))],
    "q3": [["log", "exp", "add", "sin"], ("sin", "exp", "log", "add")],
    "q4": [_flatten_leaves_tree, _flatten_generator_style],
}
