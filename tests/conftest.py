"""Shared fixtures. Notebook runs happen once per session, two kernels at a time."""
from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

import nbformat
import pytest

import workshop
from workshop import drift
from workshop import notebooks as nbs
from workshop.builder import execute


def pytest_configure(config):
    # An environment that is not the lock (a jaxlib of another version makes `import jax`
    # refuse), or XLA_FLAGS that abort XLA, would end every test the same way: one line instead
    from workshop import env
    from workshop.devices import xla_flags_problem
    bad = env.mismatches()
    if bad:
        pytest.exit(f"tests: the environment is not the lock ({'; '.join(bad[:3])}"
                    f"{' …' if len(bad) > 3 else ''}): run scripts/setup --force", returncode=2)
    flags = xla_flags_problem()
    if flags:
        pytest.exit(f"tests: {flags}", returncode=2)
    # The in-process lab checks trace with JAX: give this process the kit's devices too.
    workshop.setup(quiet=True)


# scripts/test --full: every deck section also runs alone in a fresh kernel of its own (65 more
# kernels). By default a section's verdict comes from its deck's whole run, which forgets every
# name and reruns the setup cell before each section (execute.with_section_resets): the same
# proof that a section needs only the setup's names, without JAX's state starting fresh.
FULL = bool(os.environ.get("WORKSHOP_TEST_FULL"))


def _jobs():
    jobs = [(p, None) for p in nbs.all_notebooks()]
    for deck in nbs.decks():
        nb = nbs.read(deck)
        # a section whose run alone would repeat the top of the whole run (the first section,
        # a key-points slide with no code) is proven by that run: not run twice
        jobs += [(deck, i) for i, sec in enumerate(nbs.sections(nb))
                 if not nbs.covered_by_whole_run(nb, sec)]
    return jobs


JOBS = _jobs()


def job_id(job) -> str:
    path, sec = job
    return path.stem if sec is None else f"{path.stem}§{sec}"


class Runs(dict):
    """{(path, section-or-None): (Result, executed notebook JSON)}. The first lookup runs, two
    kernels at a time, every job the selected tests ask for (so `pytest -k 03-jit` runs only
    deck 03's jobs); a job no selected test named runs when it is first looked up.

    Runs go to the end as drift runs them (errors allowed, asserts explained), so one run
    proves both that a notebook is clean and that drift reports nothing on the pinned JAX."""

    def __init__(self, wanted):
        super().__init__()
        self.wanted = wanted

    def __missing__(self, job):
        path, section = job
        if section is not None and not FULL:   # from the deck's whole run, sections reset
            result, text = self[(path, None)]
            executed = nbformat.reads(text, as_version=4)
            sec = nbs.sections(executed)[section]
            self[job] = (execute.section_result(result, executed, sec), None)
            return self[job]
        wanted = self.wanted if FULL else {(p, None) for p, _ in self.wanted}
        todo = [j for j in JOBS if j not in self and (j in wanted or j == job)
                and (FULL or j[1] is None)]
        self.update(zip(todo, execute.run_many(todo, allow_errors=True, preamble=drift.PREAMBLE,
                                                sections_alone=not FULL)))
        return self[job]


WANTED: set = set()


SLOW_FILES = {"test_present.py", "test_scaffold.py", "test_attendee_venv.py", "test_drift.py"}


@pytest.hookimpl(trylast=True)   # after -k and -m deselect: only the selected tests' runs
def pytest_collection_modifyitems(items):
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        fixtures = set(getattr(item, "fixturenames", ()))
        # the marks follow the machinery: a notebook run, a browser, a server or a scratch kit
        if fixtures & {"runs"} or item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
        if fixtures & {"chromium", "printer"}:
            item.add_marker(pytest.mark.browser)
        if "runs" in fixtures:
            if "job" in params:
                WANTED.add(params["job"])
            # a deck's, or any notebook's, whole run (a lab solution's, by its path)
            WANTED.update((v, None) for v in params.values() if (v, None) in JOBS)


@pytest.fixture(scope="session")
def runs():
    return Runs(WANTED)


@functools.cache
def pdf_pages(pdf: Path) -> tuple[str, ...]:
    """Each page's text, read once per PDF per session with poppler's pdftotext (the one the
    tests' pdftoppm comes with), in the order the page draws it (-raw, as pypdf reads it):
    pypdf took 20 s for a 36-page handout, pdftotext 0.4 s."""
    out = subprocess.run(["pdftotext", "-raw", "-enc", "UTF-8", str(pdf), "-"], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    pages = out.split("\f")      # pdftotext ends every page with a form feed
    return tuple(pages[:-1] if pages[-1] == "" else pages)
