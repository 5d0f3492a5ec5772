"""Shared fixtures. Notebook runs happen once per session, two kernels at a time."""
from __future__ import annotations

import pytest

import workshop
from workshop import notebooks as nbs
from workshop.build import execute


def pytest_configure(config):
    # The in-process lab checks trace with JAX: give this process the kit's devices too.
    workshop.setup(quiet=True)


def _jobs():
    jobs = [(p, None) for p in nbs.all_notebooks()]
    for deck in nbs.decks():
        jobs += [(deck, i) for i in range(len(nbs.sections(nbs.read(deck))))]
    return jobs


JOBS = _jobs()


def job_id(job) -> str:
    path, sec = job
    return path.stem if sec is None else f"{path.stem}§{sec}"


@pytest.fixture(scope="session")
def runs():
    """{(path, section-or-None): (Result, executed notebook JSON)} for every job."""
    return dict(zip(JOBS, execute.run_many(JOBS)))
