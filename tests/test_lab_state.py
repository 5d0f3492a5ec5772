"""Lab checks judge the answer as it is now, in whatever state the attendee's kernel is in: a
helper redefined or a rule registered again in a later cell gives the verdict of the new code
(JAX's trace caches, keyed on the same function object, would give the old one). The checks'
own in-process runners (test_labs.py's tables of answers), no kernel of their own."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import pytest
from test_labs import LABS, RIGHT_ANSWERS, WRONG_ANSWERS

from wrong_answers import W

# The tasks whose answer is a function, with the wrong answer a learner fixes in a later cell
# (its index in tests/wrong_answers/<lab>.py's WRONG), chosen so that the check traced or ran
# the wrong one before rejecting it: the second check would hold its trace if anything did.
# J3 q3 and q4 are test_labs.py's test_j3_verdicts_follow_what_the_answer_reads_now (a global
# the answer reads, changed between checks); L5 q1's answer is a class, below.
FIXED_LATER = {("J1", "q2"): 0, ("J1", "q3"): 0, ("J1", "q4"): -1, ("J2", "q1"): 0,
               ("J2", "q3"): 0, ("J3", "q1"): -1, ("J3", "q2"): -1, ("J4", "q1"): 0,
               ("J4", "q3"): 0, ("J4", "q4"): -2, ("L2", "q1"): 0, ("L2", "q2"): 0,
               ("L2", "q4"): 0, ("L5", "q2"): -1, ("L5", "q3"): -1, ("L5", "q4"): -1}


def _learner(wrong, right):
    """The answer as a learner writes it: `answer` calls `helper`, defined in a cell of its
    own; the fix redefines helper in a new cell and checks `answer` again (its own cell not
    run again: the same object). Returns answer and the fix."""
    ns = {"helper": wrong}
    exec("def answer(*args, **kwargs):\n    return helper(*args, **kwargs)\n", ns)
    answer = functools.update_wrapper(ns["answer"], right, updated=())   # its name, signature
    return answer, lambda: ns.__setitem__("helper", right)


def _first(table, lab, q):
    return [a for la, qa, a in table if (la, qa) == (lab, q)]


@pytest.mark.parametrize("lab,q", list(FIXED_LATER), ids=lambda v: v)
def test_an_answer_fixed_in_a_later_cell_gets_the_verdict_of_the_fix(lab, q):
    wrong = _first(WRONG_ANSWERS, lab, q)[FIXED_LATER[lab, q]]
    assert isinstance(wrong, W) and callable(wrong.answer), wrong
    task = getattr(LABS[lab][0], q)
    answer, fix = _learner(wrong.answer, _first(RIGHT_ANSWERS, lab, q)[0])
    v = task.check(answer)
    assert not v.ok and wrong.says.lower() in v.message.lower(), v
    fix()
    v = task.check(answer)
    assert v.ok, v


def _bare_then_tuple(identity: bool):
    """A custom_vjp whose bwd returns a bare array (JAX refuses it), and the learner's fix: a
    bwd that returns a tuple, registered on the same object with defvjp again."""
    @jax.custom_vjp
    def f(x):
        return x if identity else jax.nn.logsumexp(x)

    def fwd(x):
        return (x, None) if identity else (jax.nn.logsumexp(x), jax.nn.softmax(x))

    def bwd(s, g):
        return jnp.clip(g, -1.0, 1.0) if identity else g * s
    f.defvjp(fwd, bwd)

    def fixed(s, g):
        return (bwd(s, g),)
    return f, lambda: f.defvjp(fwd, fixed)


@pytest.mark.parametrize("q", ["q1", "q2"])
def test_j3_a_rule_registered_again_with_defvjp_is_the_rule_checked(q):
    # the audit's case: bwd fixed in a new cell, defvjp called again on the same custom_vjp;
    # jax.grad saw the new rule while the check, through jax.jit's trace cache, kept
    # reporting the old one's TypeError
    from workshop.labs import j3
    fn, fix = _bare_then_tuple(identity=q == "q2")
    task = getattr(j3, q)
    v = task.check(fn)
    assert not v.ok and "bare array" in v.message, v
    fix()
    v = task.check(fn)
    assert v.ok, v


def test_l5_a_pair_registered_again_in_a_rerun_cell_is_the_pair_checked():
    # a pytree registration cannot be made twice for one class: the learner runs the class's
    # cell again (a new class, registered anew) and checks it
    from workshop.labs import l5
    cell = ("import jax.tree_util as tu\n"
            "class Pair:\n"
            "    def __init__(self, a, b):\n"
            "        self.a, self.b = a, b\n"
            "tu.register_pytree_with_keys(\n"
            "    Pair, lambda p: ((({a}, p.a), ({b}, p.b)), None),\n"
            "    lambda _, ch: Pair(*ch))\n")
    ns = {}
    exec(cell.format(a="tu.GetAttrKey('b')", b="tu.GetAttrKey('a')"), ns)   # names swapped
    v = l5.q1.check(ns["Pair"])
    assert not v.ok and "key paths" in v.message, v
    exec(cell.format(a="tu.GetAttrKey('a')", b="tu.GetAttrKey('b')"), ns)
    v = l5.q1.check(ns["Pair"])
    assert v.ok, v
