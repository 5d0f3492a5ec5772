"""Lab checks in the learntools style: each task has check(), hint() and solution().

The framework is in framework.py; each lab's checks are in its own module (j1.py, …, l5.py),
a part of them in <id>_<part>.py. Here: what the notebooks, the labs' checks and the tests use
from the framework, re-exported; and TIME_LIMIT, the seconds a check may take, which every
check reads here, so that `workshop.labs.TIME_LIMIT = …` changes it.
"""
from .framework import (
    CALLBACKS,
    STUCK,
    TIME_LIMIT,
    KernelState,
    Task,
    Verdict,
    Wrong,
    all_eqns,
    as_array,
    call_as,
    close,
    first_line,
    fits,
    guarded,
    raised_in_attendee_code,
    solution_code,
)

__all__ = ["CALLBACKS", "STUCK", "TIME_LIMIT", "KernelState", "Task", "Verdict", "Wrong",
           "all_eqns", "as_array", "call_as", "close", "first_line", "fits", "guarded",
           "raised_in_attendee_code", "solution_code"]
