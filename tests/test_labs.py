"""Lab checks both ways: the solution passes; the starter and plausible wrong answers are
rejected with a hint, never a crash. The committed attendee copy is what the generator makes."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from collections import Counter

from jax._src import core

from workshop import labgen, notebooks as nbs
from workshop.labs import Verdict, j1, l2, l5

LABS = {"J1": (j1, "J1-trace-read-raw.ipynb"), "L2": (l2, "L2-interpret-a-jaxpr.ipynb"),
        "L5": (l5, "L5-carry-types-and-custom-pytrees.ipynb")}
ATTENDEE = nbs.EXERCISES / "J1-trace-read-raw.ipynb"
CHECK_CALL = re.compile(r"^(q\d)\.check\((.*)\)$")


def test_attendee_copies_are_current():
    assert labgen.generate(check=True) == [], "stale: run .venv/bin/python -m workshop labs"


def test_generator_clears_solutions_and_check_cells():
    assert "BEGIN SOLUTION" not in (nbs.EXERCISES / LABS["L2"][1]).read_text()
    text = ATTENDEE.read_text()
    assert "BEGIN SOLUTION" not in text and "jnp.where(x.sum() > t" not in text
    assert text.count("raise NotImplementedError()") == 4
    assert "assert q1.check" not in text
    with pytest.raises(nbs.KitError, match="without"):
        labgen.clear_solutions("x = 1\n### BEGIN SOLUTION\ny = 2\n")


def _run_as_attendee(path):
    """Run a lab's cells in this process as an attendee would: a cell that raises
    NotImplementedError stops there, the next cell runs. Returns {task: verdict}."""
    ns, verdicts = {}, {}
    for cell in nbs.read(path).cells:
        if cell.cell_type != "code" or "check" in nbs.tags(cell):
            continue
        m = CHECK_CALL.match(cell.source.strip())
        if m:
            verdicts[m.group(1)] = eval(cell.source, ns)
            continue
        try:
            exec(compile(cell.source, str(path), "exec"), ns)
        except NotImplementedError:
            pass
    return verdicts


def _tasks(module):
    return {name for name in dir(module) if re.fullmatch(r"q\d", name)}


def test_every_lab_source_has_its_checks_module():
    assert {p.name for p in nbs.lab_sources()} == {name for _, name in LABS.values()}


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("copy", ["solution", "starter"])
def test_solution_passes_and_starter_is_rejected_with_a_hint(lab, copy):
    module, name = LABS[lab]
    folder = nbs.SOLUTIONS if copy == "solution" else nbs.EXERCISES
    verdicts = _run_as_attendee(folder / name)
    assert set(verdicts) == _tasks(module)
    for q, v in verdicts.items():
        assert isinstance(v, Verdict), f"{q}: {v}"
        if copy == "solution":
            assert v.ok, f"{q}: {v}"
        else:
            assert not v.ok and v.hint, f"{q}: {v}"


def _count_lines(f, *a):         # counts printed lines, not equations
    return len(str(jax.make_jaxpr(f)(*a)).split("\n")) - 2


def _count_deep(f, *a):          # looks inside the nested jit
    def n(jaxpr):
        return sum(1 + (n(e.params["jaxpr"].jaxpr) if "jaxpr" in e.params else 0)
                   for e in jaxpr.eqns)
    return n(jax.make_jaxpr(f)(*a).jaxpr)


def _weak_by_python_type(f, *a):
    return {i for i, x in enumerate(a) if isinstance(x, (int, float, complex))}


def _weak_float_only(f, *a):
    return {i for i, x in enumerate(a) if isinstance(x, float)}


def _weak_not_array(f, *a):
    return {i for i, x in enumerate(a) if not hasattr(x, "dtype")}


def _clip_only(x, t):
    return jnp.clip(x, -t, t)


def _branch_swapped(x, t):
    return jnp.where(x.sum() > t, jnp.zeros_like(x), jnp.clip(x, -t, t))


def _float_of_sum(x, t):
    return jnp.clip(x, -t, t) if float(x.sum()) > t else jnp.zeros_like(x)


WRONG = {
    "q1": [4, 6, 3, 5.0, "5", True],
    "q2": [_count_lines, _count_deep, lambda f, *a: len(a), lambda f, *a: 3.0,
           lambda f, *a: len(jax.make_jaxpr(f)(*a).jaxpr.invars)],
    "q3": [_weak_by_python_type, _weak_float_only, _weak_not_array, lambda f, *a: set(),
           lambda f, *a: 1],
    "q4": [j1.clip_or_zero, _clip_only, _branch_swapped, _float_of_sum, "not a function"],
}


# ------------------------------------------------------------------ L2's wrong answers

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


WRONG_L2 = {
    "q1": [_evaluator(literals=False), _evaluator(consts=False), _evaluator(multi=False),
           _evaluator(nested=False), _evaluator(outputs=1), _uses_jax],
    "q2": [_count(recurse=False), _count(outer=False), _count(only_jit=True),
           lambda closed: Counter(e.primitive.name for e in closed.eqns).most_common()],
    "q3": [["exp", "sin", "mul", "add", "log"], ["exp"], ["exp", "sin", "add", "log", "add"],
           "exp sin add log", None],
}


# ------------------------------------------------------------------ L5's wrong answers

def _pair_class(register=None):
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    if register:
        register(Pair)
    return Pair


def _no_keys(P):
    jax.tree_util.register_pytree_node(P, lambda p: ((p.a, p.b), None),
                                       lambda aux, ch: P(*ch))


def _swapped(P):
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("a"), p.a), (K("b"), p.b)), None), lambda aux, ch: P(ch[1], ch[0]))


def _b_static(P):
    jax.tree_util.register_pytree_node(P, lambda p: ((p.a,), float(p.b)),
                                       lambda aux, ch: P(ch[0], aux))


def _scan_from(init, combine):
    def running(xs):
        def step(c, x):
            c = combine(c, x)
            return c, c
        return jax.lax.scan(step, jnp.array(init, xs.dtype), xs)[1]
    return running


def _newton(steps, step=lambda a, x: 0.5 * (x + a / x)):
    return lambda a: jax.lax.fori_loop(0, steps, lambda i, x: step(a, x), a)


WRONG_L5 = {
    "q1": [_pair_class(), _pair_class(_no_keys), _pair_class(_swapped), _pair_class(_b_static),
           "Pair"],
    "q2": [l5.running_max_python, _scan_from(0.0, jnp.maximum), _scan_from(0.0, jnp.add),
           jax.lax.cummax],
    "q3": [l5.newton_sqrt, _newton(2), jnp.sqrt, _newton(20, lambda a, x: x - 0.1 * (x * x - a))],
}


@pytest.mark.parametrize("lab,q,answer", [("J1", q, a) for q, answers in WRONG.items()
                                          for a in answers] +
                         [("L2", q, a) for q, answers in WRONG_L2.items() for a in answers] +
                         [("L5", q, a) for q, answers in WRONG_L5.items() for a in answers],
                         ids=lambda v: getattr(v, "__name__", repr(v))[:20])
def test_wrong_answers_are_rejected_with_a_hint(lab, q, answer):
    v = getattr(LABS[lab][0], q).check(answer)
    assert isinstance(v, Verdict) and not v.ok and v.hint and v.message, v


def test_a_crashing_answer_gets_a_verdict_not_a_traceback():
    def boom(f, *a):
        raise ValueError("oops")
    v = j1.q2.check(boom)
    assert not v.ok and "ValueError: oops" in v.message


def test_hints_get_more_specific_and_solution_is_the_source(capsys):
    task = j1.Task("J1", 4, "t", lambda: "", ["first", "second"])
    assert [task.hint(), task.hint(), task.hint()] == ["first", "second", "second"]
    code = j1.q4.solution()
    assert "### BEGIN SOLUTION" in code and "jnp.where" in code
    assert "jnp.where" in capsys.readouterr().out


def test_checks_use_inputs_the_attendee_did_not_choose():
    # the answer that special-cases the starter's visible input is still caught
    def cheat(x, t):
        return jnp.clip(x, -t, t)
    assert not j1.q4.check(cheat).ok
    assert np.asarray(j1.clip_or_zero(np.array([3.0, -1.0]), 1.0)).tolist() == [1.0, -1.0]
