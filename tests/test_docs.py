"""The runtime's public names are documented as JAX documents its own (Google style: a summary
line, Args, Returns, an example), and every example in those docstrings runs as a doctest on
the pinned JAX with the kit's eight CPU devices."""
from __future__ import annotations

import doctest
import inspect
import io

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import workshop

# the functions and classes of `workshop.__all__` (PINNED_JAX and N_DEVICES are constants)
DOCUMENTED = [n for n in workshop.__all__
              if inspect.isfunction(getattr(workshop, n)) or inspect.isclass(getattr(workshop, n))]


@pytest.fixture(scope="module", autouse=True)
def devices():
    # the kit's eight CPU devices before any backend starts (conftest does it in-process, but
    # an xdist worker, or a conftest that changed, may not have): the examples count on them
    workshop.setup(quiet=True)


def test_every_public_callable_is_covered():
    # what is left out is a constant (a str or an int has no docstring of its own)
    left = [n for n in workshop.__all__ if n not in DOCUMENTED]
    assert not [n for n in left if callable(getattr(workshop, n))]
    assert {"setup", "Shown", "refuses", "file_map", "show_batching"} <= set(DOCUMENTED)


def _missing(obj) -> list[str]:
    """The sections `obj`'s docstring lacks."""
    doc = inspect.getdoc(obj) or ""
    if not doc.strip():
        return ["a docstring"]
    missing = []
    if inspect.isclass(obj):
        if "Args:" not in doc and "Attributes:" not in doc:
            missing.append("Args: or Attributes:")
    else:
        if inspect.signature(obj).parameters and "Args:" not in doc:
            missing.append("Args:")
        if "Returns:" not in doc:
            missing.append("Returns:")
    if ">>>" not in doc:
        missing.append("an example (>>>)")
    return missing


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_has_args_returns_and_an_example(name):
    missing = _missing(getattr(workshop, name))
    assert not missing, f"workshop.{name}'s docstring has no {', '.join(missing)}"


def _globs() -> dict:
    return {"workshop": workshop, **{n: getattr(workshop, n) for n in workshop.__all__},
            "jax": jax, "jnp": jnp, "np": np}


def _run(name: str, obj=None) -> tuple[int, int, str]:
    """(failed, attempted, the runner's report) of the examples in `workshop.name`'s own
    docstring (or `obj`'s), its methods' left out."""
    obj = getattr(workshop, name) if obj is None else obj
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(obj, f"workshop.{name}", module=inspect.getmodule(obj), globs=_globs())
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS, verbose=False)
    report = io.StringIO()
    results = [runner.run(test, out=report.write) for test in tests]
    return (sum(r.failed for r in results), sum(r.attempted for r in results),
            report.getvalue())


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_examples_run(name):
    failed, attempted, report = _run(name)
    assert attempted, f"workshop.{name}'s docstring has no example to run"
    assert not failed, f"workshop.{name}: {failed} of {attempted} examples failed\n{report}"


def test_a_docstring_without_its_sections_is_caught():
    def bare(x, y=1):
        """Add y to x."""

    class Plain:
        """A thing.

        >>> Plain()  # doctest: +ELLIPSIS
        <...>
        """

    assert _missing(bare) == ["Args:", "Returns:", "an example (>>>)"]
    assert _missing(Plain) == ["Args: or Attributes:"]
    assert _missing(lambda: None) == ["a docstring"]


def test_a_wrong_example_fails():
    """The doctests are not vacuous: an expected output that is wrong fails."""
    def wrong(x):
        """Return x.

        Example:
            >>> trim("a\\nb\\nc", max_lines=2).notes
            ['2 more lines of 3']
        """
        return x

    failed, attempted, report = _run("wrong", wrong)
    assert (failed, attempted) == (1, 1) and "Got:\n    ['1 more line of 3']" in report
