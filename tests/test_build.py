"""The build never hangs, never leaks a process, never writes over what is not its own, and
answers every bad input in one line. Tiny synthetic notebooks keep these cheap."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest
from conftest import tiny

from workshop.tools import notebooks as nbs
from workshop.tools import paths
from workshop.tools.builder import handouts, inputs, pdfinfo
from workshop.tools.builder.printer import FACES, Printer, pinned_fonts
from workshop.tools.builder.printer import FONTS as printer_fonts


def wk(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "workshop", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=paths.ROOT,
                          env=None if env is None else {**os.environ, **env})


def one_line(p) -> str:
    err = p.stderr.strip()
    assert err.count("\n") == 0, f"more than one line:\n{p.stderr}"
    return err


def gone(procs, within: float) -> list[int]:
    """The pids of `procs` still running (not zombies) after waiting up to `within` s."""
    end = time.monotonic() + within
    while True:
        alive = [p.pid for p in procs
                 if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.2)


@pytest.mark.parametrize("sig", [signal.SIGINT] + [  # Ctrl-C always, the others -m robust
    pytest.param(s, marks=pytest.mark.robust) for s in (signal.SIGTERM, signal.SIGHUP,
                                                        signal.SIGKILL)],
                         ids=["Ctrl-C", "SIGTERM", "terminal-closed", "SIGKILL"])
def test_a_stopped_build_leaves_no_process_behind(tmp_path, sig):
    # Ctrl-C and a closed terminal signal the whole foreground group (the build, its workers,
    # multiprocessing's resource tracker), as a terminal does; SIGTERM and SIGKILL the build
    nb = tiny(tmp_path / "hang.ipynb", "print('setup')", "import time; time.sleep(600)")
    tmp = tmp_path / "tmp"   # what the build and its kernels leave in TMPDIR
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "workshop", "build", "--no-pdf", str(nb)],
                            cwd=paths.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            env=dict(os.environ, TMPDIR=str(tmp)))
    me = psutil.Process(proc.pid)
    end = time.monotonic() + 90
    while time.monotonic() < end and not any(
            "ipykernel" in " ".join(c.cmdline()) for c in me.children(recursive=True)):
        time.sleep(0.2)
    time.sleep(2)   # the kernel is in the sleeping cell
    started = me.children(recursive=True)
    assert any("ipykernel" in " ".join(c.cmdline()) for c in started), "no kernel started"
    # the terminal's Ctrl-C reaches the build alone, not its workers (see processes.worker_init)
    workers = [c for c in me.children() if "spawn_main" in " ".join(c.cmdline())]
    assert workers and all(os.getpgid(w.pid) != proc.pid for w in workers), workers
    second = None
    if sig == signal.SIGKILL:   # a build started meanwhile waits, saying for which
        other = tiny(tmp_path / "other.ipynb", "print('other')")
        second = subprocess.Popen([sys.executable, "-m", "workshop", "build", "--no-pdf",
                                   str(other)], cwd=paths.ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        first_line = second.stdout.readline()
        assert f"waiting for the build of pid {proc.pid} (build --no-pdf {nb})" in first_line, \
            first_line
    if sig in (signal.SIGINT, signal.SIGHUP):
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    if sig != signal.SIGKILL:
        assert proc.returncode == 130 and err.strip() == "workshop build: interrupted", \
            f"exit {proc.returncode}, stderr:\n{err[-4000:]}"   # one line: no warning or
        # traceback from the workers or the tracker (a str: a tuple's repr is cut mid-way)
    assert gone(started, 15) == [], f"processes the build started outlived {sig.name}"
    if sig != signal.SIGKILL:   # (a SIGKILLed build cleans up nothing; its workers end the
        assert sorted(p.name for p in tmp.iterdir()) == []   # kernels when they see it gone)
    if second is not None:   # the killed holder's lock went with it: the second build ran
        rest = second.communicate(timeout=120)[0]
        assert second.returncode == 0 and "executing 1 notebook(s)" in rest, rest


@pytest.mark.robust
def test_a_copy_anywhere_builds_beside_the_kit_and_never_over_its_handouts(tmp_path):
    before = {p.name: p.read_bytes() for p in handouts.HANDOUTS.iterdir() if p.is_file()}
    # named exactly like the kit's own deck and lab: the reuse flow copies without renaming
    # each run prints something new, as a deck's timings and ids are: a reprint would differ
    deck = tiny(tmp_path / "01-run-it-first.ipynb", "import uuid", "print(uuid.uuid4())",
                deck=True)
    lab = tiny(tmp_path / "J1-trace-read-raw.ipynb", "import uuid; print(uuid.uuid4())")
    made = [handouts.COPIES / n for n in ("01-run-it-first.slides.pdf", "01-run-it-first.pdf",
                                          "J1-trace-read-raw.pdf")]
    for m in made:
        m.unlink(missing_ok=True)
    p = wk("build", str(deck), str(lab))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "a copy's run and handouts in build/copies/ (never handouts/)" in p.stdout
    for m, src in zip(made, [deck, deck, lab]):
        assert pdfinfo.stamp_of(m) == inputs.inputs_hash(src), m
    after = {p.name: p.read_bytes() for p in handouts.HANDOUTS.iterdir() if p.is_file()}
    assert after == before, "building a copy changed the kit's handouts/"
    # --force runs them again (a rerun's outputs differ: timings, ids) and keeps the bytes of
    # every PDF whose inputs did not change, as it does for the kit's own handouts
    printed = [m.read_bytes() for m in made]
    again = wk("build", "--force", str(deck), str(lab))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "executing 2 notebook(s)" in again.stdout
    assert [m.read_bytes() for m in made] == printed
    # a copy inside the checkout (an attendee's sheet in exercises/) is a copy too
    sheet = paths.EXERCISES / "J1-trace-read-raw.ipynb"
    assert handouts.targets(sheet) == [handouts.COPIES / "J1-trace-read-raw.pdf"]
    kit = paths.SOLUTIONS / "J1-trace-read-raw.ipynb"
    assert handouts.targets(kit)[0] == handouts.HANDOUTS / "J1-trace-read-raw.pdf"


def test_a_notebook_that_is_not_utf8_is_one_line(tmp_path):
    bad = tmp_path / "latin1.ipynb"
    bad.write_bytes('{"cells": [], "metadata": {"author": "José"}}'.encode("latin-1"))
    p = wk("build", "--no-pdf", str(bad))
    assert p.returncode == 2
    assert "latin1.ipynb: not a notebook: not UTF-8 text" in one_line(p)
    assert bad.read_bytes().startswith(b'{"cells"'), "the user's file is left as it was"


def test_a_browser_that_will_not_start_is_one_line_before_anything_runs(tmp_path):
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\necho 'error while loading shared libraries: libnss3.so' >&2\n"
                    "exit 127\n")
    fake.chmod(0o755)
    nb = tiny(tmp_path / "one.ipynb", "print(1)")
    before = {p.name: p.read_bytes() for p in handouts.HANDOUTS.iterdir() if p.is_file()}
    p = wk("build", str(nb), env={"WORKSHOP_BROWSER": str(fake)})
    assert p.returncode == 2
    line = one_line(p)
    assert f"the browser {fake} did not start (error while loading shared libraries" in line
    assert "--no-pdf" in line and "executing" not in p.stdout, "it ran the notebook first"
    assert {q.name: q.read_bytes() for q in handouts.HANDOUTS.iterdir() if q.is_file()} == before


def test_a_write_that_fails_keeps_the_old_file_and_leaves_no_tmp(tmp_path):
    # a real failing write: the kernel refuses past a file-size limit (EFBIG), as a full disk
    # refuses (ENOSPC) in the same place
    target = tmp_path / "01-run-it-first.pdf"
    target.write_bytes(b"the old handout")
    code = ("import resource, signal, sys; from pathlib import Path\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
            "from workshop.tools import errors, paths\n"
            "try:\n    paths.write_atomic(Path(sys.argv[1]), b'x' * 100_000)\n"
            "except errors.KitError as e:\n    print(e, file=sys.stderr); sys.exit(2)\n")
    p = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True,
                       text=True, timeout=60, cwd=paths.ROOT)
    assert p.returncode == 2
    assert f"cannot write {target}: File too large (the old file is kept)" in one_line(p)
    assert target.read_bytes() == b"the old handout"
    assert sorted(q.name for q in tmp_path.iterdir()) == [target.name], "a .tmp was left"


def test_two_writers_at_once_each_leave_a_whole_file(tmp_path):
    # two builds printing the same handout at one moment: with one fixed .tmp name for both,
    # one truncated the other's half-written file, or found it already renamed (a torn PDF, or
    # a failure that named the wrong cause); each writer now has a temporary file of its own
    import threading
    target = tmp_path / "01-run-it-first.pdf"
    versions = [bytes([65 + k]) * 3_000_000 for k in range(2)]
    errors, torn, done = [], [], threading.Event()

    def write(k):
        try:
            for _ in range(15):
                paths.write_atomic(target, versions[k])
        except Exception as e:
            errors.append(repr(e))

    def read():
        while not done.is_set():
            if target.exists() and target.read_bytes() not in versions:
                torn.append(target.stat().st_size)
    writers = [threading.Thread(target=write, args=(k,)) for k in range(2)]
    reader = threading.Thread(target=read)
    reader.start()
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    reader.join()
    assert errors == [] and torn == [], (errors, torn[:3])
    assert target.read_bytes() in versions
    assert [q.name for q in tmp_path.iterdir()] == [target.name], "a temporary file was left"
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask   # as a plain open() makes it


def test_a_truncated_handout_is_stale_not_a_crash(tmp_path):
    pdf = handouts.targets(nbs.decks()[0])[0]
    cut = tmp_path / pdf.name
    cut.write_bytes(pdf.read_bytes()[: pdf.stat().st_size // 2])
    assert pdfinfo.pages_of(pdf) and pdfinfo.pages_of(cut) is None
    assert pdfinfo.stamp_of(cut) is None   # so `current` is False and the build reprints it


def test_an_unchanged_notebook_is_neither_run_nor_printed_and_a_stray_is_left_alone():
    deck = nbs.decks()[0]
    pdfs = handouts.targets(deck)
    # a stale handout would be rebuilt into the tree by this very command: say so, write nothing
    assert handouts.current(deck), f"run scripts/build 01 first: {paths.short(pdfs[0])} is stale"
    before = [p.stat().st_mtime_ns for p in pdfs]
    stray = handouts.HANDOUTS / "zz-not-a-handout.pdf"
    index = (handouts.HANDOUTS / "README.md").read_bytes()
    stray.write_bytes(b"%PDF-1.4 truncated")
    # and a handout that is not a notebook's, the schedule, deleted: the build makes it again,
    # the same bytes (it used to stay "not built" after rm handouts/*.pdf)
    schedule_pdf = handouts.HANDOUTS / "schedule.pdf"
    kept = schedule_pdf.read_bytes()
    schedule_pdf.unlink()
    try:
        assert stray in handouts.strays()
        p = wk("build", "01")   # current in a clean clone: neither run nor printed
        assert p.returncode == 0, p.stdout + p.stderr
        assert "1 notebook(s) current, not rebuilt" in p.stdout and "executing" not in p.stdout
        assert [q.stat().st_mtime_ns for q in pdfs] == before
        assert "build: wrote handouts/schedule.pdf" in p.stdout
        assert schedule_pdf.read_bytes() == kept
        assert "handouts/zz-not-a-handout.pdf is not a handout of the kit: left alone" \
            in p.stdout
        assert stray.read_bytes() == b"%PDF-1.4 truncated"
        assert (handouts.HANDOUTS / "README.md").read_bytes() == index
    finally:
        stray.unlink(missing_ok=True)
        if not schedule_pdf.exists():
            schedule_pdf.write_bytes(kept)


def test_a_stale_lab_copy_is_refused_not_rewritten(tmp_path, monkeypatch):
    # the build once regenerated exercises/ as a side effect; it now names the stale copy and
    # the command that writes it, and leaves the copy as it found it
    from workshop.tools import errors
    from workshop.tools.authoring import labgen
    from workshop.tools.builder import pipeline
    lab = nbs.lab_sources()[0]
    copy = tmp_path / lab.name
    copy.write_bytes(labgen.target(lab).read_bytes().replace(b"Task 1", b"Task one", 1))
    stale = copy.read_bytes()
    monkeypatch.setattr(paths, "EXERCISES", tmp_path)
    with pytest.raises(errors.KitError, match=rf"{copy.name} not made from exercises/solutions/"
                       rf"{lab.name} as it is now: run python -m workshop labs"):
        pipeline.Build([lab.stem[:2]], pdf=False).check_inputs()
    assert copy.read_bytes() == stale
    copy.unlink()   # a new lab whose copy was never made: the same line, no traceback
    with pytest.raises(errors.KitError, match=rf"{copy.name} not made from"):
        pipeline.Build([lab.stem[:2]], pdf=False).check_inputs()
    assert not copy.exists()
    pipeline.Build([nbs.decks()[0].stem[:2]], pdf=False).check_inputs()   # a deck: no lab asked


def test_the_build_reads_each_notebook_once(monkeypatch):
    from workshop.tools.builder import pipeline
    reads = []
    real = nbs.read_bytes
    monkeypatch.setattr(nbs, "read_bytes", lambda p: reads.append(p.name) or real(p))
    build = pipeline.Build(["01", "J1"], pdf=True)
    build.check_inputs()
    build.select_stale()
    [handouts.targets(s) for s in build.sources]
    [s.digest for s in build.sources]
    lab = nbs.lab_sources()[0].name
    assert sorted(reads) == sorted([nbs.decks()[0].name, lab, lab]), reads   # J1: and its copy


BAD_FLAGS = {"XLA_FLAGS": "--xla_no_such_flag=1"}


@pytest.mark.robust
def test_xla_flags_that_abort_xla_are_one_line_in_build_doctor_and_tests(tmp_path):
    nb = tiny(tmp_path / "one.ipynb", "print(1)")
    p = wk("build", "--no-pdf", str(nb), env=BAD_FLAGS)
    assert p.returncode == 2
    line = one_line(p)
    assert "XLA_FLAGS='--xla_no_such_flag=1' stops JAX from starting" in line
    assert "Unknown flag in XLA_FLAGS" in line and "unset XLA_FLAGS" in line
    d = wk("doctor", env=BAD_FLAGS, timeout=200)
    assert d.returncode == 1
    assert "✗ XLA_FLAGS: '--xla_no_such_flag=1' stops JAX from starting" in d.stdout
    assert "fix: unset XLA_FLAGS" in d.stdout and "Traceback" not in d.stdout + d.stderr
    t = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/test_env.py::test_pinned_jax_is_the_one_running"],
                       capture_output=True, text=True, timeout=200, cwd=paths.ROOT,
                       env={**os.environ, **BAD_FLAGS})
    assert t.returncode == 2, t.stdout + t.stderr
    assert "INTERNALERROR" not in t.stdout + t.stderr
    assert "tests: XLA_FLAGS='--xla_no_such_flag=1' stops JAX from starting" in t.stdout \
        + t.stderr


def test_a_port_in_use_is_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = wk("present", "01", "--no-browser", "--port", str(port), timeout=60)
    assert p.returncode == 2
    assert f"--port {port}: something on 127.0.0.1 already listens there" in one_line(p)


def test_chromium_resolves_no_name_off_this_machine(tmp_path):
    """A DNS watcher: Chromium's own net log records every host lookup the page or the browser
    makes (its background services ask for Google hosts even when told not to)."""
    log = tmp_path / "net.json"
    page = ("<html><body><h1>offline</h1><img src='https://example.com/a.png'>"
            "<link rel='stylesheet' href='https://cdn.example.org/x.css'></body></html>")
    with Printer(extra_args=(f"--log-net-log={log}",)) as printer:
        printer.pdf(page, "a4", "footer")
        time.sleep(4)   # the background services ask within seconds of start
    net = json.loads(log.read_text())
    kinds = {v: k for k, v in net["constants"]["logEventTypes"].items()}
    asked = [e.get("params", {}).get("host") or e.get("params", {}).get("url")
             for e in net["events"] if kinds.get(e["type"]) == "HOST_RESOLVER_MANAGER_REQUEST"]
    lookups = [e.get("params", {}) for e in net["events"] if kinds.get(e["type"]) in
               ("DNS_TRANSACTION_QUERY", "HOST_RESOLVER_SYSTEM_TASK",
                "HOST_RESOLVER_MANAGER_ATTEMPT_STARTED")]
    assert lookups == [], f"Chromium looked up names off this machine: {sorted(set(asked))}"


def test_a_handout_depends_only_on_the_package_files_its_notebook_uses(tmp_path):
    pkg = inputs.PACKAGE
    tools = pkg / "tools"
    files = {p.stem: set(inputs.package_files(*handouts.sources_of(p)))
             for p in nbs.all_notebooks()}
    j3 = pkg / "labs" / "j3.py"
    assert {k for k, v in files.items() if j3 in v} == {"J3-own-the-derivative"}
    for stem, deps in files.items():   # what every handout is made with
        assert {tools / "builder" / "render.py", tools / "builder" / "handouts.py",
                tools / "notebooks.py", pkg / "__init__.py", pkg / "show.py"} <= deps, stem
        assert not {tools / "cli.py", tools / "drift.py", tools / "present.py"} & deps, stem
    assert pkg / "jitcache.py" in files["03-jit-and-the-cache"]   # only deck 03's cells import it
    # a module a cell imports inside a function, or under IPython syntax, still counts
    nb = tiny(tmp_path / "lazy.ipynb", "def f():\n    from workshop.labs import j4\n",
              "%time import workshop.labs.l5")
    deps = set(inputs.package_files(nb))
    assert {pkg / "labs" / "j4.py", pkg / "labs" / "l5.py", pkg / "labs" / "__init__.py"} <= deps
    assert j3 not in deps


def test_a_lab_is_never_skipped_for_its_name(tmp_path, monkeypatch):
    for name in ("L2-b", "M7-a-new-lab", "J1-a", "J10-c"):
        tiny(tmp_path / f"{name}.ipynb", "print(1)")
    monkeypatch.setattr(paths, "SOLUTIONS", tmp_path)
    assert [p.stem for p in nbs.lab_sources()] == ["J1-a", "J10-c", "L2-b", "M7-a-new-lab"]


@pytest.mark.parametrize("pdf", sorted(handouts.HANDOUTS.glob("*.pdf")), ids=lambda p: p.name)
def test_every_handout_embeds_only_the_pinned_fonts(pdf):
    # DejaVu (Debian's) for code, the RISE theme's Source Sans Pro (the locked jupyterlab-rise's
    # own files) for the words, as on the projector: nothing the machine happens to have
    from pypdf import PdfReader
    fonts = set()
    for page in PdfReader(pdf).pages:
        for font in (page.get("/Resources") or {}).get("/Font", {}).values():
            font = font.get_object()
            if font.get("/Subtype") == "/Type3":   # glyphs drawn in the page (a picture's),
                continue                            # not a font the machine supplied
            fonts.add(str(font["/BaseFont"]).split("+")[-1])
    assert fonts and all(f.startswith(("DejaVu", "SourceSansPro-")) for f in fonts), sorted(fonts)
    if pdf.name != "schedule.pdf":   # a notebook's words in the projector's face
        assert any(f.startswith("SourceSansPro-") for f in fonts), sorted(fonts)


def test_the_printer_sees_no_font_but_the_pinned_ones():
    env = pinned_fonts()
    conf = open(env["FONTCONFIG_FILE"]).read()
    dirs = [d.split("</dir>")[0] for d in conf.split("<dir>")[1:]]
    assert dirs and all("dejavu" in d.lower() or d == str(printer_fonts / "source-sans-pro")
                        for d in dirs), dirs
    assert sorted(p.name for p in (printer_fonts / "source-sans-pro").iterdir()) == sorted(
        f"{face}.ttf" for face in FACES)
    listed = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True,
                            env={**os.environ, **env}, timeout=30).stdout
    families = {f.split(",")[0] for f in listed.split("\n") if f}
    assert families and all(f.startswith("DejaVu") or f == "Source Sans Pro"
                            for f in families), families
    assert "Source Sans Pro" in families


# (a test that compares handouts/ before and after lives here, beside the one test that writes a
# stray into it: scripts/test's workers run a file whole, so they never overlap)
def _snapshot():
    # every file under handouts/, the presenter's pack in its folder included
    return {p.relative_to(handouts.HANDOUTS).as_posix(): p.read_bytes()
            for p in sorted(handouts.HANDOUTS.rglob("*")) if p.is_file()}


def test_missing_browser_one_line_nonzero_and_handouts_untouched():
    before = _snapshot()
    p = subprocess.run([sys.executable, "-m", "workshop", "build", "01", "--force"],
                       capture_output=True, text=True, cwd=paths.ROOT, timeout=120,
                       env=dict(os.environ, WORKSHOP_BROWSER="/nonexistent/chrome"))
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "apt-get install -y chromium" in p.stderr
    assert _snapshot() == before


def test_corrupt_notebook_leaves_handouts_untouched(tmp_path):
    before = _snapshot()
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    p = subprocess.run([sys.executable, "-m", "workshop", "build", str(bad)],
                       capture_output=True, text=True, cwd=paths.ROOT, timeout=120)
    assert p.returncode == 2 and "bad.ipynb: not a notebook" in p.stderr
    assert _snapshot() == before


@pytest.mark.robust
@pytest.mark.parametrize("home", [None, "/proc/sys"], ids=["HOME-unset", "HOME-read-only"])
def test_a_build_and_doctor_with_home_unset_or_read_only_work_as_anywhere(tmp_path, home):
    # Jupyter's runtime files, IPython's and matplotlib's folders live under HOME; where it
    # cannot be written, IPython made a folder in the kernel's TMPDIR (which a run must leave
    # empty): they now go beside it, and the run is the notebook's alone
    nb = tiny(tmp_path / "home.ipynb", "import matplotlib.pyplot as plt, IPython\n"
              "print(IPython.paths.get_ipython_dir())")
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "IPYTHONDIR",
                                                             "MPLCONFIGDIR")}
    if home:
        env["HOME"] = home
    run = lambda *a: subprocess.run([sys.executable, "-m", "workshop", *a], env=env,
                                    capture_output=True, text=True, timeout=300, cwd=paths.ROOT)
    p = run("build", "--no-pdf", str(nb))
    assert p.returncode == 0 and "FAILED" not in p.stdout + p.stderr, p.stdout + p.stderr
    if home:
        doctor = run("doctor")
        assert doctor.returncode == 0 and "doctor: all green" in doctor.stdout, doctor.stdout


def test_a_symlinked_handouts_folder_is_written_through_and_stays_a_link(tmp_path):
    # a presenter who keeps handouts/ elsewhere (a synced folder) links it in: a handout is
    # written whole into the link's target, the link stays a link, no temporary file is left
    target = tmp_path / "synced"
    target.mkdir()
    link = tmp_path / "handouts"
    link.symlink_to(target)
    paths.write_atomic(link / "01.pdf", b"%PDF one")
    paths.write_atomic(link / "01.pdf", b"%PDF two")
    assert link.is_symlink() and (target / "01.pdf").read_bytes() == b"%PDF two"
    assert sorted(p.name for p in target.iterdir()) == ["01.pdf"]


@pytest.mark.robust
def test_an_oversized_run_fails_the_build_and_prints_no_handout(tmp_path):
    # a 50 MB print: the cell is stopped at 4 MB, the build names it in one FAILED line, and
    # no reading handout is printed from a run that failed
    nb = tiny(tmp_path / "oversized.ipynb", "import sys; sys.stdout.write('y' * 50_000_000)",
              "print('next')")
    made = handouts.targets(nb)
    for m in made:
        m.unlink(missing_ok=True)
    p = wk("build", str(nb))
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f"FAILED {nb}: cell 0 (slide “(before the first heading)”): OutputTooBig: the "
            "cell's output passed 4 MB") in p.stdout, p.stdout
    assert made and not any(m.exists() for m in made), made
