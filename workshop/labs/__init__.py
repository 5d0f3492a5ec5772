"""Lab checks in the learntools style: each task has check(), hint() and solution().

A check runs the attendee's answer on inputs the attendee did not choose and says what is wrong
in their terms, without giving the answer away. It never crashes: a half-done answer (the
starter's `raise NotImplementedError()`), or answer code that raises, gets a verdict too.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Callable

from ..notebooks import SOLUTIONS, read


class Wrong(Exception):
    """Raised by a checker with a message in the attendee's terms."""


@dataclass
class Verdict:
    ok: bool
    message: str
    hint: str = ""

    def __str__(self) -> str:
        mark = "✓ Correct" if self.ok else "✗ Not yet"
        text = f"{mark}: {self.message}"
        if not self.ok and self.hint:
            text += f"\n  Hint: {self.hint}"
        return text

    __repr__ = __str__

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.ok else "#b00"
        return (f"<pre style='color:{color};white-space:pre-wrap'>{html.escape(str(self))}"
                f"</pre>")


class Task:
    """One task of a lab. `checker(*answers)` returns a success message or raises Wrong."""

    def __init__(self, lab: str, number: int, title: str, checker: Callable[..., str],
                 hints: list[str]):
        self.lab, self.number, self.title = lab, number, title
        self._checker, self._hints = checker, hints
        self._hint_i = 0

    def check(self, *answers) -> Verdict:
        try:
            return Verdict(True, self._checker(*answers))
        except NotImplementedError:
            return Verdict(False, "not done yet: replace `raise NotImplementedError()` with "
                                  "your answer, run that cell, then this one.", self._hints[0])
        except Wrong as w:
            return Verdict(False, str(w), self._hints[0])
        except Exception as e:  # the attendee's code crashed: say so, do not crash the check
            first = (str(e).strip().split("\n") or [""])[0][:200]
            return Verdict(False, f"your code raised {type(e).__name__}: {first}",
                           self._hints[0])

    def hint(self) -> str:
        """The next hint (they get more specific); the last one repeats."""
        h = self._hints[min(self._hint_i, len(self._hints) - 1)]
        self._hint_i += 1
        print(f"Hint {min(self._hint_i, len(self._hints))}/{len(self._hints)}: {h}")
        return h

    def solution(self) -> str:
        """The solution code, read from the lab's single source in exercises/solutions/."""
        code = solution_code(self.lab, self.number)
        print(code)
        return code


def solution_code(lab: str, number: int) -> str:
    """The `number`-th (1-based) solution block of lab `lab` (e.g. 'J1')."""
    paths = sorted(SOLUTIONS.glob(f"{lab}-*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"no solutions notebook for {lab} in {SOLUTIONS}")
    cells = [c.source for c in read(paths[0]).cells
             if c.cell_type == "code" and "### BEGIN SOLUTION" in c.source]
    return cells[number - 1]


def close(a, b, tol=1e-5) -> bool:
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=tol, atol=tol))
