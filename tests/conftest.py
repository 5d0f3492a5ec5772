"""Shared fixtures. Notebook runs happen once per session, two kernels at a time."""
from __future__ import annotations

import fcntl
import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

import pytest

import workshop
from workshop.tools import browser, drift, paths
from workshop.tools import notebooks as nbs
from workshop.tools.builder import execute


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")   # one of pytest-xdist's workers (scripts/test: -n 2)


def _has_workers(config) -> bool:
    return not _is_worker(config) and bool(getattr(config.option, "numprocesses", None))


def pytest_configure(config):
    if not _is_worker(config):
        # An environment that is not the lock (a jaxlib of another version makes `import jax`
        # refuse), or XLA_FLAGS that abort XLA, would end every test the same way: one line
        from workshop.tools import lockfile
        from workshop.tools.xla_flags import xla_flags_problem
        bad = lockfile.mismatches()
        if bad:
            pytest.exit(f"tests: the environment is not the lock ({'; '.join(bad[:3])}"
                        f"{' …' if len(bad) > 3 else ''}): run scripts/setup --force",
                        returncode=2)
        flags = xla_flags_problem()
        if flags:
            pytest.exit(f"tests: {flags}", returncode=2)
        # where the notebook runs are kept for every worker of this session (removed at its end)
        MADE.append(tempfile.mkdtemp(prefix="workshop-test-runs-"))
        os.environ[RUNS_DIR] = MADE[0]
        if not config.option.basetemp and not os.environ.get(TEMPROOT):
            # pytest's own tmp_path folders too (it keeps the last three runs' in
            # $TMPDIR/pytest-of-USER): a run leaves nothing in /tmp. To keep them, --basetemp
            os.environ[TEMPROOT] = MADE[0]
        os.environ.pop(PREFETCHED, None)   # (a nested pytest inherits it)
        if _has_workers(config) and _whole_suite(config) and not config.option.collectonly:
            # the workers' tests wait on browsers, servers and subprocesses; the runs are the
            # CPU the files at the end wait for: this process (idle under xdist) makes them
            # all at once, at the front of the queue, and the workers yield the CPU to them
            os.environ[PREFETCHED] = "1"
            lock = open(Path(MADE[0]) / ".lock", "w")   # before any worker can look
            fcntl.flock(lock, fcntl.LOCK_EX)
            runs = Runs({j for j in JOBS if FULL or j[1] is None})
            threading.Thread(target=runs.fetch, kwargs={"held": lock}, daemon=True,
                             name="workshop-runs").start()
    elif os.environ.get(PREFETCHED):
        os.nice(10)
    if not _has_workers(config):
        # The in-process lab checks trace with JAX: give this process the kit's devices too.
        workshop.setup(quiet=True)


def pytest_unconfigure(config):
    for folder in MADE:   # only this process's own (a nested pytest inherits the variable)
        shutil.rmtree(folder, ignore_errors=True)


MADE: list[str] = []
PREFETCHED = "WORKSHOP_TEST_PREFETCHED"
TEMPROOT = "PYTEST_DEBUG_TEMPROOT"   # (read when the first tmp_path is made, after this)


def _whole_suite(config) -> bool:
    """scripts/test as the README runs it: every test file, no -k, -m or test ids."""
    args = [Path(a).resolve() for a in config.args]
    return (not config.option.keyword and not config.option.markexpr
            and args in ([], [paths.ROOT / "tests"]))


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
    """{(path, section-or-None): (Result, executed notebook JSON)}. Every job the selected
    tests ask for (so `pytest -k 03-jit` runs only deck 03's) is run once per session, two
    kernels at a time, into the session's folder: by the xdist controller under scripts/test,
    else by a thread of the first worker; whoever looks a job up first waits for it there. A
    deck section's verdict comes from its deck's run (by default) or its own (--full).

    Runs go to the end as drift runs them (errors allowed, asserts explained), so one run
    proves both that a notebook is clean and that drift reports nothing on the pinned JAX."""

    def __init__(self, wanted):
        super().__init__()
        self.wanted = wanted

    def __missing__(self, job):
        path, section = job
        if section is not None and not FULL:   # from the deck's whole run, sections reset
            result, text = self[(path, None)]
            import nbformat  # (after workshop.tools.notebooks: see its SKIPPED_IMPORTS)
            executed = nbformat.reads(text, as_version=4)
            sec = nbs.sections(executed)[section]
            self[job] = (execute.section_result(result, executed, sec), None)
            return self[job]
        self.fetch(job)
        return self[job]

    def fetch(self, job=None, held=None) -> None:
        """Every wanted run (and `job`) into this dict: from the session's folder, where the
        first worker to need them (or the prefetch) put them, or run now and put there. A lock
        file makes the other worker wait for the running ones rather than run them again
        (`held`: the lock, already taken by the caller)."""
        wanted = self.wanted if FULL else {(p, None) for p, _ in self.wanted}
        todo = [j for j in JOBS if j not in self and (j in wanted or j == job)
                and (FULL or j[1] is None)]
        folder = Path(os.environ[RUNS_DIR])
        with held or open(folder / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            kept = lambda j: folder / f"{job_id(j)}.json"
            new = [j for j in todo if not kept(j).exists()]
            for j, (result, text) in zip(new, execute.run_many(
                    new, allow_errors=True, preamble=drift.PREAMBLE, sections_alone=not FULL)):
                kept(j).write_text(json.dumps([asdict(result), text]), encoding="utf-8")
            for j in todo:
                result, text = json.loads(kept(j).read_text(encoding="utf-8"))
                self[j] = (execute._result(result), text)


WANTED: set = set()
RUNS_DIR = "WORKSHOP_TEST_RUNS"
_RUNS: list = []


def _runs() -> Runs:
    if not _RUNS:
        _RUNS.append(Runs(WANTED))
    return _RUNS[0]


SLOW_FILES = {"test_present_slides.py", "test_present_server.py", "test_present_decks_a.py",
              "test_present_decks_b.py", "test_scaffold.py", "test_attendee_venv.py",
              "test_drift.py", "test_hub.py", "test_release.py"}


# scripts/test's two workers take a test file each in turn (--dist loadfile: a file's module
# fixtures, a server or a scratch kit or a plain venv, are made once), the longest files first so
# they end with the rest; the files that read the notebook runs last, so both workers have
# other tests to do while the first worker makes the runs. The machine is busy throughout (1.8
# to 2 cores measured): the lab checks, pure CPU, come after the first burst (the notebook
# runs, the new-deck test's build), where they took a third of their time (J3's 98 s -> 39 s)
FIRST = ["test_scaffold.py", "test_build.py", "test_present_server.py", "test_cli.py",
         "test_lab_answers_j3.py", "test_lab_answers.py", "test_labs.py",
         "test_attendee_venv.py", "test_present_slides.py", "test_hub.py",
         "test_presenter_tools.py", "test_release.py", "test_compose.py"]
# the files that read the notebook runs. xdist hands a worker the next file once its own has 2
# tests left, so the worker that takes decks_a (2 tests) takes test_notebooks with it, and the
# other decks_b (4), then the short ones: both end at about the same time
RUNS_FILES = ["test_present_decks_a.py", "test_notebooks.py", "test_present_decks_b.py",
              "test_site.py", "test_handouts.py", "test_drift.py", "test_lab_solutions.py"]


def _order(item) -> int:
    name = item.path.name
    if name in FIRST:
        return FIRST.index(name)
    return len(FIRST) + 1 + RUNS_FILES.index(name) if name in RUNS_FILES else len(FIRST)


@pytest.hookimpl(tryfirst=True)   # before -m selects by them
def pytest_collection_modifyitems(config, items):
    items.sort(key=_order)
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        # the marks follow the machinery: a notebook run, a browser, a server or a scratch kit
        if fixtures & {"runs"} or item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
        if fixtures & {"chromium", "printer"}:
            item.add_marker(pytest.mark.browser)
        # a browser, or the rare (a kill, a flood, a read-only disk) and the hub, is slow too:
        # -m 'not slow' is the inner loop, with no notebook, build, browser or server
        if any(item.get_closest_marker(m) for m in ("browser", "robust", "hub", "thorough")):
            item.add_marker(pytest.mark.slow)
    # the quick suite (scripts/test) leaves out the tests that the kit survives the rare, the
    # classroom hub's (they run only as root) and the thorough (the quick run's proofs over more
    # cases); they run with --full, with -m robust, -m hub or -m thorough (CI runs all three
    # after the quick suite), or named one by one
    if _whole_suite(config) and not FULL:
        rare = [item for item in items
                if any(item.get_closest_marker(m) for m in LEFT_OUT)]
        if rare:
            config.hook.pytest_deselected(items=rare)
            left_out = set(rare)
            items[:] = [item for item in items if item not in left_out]


# what the quick run leaves out (pyproject.toml's markers say why)
LEFT_OUT = ("robust", "hub", "thorough")


def pytest_terminal_summary(terminalreporter, config):
    # (under xdist the workers leave them out, and the summary does not count them)
    if not _is_worker(config) and _whole_suite(config) and not FULL:
        terminalreporter.write_line("the robust, hub and thorough tests were left out (the quick "
                                    "run): scripts/test -m 'robust or hub or thorough' runs them, "
                                    "scripts/test --full all")


@pytest.hookimpl(trylast=True)   # after -k and -m deselect: only the selected tests' runs
def pytest_collection_finish(session):
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "runs" in set(getattr(item, "fixturenames", ())):
            if "job" in params:
                WANTED.add(params["job"])
            # a deck's, or any notebook's, whole run (a lab solution's, by its path)
            WANTED.update((v, None) for v in params.values() if (v, None) in JOBS)
    # the runs start now, beside the first tests (they use two kernels; most tests wait on a
    # browser, a server or a subprocess): the first worker starts them, the others find them.
    # Not beside a lab check in this process: a check works in a scratch folder it then removes
    # (os.chdir), and a pool worker spawned meanwhile starts in that folder and dies
    # (BrokenProcessPool, seen under -n 0); then the first test that needs a run makes them.
    worker = getattr(session.config, "workerinput", {}).get("workerid", "gw0")
    checks_here = any(item.path.name in CHECKS_IN_PROCESS for item in session.items)
    if WANTED and worker == "gw0" and not session.config.option.collectonly \
            and not os.environ.get(PREFETCHED) and not checks_here:
        threading.Thread(target=_runs().fetch, daemon=True, name="workshop-runs").start()


# the test files that run lab checks in this process (each in a scratch working folder)
CHECKS_IN_PROCESS = {"test_labs.py", "test_lab_answers.py", "test_lab_answers_j3.py"}


GIT_WHO = {"GIT_AUTHOR_NAME": "Kit Maintainer", "GIT_AUTHOR_EMAIL": "kit@example.invalid",
           "GIT_COMMITTER_NAME": "Kit Maintainer", "GIT_COMMITTER_EMAIL": "kit@example.invalid"}


@pytest.fixture(scope="module")
def kit_copy(tmp_path_factory):
    """The kit's files as a clean clone has them (tracked, and new ones git does not ignore),
    committed in a repository of their own: a scratch kit whose `git status` says what a step
    changed (test_scaffold, test_release). Its commands run with PYTHONPATH at the copy."""
    root = tmp_path_factory.mktemp("kit")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"],
                            cwd=paths.ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        if (paths.ROOT / rel).is_file():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(paths.ROOT / rel, root / rel)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the kit"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, timeout=120,
                       env={**os.environ, **GIT_WHO})
    return root


@pytest.fixture(scope="session")
def runs():
    return _runs()


# ---------------------------------------------------------------------------- the browser tests'
# (test_present_slides.py, test_present_server.py, test_present_decks_a.py and _b.py,
# test_presenter_tools.py: a server, a browser and a folder of each module's own; the slideshow
# itself is driven by workshop/tools/present/driver.py)

@pytest.fixture(scope="module")
def playwright_session():
    """One Playwright per module: a second sync_playwright in the same process refuses."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def chromium(playwright_session):
    exe = browser.find()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail(f"no browser for the RISE test: {browser.INSTALL}")
        pytest.skip(f"no browser: {browser.INSTALL}")
    b = playwright_session.chromium.launch(executable_path=exe, headless=True, args=browser.ARGS)
    yield b
    b.close()


# what the presenting fixture's server shows on every title slide (present's flags)
BYLINE = {"presenter": "A. Presenter", "event": "The Test Event", "date": "1 January 2027"}


@pytest.fixture(scope="module")
def presenting(tmp_path_factory):
    """One `present 01` server for every test of a module (a server start is the slow part):
    deck 01 at the URL it printed, the others at the same server's RISE address for their path.
    The presenter's Jupyter config tries to turn the XSRF check and the output rate limit off
    (present keeps them on). The title slides show BYLINE (so every deck's test measures its
    title slide with one)."""
    from workshop.tools.present.driver import start_present, stop_present
    from workshop.tools.present.server import free_port
    cfg = tmp_path_factory.mktemp("jupyter-config")
    (cfg / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {
        "disable_check_xsrf": True, "iopub_data_rate_limit": 1e12}}))
    port = free_port()
    started = time.time()
    proc, url = start_present("01", port, env={"JUPYTER_CONFIG_DIR": str(cfg)},
                              args=tuple(a for k, v in BYLINE.items() for a in (f"--{k}", v)))
    state = {"proc": proc, "url": url, "port": port, "offsite": [], "started": started}
    yield state
    stop_present(proc)


@pytest.fixture(scope="module")
def executed_decks():
    """A folder the present server serves (it serves the checkout) for the decks as the
    session's fresh kernels ran them, beside copies of the decks' stylesheets."""
    folder = paths.BUILD / f"rise-executed-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    for css in paths.DECKS.glob("*.css"):
        shutil.copy(css, folder / css.name)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@functools.cache
def pdf_pages(pdf: Path) -> tuple[str, ...]:
    """Each page's text, read once per PDF per session with poppler's pdftotext (the one the
    tests' pdftoppm comes with), in the order the page draws it (-raw, as pypdf reads it):
    pypdf took 20 s for a 36-page handout, pdftotext 0.4 s."""
    out = subprocess.run(["pdftotext", "-raw", "-enc", "UTF-8", str(pdf), "-"], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    pages = out.split("\f")      # pdftotext ends every page with a form feed
    return tuple(pages[:-1] if pages[-1] == "" else pages)


def pdf_fills(pdf: Path) -> list[float]:
    """How far down each page its content reaches (0 top, 1 bottom), the footer aside: the
    lowest word's bottom edge (poppler's pdftotext -bbox; a picture's labels are words too)."""
    out = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    fills = []
    for _, height, body in re.findall(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>',
                                      out, re.S):
        h = float(height)
        ys = [y for y in map(float, re.findall(r'yMax="([\d.]+)"', body)) if y < 0.92 * h]
        fills.append(max(ys, default=0.0) / h)   # (the footer sits in the last 8%)
    return fills


def tiny(path, *sources, deck=False):
    """A notebook of code cells; a deck has a RISE block, a title slide and slide types."""
    import nbformat  # (after workshop's notebooks module: see its SKIPPED_IMPORTS)
    nb = nbformat.v4.new_notebook()
    cells = [nbformat.v4.new_code_cell(s) for s in sources]
    if deck:
        nb.metadata["rise"] = {"width": 1280, "height": 720}
        nb.metadata["workshop"] = {"title": "A speaker's copy"}
        cells.insert(0, nbformat.v4.new_markdown_cell("# A speaker's copy"))
        for c in cells:
            c.metadata["slideshow"] = {"slide_type": "slide" if c.cell_type == "markdown"
                                       else "-"}
    nb.cells = cells
    nbformat.write(nb, path)
    return path
