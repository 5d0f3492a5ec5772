"""Execute notebooks, each in a fresh kernel, two at a time, timing every cell."""
from __future__ import annotations

import functools
import os
import shutil
import signal
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from multiprocessing import get_context
from pathlib import Path

from ...config import CELL_TIMEOUT, OUTPUT_CAP, PARALLEL
from .. import notebooks as nbs
from .. import paths, processes

# a cell whose output passes OUTPUT_CAP is stopped (the kernel interrupted), keeps its first
# OUTPUT_CAP bytes and fails the run with this error
OUTPUT_TOO_BIG = "OutputTooBig"


@dataclass
class Failure:
    cell: int
    title: str
    error: str

    def __str__(self) -> str:
        return f"cell {self.cell} (slide “{self.title}”): {self.error}"


@dataclass
class Result:
    name: str
    cells: int = 0
    seconds: float = 0.0
    times: list[float] = field(default_factory=list)   # per code cell index, in cell order
    slowest: tuple[int, str, float] = (-1, "", 0.0)     # after setup: index, slide, seconds
    failure: Failure | None = None
    pages: int = 0                 # of the PDFs exported from it
    export_seconds: float = 0.0
    status: str = ""               # "current": inputs unchanged, neither run nor exported
    stopped: str = ""              # allow_errors: why the run ended before the last cell
    shrunk: list = field(default_factory=list)   # (slides PDF page, scale) printed below 100%
    setup_failures: list = field(default_factory=list)   # sections_alone: a reset that failed

    @property
    def ok(self) -> bool:
        return self.failure is None


def cell_seconds(cell) -> float:
    ex = cell.get("metadata", {}).get("execution", {})
    a, b = ex.get("iopub.execute_input"), ex.get("shell.execute_reply")
    if not (a and b):
        return 0.0
    parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))
    return max((parse(b) - parse(a)).total_seconds(), 0.0)


# Before a section that runs code of its own: the kernel forgets every name (IPython's
# %reset; the modules stay imported) and the setup cell runs again, so the section runs with
# what a speaker's copy of it alone would have (nbs.section_notebook): the setup and itself
RESET = "get_ipython().run_line_magic('reset', '-f')\n"
INJECTED = "workshop_injected"


def with_section_resets(nb):
    """`nb` with a reset-and-setup cell (marked INJECTED) before each section whose code a
    whole run would otherwise run with the earlier sections' names still defined."""
    import nbformat
    setup = nb.cells[nbs.setup_index(nb)].source
    starts = [sec.start for sec in nbs.sections(nb)[1:] if not nbs.covered_by_whole_run(nb, sec)]
    for i in reversed(starts):
        cell = nbformat.v4.new_code_cell(RESET + setup)
        cell.metadata[INJECTED] = nbs.title_at(nb, i)
        nb.cells.insert(i, cell)
    return nb


def execute(nb, name: str, cwd: Path, allow_errors: bool = False,
            preamble: str | None = None, kernel_name: str = "python3",
            sections_alone: bool = False) -> tuple[Result, object]:
    """Run `nb` top to bottom in a fresh kernel of this Python (or of the kernel spec
    `kernel_name`); never raises for a cell error.

    allow_errors: go on past a failing cell (the error stays in its outputs); a timeout or a
    dead kernel still stops the run. preamble: code run in the kernel first, as a cell that is
    removed again, so the cell indices of the result are the notebook's own. sections_alone:
    each section (of a deck) starts from the setup cell's names only (with_section_resets; the
    cells it adds are removed again, and a failure in one is the section's).
    """
    import nbformat
    result = Result(name=name, cells=len(nb.cells))
    t0 = time.perf_counter()
    if sections_alone:
        with_section_resets(nb)
    if preamble:
        nb.cells.insert(0, nbformat.v4.new_code_cell(preamble))
    ran = _run_in_kernel(nb, cwd, allow_errors, kernel_name)
    errors, last = _without_added_cells(nb, ran, bool(preamble), name, result)
    if ran.halted and allow_errors:
        result.stopped = ran.halted   # a timeout or a dead kernel: the cells after it never ran
    result.failure = _failure(nb, result, errors, ran, last, allow_errors)
    result.seconds = time.perf_counter() - t0
    result.times = [cell_seconds(c) for c in nb.cells]
    after_setup = range(nbs.setup_index(nb) + 1, len(nb.cells))
    if after_setup:   # the setup cell's time is `import jax`, the same everywhere
        i = max(after_setup, key=result.times.__getitem__)
        result.slowest = (i, nbs.title_at(nb, i), result.times[i])
    return result, nb


@dataclass
class _Ran:
    """What one run in a kernel came to, by the executed notebook's cell indices."""
    errors: dict[int, str] = field(default_factory=dict)   # cell -> "ename: evalue"
    started: list[int] = field(default_factory=list)
    halted: str = ""          # a timeout or a dead kernel: why the run stopped mid-cell
    left: list[str] = field(default_factory=list)   # what it left in its temporary folder


def _run_in_kernel(nb, cwd: Path, allow_errors: bool, kernel_name: str) -> _Ran:
    """Execute `nb` in a fresh kernel, noting each cell's error as nbclient reports it (its
    on_cell_error hook). The kernel's TMPDIR is a folder of this run's own: whatever the
    notebook leaves there after its kernel ended (its atexit handlers ran) is noted, and goes
    with the folder."""
    from ..kernel import fresh_kernel_manager
    ran = _Ran()
    with tempfile.TemporaryDirectory(prefix="workshop-run-") as run:
        tmp = os.path.join(run, "tmp")
        os.mkdir(tmp)
        with fresh_kernel_manager(asynchronous=True, kernel_name=kernel_name,
                                  gracefully=True) as km:
            client = _capped_client()(nb, km=km, timeout=CELL_TIMEOUT,
                                      allow_errors=allow_errors, record_timing=True,
                                      resources={"metadata": {"path": str(cwd)}})
            client.on_cell_start = lambda cell, cell_index: ran.started.append(cell_index)
            client.on_cell_error = lambda cell, cell_index, execute_reply: \
                ran.errors.setdefault(cell_index, _said(execute_reply["content"]))
            ran.halted = _run(client, kernel_env(run, tmp))
            ran.errors.update(_mark_too_big(client, nb))
        ran.left = sorted(os.listdir(tmp))
    return ran


def _said(error) -> str:
    return f"{error.get('ename', 'Error')}: {error.get('evalue', '')}"


def _without_added_cells(nb, ran: _Ran, preamble: bool, name: str,
                         result: Result) -> tuple[dict[int, str], int]:
    """Take the preamble and the injected reset-and-setup cells out again. Returns the cells'
    errors and the last cell started, renumbered to the notebook's own cells; an injected
    cell's error is its section's setup failure (in result.setup_failures)."""
    if preamble:
        nb.cells.pop(0)
        if 0 in ran.errors:
            raise RuntimeError(f"{name}: the preamble failed: {ran.errors[0]}")
    shift = int(preamble)
    errors = {i - shift: e for i, e in ran.errors.items() if i >= shift}
    last = max(ran.started[-1] - shift, 0) if ran.started else 0
    injected = [i for i, c in enumerate(nb.cells) if INJECTED in c.metadata]
    for i in reversed(injected):
        cell = nb.cells.pop(i)
        if i in errors:   # section_result finds it by the section's title
            result.setup_failures.insert(0, (cell.metadata[INJECTED],
                                             errors.pop(i).split("\n")[0][:300]))
    before = lambda i: sum(k < i for k in injected)
    return {i - before(i): e for i, e in errors.items()}, last - before(last)


def _failure(nb, result: Result, errors: dict[int, str], ran: _Ran, last: int,
             allow_errors: bool) -> Failure | None:
    """The run's one failure: the cell that was running when it halted; else the first cell
    that raised; else the section whose setup rerun failed; else files left behind."""
    if ran.halted:
        idx, err = last, errors.get(last, ran.halted)
    elif errors:
        idx = min(errors)
        err = errors[idx]
    elif result.setup_failures:
        title, said = result.setup_failures[0]
        idx = next((sec.start for sec in nbs.sections(nb) if sec.title == title), last)
        err = f"the setup cell, run again before “{title}”: {said}" if allow_errors else said
    elif ran.left:
        end = len(nb.cells) - 1
        return Failure(end, nbs.title_at(nb, end), (
            f"LeftBehind: the run left {len(ran.left)} file(s) in its temporary folder when "
            f"its kernel ended ({', '.join(ran.left[:3])}): remove what a cell makes there "
            "(tempfile.TemporaryDirectory, or shutil.rmtree at the end)"))
    else:
        return None
    return Failure(idx, nbs.title_at(nb, idx), err.split("\n")[0][:300])


def section_result(whole: Result, executed, section) -> Result:
    """A deck section's own verdict from a sections_alone whole run of the deck (`executed` is
    that run's notebook): the first error among its cells, or its reset-and-setup failing, or
    the run having stopped (a timeout, a dead kernel) before the section ended."""
    name = f"{whole.name} § {section.title}"
    res = Result(name=name, cells=section.stop - section.start)
    for title, err in whole.setup_failures:
        if title == section.title:
            res.failure = Failure(section.start, title, f"the setup cell, run alone: {err}")
            return res
    for i in range(section.start, section.stop):
        c = executed.cells[i]
        err = next((o for o in c.get("outputs", []) if o.get("output_type") == "error"), None)
        if c.cell_type == "code" and err:
            res.failure = Failure(i, nbs.title_at(executed, i),
                                  f"{err['ename']}: {err['evalue']}".split("\n")[0][:300])
            return res
    if whole.stopped and whole.failure and whole.failure.cell < section.stop:
        res.failure = Failure(whole.failure.cell, whole.failure.title,
                              f"the run stopped before the section ended: {whole.stopped}")
    res.times = whole.times[section.start:section.stop]
    res.seconds = sum(res.times)
    return res


def _output_bytes(msg) -> int:
    """About how many bytes an output message adds to the notebook."""
    c = msg.get("content", {})
    if msg.get("msg_type") == "stream":
        return len(c.get("text", ""))
    if msg.get("msg_type") == "error":
        return sum(map(len, c.get("traceback", []))) + len(c.get("evalue", ""))
    return sum(len(v) if isinstance(v, str) else len(repr(v)) for v in c.get("data", {}).values())


@functools.cache
def _capped_client():
    """nbclient's NotebookClient, but a cell's output past OUTPUT_CAP bytes is not kept: the
    kernel is interrupted once and what follows is dropped (the interrupt's own error too)."""
    import asyncio

    import nbclient

    class Capped(nbclient.NotebookClient):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.made: dict[int, int] = {}   # cell index -> bytes of output the kernel sent
            # the interrupts sent and not yet done: the event loop keeps only a weak reference
            # to a task, and a task collected mid-way would never interrupt the kernel (the
            # cell would then run on to the timeout)
            self.interrupting: set = set()

        def interrupt(self) -> None:
            task = asyncio.ensure_future(self.km.interrupt_kernel())
            self.interrupting.add(task)
            task.add_done_callback(self.interrupting.discard)

        def output(self, outs, msg, display_id, cell_index):
            made = self.made
            before = made.get(cell_index, 0)
            made[cell_index] = before + _output_bytes(msg)
            if made[cell_index] <= OUTPUT_CAP:
                return super().output(outs, msg, display_id, cell_index)
            if before > OUTPUT_CAP:
                return None
            self.interrupt()
            if msg["msg_type"] == "stream":   # the text up to the cap
                msg = {**msg, "content": {**msg["content"],
                                          "text": msg["content"]["text"][:OUTPUT_CAP - before]}}
                return super().output(outs, msg, display_id, cell_index)
            return None

    return Capped


def _mark_too_big(client, nb) -> dict[int, str]:
    """Each cell whose output passed OUTPUT_CAP ends with an OUTPUT_TOO_BIG error output in
    place of the interrupt's; returns {cell: that error}."""
    import nbformat
    marked = {}
    for i, made in sorted(client.made.items()):
        if made <= OUTPUT_CAP:
            continue
        cell = nb.cells[i]
        cell.outputs = [o for o in cell.outputs if not (
            o.get("output_type") == "error" and o.get("ename") == "KeyboardInterrupt")]
        why = (f"the cell's output passed {OUTPUT_CAP // 2**20} MB (a slide shows about 30 "
               f"lines), so the build stopped it and kept the first {OUTPUT_CAP // 2**20} MB: "
               "print less")
        cell.outputs.append(nbformat.v4.new_output("error", ename=OUTPUT_TOO_BIG, evalue=why,
                                                   traceback=[f"{OUTPUT_TOO_BIG}: {why}"]))
        marked[i] = f"{OUTPUT_TOO_BIG}: {why}"
    return marked


def kernel_env(run: str, tmp: str) -> dict:
    """The environment of a run's kernel: TMPDIR its own folder; where HOME cannot be written
    (unset to a read-only place), IPython's and matplotlib's folders beside it, not in it
    (they would make one each in TMPDIR, not the notebook's doing)."""
    env = dict(os.environ, TMPDIR=tmp)
    home = os.path.expanduser("~")
    if not (os.path.isdir(home) and os.access(home, os.W_OK)):
        for var, name in (("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "matplotlib")):
            if var not in env:
                env[var] = os.path.join(run, name)
                os.makedirs(env[var], exist_ok=True)
    return env


def _run(client, env: dict) -> str:
    """Execute (the kernel started with `env`). A cell that raised is noted by the client's
    on_cell_error hook; returns why the run halted mid-cell (a timeout, a dead kernel), or ""."""
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    try:
        client.execute(env=env)
    except CellTimeoutError:
        return f"timed out: the cell ran past {client.timeout} s"
    except DeadKernelError:
        return "the kernel died while the cell ran"
    except CellExecutionError:
        pass   # (the hook has it, with the cell's index)
    return ""


def _job(args):
    path, section, opts, raw = args
    path = Path(path)
    nb = nbs.read(path) if raw is None else nbs.loads(raw, path)   # (the build read it already)
    name = paths.short(path)
    if section is not None:
        sec = nbs.sections(nb)[section]
        nb = nbs.section_notebook(nb, sec)
        name = f"{name} § {sec.title}"
    result, executed = execute(nb, name, path.parent, **opts)
    import nbformat
    return asdict(result), nbformat.writes(executed)


def run_many(jobs: list[tuple], parallel: int = PARALLEL, **opts):
    """Execute (notebook, section-or-None) jobs, `parallel` at a time, each in its own kernel;
    a job's third item, when there is one, is the notebook's bytes, already read.

    opts go to `execute` (allow_errors, preamble). Returns [(Result, executed notebook JSON)]
    in the order of `jobs`. If anything interrupts it (Ctrl-C, an error), every process it
    started (the workers, their kernels) is ended before the exception goes on; kernels run in
    their own sessions (jupyter_client), so they are found as descendants, not by group.
    """
    ctx = get_context("spawn")
    processes.tracker_outlives_the_terminal()
    # the workers' temporary folder (their runs', their kernels' sockets and connection files)
    # is in one of the build's, removed after them: a Ctrl-C as a kernel started ended a worker
    # before its own clean-up ran, and left them in /tmp (probe 8)
    scratch = tempfile.mkdtemp(prefix="workshop-build-")
    pool = ProcessPoolExecutor(max_workers=parallel, mp_context=ctx,
                               initializer=processes.worker_init, initargs=(os.getpid(), scratch))
    try:
        # the workers start with Ctrl-C blocked (a blocked signal stays blocked across exec):
        # a terminal's Ctrl-C reached a worker still importing, before worker_init, and it
        # printed a KeyboardInterrupt traceback beside the build's one line (probe 7). One
        # pressed meanwhile reaches the build as soon as they are started
        was = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            results = pool.map(_job, [(str(job[0]), job[1], opts, (job[2:] or [None])[0])
                                      for job in jobs])
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, was)
        out = list(results)
    except BaseException:
        # (multiprocessing's resource tracker stays: it cleans up after the pool itself)
        processes.end_processes([c for c in processes.children()
                                 if not processes.is_resource_tracker(c)])
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    pool.shutdown()
    return [(_result(d), text) for d, text in out]


def _result(d: dict) -> Result:
    f = d.pop("failure")
    r = Result(**d)
    r.slowest = tuple(r.slowest)
    r.failure = Failure(**f) if f else None
    return r
