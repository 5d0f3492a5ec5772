"""`python -m workshop doctor`: what an attendee or presenter needs to know, each with its fix."""
from __future__ import annotations

import functools
import re
import sys

from ..devices import N_DEVICES, PINNED_JAX
from . import browser, lockfile
from .kernel import run_code
from .xla_flags import xla_flags_problem

KEY = ["jax", "jaxlib", "jupyterlab", "notebook", "jupyterlab-rise", "ipykernel", "nbclient",
       "nbconvert", "matplotlib", "rich"]
SETUP_FIX = "run scripts/setup --force (remakes .venv from the lock)"
# the Pythons the lock installs on and CI proves: pyproject.toml's requires-python
# (tests/test_meta.py holds the two together)
PYTHONS = ((3, 12), (3, 13), (3, 14), (3, 15))


def _marks() -> tuple[str, str]:
    """✓ and ✗, or ASCII where the terminal cannot show them (PYTHONIOENCODING=ascii, an old
    console): a doctor that crashed on its own first mark would tell nobody anything."""
    try:
        "✓✗".encode(sys.stdout.encoding or "ascii")
        return "✓", "✗"
    except (UnicodeEncodeError, LookupError):
        return "ok", "XX"


class Report:
    def __init__(self):
        self.failed = False
        self.good, self.wrong = _marks()

    def ok(self, what, detail):
        print(f"  {self.good} {what}: {detail}")

    def bad(self, what, detail, fix, required=True):
        mark = self.wrong if required else "!"
        print(f"  {mark} {what}: {detail}{'' if required else ' (optional)'}\n      fix: {fix}")
        self.failed |= required


def last_line(output: str) -> str:
    """A kernel's output in one line: a traceback (jax refusing a jaxlib of another version is
    80 lines) becomes its last line, without colour codes."""
    import re
    lines = [ln for ln in re.sub(r"\x1b\[[0-9;]*m", "", output).splitlines() if ln.strip()]
    return lines[-1].strip()[:200] if lines else ""


def fresh_kernel_devices() -> str:
    return run_code("import workshop; workshop.setup()")


def _listing(fill) -> str:
    """What a `jupyter ... list` command prints, from its own function, in this process (the
    command itself takes about 20 s on a loaded 2-core machine, most of it start-up)."""
    import contextlib
    import io
    import logging
    import warnings
    buf = io.StringIO()
    log = logging.Logger("workshop.tools.doctor.listing", logging.INFO)
    log.addHandler(logging.StreamHandler(buf))
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf), \
            warnings.catch_warnings():   # some print; traitlets warns about its own API
        warnings.simplefilter("ignore", DeprecationWarning)
        fill(log)
    return re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue())


@functools.cache
def lab_extensions() -> str:
    """`jupyter labextension list`: each extension with enabled/disabled and OK/X."""
    from jupyter_core.paths import jupyter_path
    from jupyterlab.commands import AppOptions, list_extensions
    return _listing(lambda log: list_extensions(AppOptions(
        logger=log, labextensions_path=jupyter_path("labextensions"))))


@functools.cache
def server_extensions() -> str:
    """`jupyter server extension list`: each server extension, enabled or not, validated."""
    from jupyter_server.extension.serverextension import ListServerExtensionsApp

    def fill(log):
        app = ListServerExtensionsApp()
        app.log = log
        app.list_server_extensions()
    return _listing(fill)


DECK = "decks/01-run-it-first.ipynb"


def slideshow_problem(rel: str = DECK) -> str | None:
    """None when the server `present` starts answers a deck's RISE page with the slideshow
    app, else what went wrong in one line: the listings can say enabled while the page is not
    served (a config, a broken install)."""
    import urllib.error
    import urllib.request

    from .present.server import Server
    try:
        server = Server()
    except (OSError, RuntimeError) as e:
        return f"present's server could not start: {e}"
    try:
        server.wait_ready(timeout=90)
        with urllib.request.urlopen(server.rise_url(rel), timeout=60) as page:
            html = page.read().decode("utf-8", "replace")
        if "<title>Rise</title>" not in html:
            return f"{rel}: the page present opens is not RISE's (log: {server.log.name})"
        return None
    except urllib.error.HTTPError as e:
        return f"{rel}: the page present opens answers {e.code} {e.reason}"
    except (OSError, RuntimeError) as e:
        return f"present's server did not answer: {e}"
    finally:
        server.stop()


def main() -> int:
    r = Report()
    print("JAX Core, From the Inside: doctor")
    for check in (_python, _packages, _kernel, _rise, _browser):
        check(r)
    print("doctor: " + (f"something required is wrong ({r.wrong} above)" if r.failed
                        else "all green"))
    return 1 if r.failed else 0


def _python(r: Report, v: tuple[int, ...] | None = None) -> None:
    v = tuple(v or sys.version_info)
    *first, last = (f"{a}.{b}" for a, b in PYTHONS)
    names = f"{', '.join(first)} or {last}"
    if v[:2] in PYTHONS:
        r.ok("Python", ".".join(map(str, v[:3])))
    else:
        r.bad("Python", f"{v[0]}.{v[1]} (the kit runs on Python {names})",
              f"install Python {names} and run scripts/setup --force")


def _packages(r: Report) -> None:
    have, pins = lockfile.installed(), lockfile.pins()
    for name in KEY:
        got, want = have.get(name), pins.get(name)
        if got == want:
            r.ok(name, got)
        else:
            r.bad(name, f"{got or 'not installed'} (lock: {want})", SETUP_FIX)
    others = [m for m in lockfile.mismatches() if m.split(":")[0] not in KEY]
    if others:
        r.bad("other locked packages", "; ".join(others[:5]) + (" …" if len(others) > 5 else ""),
              SETUP_FIX)
    else:
        r.ok("other locked packages", f"all {len(pins) - len(KEY)} as in the lock")


def _kernel(r: Report) -> None:
    flags = xla_flags_problem()
    if flags:   # XLA would abort every kernel in its setup cell: say why, skip the kernel
        what, fix = flags.split(": unset ", 1)
        r.bad("XLA_FLAGS", what.removeprefix("XLA_FLAGS="), "unset " + fix)
        return
    try:
        line = last_line(fresh_kernel_devices())
    except Exception as e:
        line = f"the kernel did not start ({type(e).__name__}: {str(e)[:160]})"
    if f"{N_DEVICES} CPU devices" in line and "⚠" not in line:
        r.ok("fresh kernel", line)
    else:
        r.bad("fresh kernel", line or "no banner",
              f"the kernel must run JAX {PINNED_JAX} from .venv: {SETUP_FIX}")


def _rise(r: Report) -> None:
    labs, server = lab_extensions(), server_extensions()
    rise_lab = any("jupyterlab-rise" in ln and "enabled" in ln and "OK" in ln
                   for ln in labs.splitlines())
    rise_server = any("jupyterlab_rise" in ln and "enabled" in ln for ln in server.splitlines())
    if rise_lab and rise_server:
        r.ok("RISE", "jupyterlab-rise enabled (lab and server extension)")
        problem = slideshow_problem()
        if problem:
            r.bad("slideshow page", problem, f"look at the server log it names; {SETUP_FIX}")
        else:
            r.ok("slideshow page", f"{DECK} answers in RISE, as present serves it")
    else:
        r.bad("RISE", "jupyterlab-rise is not enabled", SETUP_FIX)
    if "incompatible" in labs or " X" in labs:
        bad = [ln.strip() for ln in labs.splitlines() if " X" in ln]
        r.bad("JupyterLab extensions", "marked incompatible: " + "; ".join(bad), SETUP_FIX)
    else:
        r.ok("JupyterLab extensions", "none marked incompatible")


def _browser(r: Report) -> None:
    exe = browser.find()
    if exe:
        r.ok("browser for PDFs", exe)
    else:
        r.bad("browser for PDFs", "no Chromium or Chrome found", browser.INSTALL, required=False)
