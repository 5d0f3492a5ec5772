"""Each lab's table of edge inputs (its checks module's EDGES, issue 53): the inputs a task's
own words call for that its ordinary inputs leave untried (a negative cotangent, a float16 x
and the dtype of the result, a flatten run under jit, the same program on other arguments).
Every row has its reason and a wrong answer in tests/wrong_answers that only that row rejects:
taken out of the table, the row's wrong answer passes. (That it is rejected with the row's
name is test_lab_answers.py's test of every wrong answer.)"""
from __future__ import annotations

import jax
import pytest
from test_labs import LABS, WRONG_ANSWERS, _tasks

from workshop.labs import Edge
from wrong_answers import W

EDGE_ANSWERS = [(lab, q, w) for lab, q, w in WRONG_ANSWERS if isinstance(w, W) and w.edge]
# J3's and J4's rows compile programs of their own (2-3 s each): -m thorough's; the quick run
# proves the other labs' rows (and test_lab_answers.py that each row's answer is rejected with
# the row's name, in every lab)
HEAVY = ("J3", "J4")


def test_every_lab_has_a_table_of_edge_inputs_each_row_proven_by_a_wrong_answer():
    proven = {(lab, q, w.edge) for lab, q, w in EDGE_ANSWERS}
    for lab, (module, _) in LABS.items():
        table = getattr(module, "EDGES", None)
        assert table and set(table) <= _tasks(module), (lab, table)
        for q, rows in table.items():
            assert rows and all(isinstance(e, Edge) and e.name and len(e.why) > 40
                                for e in rows), (lab, q, rows)
            names = [e.name for e in rows]
            assert len(set(names)) == len(names), (lab, q, names)
            for name in names:
                assert (lab, q, name) in proven, f"{lab} {q}: no wrong answer for {name!r}"
    for lab, q, w in EDGE_ANSWERS:   # a wrong answer names a row there is, and says its name
        assert w.edge in [e.name for e in LABS[lab][0].EDGES.get(q, ())], (lab, q, w.edge)
        assert w.edge.lower() in w.says.lower(), (lab, q, w.edge, w.says)


@pytest.mark.parametrize("lab,q,wrong", [
    pytest.param(lab, q, w, marks=[pytest.mark.thorough] * (lab in HEAVY))
    for lab, q, w in EDGE_ANSWERS], ids=lambda v: v.edge[:30] if isinstance(v, W) else str(v))
def test_only_its_row_rejects_the_wrong_answer_that_proves_it(lab, q, wrong, monkeypatch):
    module = LABS[lab][0]
    rows = module.EDGES[q]
    monkeypatch.setitem(module.EDGES, q, tuple(e for e in rows if e.name != wrong.edge))
    v = getattr(module, q).check(wrong.answer)
    assert v.ok, f"without the row {wrong.edge!r} it is still rejected: {v}"


def test_l5_what_its_metadata_row_says_jit_would_do_jit_does():
    # the row compares the two Pairs' tree structures, as jit's cache does, without compiling;
    # its verdict says jit would refuse the second Pair: run jit on them, and it does
    from workshop.labs import l5
    from wrong_answers import l5 as answers
    Pair = answers._PairShapeArrayAux
    (a, b), (a2, b2) = l5.EDGES["q1"][0].value
    f = jax.jit(lambda q: q.a * q.b)
    f(Pair(a, b))
    with pytest.raises(ValueError, match="metadata"):
        f(Pair(a2, b2))
