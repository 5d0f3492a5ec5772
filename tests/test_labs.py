"""Lab checks both ways: the solution passes; the starter and plausible wrong answers are
rejected with a hint, never a crash. The committed attendee copy is what the generator makes."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from workshop import labgen, notebooks as nbs
from workshop.labs import Verdict, j1

SOLUTIONS = nbs.SOLUTIONS / "J1-trace-read-raw.ipynb"
ATTENDEE = nbs.EXERCISES / "J1-trace-read-raw.ipynb"
CHECK_CALL = re.compile(r"^(q\d)\.check\((.*)\)$")


def test_attendee_copies_are_current():
    assert labgen.generate(check=True) == [], "stale: run .venv/bin/python -m workshop labs"


def test_generator_clears_solutions_and_check_cells():
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


def test_the_solution_passes_every_check():
    verdicts = _run_as_attendee(SOLUTIONS)
    assert set(verdicts) == {"q1", "q2", "q3", "q4"}
    for q, v in verdicts.items():
        assert isinstance(v, Verdict) and v.ok, f"{q}: {v}"


def test_the_starter_is_rejected_with_a_hint():
    verdicts = _run_as_attendee(ATTENDEE)
    assert set(verdicts) == {"q1", "q2", "q3", "q4"}
    for q, v in verdicts.items():
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


@pytest.mark.parametrize("q,answer", [(q, a) for q, answers in WRONG.items() for a in answers],
                         ids=lambda v: getattr(v, "__name__", repr(v))[:20])
def test_wrong_answers_are_rejected_with_a_hint(q, answer):
    v = getattr(j1, q).check(answer)
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
