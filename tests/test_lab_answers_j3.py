"""J3's starter, wrong answers and right answers against its checks: test_lab_answers.py's tests
for the lab whose checks time real calls (70 s of the labs' 115), in a file of their own so
that scripts/test's workers take them beside the other labs' (--dist loadfile gives a file to
one worker)."""
from __future__ import annotations

import pytest
from test_lab_answers import RIGHT_ANSWERS, WRONG_ANSWERS, _answer_id, _wrong_id, here
from test_lab_answers import test_right_answers_written_differently_pass as _right
from test_lab_answers import test_starter_is_rejected_with_a_hint as _starter
from test_lab_answers import (
    test_wrong_answers_are_rejected_with_a_hint_that_names_the_mistake as _wrong,
)
from test_labs import LABS


@pytest.mark.parametrize("lab", here(LABS, split=True))
def test_starter_is_rejected_with_a_hint(lab):
    _starter(lab)


@pytest.mark.parametrize("lab,q,wrong", here(WRONG_ANSWERS, split=True), ids=_wrong_id)
def test_wrong_answers_are_rejected_with_a_hint_that_names_the_mistake(lab, q, wrong):
    _wrong(lab, q, wrong)


@pytest.mark.parametrize("lab,q,answer", here(RIGHT_ANSWERS, split=True), ids=_answer_id)
def test_right_answers_written_differently_pass(lab, q, answer):
    _right(lab, q, answer)
