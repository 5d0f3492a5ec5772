"""The build: check the environment and the inputs, execute what is stale, print handouts,
write the report. Every bad input is refused before a kernel starts; the browser is started
before the notebooks run, so a browser that cannot start costs no execution."""
from __future__ import annotations

import contextlib
from pathlib import Path

from .. import errors, paths
from .. import notebooks as nbs
from . import execute, handouts, report

BUILD = paths.BUILD
EXECUTED = BUILD / "executed"


def executed_path(src: Path) -> Path:
    """Where the executed copy of `src` is kept: a copy's never replaces the kit's."""
    return (EXECUTED if handouts.is_kit(src) else handouts.COPIES / "executed") / src.name


@contextlib.contextmanager
def one_build_at_a_time(what: str):
    """Builds of this checkout run one after another (they share build/, handouts/ and the
    index): a second build waits, saying which holds the lock. The lock is an flock, which the
    system releases when its holder dies, so a killed build leaves nothing stuck."""
    import fcntl
    import os
    import time
    BUILD.mkdir(parents=True, exist_ok=True)
    fd = os.open(BUILD / ".build.lock", os.O_RDWR | os.O_CREAT, 0o644)
    with os.fdopen(fd, "r+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = f.read().strip() or "another build"
            print(f"build: waiting for {holder} to end (builds share build/ and handouts/; "
                  "Ctrl-C stops waiting)", flush=True)
            fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        f.truncate()
        f.write(f"the build of pid {os.getpid()} ({what}), started {time.strftime('%H:%M:%S')}")
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()


def build(names: list[str], force: bool = False, pdf: bool = True) -> int:
    """Execute every deck and lab solution named (all if none) and print their handouts."""
    import signal

    from ...devices import xla_flags_problem
    from .. import browser, env

    def ended(signum, frame):   # a kill or the terminal closed: end every process as Ctrl-C does
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, ended)

    bad = env.mismatches()
    if bad:
        print("build: the running environment does not match environment/requirements.lock:")
        print("\n".join(f"  {b}" for b in bad[:10]))
        print("  fix: scripts/setup --force")
        return 1
    notebooks = nbs.select(names)
    nbs.check_inputs(notebooks)
    flags = xla_flags_problem()
    if flags:
        raise errors.KitError(flags)
    if pdf and browser.find() is None:
        raise errors.KitError(f"no browser to print the handouts: {browser.INSTALL} "
                              "(or build without them: --no-pdf)")
    with one_build_at_a_time(" ".join(["build", *(["--force"] if force else []),
                                       *(["--no-pdf"] if not pdf else []), *names])):
        return _build(notebooks, force, pdf)


def _build(notebooks: list[Path], force: bool, pdf: bool) -> int:
    from .. import labgen
    stale = labgen.generate()
    if stale:
        print(f"build: regenerated {', '.join(stale)} from exercises/solutions/")
    todo = [p for p in notebooks if force or not pdf or not handouts.current(p)]
    if len(todo) < len(notebooks):
        print(f"build: {len(notebooks) - len(todo)} notebook(s) current, not rebuilt "
              "(--force rebuilds them)")
    with (_printer() if pdf and todo else contextlib.nullcontext()) as printer:
        executed, results = _execute(todo, reuse=pdf and not force)
        failed = [r for r in results.values() if not r.ok]
        if printer is not None and not failed:
            _export(printer, todo, executed, results)
    if pdf:
        handouts.write_index()
    rows = [results.get(p) or execute.Result(
        name=paths.short(p), status="current",
        pages=sum(handouts.pages_of(t) or 0 for t in handouts.targets(p)),
        shrunk=handouts.shrunk_of(handouts.targets(p)[0]) or []) for p in notebooks]
    exempt = {paths.short(p): {i for i, c in enumerate(nbs.read(p).cells)
                               if {"slow", "setup"} & set(nbs.tags(c))} for p in notebooks}
    decks = [p for p in notebooks if handouts.is_deck(p)]
    print(report.write(rows, report.over_budget(rows, exempt) + report.shrunk(rows), BUILD,
                       decks))
    kit = [p for p in notebooks if handouts.is_kit(p)]
    where = [f"executed in {paths.short(EXECUTED)}/"] if kit else []
    where += ["handouts in handouts/"] if pdf and kit else []
    if len(kit) < len(notebooks):
        where.append(f"a copy's run{' and handouts' if pdf else ''} in "
                     f"{paths.short(handouts.COPIES)}/ (never handouts/)")
    print(f"build: report in {paths.short(BUILD / 'report.md')}; " + "; ".join(where))
    for p in handouts.strays() if pdf else []:
        print(f"build: {paths.short(p)} is not a handout of the kit: left alone (delete it "
              "if it is yours to delete)")
    for r in failed:
        print(f"FAILED {r.name}: {r.failure}")
    return 1 if failed else 0


def _printer():
    try:
        return handouts.Printer()
    except handouts.NoBrowser as e:
        raise errors.KitError(f"{e} (or build without handouts: --no-pdf)") from None


def _execute(todo: list[Path], reuse: bool):
    """Run what must run (an executed copy from the same inputs is reused for printing)."""
    import nbformat
    executed, run = {}, []
    for p in todo:
        copy = executed_path(p)
        digest = handouts.inputs_hash(*handouts.sources_of(p))
        if reuse and copy.exists():
            nb = nbs.read(copy)
            if nb.metadata.get("workshop_build", {}).get("inputs") == digest:
                executed[p] = nb   # executed from these very inputs: export only
                continue
        run.append(p)
    if run:
        print(f"build: executing {len(run)} notebook(s), {execute.PARALLEL} at a time",
              flush=True)
    results = {}
    for p, (res, text) in zip(run, execute.run_many([(p, None) for p in run]) if run else []):
        nb = nbformat.reads(text, as_version=4)
        nb.metadata["workshop_build"] = {"inputs": handouts.inputs_hash(*handouts.sources_of(p))}
        if res.ok:
            paths.write_atomic(executed_path(p), nbformat.writes(nb).encode())
            executed[p] = nb
        results[p] = res
    for p in todo:
        results.setdefault(p, execute.Result(name=paths.short(p), status="reused run"))
    return executed, results


def _export(printer, todo, executed, results) -> None:
    for p in todo:
        try:
            printed = handouts.export(printer, p, executed[p])
        except handouts.Overflow as e:
            raise errors.KitError(f"{paths.short(p)}: {e}") from None
        results[p].pages = sum(x.pages for x in printed)
        results[p].export_seconds = sum(x.seconds for x in printed)
        results[p].shrunk = [(page, k) for x in printed for page, k in x.shrunk]
    if printer.offsite:
        raise errors.KitError(f"the export asked for addresses off this machine: "
                              f"{printer.offsite[:3]}")
