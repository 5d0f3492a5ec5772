"""One module per lab (its id in lower case), each with WRONG = {task: [W(answer, says)]}
and RIGHT = {task: [answers]}. `says` is a word or phrase the rejection message must contain
(case-insensitive), so a check that rejects a boundary mistake with the message meant for
another mistake fails its test. `edge`: the row of the lab's table of edge inputs (the check
module's EDGES) that alone rejects this answer, by its name (tests/test_lab_edges.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class W:
    """A wrong answer and what its rejection message must say."""
    answer: Any
    says: str
    edge: str = ""

    def __post_init__(self):
        if not (isinstance(self.says, str) and self.says.strip()):
            raise ValueError(f"a wrong answer names what its message says, not {self.says!r}")


# Hostile answers (issue 53): values that claim to equal everything. A check that compared the
# answer's value with its own by the answer's `==` or `!=` would take any of them; the checks
# compare what they hold (workshop.labs.exact).
def _claims_all(base):
    return type(f"Liar{base.__name__.capitalize()}", (base,), {
        "__eq__": lambda self, other: True, "__ne__": lambda self, other: False,
        "__hash__": base.__hash__ if base.__hash__ is not None else object.__hash__,
        "__repr__": lambda self: f"{base.__name__}({base.__repr__(self)})"})


LiarInt, LiarFloat, LiarSet, LiarDict, LiarList, LiarTuple = map(
    _claims_all, (int, float, set, dict, list, tuple))
