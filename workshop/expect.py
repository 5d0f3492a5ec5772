"""Make a slide's claim checkable: an expected error, shown compactly, or the build fails."""
from __future__ import annotations

import re

from .show import WIDTH


class ClaimFailed(AssertionError):
    """A slide claims an error that did not come (or another one came): the deck is wrong."""


class refuses:
    """`with refuses(TypeError, match="..."): ...` — the body must raise ErrorType.

    On the expected error: prints its type and first lines, and the cell goes on. With no error,
    or another type, or a message that does not match: raises ClaimFailed, so the run fails.
    """

    def __init__(self, error: type[BaseException], match: str | None = None, lines: int = 2):
        self.error, self.match, self.lines = error, match, lines
        self.caught: BaseException | None = None

    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        want = self.error.__name__
        if exc is None:
            raise ClaimFailed(f"refuses: expected {want}, but nothing was raised")
        if not isinstance(exc, self.error):
            raise ClaimFailed(f"refuses: expected {want}, got {typ.__name__}: "
                              f"{_first_line(exc)}") from exc
        if self.match is not None and not re.search(self.match, str(exc)):
            raise ClaimFailed(f"refuses: {want} came, but its message does not match "
                              f"{self.match!r}: {_first_line(exc)}") from exc
        self.caught = exc
        print(summary(exc, self.lines))
        return True


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().split("\n") or [""])[0][:200]


_CELL_FILE = re.compile(r"\S*ipykernel_\d+[/\\]\d+\.py")


def summary(exc: BaseException, lines: int = 2) -> str:
    """`✗ refused — Type: first lines`, wrapped to the slide width.

    A notebook cell's temporary file name (it holds the kernel's pid) is shown as <cell>.
    """
    import textwrap
    text = _CELL_FILE.sub("<cell>", str(exc))
    msg = [m for m in text.strip().split("\n") if m.strip()]
    head = f"✗ refused — {type(exc).__name__}"
    body = []
    for m in msg[:lines]:
        body += textwrap.wrap(m, WIDTH - 2) or [""]
    if len(body) > 2 * lines:
        body = body[: 2 * lines]
        body[-1] += " …"
    cut = len(msg) - lines
    more = [f"  ⋯ {cut} more line(s) of the message"] if cut > 0 else []
    return "\n".join([head] + ["  " + b for b in body] + more)
