"""The build, in stages: check (the environment and the inputs), select what is stale,
execute, export, index, report. Each notebook is read once, in `check`, and passed along as a
`Source`. Every bad input is refused before a kernel starts; the browser is started before the
notebooks run, so a browser that cannot start costs no execution. The build writes build/ and
handouts/ only: stale attendee copies of the labs are refused (`python -m workshop labs`
writes them)."""
from __future__ import annotations

import contextlib
from pathlib import Path

from .. import errors, paths, processes
from .. import notebooks as nbs
from . import execute, handouts, presenter, report
from .inputs import Source
from .printer import NoBrowser, Overflow, Printer


@contextlib.contextmanager
def one_build_at_a_time(what: str):
    """Builds of this checkout run one after another (they share build/, handouts/ and the
    index): a second build waits, saying which holds the lock. The lock is an flock, which the
    system releases when its holder dies, so a killed build leaves nothing stuck."""
    import fcntl
    import os
    import time
    paths.BUILD.mkdir(parents=True, exist_ok=True)
    fd = os.open(paths.BUILD / ".build.lock", os.O_RDWR | os.O_CREAT, 0o644)
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


def build(names: list[str], force: bool = False, pdf: bool = True, site: bool = False) -> int:
    """Execute every deck and lab solution named (all if none) and print their handouts; with
    `site`, then make the web site from every executed notebook."""
    status = Build(names, force, pdf).run()
    if status == 0 and site:
        _site()
    return status


def _site() -> None:
    """The web site (builder/site.py), after a build that ran clean: its pages and time said,
    and added to build/report.md."""
    from . import site
    r = site.build()
    line = (f"build: the site in {paths.short(site.OUT)}/ ({r['pages']} pages, "
            f"{len(r['written'])} rewritten, Sphinx {r['seconds']:.0f} s): open "
            f"{paths.short(site.OUT / 'index.html')}")
    with open(paths.BUILD / "report.md", "a", encoding="utf-8") as f:
        f.write(f"\n## The site\n\n{r['pages']} pages in {paths.short(site.OUT)}/ "
                f"({len(r['written'])} rewritten this build), Sphinx {r['seconds']:.1f} s.\n")
    print(line)


class Build:
    """One build: `run` takes it through the stages in order."""

    def __init__(self, names: list[str], force: bool = False, pdf: bool = True):
        self.names, self.force, self.pdf = names, force, pdf
        self.sources: list[Source] = []   # check: every notebook named, read once
        self.todo: list[Source] = []      # select_stale: what must be executed and printed
        self.executed: dict[Path, object] = {}         # execute: path -> executed notebook
        self.results: dict[Path, execute.Result] = {}

    def run(self) -> int:
        processes.end_on_hangup()
        if not self.check_environment():
            return 1
        self.check_inputs()
        what = " ".join(["build", *(["--force"] if self.force else []),
                         *(["--no-pdf"] if not self.pdf else []), *self.names])
        with one_build_at_a_time(what):
            self.select_stale()
            with (_printer() if self.pdf and self.todo else contextlib.nullcontext()) as printer:
                self.execute()
                if printer is not None and not self.failed:
                    self.export(printer)
            self.index()
            return self.report()

    def check_environment(self) -> bool:
        """The running environment is the lock's (else say how to fix it, and stop)."""
        from .. import lockfile
        bad = lockfile.mismatches()
        if bad:
            print("build: the running environment does not match environment/requirements.lock:")
            print("\n".join(f"  {b}" for b in bad[:10]))
            print("  fix: scripts/setup --force")
        return not bad

    def check_inputs(self) -> None:
        """Every notebook named, read once and fit to show; XLA_FLAGS the kernels can start
        with; a browser, when printing; the named labs' attendee copies current."""
        from .. import browser
        from ..xla_flags import xla_flags_problem
        for p in nbs.select(self.names):
            source = Source.read(p)
            nbs.check_input(p, source.nb)
            self.sources.append(source)
        flags = xla_flags_problem()
        if flags:
            raise errors.KitError(flags)
        if self.pdf and browser.find() is None:
            raise errors.KitError(f"no browser to print the handouts: {browser.INSTALL} "
                                  "(or build without them: --no-pdf)")
        self._refuse_stale_lab_copies()

    def _refuse_stale_lab_copies(self) -> None:
        """A lab's attendee copy is one of its handouts' inputs: one not made from the lab's
        source as it is now is named, not rewritten (the build never writes exercises/)."""
        from ..authoring import labgen
        for s in self.sources:
            if s.lab and (not labgen.target(s.path).is_file()
                          or s.sheet.raw.decode("utf-8")
                          != nbs.normalised(labgen.attendee_copy(s.path, s.nb))):
                raise errors.KitError(f"{paths.short(labgen.target(s.path))} not made from "
                                      f"{paths.short(s.path)} as it is now: run python -m "
                                      "workshop labs (the build never writes exercises/)")

    def select_stale(self) -> None:
        """What must run: all, with --force or --no-pdf; else what its handouts are not
        current for."""
        self.todo = [s for s in self.sources
                     if self.force or not self.pdf or not handouts.current(s)]
        if len(self.todo) < len(self.sources):
            print(f"build: {len(self.sources) - len(self.todo)} notebook(s) current, not "
                  "rebuilt (--force rebuilds them)")

    def execute(self) -> None:
        """Run what must run; an executed copy from the same inputs is reused for printing."""
        import nbformat
        run = []
        for s in self.todo:
            copy = handouts.executed_path(s.path)
            if self.pdf and not self.force and copy.exists():
                nb = nbs.read(copy)
                if nb.metadata.get("workshop_build", {}).get("inputs") == s.digest:
                    self.executed[s.path] = nb   # executed from these very inputs: export only
                    continue
            run.append(s)
        if run:
            print(f"build: executing {len(run)} notebook(s), {execute.PARALLEL} at a time",
                  flush=True)
        done = execute.run_many([(s.path, None, s.raw) for s in run]) if run else []
        for s, (res, text) in zip(run, done):
            nb = nbformat.reads(text, as_version=4)
            nb.metadata["workshop_build"] = {"inputs": s.digest}
            if res.ok:
                paths.write_atomic(handouts.executed_path(s.path), nbformat.writes(nb).encode())
                self.executed[s.path] = nb
            self.results[s.path] = res
        for s in self.todo:
            self.results.setdefault(s.path, execute.Result(name=paths.short(s.path),
                                                           status="reused run"))

    @property
    def failed(self) -> list[execute.Result]:
        return [r for r in self.results.values() if not r.ok]

    def export(self, printer: Printer) -> None:
        """Print each notebook's handouts from its executed copy."""
        for s in self.todo:
            try:
                printed = handouts.export(printer, s, self.executed[s.path])
            except Overflow as e:
                raise errors.KitError(f"{paths.short(s.path)}: {e}") from None
            r = self.results[s.path]
            r.pages = sum(x.pages for x in printed)
            r.export_seconds = sum(x.seconds for x in printed)
            r.shrunk = [(page, k) for x in printed for page, k in x.shrunk]
        if printer.offsite:
            raise errors.KitError(f"the export asked for addresses off this machine: "
                                  f"{printer.offsite[:3]}")

    def index(self) -> None:
        """The schedule (docs/schedule.md and its PDF), when the notebooks' minutes moved or
        it is missing; the presenter's pack of the notebooks named, where stale; then
        handouts/README.md: a build leaves no handout of the kit unmade."""
        if self.pdf and not self.failed:
            from ..authoring import schedule
            for f in schedule.write_if_stale():
                print(f"build: wrote {f}")
            for f in presenter.write_stale([s.path for s in self.sources]):
                print(f"build: wrote {paths.short(f)}")
        if self.pdf:
            handouts.write_index(presenter.targets())

    def report(self) -> int:
        """The table (build/report.md, .json), where things are, strays, failures; the exit
        status."""
        from .pdfinfo import pages_of, shrunk_of
        rows = [self.results.get(s.path) or execute.Result(
            name=paths.short(s.path), status="current",
            pages=sum(pages_of(t) or 0 for t in handouts.targets(s)),
            shrunk=shrunk_of(handouts.targets(s)[0]) or []) for s in self.sources]
        exempt = {paths.short(s.path): {i for i, c in enumerate(s.nb.cells)
                                        if {"slow", "setup"} & set(nbs.tags(c))}
                  for s in self.sources}
        decks = [s.path for s in self.sources if s.deck]
        problems = report.over_budget(rows, exempt) + report.shrunk(rows)
        print(report.write(rows, problems, paths.BUILD, decks))
        print(f"build: report in {paths.short(paths.BUILD / 'report.md')}; "
              + "; ".join(self._where()))
        for p in handouts.strays(presenter.targets()) if self.pdf else []:
            print(f"build: {paths.short(p)} is not a handout of the kit: left alone (delete it "
                  "if it is yours to delete)")
        for r in self.failed:
            print(f"FAILED {r.name}: {r.failure}")
        return 1 if self.failed else 0

    def _where(self) -> list[str]:
        kit = [s for s in self.sources if s.kit]
        where = [f"executed in {paths.short(handouts.EXECUTED)}/"] if kit else []
        where += ["handouts in handouts/"] if self.pdf and kit else []
        if len(kit) < len(self.sources):
            where.append(f"a copy's run{' and handouts' if self.pdf else ''} in "
                         f"{paths.short(handouts.COPIES)}/ (never handouts/)")
        return where


def _printer() -> Printer:
    try:
        return Printer()
    except NoBrowser as e:
        raise errors.KitError(f"{e} (or build without handouts: --no-pdf)") from None
