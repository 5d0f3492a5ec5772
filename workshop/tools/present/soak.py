"""The soak (issue 31, item 3): the whole workshop run through once as a presenter and the labs
would, and what that leaves behind. `scripts/soak [--decks 01,02] [--limit MIN]` (`python -m
workshop.tools.present.soak`); not part of pytest (it takes a long while). The slideshow is
driven as the browser tests drive it (`present/driver.py`).

1. BEFORE: the soak's process tree, every process of the soak anywhere on the machine (each
   process it starts inherits a marker in its environment, so one that left the tree, a kernel
   or a server re-parented to init, is still found), the jupyter/ipykernel/chromium processes
   of others, the TCP ports listening on 127.0.0.1, the tree's open files, its resident memory,
   the files (and mtimes) of the checkout outside build/, .venv/ and .git/, build/present/, and
   the soak's own temporary folder (TMPDIR for everything it starts).
2. Each deck in turn: `present NN` (a subprocess, as a presenter types it), the deck in real
   Chromium at 1280×720, the notes window (T) open, every code cell of the talk path (the
   cells before the appendix divider) run from the slideshow; on one deck the kernel is
   restarted mid-section through Jupyter's REST API and the presenter's guide's recovery
   followed (decks/README.md: the setup cell on the title slide, then the current section from
   its first slide), then the next slide's cell must run; on another the kernel process is
   killed (SIGKILL, as the out-of-memory killer does), Jupyter restarts it, the page's dialog is
   answered and the same recovery followed; Ctrl-C (SIGINT) ends `present`. The
   tree's RSS and process count are sampled after each deck.
3. Every lab solution in a fresh kernel (workshop.tools.builder.execute.run_many), counting failures
   and the checks that said correct.
4. AFTER: the same figures; one line per problem (anything left behind, memory grown past the
   bound), the before/after table on stdout and in build/soak.md; exit 1 on any problem.

A total time limit (default 40 min) ends everything the soak started and fails in one line.
Run it in a clean clone: the checkout's files are compared before and after, so anyone else
editing the same checkout meanwhile shows as a problem.
"""
from __future__ import annotations

import argparse
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from ...config import CELL_TIMEOUT
from .. import browser, errors, paths, talk
from .. import notebooks as nbs
from .driver import (
    FIRST_JS,
    FRAGMENTS_JS,
    NEXT_JS,
    SHOTS,
    base_token,
    counter,
    kernel_processes,
    notes_of_slide,
    port_open,
    run_slide_cells,
    start_present,
    stop_present,
)
from .server import LOGS, call, free_port

ROOT = paths.ROOT
REPORT = ROOT / "build" / "soak.md"
MARK = "WORKSHOP_SOAK"                 # in the environment of every process the soak starts
NOT_CHECKOUT = {"build", ".venv", ".git"}
OTHERS = re.compile(r"jupyter|ipykernel|chrom", re.I)   # what a leaked presentation looks like
SERVERS = re.compile(r"jupyter|ipykernel")
# multiprocessing's helper, started by the labs' process pool (run_many), lives until the
# process that started it exits: the soak's own, not left behind by the kit
TRACKER = "multiprocessing.resource_tracker"
MB = 1024 * 1024
# The memory bound. After each deck everything the deck used has ended (its server, its kernel,
# its pages), so the tree is the soak's Python, Playwright's driver and the browser with no
# page open: the same size after every deck, give or take the browser's caches (tens of MB).
# A page, a renderer or a server kept per deck is 100-300 MB each (a RISE page is a whole
# JupyterLab), so growth beyond GROWTH_MB from the first deck's sample to the last is a leak.
GROWTH_MB = 150
CELL_TIMEOUT_MS = CELL_TIMEOUT * 1000   # the build's own cell timeout
NUMBER = ".reveal .slide-number"
NOTES_VALUE = ".speaker-controls-notes .value"


def log(msg: str) -> None:
    print(f"soak {time.strftime('%H:%M:%S')} {msg}", flush=True)


# ---------------------------------------------------------------------------- what is there

def ours(token: str) -> list[psutil.Process]:
    """Every process but this one whose environment carries this soak's marker."""
    me, found = os.getpid(), []
    for p in psutil.process_iter():
        if p.pid == me:
            continue
        try:
            if p.environ().get(MARK) == token:
                found.append(p)
        except (psutil.Error, OSError):
            continue
    return found


def describe(p: psutil.Process) -> str:
    try:
        cmd = " ".join(p.cmdline())[:110] or p.name()
    except psutil.Error:
        cmd = "?"
    return f"pid {p.pid} ({cmd})"


def tree() -> list[psutil.Process]:
    me = psutil.Process()
    return [me, *me.children(recursive=True)]


def rss(procs) -> int:
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def listening() -> dict[int, int | None]:
    """{port: pid} of TCP sockets listening on 127.0.0.1 (or every address)."""
    out = {}
    for c in psutil.net_connections(kind="tcp"):
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.ip in ("127.0.0.1",
                                                                          "0.0.0.0", "::"):
            out[c.laddr.port] = c.pid
    return out


def open_files(procs) -> tuple[int, set[str]]:
    """(file descriptors, names of the regular files open) over `procs`."""
    fds, names = 0, set()
    for p in procs:
        try:
            fds += p.num_fds()
            names |= {f.path for f in p.open_files()}
        except psutil.Error:
            pass
    return fds, names


CACHES = ("__pycache__", ".ruff_cache", ".pytest_cache")


def is_cache(rel: str) -> bool:
    """A tool's cache (Python's bytecode, which any import writes where
    PYTHONDONTWRITEBYTECODE is unset; ruff's; pytest's): never a deck or a lab, ignored by git,
    and not written by the kit; counted apart."""
    return any(part in CACHES for part in rel.split("/"))


def fd_targets() -> set[str]:
    """What the soak's own descriptors point at (a pipe or socket by its inode)."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    return out


def checkout_files() -> dict[str, tuple[int, int]]:
    """{path: (mtime_ns, size)} of the checkout outside build/, .venv/ and .git/."""
    out = {}
    for dirpath, dirs, files in os.walk(ROOT):
        if Path(dirpath) == ROOT:
            dirs[:] = [d for d in dirs if d not in NOT_CHECKOUT]
        for f in files:
            p = Path(dirpath, f)
            try:
                st = p.lstat()
            except OSError:
                continue
            out[p.relative_to(ROOT).as_posix()] = (st.st_mtime_ns, st.st_size)
    return out


def listing(folder: Path) -> dict[str, int]:
    out = {}
    if folder.is_dir():
        for p in sorted(folder.rglob("*")):
            try:
                out[p.relative_to(folder).as_posix()] = p.lstat().st_mtime_ns
            except OSError:
                continue
    return out


def unclean() -> list[str]:
    """What makes the checkout other than a fresh clone with its .venv: changed, untracked or
    ignored paths outside build/, .venv/, setup's egg-info and the tools' caches (`git status`).
    A file that is already there (a checkpoint folder, say) is not seen being written."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ["(git status failed)"]
    names = [line[3:] for line in out.splitlines()]
    return [p for p in names if p.split("/")[0] not in NOT_CHECKOUT and not is_cache(p)
            and not p.endswith(".egg-info/")]


@dataclass
class Snapshot:
    tree: list[str]
    marked: list[str]
    others: list[str]
    ports: dict[int, int | None]
    fds: int
    files_open: set[str]
    rss: int
    own_fds: set[str]
    checkout: dict[str, tuple[int, int]]
    present_dir: dict[str, int]
    tmp: dict[str, int]


def snapshot(token: str, tmp: Path) -> Snapshot:
    procs = tree()
    mine = {p.pid for p in procs} | {p.pid for p in ours(token)}
    others = []
    for p in psutil.process_iter():
        try:
            if p.pid not in mine and OTHERS.search(" ".join(p.cmdline()[:3])):
                others.append(describe(p))
        except psutil.Error:
            continue
    fds, names = open_files(procs)
    return Snapshot(tree=[describe(p) for p in procs[1:]],
                    marked=[describe(p) for p in ours(token)], others=others,
                    ports=listening(), fds=fds, files_open=names, rss=rss(procs),
                    own_fds=fd_targets(),
                    checkout=checkout_files(), present_dir=listing(LOGS), tmp=listing(tmp))


# ---------------------------------------------------------------------------- one deck

@dataclass
class DeckRun:
    deck: str
    port: int = 0
    seconds: float = 0.0
    ready: float = 0.0          # present → "server ready" line (its own figure)
    first_slide: float = 0.0    # present started → first slide visible in the browser
    cells: int = 0              # talk-path code cells that ran from the slideshow
    expected: int = 0
    restart: str = ""
    notes: str = ""
    kernels: int = 0            # kernels the server ran at the end of the deck
    exit: int | None = None
    rss_during: int = 0
    fds_during: int = 0
    rss_after: int = 0
    procs_after: int = 0
    marked_after: int = 0
    console_errors: int = 0
    console_first: list[str] = field(default_factory=list)
    log_tracebacks: int = 0
    problems: list[str] = field(default_factory=list)


def slide_plan(nb) -> tuple[int, int, dict[int, int], list[list[int]]]:
    """(slides in the deck, slides on the talk path, {cell index: its slide}, the talk
    sections' slide numbers)."""
    stop = talk.talk_stop(nb)
    slide_of, n, talk_n = {}, 0, 0
    for i, c in enumerate(nb.cells):
        if nbs.slide_type(c) in ("slide", "subslide"):
            n += 1
            if i < stop:
                talk_n = n
        slide_of[i] = n
    secs = [sorted({slide_of[i] for i in range(s.start, s.stop)}) for s in talk.talk_sections(nb)]
    return n, talk_n, slide_of, secs


def restart_point(nb, slide_of, secs) -> tuple[int, int, int] | None:
    """Where to restart the kernel: (the section's first slide, the slide after which to
    restart, the next slide, whose cell must run after the recovery) in a talk section near the
    middle with at least two slides of code, so the recovery re-runs some and the next slide
    depends on them."""
    code_slides = {slide_of[i] for i, c in enumerate(nb.cells) if talk.is_visible_code(c)}
    candidates = [s for s in secs[1:] if len([k for k in s if k in code_slides]) >= 2]
    if not candidates:
        return None
    sec = candidates[len(candidates) // 2]
    coded = [k for k in sec if k in code_slides]
    nxt = coded[-1]
    return sec[0], nxt - 1, nxt


def number(page) -> str:
    return page.inner_text(NUMBER).replace(" ", "")


def go_to(page, k: int, n: int, talk_n: int) -> None:
    """Forward (all fragments shown, as the presenter does) until slide k shows."""
    for _ in range(n + 5):
        if number(page) == counter(k, n, talk_n):
            return
        page.evaluate(FRAGMENTS_JS)
        page.evaluate(NEXT_JS)
    raise AssertionError(f"could not reach slide {k}: RISE shows {number(page)}")


def failed_outputs(page) -> list[str]:
    return page.evaluate(
        "() => [...document.querySelectorAll('.reveal .jp-OutputArea-output')]"
        ".filter(o => o.dataset.mimeType === 'application/vnd.jupyter.stderr'"
        " && /Traceback|Error/.test(o.innerText)).map(o => o.innerText.slice(0, 200))")


def notes_show(notes, nb, k: int, timeout=30_000) -> bool:
    """Whether the notes window shows slide k's first note (the first words, as rendered)."""
    texts = notes_of_slide(nb, k)
    if not texts:
        return True
    words = " ".join(re.sub(r"[*`]", "", texts[0]).split()[:6])
    try:
        notes.wait_for_function(f"(w) => {{ const v = document.querySelector('{NOTES_VALUE}');"
                                " return v && v.innerText.replace(/\\s+/g, ' ').includes(w); }",
                                arg=words, timeout=timeout, polling=250)
        return True
    except Exception:
        return False


def restart_kernel(url: str, rel: str) -> str:
    """The deck's kernel restarted through Jupyter's REST API (what the page's own restart
    asks the server); its id."""
    base, token = base_token(url)
    session = next(s for s in call(base, token, "/api/sessions") if s["path"] == rel)
    kid = session["kernel"]["id"]
    call(base, token, f"/api/kernels/{kid}/restart", body={})
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if call(base, token, f"/api/kernels/{kid}")["execution_state"] == "idle":
            break
        time.sleep(0.5)
    return kid


def kill_kernel(url: str, rel: str) -> str:
    """The deck's kernel process SIGKILLed; Jupyter's restarter starts another under the same
    id: its id, once that one is idle."""
    base, token = base_token(url)
    session = next(s for s in call(base, token, "/api/sessions") if s["path"] == rel)
    kid = session["kernel"]["id"]
    old = kernel_processes(kid)
    if not old:
        raise AssertionError(f"no process of kernel {kid}")
    for pid in old:
        os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        new = set(kernel_processes(kid)) - set(old)
        if new and call(base, token, f"/api/kernels/{kid}")["execution_state"] == "idle":
            return kid
        time.sleep(0.5)
    raise AssertionError(f"kernel {kid} was not restarted within 60 s of its kill")


@dataclass
class Showing:
    """One deck on show: its notebook, its path as the server names it, the URL present
    printed, the slideshow's page and the notes window, the deck's slides and its talk path's,
    and where (if anywhere) the kernel is restarted and how ("rest" or "kill")."""
    nb: object
    rel: str
    url: str
    page: object
    n: int
    talk_n: int
    where: tuple[int, int, int] | None
    how: str
    notes: object = None


def present_deck(chromium, deck: Path, restart: str, token: str, state: dict) -> DeckRun:
    """`present NN` for `deck`, as the presenter types it; the deck in `chromium` with the
    notes window open and every code cell of its talk path run from the slideshow (the kernel
    restarted mid-section when `restart` is "rest" or "kill"); Ctrl-C; what it took and what
    it left behind."""
    nb = nbs.read(deck)
    run = DeckRun(deck.stem)
    n, talk_n, slide_of, secs = slide_plan(nb)
    run.expected = sum(talk.is_visible_code(c) for c in nb.cells[:talk.talk_stop(nb)])
    where = restart_point(nb, slide_of, secs) if restart else None
    if restart and where is None:
        run.problems.append(f"{deck.stem}: no talk section with two slides of code to "
                            "restart in")
    t0 = time.monotonic()
    port = run.port = free_port()
    proc, url = start_present(deck.stem.split("-")[0], port)
    state["present"] = proc
    run.ready = time.monotonic() - t0
    context = chromium.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text[:200]) if m.type == "error" else None)
    show = Showing(nb, deck.relative_to(ROOT).as_posix(), url, page, n, talk_n, where, restart)
    try:
        show_deck(show, context, run, t0)
    except AssertionError as e:   # (the driver's DriverError too)
        SHOTS.mkdir(parents=True, exist_ok=True)
        try:
            page.screenshot(path=str(SHOTS / f"soak-{deck.stem}.png"))
        except Exception:
            pass
        run.problems.append(f"{deck.stem}: {str(e).splitlines()[0]}")
    finally:
        stop_deck(proc, port, context, console, run, state)
    after_deck(run, port, token, t0)
    return run


def show_deck(show: Showing, context, run: DeckRun, t0: float) -> None:
    """The deck opened, the notes window with it, every talk-path slide's cells run in turn,
    and then what ran counted."""
    page = show.page
    page.goto(show.url)
    page.wait_for_selector(".reveal .slides section.present", timeout=90_000)
    run.first_slide = time.monotonic() - t0
    # the notes window, as the presenter opens it: a click on the slide, T
    page.mouse.click(640, 700)
    page.keyboard.press("Escape")
    with context.expect_page(timeout=15_000) as popup:
        page.keyboard.press("t")
    show.notes = popup.value
    if not notes_show(show.notes, show.nb, 1, timeout=60_000):
        run.problems.append(f"{run.deck}: the notes window did not show slide 1's notes")
    page.bring_to_front()
    for i in range(1, show.talk_n + 1):
        present_slide(show, i, run)
    count_what_ran(show, run)


def present_slide(show: Showing, i: int, run: DeckRun) -> None:
    """Slide i: its cells run from the slideshow, its fragments shown; the kernel restarted
    after it when it is the restart's slide, its cells' outputs looked at when it is the one
    after the recovery; then the next slide."""
    page, where = show.page, show.where
    shown = number(page)
    if shown != counter(i, show.n, show.talk_n):
        raise AssertionError(f"expected slide {i}, RISE shows {shown}")
    # (a fragment is shown once the cells above it have run, as the presenter does)
    run_slide_cells(page, f"{run.deck} slide {i}", timeout=CELL_TIMEOUT_MS)
    page.evaluate(FRAGMENTS_JS)
    if where and i == where[1]:
        run.restart = recover(show, run)
    if where and i == where[2]:    # the next slide after the recovery: its cells ran
        bad = page.evaluate(
            "() => [...document.querySelectorAll('.reveal section.present:not(.stack) "
            ".jp-OutputArea-output')].filter(o => o.dataset.mimeType === "
            "'application/vnd.jupyter.stderr' && /Traceback|Error/.test(o.innerText))"
            ".map(o => o.innerText.slice(0, 200))")
        if bad:
            run.problems.append(f"{run.deck}: after the restart, slide {i}'s cell "
                                f"failed: {bad[0]!r}")
        else:
            run.restart += " (ran)"
    if i < show.talk_n:
        page.evaluate(NEXT_JS)


def count_what_ran(show: Showing, run: DeckRun) -> None:
    """At the talk path's end: the notes window followed, every talk-path cell ran, none
    failed, and the server ran the deck's one kernel."""
    page, stem = show.page, run.deck
    if not notes_show(show.notes, show.nb, show.talk_n):
        run.problems.append(f"{stem}: the notes window did not follow to slide {show.talk_n}")
    run.notes = "followed" if not any("notes window" in p for p in run.problems) else "no"
    run.cells = page.evaluate(   # (a chart's cell, its code hidden: ran if it drew)
        "() => [...document.querySelectorAll('.reveal .slides .jp-CodeCell:not(.reveal-skip)')]"
        ".filter(c => c.querySelector('.jp-InputArea-prompt') ? /\\[\\d+\\]/.test("
        "c.querySelector('.jp-InputArea-prompt').textContent) : !!c.querySelector("
        "'.jp-OutputArea-output')).length")
    if run.cells != run.expected:
        run.problems.append(f"{stem}: {run.cells} of the talk path's {run.expected} "
                            "code cells ran from the slideshow")
    bad = failed_outputs(page)
    if bad:
        run.problems.append(f"{stem}: a cell failed when run from the slideshow: "
                            f"{bad[0]!r}" + (f" (and {len(bad) - 1} more)" if bad[1:]
                                             else ""))
    base, tok = base_token(show.url)
    run.kernels = len(call(base, tok, "/api/kernels"))
    if run.kernels != 1:
        run.problems.append(f"{stem}: the server ran {run.kernels} kernels, not the "
                            "deck's one")


def stop_deck(proc, port: int, context, console: list[str], run: DeckRun,
              state: dict) -> None:
    """The console's errors and the tree's figures while the deck is on show, then Ctrl-C in
    present's terminal, with the slides and the notes still open (as on stage)."""
    # the console before the stop (after it, the page's connections to the server fail)
    run.console_errors, run.console_first = len(console), console[:3]
    run.rss_during = rss(tree())
    run.fds_during = open_files(tree())[0]
    run.exit = stop_present(proc)
    state["present"] = None
    out = proc.stdout.read() if proc.stdout else ""
    if run.exit != 0:
        run.problems.append(f"{run.deck}: present ended with {run.exit} on Ctrl-C: "
                            f"{out.strip().splitlines()[-1:]}")
    if port_open(port):
        run.problems.append(f"{run.deck}: port {port} still listens after Ctrl-C")
    context.close()


def after_deck(run: DeckRun, port: int, token: str, t0: float) -> None:
    """What the deck left: its server log's tracebacks, the tree's memory and processes, and
    any process of the soak's that outlived its present."""
    server_log = LOGS / f"{port}.log"
    if server_log.exists():
        run.log_tracebacks = server_log.read_text(errors="replace").count("Traceback")
    run.seconds = time.monotonic() - t0
    time.sleep(2)    # what ends with the server has a moment to go
    procs = tree()
    run.rss_after, run.procs_after = rss(procs), len(procs)
    # a server or kernel anywhere, or anything else that left the tree (the browser's crash
    # handlers leave it by design, and end with the browser)
    left = [p for p in ours(token) if SERVERS.search(describe(p))
            or (p not in procs and "chrom" not in describe(p))]
    run.marked_after = len(left)
    for p in left:
        run.problems.append(f"{run.deck}: a process outlived its present: {describe(p)}")


def recover(show: Showing, run: DeckRun) -> str:
    """Restart the kernel after slide where[1] (show.how: "rest", through the REST API, or
    "kill", its process SIGKILLed and the page's dialog answered), then the guide's recovery:
    the title slide's setup cell, then the section from its first slide; then the next slide's
    cells must run."""
    first, at, nxt = show.where
    page, stem, n = show.page, run.deck, show.n
    said = ""
    if show.how == "kill":
        kill_kernel(show.url, show.rel)
        try:   # JupyterLab tells the presenter: "… appears to have died. It will restart …"
            dialog = page.wait_for_selector(".jp-Dialog", timeout=15_000)
            said = " ".join(dialog.inner_text().split())[:120]
            page.click(".jp-Dialog .jp-mod-accept")
            page.wait_for_selector(".jp-Dialog", state="detached", timeout=10_000)
        except Exception:
            run.problems.append(f"{stem}: after the kernel was killed no dialog told the "
                                "presenter, or it would not close")
    else:
        restart_kernel(show.url, show.rel)
    page.evaluate(FIRST_JS)
    go_to(page, 1, n, show.talk_n)
    prompts = run_slide_cells(page, f"{stem} slide 1 (after the restart)",
                              timeout=CELL_TIMEOUT_MS)
    banner = page.inner_text(".reveal section.present .jp-CodeCell .jp-OutputArea")
    if prompts[:1] != ["[1]:"]:
        run.problems.append(f"{stem}: after the restart the setup cell ran as {prompts[:1]}, "
                            "not [1]: the kernel did not restart")
    if "8 CPU devices" not in banner:
        run.problems.append(f"{stem}: the setup cell after the restart says {banner[:120]!r}")
    for k in range(first, at + 1):
        go_to(page, k, n, show.talk_n)
        run_slide_cells(page, f"{stem} slide {k} (after the restart)", timeout=CELL_TIMEOUT_MS)
        page.evaluate(FRAGMENTS_JS)
    if not notes_show(show.notes, show.nb, at):
        run.problems.append(f"{stem}: after the restart the notes window did not follow to "
                            f"slide {at}")
    # the main walk goes on to the next slide (nxt), whose cells must run in the new kernel
    what = f"killed (the page said “{said}”)" if show.how == "kill" else "restarted"
    return f"{what} after slide {at}: setup, slides {first}–{at} again, then {nxt}"


# ---------------------------------------------------------------------------- the labs

@dataclass
class LabRun:
    lab: str
    seconds: float
    correct: int
    checks: int
    failure: str


def check_labs() -> list[LabRun]:
    import nbformat

    from ..builder.execute import run_many
    labs = nbs.lab_sources()
    out = []
    for path, (result, text) in zip(labs, run_many([(p, None) for p in labs])):
        nb = nbformat.reads(text, as_version=4)
        verdicts = [o.get("text") or o.get("data", {}).get("text/plain", "")
                    for c in nb.cells if c.cell_type == "code"
                    and re.match(r"q\d+\.check\(", c.source.strip())
                    and "check" not in nbs.tags(c) for o in c.get("outputs", [])]
        verdicts = ["".join(v) if isinstance(v, list) else v for v in verdicts]
        out.append(LabRun(path.stem, result.seconds,
                          sum("✓ Correct" in v for v in verdicts), len(verdicts),
                          str(result.failure) if result.failure else ""))
    return out


# ---------------------------------------------------------------------------- the verdict

def compare(before: Snapshot, after: Snapshot, ports_used: list[int],
            runs: list[DeckRun]) -> list[str]:
    problems = []
    for p in after.tree:
        if TRACKER not in p:
            problems.append(f"a process is left in the soak's tree: {p}")
    for p in after.marked:
        if p not in after.tree:
            problems.append(f"a process the soak started is still running: {p}")
    kernels = [p for p in after.marked if "ipykernel" in p]
    if kernels:
        problems.append(f"{len(kernels)} kernel(s) left running")
    new_ports = {port: pid for port, pid in after.ports.items() if port not in before.ports}
    for port, pid in sorted(new_ports.items()):
        if port in ports_used or any(f"pid {pid} " in m for m in after.marked):
            problems.append(f"port {port} still listening (pid {pid})")
    changed = sorted(k for k in set(before.checkout) | set(after.checkout)
                     if before.checkout.get(k) != after.checkout.get(k) and not is_cache(k))
    for k in changed:
        what = ("written" if k not in before.checkout else "removed" if k not in after.checkout
                else "rewritten")
        problems.append(f"a file in the checkout outside build/ was {what}: {k}")
    # each server's files are named by its port; the log stays by design (present.py)
    for k in sorted(set(after.present_dir) - set(before.present_dir)):
        stem, _, kind = k.partition(".")
        if "/" not in k and kind != "log" and stem.isdigit() and int(stem) in ports_used:
            problems.append(f"build/present/{k} is left after its server stopped")
    for k in sorted(after.tmp):
        if "/" not in k:
            problems.append(f"left in the soak's temporary folder: {k}")
    new_open = sorted(f for f in after.files_open - before.files_open)
    for f in new_open:
        problems.append(f"a file is still open in the soak's tree: {f}")
    samples = [r.rss_after for r in runs if r.rss_after]
    if len(samples) >= 2 and samples[-1] - samples[0] > GROWTH_MB * MB:
        problems.append(f"the tree's RSS grew {(samples[-1] - samples[0]) / MB:.0f} MB from the "
                        f"first deck to the last (bound {GROWTH_MB} MB)")
    return problems


def table(before: Snapshot, after: Snapshot, runs: list[DeckRun], labs: list[LabRun],
          problems: list[str], wall: float, args, dirty: list[str]) -> str:
    """build/soak.md: the figures before and after, each deck's and each lab's row, the soak's
    own new descriptors, the problems, and others' processes (not counted)."""
    lines = ["# Soak", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}: decks {', '.join(r.deck for r in runs)}; "
             f"{len(labs)} labs; wall time {wall / 60:.1f} min (limit {args.limit} min); "
             f"{len(problems)} problem(s)."
             + (f" Not a fresh clone: {', '.join(dirty[:5])}{' …' if dirty[5:] else ''} "
                "(files already there are not seen being written)." if dirty else ""), "",
             "| figure | before | after |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in figures(before, after)]
    lines += deck_rows(runs) + lab_rows(labs)
    new_fds = sorted(after.own_fds - before.own_fds)
    if new_fds:
        lines += ["", f"The soak's own new descriptors: {', '.join(new_fds)}."]
    lines += ["", "## Problems", ""] + ([f"- {p}" for p in problems] or ["none"])
    if before.others or after.others:
        lines += ["", "Processes of others (not the soak's; not counted):", ""]
        lines += [f"- before: {p}" for p in before.others] + \
                 [f"- after: {p}" for p in after.others]
    return "\n".join(lines) + "\n"


def figures(before: Snapshot, after: Snapshot) -> list[tuple]:
    """The table's rows: (figure, before, after)."""
    changed = [k for k in set(before.checkout) | set(after.checkout)
               if before.checkout.get(k) != after.checkout.get(k)]
    pyc = [k for k in changed if is_cache(k)]
    new_present = sorted(set(after.present_dir) - set(before.present_dir))
    fmt_ports = lambda s: ", ".join(str(p) for p in sorted(s.ports)) or "none"

    def count(procs):
        n = sum(TRACKER in p for p in procs)
        return f"{len(procs)}" + (f" ({n}: multiprocessing's resource tracker of the labs' "
                                  "pool, which ends with the soak)" if n else "")
    return [
        ("processes in the soak's tree (beside itself)", count(before.tree), count(after.tree)),
        ("processes the soak started, anywhere (by its marker)", count(before.marked),
         count(after.marked)),
        ("jupyter/ipykernel/chromium processes of others on the machine", len(before.others),
         len(after.others)),
        ("TCP ports listening on 127.0.0.1", f"{len(before.ports)} ({fmt_ports(before)})",
         f"{len(after.ports)} ({fmt_ports(after)})"),
        ("open file descriptors of the tree", before.fds, after.fds),
        ("regular files open in the tree", len(before.files_open), len(after.files_open)),
        ("resident memory of the tree (MB)", f"{before.rss / MB:.0f}", f"{after.rss / MB:.0f}"),
        ("files in the checkout outside build/, .venv/, .git/", len(before.checkout),
         f"{len(after.checkout)} ({len(changed) - len(pyc)} changed"
         + (f"; {len(pyc)} in tools' caches" if pyc else "") + ")"),
        ("entries in build/present/", len(before.present_dir),
         f"{len(after.present_dir)} (new: {', '.join(new_present) or 'none'})"),
        ("entries in the soak's TMPDIR", len(before.tmp), len(after.tmp)),
    ]


def deck_rows(runs: list[DeckRun]) -> list[str]:
    """The table's "Decks" section, a row a deck, and the memory bound it is held to."""
    lines = ["", "## Decks", "",
             "| deck | s | URL printed s | first slide s | talk cells run | restart | "
             "notes window | kernels | RSS during MB | fds during | RSS after MB | "
             "tree procs after | exit | console errors | log tracebacks |",
             "|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        lines.append(f"| {r.deck} | {r.seconds:.0f} | {r.ready:.1f} | {r.first_slide:.1f} | "
                     f"{r.cells}/{r.expected} | {r.restart or '–'} | {r.notes or '–'} | "
                     f"{r.kernels} | {r.rss_during / MB:.0f} | {r.fds_during} | "
                     f"{r.rss_after / MB:.0f} | "
                     f"{r.procs_after} | {r.exit} | {r.console_errors} | {r.log_tracebacks} |")
    return lines + ["", f"RSS bound: the tree after the last deck within {GROWTH_MB} MB of the "
                    "tree after the first (after each deck only the soak, Playwright's driver "
                    "and the browser with no page are left; a page or server kept per deck is "
                    "100–300 MB)."]


def lab_rows(labs: list[LabRun]) -> list[str]:
    """The table's "Labs" section, a row a lab."""
    return ["", "## Labs (each solution in a fresh kernel)", "",
            "| lab | s | checks correct | failure |", "|---|---:|---:|---|"] + [
        f"| {lab.lab} | {lab.seconds:.0f} | {lab.correct}/{lab.checks} | "
        f"{lab.failure or '–'} |" for lab in labs]


# ---------------------------------------------------------------------------- stopping

def stop_everything(token: str, state: dict) -> None:
    """End what the soak started: present with Ctrl-C (as the presenter would), then every
    process carrying the soak's marker, by its id (SIGTERM, then SIGKILL)."""
    proc = state.get("present")
    if proc is not None:
        try:
            stop_present(proc)
        except Exception:
            pass
    left = ours(token)
    for p in left:
        try:
            p.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(left, timeout=5)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=5)


def watchdog(limit_s: float, token: str, state: dict) -> None:
    """At the time limit: end everything, say so in one line, exit 1. The main thread, whose
    browser or server goes away under it, only waits (main() sees `timed_out`)."""
    time.sleep(limit_s)
    state["timed_out"] = True
    stop_everything(token, state)
    time.sleep(1)
    stop_everything(token, state)      # anything the main thread started meanwhile
    shutil.rmtree(state["tmp"], ignore_errors=True)
    print(f"soak: FAILED: stopped at the {limit_s / 60:g} min limit, in "
          f"{state.get('stage', '?')}; everything it started is ended", flush=True)
    os._exit(1)


# ---------------------------------------------------------------------------- main

def main(argv=None) -> int:
    """The soak, as scripts/soak runs it: 0 when nothing was left behind, 1 on a problem, 2
    when it cannot start, 130 when interrupted."""
    args = parse_args(argv)
    try:
        decks, restart_in, kill_in = choose_decks(args)
    except errors.KitError as e:
        print(f"soak: {e}", file=sys.stderr)
        return 2
    exe = browser.find()
    if exe is None:
        print(f"soak: no browser: {browser.INSTALL}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    token, tmp, state = start(args)
    before = snapshot(token, tmp)
    log(f"before: {len(before.tree)} processes in the tree, {len(before.ports)} ports, "
        f"{before.rss / MB:.0f} MB; decks {', '.join(d.stem for d in decks)}; the restart in "
        f"{restart_in.stem}" + (f", the kill in {kill_in.stem}" if kill_in else ""))
    labs: list[LabRun] = []
    try:
        runs = present_all(exe, decks, restart_in, kill_in, token, state)
        if not args.no_labs:
            labs = all_labs(state)
    except BaseException as e:
        if state.get("timed_out"):     # the watchdog is ending it all: its line is the last
            while True:
                time.sleep(1)
        if not isinstance(e, KeyboardInterrupt):
            raise
        stop_everything(token, state)
        shutil.rmtree(tmp, ignore_errors=True)
        print("soak: interrupted; everything it started is ended", file=sys.stderr)
        return 130
    return verdict(before, runs, labs, args, token, state, t0)


def parse_args(argv) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="scripts/soak", description=__doc__.split("\n\n")[0])
    ap.add_argument("--decks", default="", help="a subset, e.g. 01,02 (default: all six)")
    ap.add_argument("--restart-in", default="",
                    help="the deck whose kernel is restarted mid-section (default: the middle "
                         "one of those run)")
    ap.add_argument("--kill-in", default="",
                    help="the deck whose kernel process is killed mid-section (default: the "
                         "one after the restart's, or before it when it is the last)")
    ap.add_argument("--limit", type=float, default=40, help="minutes in all (default 40)")
    ap.add_argument("--no-labs", action="store_true", help="skip the labs (development)")
    return ap.parse_args(argv)


def choose_decks(args) -> tuple[list[Path], Path, Path | None]:
    """(the decks to present, the one whose kernel is restarted, the one whose kernel is
    killed: None with one deck); a KitError names a deck that is not the kit's."""
    decks = nbs.select([d for d in args.decks.split(",") if d], among=nbs.decks(),
                       what="deck")
    restart_in = nbs.select([args.restart_in], among=decks, what="deck")[0] \
        if args.restart_in else decks[len(decks) // 2 - (len(decks) % 2 == 0)]
    k = decks.index(restart_in)
    kill_in = nbs.select([args.kill_in], among=decks, what="deck")[0] if args.kill_in \
        else (decks[k + 1] if k + 1 < len(decks) else decks[k - 1] if k else None)
    return decks, restart_in, kill_in


def start(args) -> tuple[str, Path, dict]:
    """The soak's marker in the environment of all it starts, its own TMPDIR, the watchdog
    at the time limit: (the marker, the folder, the state the watchdog reads)."""
    token = secrets.token_hex(8)
    os.environ[MARK] = token
    tmp = Path(tempfile.mkdtemp(prefix="workshop-soak-"))
    os.environ["TMPDIR"] = str(tmp)    # everything the soak starts makes its temp files here
    tempfile.tempdir = None
    state: dict = {"present": None, "stage": "the start", "tmp": tmp}
    threading.Thread(target=watchdog, args=(args.limit * 60, token, state), daemon=True).start()
    dirty = state["unclean"] = unclean()
    if dirty:
        log(f"warning: the checkout is not a fresh clone ({', '.join(dirty[:5])}"
            f"{' …' if dirty[5:] else ''}): files already there are not seen being written")
    return token, tmp, state


def present_all(exe: str, decks: list[Path], restart_in: Path, kill_in: Path | None,
                token: str, state: dict) -> list[DeckRun]:
    """Each deck presented in turn in one headless Chromium (until the time limit)."""
    from playwright.sync_api import sync_playwright
    runs: list[DeckRun] = []
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=exe, headless=True, args=browser.ARGS)
        for deck in decks:
            if state.get("timed_out"):
                break
            state["stage"] = f"deck {deck.stem}"
            log(f"{deck.stem}: present")
            how = "rest" if deck == restart_in else "kill" if deck == kill_in else ""
            run = present_deck(chromium, deck, how, token, state)
            runs.append(run)
            log(f"{deck.stem}: {run.seconds:.0f} s, {run.cells}/{run.expected} cells, "
                f"RSS after {run.rss_after / MB:.0f} MB, {run.procs_after} processes, "
                f"{len(run.problems)} problem(s)")
            for line in run.problems:
                log(f"  {line}")
            for line in run.console_first:
                log(f"  (console error) {line}")
        chromium.close()
    return runs


def all_labs(state: dict) -> list[LabRun]:
    state["stage"] = "the labs"
    log("the labs, each solution in a fresh kernel")
    labs = check_labs()
    for lab in labs:
        log(f"{lab.lab}: {lab.correct}/{lab.checks} correct"
            + (f"; FAILED {lab.failure}" if lab.failure else ""))
    return labs


def verdict(before: Snapshot, runs: list[DeckRun], labs: list[LabRun], args, token: str,
            state: dict, t0: float) -> int:
    """The after snapshot against the before, the table on stdout and in build/soak.md, one
    line per problem: 1 on any, else 0."""
    state["stage"] = "the after snapshot"
    time.sleep(3)
    after = snapshot(token, state["tmp"])
    problems = [p for r in runs for p in r.problems]
    problems += [f"lab {lab.lab}: {lab.failure}" for lab in labs if lab.failure]
    problems += [f"lab {lab.lab}: {lab.correct} of {lab.checks} checks said correct"
                 for lab in labs if lab.correct != lab.checks]
    problems += compare(before, after, [r.port for r in runs], runs)
    wall = time.monotonic() - t0
    text = table(before, after, runs, labs, problems, wall, args, state["unclean"])
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    paths.write_atomic(REPORT, text)
    print(text)
    stop_everything(token, state)      # nothing, when all went well
    shutil.rmtree(state["tmp"], ignore_errors=True)
    for line in problems:
        print(f"soak: {line}", file=sys.stderr)
    print(f"soak: {'FAILED' if problems else 'passed'} in {wall / 60:.1f} min "
          f"({len(problems)} problem(s)); the table is in {paths.short(REPORT)}", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    def interrupted(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)
    sys.exit(main())
