"""Make a slide's claim checkable: an expected error, shown compactly, or the build fails."""
from __future__ import annotations

import re

from .show import WIDTH, cell_files


class ClaimFailed(AssertionError):
    """A slide's claim about JAX is false: the deck is wrong, and its run fails.

    `refuses` raises it when the error a slide claims did not come (or another one came, or
    its message does not match); `file_map` when the file does not define a part the deck
    reads, or the map does not fit its slide; `workshop.jitcache.probe` when a cache is not
    where the deck says. An AssertionError: a build or a test fails on it as on a failed
    assert.

    Args:
        message: what was claimed and what happened instead.

    Example:
        >>> with refuses(ZeroDivisionError):
        ...     x = 1 / 2
        Traceback (most recent call last):
        ...
        workshop.expect.ClaimFailed: refuses: expected ZeroDivisionError, but nothing was raised
        >>> issubclass(ClaimFailed, AssertionError)
        True
    """


class refuses:
    """`with refuses(TypeError, match="..."): ...`: the body must raise that error.

    A context manager for a slide that shows JAX refusing something. On the expected error
    it prints "✗ refused — Type" and the message's first lines (wrapped to the slide's width;
    a notebook cell's temporary file name shown as ‹cell›), swallows the error, and the cell
    goes on. With no error, another type, or a message that does not match: it raises
    ClaimFailed, so the run fails. `with ... as r` binds the `refuses` itself.

    Args:
        error: the exception class the body must raise (a subclass counts).
        match: a regular expression that the error's message must contain (re.search), or
            None for any message. Defaults to None.
        lines: how many (non-blank) lines of the message to print; one more line counts
            the rest. Defaults to 2.

    Attributes:
        caught: the exception the body raised, once it was the expected one; else None.

    Raises:
        ClaimFailed: on leaving the block, when the body raised nothing, another type of
            error, or a message that `match` does not find.

    Example:
        >>> with refuses(TypeError, match="incompatible shapes") as r:
        ...     y = jnp.ones(3) + jnp.ones(4)
        ✗ refused — TypeError
          add got incompatible shapes for broadcasting: (3,), (4,).
        >>> type(r.caught).__name__
        'TypeError'
        >>> with refuses(ValueError):  # doctest: +ELLIPSIS
        ...     y = jnp.ones(3) + jnp.ones(4)
        Traceback (most recent call last):
        ...
        workshop.expect.ClaimFailed: refuses: expected ValueError, got TypeError: add got ...
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


def summary(exc: BaseException, lines: int = 2) -> str:
    """`✗ refused — Type: first lines`, wrapped to the slide width.

    A notebook cell's temporary file name (it holds the kernel's pid) is shown as ‹cell›.
    """
    import textwrap
    text = cell_files(str(exc))
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
