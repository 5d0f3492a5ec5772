"""Every lab's starter, wrong answers and right answers against its checks, in this process
(tests/wrong_answers/<id>.py): a file of its own, so scripts/test's workers share the labs' CPU
with test_labs.py; J3's, which time real calls (70 s of the 115), in test_lab_answers_j3.py,
so that another worker takes them at the same time."""
from __future__ import annotations

import pytest
from test_labs import (
    LABS,
    RIGHT_ANSWERS,
    WRONG_ANSWERS,
    _answer_id,
    _module,
    _run_as_attendee,
    _tasks,
)

from workshop.labs import Verdict
from workshop.tools import paths
from wrong_answers import W

SPLIT = "J3"   # (its cases are test_lab_answers_j3.py's)


def here(cases, split: bool = False) -> list:
    """The cases of this file (split=False) or of test_lab_answers_j3.py (split=True)."""
    return [c for c in cases if ((c[0] if isinstance(c, tuple) else c) == SPLIT) == split]


@pytest.mark.parametrize("lab", here(LABS))
def test_starter_is_rejected_with_a_hint(lab):
    module, name = LABS[lab]
    verdicts = _run_as_attendee(paths.EXERCISES / name)
    assert set(verdicts) == _tasks(module)
    for q, v in verdicts.items():
        assert isinstance(v, Verdict), f"{q}: {v}"
        assert not v.ok and v.hint, f"{q}: {v}"


def _wrong_id(w) -> str:
    return _answer_id(w.answer if isinstance(w, W) else w)


@pytest.mark.parametrize("lab,q,wrong", here(WRONG_ANSWERS), ids=_wrong_id)
def test_wrong_answers_are_rejected_with_a_hint_that_names_the_mistake(lab, q, wrong):
    # rejected, and told why: the message names what this answer got wrong, so a check that
    # rejects a boundary mistake with the message meant for another one fails here
    assert isinstance(wrong, W), f"{lab} {q}: give {wrong!r} the words its message must say"
    # the hint appended is the task's hint that fits the mistake, or none where none does
    # (test_labs.py's test_the_hint_appended_fits_the_mistake holds which)
    task = getattr(LABS[lab][0], q)
    v = task.check(wrong.answer)
    assert isinstance(v, Verdict) and not v.ok and v.message, v
    assert v.hint in task._hints or v.hint == "", v
    assert wrong.says.lower() in v.message.lower(), (wrong.says, v.message)


@pytest.mark.parametrize("lab,q,answer", here(RIGHT_ANSWERS), ids=_answer_id)
def test_right_answers_written_differently_pass(lab, q, answer):
    v = getattr(LABS[lab][0], q).check(answer)
    assert isinstance(v, Verdict) and v.ok, v


@pytest.mark.parametrize("lab", LABS)
def test_every_task_has_ten_wrong_answers_and_two_right_ones(lab):
    answers = _module("wrong_answers", lab)
    assert set(answers.WRONG) == set(answers.RIGHT) == _tasks(LABS[lab][0])
    assert all(len(a) >= 10 for a in answers.WRONG.values()), answers.WRONG
    assert all(len(a) >= 2 for a in answers.RIGHT.values()), answers.RIGHT
