"""Lab L2: plausible wrong answers its checks must reject (tests/test_labs.py runs them)."""
from __future__ import annotations

from collections import Counter

from jax._src import core


def _evaluator(literals=True, consts=True, multi=True, nested=True, outputs=None):
    def my_eval(closed, *args):
        def run(jaxpr, cs, xs):
            env = {}
            read = (lambda v: v.val if isinstance(v, core.Literal) else env[v]) if literals \
                else (lambda v: env[v])
            if consts:
                env.update(zip(jaxpr.constvars, cs))
            env.update(zip(jaxpr.invars, xs))
            for eqn in jaxpr.eqns:
                ins = [read(v) for v in eqn.invars]
                if eqn.primitive.name == "jit" and nested:
                    outs = run(eqn.params["jaxpr"].jaxpr, eqn.params["jaxpr"].consts, ins)
                elif eqn.primitive.name == "jit":
                    outs = ins
                else:
                    outs = eqn.primitive.bind(*ins, **eqn.params)
                    outs = outs if (eqn.primitive.multiple_results and multi) else [outs]
                env.update(zip(eqn.outvars, outs))
            res = [read(v) for v in jaxpr.outvars]
            return res[:outputs] if outputs else res
        return run(closed.jaxpr, closed.consts, args)
    return my_eval


def _uses_jax(closed, *args):
    return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _count(recurse=True, outer=True, only_jit=False):
    def count_prims(closed):
        def go(jaxpr):
            c = Counter()
            for eqn in jaxpr.eqns:
                subs = list(core.jaxprs_in_params(eqn.params)) if recurse else []
                if only_jit and eqn.primitive.name != "jit":
                    subs = []
                if outer or not subs:
                    c[eqn.primitive.name] += 1
                for sub in subs:
                    c += go(sub)
            return c
        return dict(go(closed.jaxpr))
    return count_prims


WRONG = {
    "q1": [_evaluator(literals=False), _evaluator(consts=False), _evaluator(multi=False),
           _evaluator(nested=False), _evaluator(outputs=1), _uses_jax],
    "q2": [_count(recurse=False), _count(outer=False), _count(only_jit=True),
           lambda closed: Counter(e.primitive.name for e in closed.eqns).most_common()],
    "q3": [["exp", "sin", "mul", "add", "log"], ["exp"], ["exp", "sin", "add", "log", "add"],
           "exp sin add log", None],
}
