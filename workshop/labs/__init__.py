"""Lab checks in the learntools style: each task has check(), hint() and solution().

The framework is in framework.py; each lab's checks are in its own module (j1.py, …, l5.py),
a part of them in <id>_<part>.py. Here: what the notebooks, the labs' checks and the tests use
from the framework, re-exported. The seconds a check may take are `workshop.config`'s
CHECK_TIME_LIMIT, which every check reads when it runs (`workshop.config.CHECK_TIME_LIMIT = …`
changes it).
"""
from .framework import (
    CALLBACKS,
    STUCK,
    Edge,
    KernelState,
    Task,
    Verdict,
    Wrong,
    all_eqns,
    as_array,
    as_now,
    call_as,
    close,
    exact,
    first_line,
    fits,
    fresh,
    guarded,
    raised_in_attendee_code,
    solution_code,
)

__all__ = ["CALLBACKS", "STUCK", "Edge", "KernelState", "Task", "Verdict", "Wrong",
           "all_eqns", "as_array", "as_now", "call_as", "close", "exact", "first_line", "fits",
           "fresh", "guarded", "raised_in_attendee_code", "solution_code"]
