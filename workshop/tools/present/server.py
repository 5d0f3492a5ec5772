"""`python -m workshop present [DECK]`: JupyterLab on 127.0.0.1 with a token, the deck in RISE.

The server runs from this Python (the pinned env), listens on loopback only, and requires
Jupyter's token (random, passed through the environment so it is not in `ps`), whatever a
Jupyter config file says: `guard` checks that in the server before it listens. The notebook's
kernel is started before the browser opens. Autosave is off for this server (its own settings
folder), so running cells never rewrites the committed deck. Ctrl-C, SIGTERM and SIGHUP (the
terminal closed) all stop the server and its kernels (a second one waits for that, and the
rehearsal report). Each server has its own log.
`--rehearse` records when each slide is shown and, when the server stops, writes the rehearsal
report (`present.rehearse`): planned against actual minutes, per slide and per section.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import webbrowser
from pathlib import Path

from .. import errors, paths
from .. import notebooks as nbs
from . import MARKUP_IN_PATH
from .private import private_dir

HOST = "127.0.0.1"
# the classes whose `ip` places a kernel's ports, most general first (traitlets applies a
# subclass's config over its parents'): the command line sets each, outranking every config
KERNEL_MANAGERS = ("ConnectionFileMixin", "KernelManager", "AsyncKernelManager",
                   "IOLoopKernelManager", "AsyncIOLoopKernelManager", "ServerKernelManager")
LOGS = paths.BUILD / "present"
# JupyterLab's per-user settings for this server only: no autosave, so presenting (running
# cells) never writes outputs into the committed deck; the presenter's own settings are untouched
SETTINGS = {"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False}}
# Lab extensions the slideshow leaves out: jupyterlab-rise's page loads every installed lab
# extension, and Notebook 7's fails there (it needs a @jupyterlab/docregistry the page does not
# share), an error in the console each time a deck opens; it adds nothing to a slideshow. Nor do
# jupyterlab-rise's own JupyterLab plugin (the "render as slideshow" button, for JupyterLab's
# page) and jupyterlab_pygments (CSS for class-styled pygments HTML: the kit's outputs style
# theirs inline): each is scripts the page fetched and ran before the first slide.
NOT_IN_SLIDESHOW = {"@jupyter-notebook", "jupyterlab-rise", "jupyterlab_pygments"}
# Jupyter server extensions installed beside JupyterLab that a slideshow does not use, left out
# of present's server (less to import and start before the first slide): jupyter-lsp (it looks
# for language servers at start, running `npm prefix -g`, which a stopped server left behind,
# spinning), terminals, and Notebook 7's pages with their shim (JupyterLab's own page at /lab
# stays, with its notebook editor)
NOT_IN_SERVER = ("jupyter_lsp", "jupyter_server_terminals", "notebook", "notebook_shim")


def slideshow_extensions(folder: Path) -> Path:
    """A folder of links to the installed lab extensions less NOT_IN_SLIDESHOW, for
    jupyterlab-rise's page only (JupyterLab itself keeps them all)."""
    from jupyter_core.paths import jupyter_path
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for root in reversed(jupyter_path("labextensions")):   # the first on the path wins
        for ext in sorted(Path(root).glob("*")) if Path(root).is_dir() else []:
            if ext.name not in NOT_IN_SLIDESHOW:
                link = folder / ext.name
                link.unlink(missing_ok=True)
                link.symlink_to(ext.resolve(), target_is_directory=True)
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _check_port(port: int | None) -> None:
    """Whether `--port` names a port this server can listen on (None: a free one is picked)."""
    if port is not None and not 1024 <= port <= 65535:
        raise errors.KitError(f"--port {port}: pick a port from 1024 to 65535 "
                              "(or leave it out for a free one)")
    if port is not None:
        with socket.socket() as probe:
            try:
                probe.bind((HOST, port))
            except OSError:
                raise errors.KitError(f"--port {port}: something on {HOST} already listens "
                                      "there (pick another, or leave --port out)") from None


def list_decks() -> str:
    rows = []
    for p in nbs.decks():
        w = nbs.read(p).metadata.get("workshop", {})
        rows.append(f"  {p.stem:<28} {w.get('title', '')}  ({w.get('minutes', '?')} min)")
    return "\n".join(rows)


def call(base: str, token: str, path: str, body: dict | None = None,
         method: str | None = None, timeout: float = 10):
    """One request to a Jupyter server's REST API, with its token; the JSON answer."""
    req = urllib.request.Request(
        base + path, method=method or ("POST" if body is not None else "GET"),
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read() or b"null")


def session_for(base: str, token: str, rel: str) -> dict:
    """A session for the notebook, so RISE finds its kernel already running. The server
    answers once the kernel has started, which on a busy machine took over 10 s (a CI run
    beside other work): as long as Jupyter itself gives a kernel to start (60 s), and more."""
    return call(base, token, "/api/sessions", {"path": rel, "name": Path(rel).name,
                                               "type": "notebook", "kernel": {"name": "python3"}},
                timeout=90)


class Server:
    """A JupyterLab process on loopback; `stop()` always ends it."""

    def __init__(self, port: int | None = None, log: Path | None = None,
                 rehearsal: Path | None = None, byline: list[str] | None = None):
        _check_port(port)
        self.port = port or free_port()
        self.token = secrets.token_urlsafe(24)
        self.base = f"http://{HOST}:{self.port}"
        self.scratch = None   # a private folder of its own where the checkout is read-only
        self.log = self._log_path(log)
        private_dir(self.log.parent)
        # the log, the settings and the redirect page are the presenter's alone (another user
        # on this machine reads none of them); Jupyter's own runtime files are 0600 too
        self._log = os.fdopen(os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                              "w")
        self.proc = None
        try:
            self._start(rehearsal, byline)
        except BaseException:   # (a Ctrl-C as it starts: the server stopped, its folders gone;
            self.stop()         # it ran alone a second and they stayed, probe 18)
            raise

    def _start(self, rehearsal: Path | None, byline: list[str] | None) -> None:
        os.chmod(self.log, 0o600)
        self.settings = private_dir(self.log.with_suffix(".settings"))
        for rel, value in SETTINGS.items():
            f = self.settings / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(json.dumps(value))
        extensions = slideshow_extensions(private_dir(self.log.with_suffix(".labextensions")))
        # Jupyter's runtime files (the server's, with its token; the kernels' connection files)
        # and JupyterLab's workspaces go to this server's own folder, not under $HOME: present
        # works with HOME unset or read-only, and leaves nothing there
        self.runtime = private_dir(self.log.with_suffix(".runtime"))
        cmd = self._command(extensions)
        env = self._environment(rehearsal, byline or [])
        # a Ctrl-C while Popen waits for the exec is kept until the process is this server's
        # (raised inside Popen, it left a server no one would stop)
        import signal
        import threading
        pressed: list = []
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(frame)) \
            if main else None
        try:
            self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env,
                                         start_new_session=True)
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
        if pressed:
            if callable(previous):
                previous(signal.SIGINT, pressed[0])
            raise KeyboardInterrupt

    def _log_path(self, log: Path | None) -> Path:
        """Where this server's log goes: `log`, else LOGS, else a scratch folder of its own."""
        if log is None:
            try:
                private_dir(LOGS)
                prune(LOGS)
                log = LOGS / f"{self.port}.log"     # one log per server
            except OSError as e:
                import tempfile
                self.scratch = Path(tempfile.mkdtemp(prefix="workshop-present-"))
                log = self.scratch / f"{self.port}.log"
                print(f"present: {paths.short(LOGS)}/ cannot be written ({e.strerror}): this "
                      f"server's log and settings are in {self.scratch} until it stops",
                      flush=True)
        return log

    def _command(self, extensions: Path) -> list[str]:
        """The command line of this server's JupyterLab, and so what no config can change."""
        cmd = [sys.executable, "-m", "workshop.tools.present.boot", "--no-browser",  # jupyter lab
               # the port goes in the environment (JUPYTER_PORT), not here: the command line
               # is anyone's to read (ps), and a port known before the server listens is one
               # another local user can take first (guard refuses a config that moves it)
               f"--ServerApp.ip={HOST}",
               # and its kernels' five ports: a config's `KernelManager.ip = "0.0.0.0"` (or
               # its parent's, or its subclass's) put them on every interface
               *(f"--{c}.ip={HOST}" for c in KERNEL_MANAGERS),
               # and what the kernel says goes over them encrypted (CurveZMQ, its keys in the
               # connection file, the presenter's alone): another local user who found the
               # kernel's output port subscribed to it and read each cell and its output as
               # it ran (probe 10's K1, the hub's kernels use socket files in their homes)
               *(f"--{c}.transport_encryption=required" for c in KERNEL_MANAGERS[1:]),
               "--ServerApp.port_retries=0", f"--ServerApp.root_dir={paths.ROOT}",
               f"--LabApp.user_settings_dir={self.settings}",
               f"--LabApp.workspaces_dir={private_dir(self.runtime / 'workspaces')}",
               # a notebook's checkpoint (a copy JupyterLab makes on opening it) goes here too,
               # not into decks/.ipynb_checkpoints/ beside the committed decks
               f"--FileCheckpoints.checkpoint_dir={self.runtime / 'checkpoints'}",
               f"--RiseApp.labextensions_path={extensions}",
               "--ServerApp.jpserver_extensions=workshop.tools.present.extension=True",
               *(f"--ServerApp.jpserver_extensions={name}=False" for name in NOT_IN_SERVER),
               # the command line outranks every Jupyter config file: none can turn XSRF off,
               # nor the token (guard.TokenOnly's is present's, from the environment); what
               # the command line cannot fix, guard refuses before the server listens
               "--ServerApp.disable_check_xsrf=False",
               "--ServerApp.identity_provider_class=workshop.tools.present.guard.TokenOnly",
               # nor open its metrics to anyone (probe 18: /metrics without the token)
               "--ServerApp.authenticate_prometheus=True",
               # nor lift the output rate limits (Jupyter's defaults): a cell that prints 50 MB
               # shows its first few MB and a note, and the slideshow stays responsive
               "--ServerApp.iopub_data_rate_limit=1000000",
               "--ServerApp.iopub_msg_rate_limit=1000"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")   # CI and these machines run as root
        return cmd

    def _environment(self, rehearsal: Path | None, byline: list[str]) -> dict[str, str]:
        """The server's environment: its token, its runtime folder, the rehearsal's log and the
        title slide's byline (present/extension.py reads them)."""
        env = dict(os.environ, JUPYTER_TOKEN=self.token, JUPYTER_PORT=str(self.port),
                   JUPYTER_RUNTIME_DIR=str(self.runtime),
                   WORKSHOP_PRESENT_PID=str(os.getpid()))   # the server stops when we are gone
        env.pop("WORKSHOP_REHEARSAL", None)
        env["WORKSHOP_BYLINE"] = json.dumps(byline)
        if rehearsal is not None:   # the page script posts slide changes; the server logs them
            rehearsal.parent.mkdir(parents=True, exist_ok=True)
            env["WORKSHOP_REHEARSAL"] = str(rehearsal)
        return env

    def api(self, path: str, body: dict | None = None):
        return call(self.base, self.token, path, body)

    def _ours(self) -> bool:
        """Whether the socket listening on this server's port is this server's own process's
        (or its children's): a program of another user that took the port first gets none of
        present's requests, so never its token."""
        import psutil
        try:
            me = psutil.Process(self.proc.pid)
            procs = [me, *me.children(recursive=True)]
        except psutil.Error:
            return False
        for proc in procs:
            try:
                if any(c.status == psutil.CONN_LISTEN and c.laddr.port == self.port
                       for c in proc.net_connections(kind="tcp")):
                    return True
            except psutil.Error:
                continue
        return False

    def _someone_else(self) -> bool:
        """Something other than this server answers on its port (checked twice: the server
        may have begun to listen between the two looks)."""
        with socket.socket() as probe:
            probe.settimeout(1)
            if probe.connect_ex((HOST, self.port)) != 0:
                return False
        return not self._ours()

    def wait_ready(self, timeout: float = 90) -> None:
        """Until the server answers present's token, asked only once the port's listener is
        this server's own (see _ours); then release() may send the browser to it."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                self._exited()
            if not self._ours():
                if self._someone_else():
                    raise errors.KitError(
                        f"another program listens on {HOST}:{self.port}, not present's server "
                        "(another user's, or one started meanwhile): present sent it nothing "
                        "and stops; start present again (a new free port)")
                time.sleep(0.05)
                continue
            try:
                self.api("/api/status")
            except urllib.error.HTTPError as e:   # it answers, but not to present's token
                if e.code not in (401, 403):   # (anything else: as not ready yet)
                    time.sleep(0.05)
                    continue
                raise errors.KitError(
                    f"the server refuses present's own token ({e.code}): a Jupyter config or "
                    "extension changes how it checks who asks; see "
                    f"{paths.short(self.log)} and `jupyter --paths`") from None
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.05)   # (a refused connection costs nothing; the answer is awaited)
                continue
            self.refuse_without_token()
            return
        raise RuntimeError(f"JupyterLab did not answer within {timeout:.0f} s; "
                           f"see {paths.short(self.log)}")

    def _exited(self) -> None:
        """The server ended before it answered: why, as an exception (guard's refusal of a
        Jupyter config: its one line, a KitError)."""
        from . import guard
        if self.proc.returncode == guard.REFUSED:
            self._log.flush()
            why = guard.refusal(self.log.read_text(encoding="utf-8", errors="replace"))
            if why:
                raise errors.KitError(why)
        # else Jupyter's own reason, its last critical line (a config's Unix socket), if any
        self._log.flush()
        lines = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        said = [ln.split("] ", 1)[1] for ln in lines if ln.startswith("[C ") and "] " in ln]
        raise RuntimeError(f"JupyterLab exited ({self.proc.returncode})"
                           + (f": {said[-1].strip()[:200]}" if said else "")
                           + f"; see {paths.short(self.log)}")

    def refuse_without_token(self) -> None:
        """A second line of defence behind guard (which checks the token before the server
        listens): asked without the token, the server must say 403, else anyone on this
        machine could run code in the kernel."""
        try:
            urllib.request.urlopen(f"{self.base}/api/contents", timeout=10)
        except urllib.error.HTTPError as e:
            if e.code in (401, 403):
                return
        raise errors.KitError("the server answers without its token (a Jupyter config or "
                              "extension, see `jupyter --paths`): present serves only with "
                              "one; remove that setting")

    def start_kernel_for(self, rel: str) -> None:
        session_for(self.base, self.token, rel)

    def rise_url(self, rel: str) -> str:
        """The slideshow's address: the path quoted (a `#` or `?` in it began the URL's
        fragment or query, and the browser asked for another path, without the token)."""
        from urllib.parse import quote
        return f"{self.base}/rise/{quote(rel)}?token={self.token}"

    def opener(self) -> str:
        """A file:// page for the browser, which present opens as the server starts (so the
        browser starts beside it). It holds no token and no address: every 100 ms it asks for
        a script beside it, which `release` writes once the server that answers on the port
        is present's own, and which sends the browser to the deck. The browser's command line
        (which `ps` shows) holds no token, and a program that took the port first is sent
        nothing. Both files are readable by this user only."""
        page = self.log.with_suffix(".open.html")
        ready = json.dumps(self.log.with_suffix(".ready.js").name)
        fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("<!doctype html><meta charset='utf-8'><title>present</title>"
                    "<p id='w'>The slideshow is starting…</p><script>var t0 = Date.now(), "
                    "n = 0; (function ask() { var s = document.createElement('script'); "
                    f"s.src = {ready} + '?' + n++; s.onerror = function () {{ s.remove(); "
                    "if (Date.now() - t0 > 120000) document.getElementById('w').textContent "
                    "= 'No answer from the server yet: see the terminal where present runs.';"
                    " setTimeout(ask, 100); }; document.head.appendChild(s); })();</script>\n")
        os.chmod(page, 0o600)
        return page.resolve().as_uri()

    def release(self, url: str) -> None:
        """Send the browser on the opener page to `url` (after wait_ready: the server is
        present's own): the script it asks for, written whole (a rename), this user's only."""
        ready = self.log.with_suffix(".ready.js")
        part = ready.with_suffix(".part")
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"location.replace({json.dumps(url)});\n")
        os.replace(part, ready)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()          # jupyter shuts down cleanly on SIGTERM
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        for made in (".open.html", ".ready.js", ".ready.part"):
            self.log.with_suffix(made).unlink(missing_ok=True)
        for made in (".settings", ".labextensions", ".runtime"):   # the log stays
            shutil.rmtree(self.log.with_suffix(made), ignore_errors=True)
        if self.scratch is not None:   # (but not in a temporary folder)
            shutil.rmtree(self.scratch, ignore_errors=True)


KEEP_LOGS, KEEP_DAYS = 20, 1


def prune(folder: Path) -> None:
    """Keep the newest KEEP_LOGS server logs, and any written in the last KEEP_DAYS (a server
    still running), with what an ended server left beside one: a presenter's machine runs
    `present` hundreds of times over a workshop."""
    logs = sorted(folder.glob("*.log"), key=lambda p: p.stat().st_mtime, reverse=True)
    old_enough = time.time() - KEEP_DAYS * 86400
    for old in logs[KEEP_LOGS:]:
        if old.stat().st_mtime > old_enough:
            continue
        for made in (".log", ".settings", ".labextensions", ".runtime", ".open.html",
                     ".ready.js"):
            p = old.with_suffix(made)
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


# A deck's own RISE settings that the slideshow puts into the page as HTML, as soon as present
# opens it and before any cell runs (JupyterLab's notebook trust does not cover them): text, and
# the inline tags the kit's footer uses with at most a class, and nothing else. An allowlist of
# the whole string, not a parse: a tag the browser reads differently from a parser
# (`<img/src=x/onerror=…>`) is simply not on it. (compose escapes the title it writes there.)
RISE_HTML = ("header", "footer", "overlay", "backimage")
_INLINE = "span|b|i|em|strong|small|br|sub|sup|code"
_TEXT = re.compile(rf"(?:[^<>]|</?(?:{_INLINE})(?:\s+class=(['\"])[\w\s-]*\1)?\s*/?>)*")


# backimage goes into an attribute (src='…'): a quote would end it and start another (an
# onerror); a relative path of plain characters is all a deck needs there
_PATH = re.compile(r"[\w][\w./ -]*")


# jupyterlab-rise reads its settings from both, rise's over livereveal's (RISE 5's older name:
# its loadConfiguration spreads getMetadata("livereveal"), then getMetadata("rise")); probe 3
# ran a livereveal footer's <img onerror> that the check of rise alone let through
RISE_METADATA = ("livereveal", "rise")


def markup_problem(nb) -> str | None:
    """Where `nb`'s RISE settings hold markup the slideshow would run or load, in words."""
    for where in RISE_METADATA:
        said = _markup_in(nb["metadata"].get(where, {}), where)
        if said:
            return said
    return None


def _markup_in(rise, where: str) -> str | None:
    if not isinstance(rise, dict):
        return f"its metadata.{where} is not a dict of settings (a {type(rise).__name__})"
    for key in RISE_HTML:
        value = rise.get(key)
        rule = _PATH if key == "backimage" else _TEXT
        if value is not None and not (isinstance(value, str) and rule.fullmatch(value)
                                      and ".." not in value.split("/")):
            shown = value[:60] if isinstance(value, str) else type(value).__name__
            accepts = ("a relative path of letters, digits and ./_- " if key == "backimage"
                       else "text and <span class='…'> ")
            return (f"its metadata.{where}.{key} holds markup the slideshow would run or load "
                    f"({shown!r}): present accepts {accepts}there, as the kit's decks have")
    # every other setting, however deep, is a word, a number or a flag: RISE's plugins put
    # some into the page too (probe 4: chalkboard.keyBindings.*.key went into a button's HTML)
    for path, value in _strings(rise, where):
        if path.split(".")[1] not in RISE_HTML and _QUOTED.search(value):
            return (f"its metadata.{path} holds markup the slideshow would run ({value[:60]!r}):"
                    " present accepts no <, >, quote or backtick in a RISE setting there")
    return None


_QUOTED = re.compile(r"[<>\"'`]")


def _strings(value, path: str):
    """(dotted path, string) for every string in a JSON value (keys included)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield f"{path}.{k}", str(k)
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}.{i}")


def refuse_what_cannot_be_shown(path: Path) -> None:
    """What the build refuses (a cell that would show notes on the slide) is refused here too,
    and XLA_FLAGS that would kill the kernel in the setup cell: a KitError."""
    from ..xla_flags import xla_flags_problem
    nbs.check_inputs([path])
    flags = xla_flags_problem()
    if flags:
        raise errors.KitError(flags)


def main(deck: str | None, port: int | None = None, open_browser: bool = True,
         rehearse: bool = False, byline: dict[str, str | None] | None = None,
         report: str | None = None) -> int:
    """`present DECK`; `byline`: the title slide's presenter, event and date as given on the
    command line (None: not given; presenting.toml has the rest); `report`: a kept rehearsal
    log to make the report of, and nothing else."""
    if report:
        return _report(report, deck, rehearse)
    if not deck:
        print("Decks (scripts/present NAME, e.g. scripts/present 01):")
        print(list_decks())
        return 0
    # a deck by name is a path too: a link in decks/ is followed before it is judged
    path = nbs.select([deck], among=nbs.decks(), what="deck")[0].resolve()
    if not path.is_relative_to(paths.ROOT):   # (a path, or a link, that leads out of the kit)
        raise errors.KitError(f"{path} is outside the kit's folder, {paths.ROOT}, which is all "
                              "that present serves: copy it into the kit's folder (e.g. "
                              "talks/), or compose a talk into talks/ from the kit's sections "
                              "(`python -m workshop compose talks/NAME.ipynb …`)")
    rel = path.relative_to(paths.ROOT).as_posix()
    hidden = [p for p in rel.split("/")[:-1] if p.startswith(".")]
    if hidden:   # Jupyter serves no hidden folder: the slideshow would find no notebook
        raise errors.KitError(f"{rel}: Jupyter serves no hidden folder ({hidden[0]}): copy the "
                              "deck elsewhere in the kit (e.g. talks/)")
    if MARKUP_IN_PATH.search(rel):   # RISE writes the path into the page's HTML
        raise errors.KitError(f"{rel!r}: a deck's path with a quote, <, >, & or ` goes into "
                              "the slideshow page as markup: rename it")
    # before a server or a browser starts; the notebook read as JSON alone (nbformat's import
    # and validation, half a second, go to the check below, made while the server starts)
    markup = markup_problem({"metadata": nbs.metadata(path)})
    if markup:
        raise errors.KitError(f"{paths.short(path)}: {markup}")
    t0 = time.monotonic()
    from . import rehearse as rh
    log = rh.start_log(path) if rehearse else None   # (unwritable: one line, nothing started)
    from .extension import byline_for
    server = Server(port, rehearsal=log, byline=byline_for(byline or {}))
    try:   # the server starts (2 s or more) while the deck is checked
        refuse_what_cannot_be_shown(path)
    except BaseException:
        _stop(server, path, log)
        raise
    if open_browser:   # the browser starts beside the server, on a page that waits for it
        webbrowser.open(server.opener())

    from ..processes import ignore_stops, stop_once
    # Ctrl-C, a kill or the terminal closed stop the server (where present was started with
    # SIGINT ignored too, by a non-interactive shell's `&`: it waited 30 s to be killed); a
    # second one while it stops is told to wait, and the rehearsal report is still written
    cleaning = stop_once("present: still stopping" + (
        ", then the rehearsal report" if log else "") + " (a few seconds)")
    try:
        return _serve(server, rel, log, t0)
    except KeyboardInterrupt:
        print("\npresent: stopping the server", flush=True)
        return 0
    except (RuntimeError, errors.KitError) as e:
        print(f"present: {e}", file=sys.stderr)
        return 1
    finally:
        cleaning()
        _stop(server, path, log, time.time())
        ignore_stops()


def _report(report: str, deck: str | None, rehearse: bool) -> int:
    """`present --report LOG`, alone (a deck or --rehearse beside it were dropped without a
    word: probe 7)."""
    if deck or rehearse:
        raise errors.KitError("--report LOG writes a kept log's report and presents nothing: "
                              "give it alone, without a deck or --rehearse")
    from . import rehearse as rh
    print(f"present: rehearsal report {paths.short(rh.report_from_log(Path(report)))}")
    return 0


def _serve(server: Server, rel: str, log: Path | None, t0: float) -> int:
    """The server ready, the deck's kernel started, the address said; then until the server
    ends (1) or Ctrl-C."""
    server.wait_ready()
    url = server.rise_url(rel)
    server.release(url)   # the browser's opener page goes on to the deck
    server.start_kernel_for(rel)
    print(f"present: {rel} in RISE at\n  {url}", flush=True)
    print(f"present: server ready in {time.monotonic() - t0:.1f} s (log: "
          f"{paths.short(server.log)}). Run a cell with Ctrl-Enter; Ctrl-C here stops the "
          "server.", flush=True)
    if log is not None:
        print(f"present: rehearsing: each slide's time is recorded; Ctrl-C here ends the "
              f"rehearsal and writes {paths.short(log.with_suffix('.md'))}", flush=True)
    while server.proc.poll() is None:
        time.sleep(0.5)
    print(f"present: JupyterLab exited ({server.proc.returncode}); "
          f"see {paths.short(server.log)}")
    return 1


def _stop(server: Server, path: Path, log: Path | None, ended_at: float | None = None) -> None:
    """The server stopped; a rehearsal's report written from its log (`ended_at`: when the
    last slide ended; None: the rehearsal never began, only its empty log goes)."""
    server.stop()
    if log is None:
        return
    from . import rehearse as rh
    if ended_at is None:
        rh.write_report(path, log)   # (no slide: nothing written, the log removed)
        return
    try:
        report = rh.write_report(path, log, ended_at)
    except (OSError, errors.KitError) as e:
        print(f"present: the rehearsal report could not be written ({e}); the slides' times "
              f"are kept in {paths.short(log)}", flush=True)
        return
    print(f"present: rehearsal report {paths.short(report)}" if report else
          "present: rehearsal: no slide was shown, no report", flush=True)
