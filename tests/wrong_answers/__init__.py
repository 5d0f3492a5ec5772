"""One module per lab (its id in lower case), each with WRONG = {task: [W(answer, says)]}
and RIGHT = {task: [answers]}. `says` is a word or phrase the rejection message must contain
(case-insensitive), so a check that rejects a boundary mistake with the message meant for
another mistake fails its test."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class W:
    """A wrong answer and what its rejection message must say."""
    answer: Any
    says: str

    def __post_init__(self):
        if not (isinstance(self.says, str) and self.says.strip()):
            raise ValueError(f"a wrong answer names what its message says, not {self.says!r}")
