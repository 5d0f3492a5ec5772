"""End to end, the present command's server (`present` run as a presenter types it, stopped as a
presenter stops it: workshop/tools/present/driver.py): its files the presenter's alone, a
Jupyter config that cannot turn off its XSRF check, its token or its loopback, the browser
opened without the token on a command line; Ctrl-C, a kill, a closed terminal; a port out of
range, a wrong deck, and what it cannot serve refused in one line; a read-only checkout, no
writable /tmp, a path through dot-dot, and a build of the deck on show. The RISE view, and the
server that served it stopped with Ctrl-C, are in test_present_slides.py."""
from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import types
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

import psutil
import pytest
from conftest import tiny

from workshop.tools import paths
from workshop.tools.present.driver import (
    kernel_processes,
    port_open,
    start_present,
    stop_present,
)
from workshop.tools.present.server import call, free_port


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_the_servers_files_are_the_presenters_alone(presenting):
    # the log, the settings, the redirect page's folder and Jupyter's runtime file (it holds
    # the token) are readable by the presenter only; another local user reads none of them and
    # the server refuses that user without the token
    from workshop.tools.present.server import LOGS
    port = presenting["port"]
    log = LOGS / f"{port}.log"
    assert _mode(LOGS) == 0o700 and _mode(log) == 0o600
    # (and the server starts no language-server search: jupyter-lsp's `npm prefix -g`, left
    # running by a server stopped during its start, spun for minutes)
    assert "jupyter_lsp" not in log.read_text() and "language server" not in log.read_text()
    # (Jupyter adds the sticky bit to its runtime folder: 0o1700)
    assert {_mode(log.with_suffix(s)) & 0o777 for s in (".settings", ".labextensions",
                                                         ".runtime")} == {0o700}
    runtime = [p for p in log.with_suffix(".runtime").glob("jpserver-*.json")
               if json.loads(p.read_text()).get("port") == port]
    assert len(runtime) == 1 and _mode(runtime[0]) == 0o600, runtime
    assert presenting["url"].split("token=")[1] in runtime[0].read_text()
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("trying another local user needs root (CI and these machines have it)")
    other = ["runuser", "-u", "nobody", "--"]
    from workshop.tools.present.server import Server
    server = Server.__new__(Server)    # the pages this server's browser would open
    server.log = log
    opener = Path(server.opener().removeprefix("file://"))
    server.release(presenting["url"])
    ready = log.with_suffix(".ready.js")
    try:   # the opener holds no token; the script it waits for, which has it, is ours alone
        assert _mode(opener) == 0o600 and "token" not in opener.read_text()
        assert _mode(ready) == 0o600 and presenting["url"].split("token=")[1] in \
            ready.read_text()
        for f in (log, runtime[0], opener, ready):
            p = subprocess.run([*other, "cat", str(f)], capture_output=True, text=True,
                               timeout=30)
            assert p.returncode != 0 and "Permission denied" in p.stderr, (f, p)
    finally:
        opener.unlink()
        ready.unlink()
    base = f"http://127.0.0.1:{port}"
    for where in ("/api/contents", "/api/contents?token=not-the-token", "/lab"):
        p = subprocess.run([*other, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                            base + where], capture_output=True, text=True, timeout=30)
        assert p.stdout in ("403", "302"), (where, p.stdout, p.stderr)
        if p.stdout == "302":   # /lab sends a stranger to the login page, nothing else
            loc = subprocess.run([*other, "curl", "-s", "-o", "/dev/null", "-w",
                                  "%{redirect_url}", base + where], capture_output=True,
                                 text=True, timeout=30).stdout
            assert "/login" in loc, loc


def test_a_jupyter_config_cannot_turn_off_xsrf_and_one_without_a_token_is_refused(
        presenting, tmp_path):
    import http.cookiejar
    import urllib.error
    import urllib.request
    # the presenting server's config sets disable_check_xsrf (the fixture): a request another
    # site makes the browser send, with the presenter's login cookie, is still refused
    base, token = f"http://127.0.0.1:{presenting['port']}", presenting["url"].split("token=")[1]
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{base}/lab?token={token}", timeout=60).read()
    xsrf = next(c.value for c in jar if c.name == "_xsrf")

    def delete(headers):
        req = urllib.request.Request(f"{base}/api/sessions/none", method="DELETE",
                                     headers=headers)
        try:
            return opener.open(req, timeout=30).status
        except urllib.error.HTTPError as e:
            return e.code
    assert delete({}) == 403                      # refused: XSRF is checked
    assert delete({"X-XSRFToken": xsrf}) == 404   # the same request from the page itself


class _Stranger(threading.Thread):
    """Another local user from the first millisecond of a present: asks the port present
    names, without the token, as soon as it accepts a connection (the contents API: the
    checkout listed, or a file written), and lists every port that present's processes
    listen on while it runs."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port, self.proc, self.done = port, None, threading.Event()
        self.answers, self.listening = [], set()

    def run(self):
        import psutil
        while not self.done.is_set():
            if self.proc is not None:
                try:
                    tree = [psutil.Process(self.proc.pid)]
                    tree += tree[0].children(recursive=True)
                    self.listening |= {(c.laddr.ip, c.laddr.port) for p in tree
                                       for c in p.net_connections("inet")
                                       if c.status == psutil.CONN_LISTEN}
                except psutil.Error:
                    pass
            if len(self.answers) < 5 and port_open(self.port):
                try:
                    r = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/contents/",
                                               timeout=30)
                    self.answers.append(r.status)
                except urllib.error.HTTPError as e:
                    self.answers.append(e.code)
                except OSError:
                    pass
            time.sleep(0.001)


# Jupyter configs of the presenter's that would weaken present's server: those the command
# line outranks are overridden (served, with present's token alone), the others refused before
# the server listens
TOKEN_OFF = {"IdentityProvider": {"token": ""}}
CONFIGS = {"token off": (TOKEN_OFF, None),
           "token off, the old way, XSRF off": (
               {"ServerApp": {"token": "", "disable_check_xsrf": True}}, None),
           "its own fixed token": ({"IdentityProvider": {"token": "my-own-fixed-token-123"}},
                                   None),
           # (its metrics were served without the token: probe 18)
           "metrics without a login": ({"ServerApp": {"authenticate_prometheus": False}}, None),
           "a token-less identity provider": (
               {"ServerApp": {"identity_provider_class":
                              "jupyter_server.auth.identity.IdentityProvider"}, **TOKEN_OFF},
               None),
           "XSRF off in tornado_settings": (
               {"ServerApp": {"tornado_settings": {"disable_check_xsrf": True}}},
               "turns off the server's XSRF check"),
           # present's port is in the environment, not on the command line: a config that
           # moves the server (its port, a Unix socket, a base_url) would leave present asking
           # where it is not (probe 2: 90 s of "did not answer"), and is refused
           "a port of its own": ({"ServerApp": {"port": 8765}}, "sets the server's port"),
           # (Jupyter refuses this one itself; present says its reason)
           "a Unix socket": ({"ServerApp": {"sock": "/tmp/workshop-probe.sock"}},
                             "Options --port and --sock are mutually exclusive"),
           "a base_url": ({"ServerApp": {"base_url": "/jl/"}}, "sets the server's base_url"),
           # a weaker server than present's (probe 2: it served / and said ready; it echoed
           # any site's Origin with credentials)
           "another folder": ({"FileContentsManager": {"root_dir": "/"}},
                              "serves another folder"),
           "other sites' pages": ({"ServerApp": {"allow_origin_pat": ".*",
                                                 "allow_credentials": True}},
                                  "lets other sites' pages call the server"),
           # Jupyter's static files need no login: a config's folder among them was served to
           # any local user, as root (probe 17: a 0600 file of root's)
           "a folder served to anyone": ({"ServerApp": {"extra_static_paths": ["/etc"]}},
                                         "serves a folder to anyone, without a login (/etc"),
           # and one named in tornado_settings (the reason named "/": probe 18), and Jupyter's
           # data folder, which holds the presenter's other servers' tokens (probe 18)
           "a static_path of tornado's": ({"ServerApp": {"tornado_settings": {
               "static_path": "/etc"}}}, "serves a folder to anyone, without a login (/etc"),
           "Jupyter's data folder": ({"ServerApp": {"extra_static_paths": [
               __import__("jupyter_core.paths").paths.jupyter_data_dir()]}},
               "serves a folder to anyone, without a login (")}


# The quick run starts a server under the two configs of probe 5's medium finding: served with
# present's token alone (token off), refused by guard before any port (XSRF off). The rest
# start one under -m thorough (a fixed token, which then opens nothing; refused by Jupyter
# itself with its reason shown, a Unix socket); guard.problem's reason for each is the quick
# run's, in-process, below
QUICK = {"token off", "XSRF off in tornado_settings"}


@pytest.mark.parametrize("case", [pytest.param(c, marks=[pytest.mark.thorough] * (c not in QUICK))
                                  for c in CONFIGS])
def test_no_jupyter_config_opens_a_port_without_presents_token(case, tmp_path):
    config, refused = CONFIGS[case]
    cfg = tmp_path / "jupyter"
    cfg.mkdir()
    (cfg / "jupyter_server_config.json").write_text(json.dumps(config))
    port = free_port()
    stranger = _Stranger(port)
    stranger.start()
    cmd = [sys.executable, "-m", "workshop", "present", "01", "--no-browser", "--port", str(port)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=paths.ROOT,
                         env={**os.environ, "JUPYTER_CONFIG_DIR": str(cfg)})
    stranger.proc = p
    try:
        if refused:   # one line, and no port was ever opened
            out, err = p.communicate(timeout=120)
            assert p.returncode == 1 and err.count("\n") == 1 and refused in err, out + err
            assert "RISE at" not in out
            assert stranger.answers == [] and stranger.listening == set(), stranger.listening
            return
        url = None   # served: the stranger was refused from the first answer on
        end = time.monotonic() + 60
        while url is None and time.monotonic() < end and p.poll() is None:
            url = (re.findall(r"http://\S+", p.stdout.readline()) or [None])[0]
        assert url, f"present served no URL (exit {p.poll()})"
        # (under load the stranger's thread, which also walks present's processes every turn,
        # may not have asked yet when the URL is printed: it has 20 s to)
        end = time.monotonic() + 20
        while not stranger.answers and time.monotonic() < end:
            time.sleep(0.05)
        assert stranger.answers and set(stranger.answers) == {403}, stranger.answers
        token = url.split("token=")[1]
        assert call(url.split("/rise/")[0], token, "/api/status")   # present's token works
        if "fixed" in case:   # and the config's does not
            with pytest.raises(urllib.error.HTTPError, match="403"):
                call(url.split("/rise/")[0], "my-own-fixed-token-123", "/api/contents")
        if "metrics" in case:   # and nothing is served without it
            with pytest.raises(urllib.error.HTTPError, match="403"):
                urllib.request.urlopen(url.split("/rise/")[0] + "/metrics", timeout=10)
    finally:
        stranger.done.set()
        assert stop_present(p) in (0, 1)
    assert not port_open(port)


def test_a_login_cookie_signed_with_a_configs_secret_opens_nothing(tmp_path):
    # probe 17 (medium): a config's cookie secret (a literal, or a file another user may read)
    # signed the login cookie, and another local user who signed one of their own listed and
    # wrote the presenter's checkout through present's server. Its secret is its own now
    import hashlib
    import hmac

    from tornado.web import create_signed_value
    key = tmp_path / "secret"
    key.write_bytes(b"a secret anyone on the machine can read")
    cfg = tmp_path / "jupyter"
    cfg.mkdir()
    (cfg / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"cookie_secret_file": str(key)}}))
    secret = hmac.new(key.read_bytes(), digestmod=hashlib.sha256)
    secret.update(b"")   # (Jupyter's: the file's bytes, HMAC'd with the empty password)
    port = free_port()
    p, url = start_present("01", port, env={"JUPYTER_CONFIG_DIR": str(cfg)})
    try:
        base = url.split("/rise/")[0]
        user = json.dumps({"username": "x", "name": "x", "display_name": "x",
                           "initials": None, "avatar_url": None, "color": None})
        forged = create_signed_value(secret.digest(), f"username-127-0-0-1-{port}",
                                     user).decode()
        for path, method in (("/api/contents", "GET"), ("/api/contents/forged.txt", "PUT")):
            req = urllib.request.Request(
                base + path, method=method, headers={
                    "Cookie": f"username-127-0-0-1-{port}={forged}; _xsrf=abc",
                    "X-XSRFToken": "abc", "Content-Type": "application/json"},
                data=json.dumps({"type": "file", "format": "text", "content": "x"}).encode()
                if method == "PUT" else None)
            with pytest.raises(urllib.error.HTTPError, match="403"):
                urllib.request.urlopen(req, timeout=10)
        assert call(base, url.split("token=")[1], "/api/status")   # present's token works
    finally:
        assert stop_present(p) == 0
    assert not (paths.ROOT / "forged.txt").exists()


def _app(config: dict, root: Path, monkeypatch):
    """A ServerApp as `present`'s command line makes it, `config` loaded as a config file
    would be, initialised up to the moment guard checks it (no port opened; no extension
    loaded; and without its Ctrl-C and SIGTERM handlers, which would be this test process's)."""
    from jupyter_server.serverapp import ServerApp
    from traitlets.config import Config

    from workshop.tools.present import guard
    monkeypatch.setattr(ServerApp, "init_signal", lambda self: None)
    app = ServerApp(config=Config(config))
    app.initialize([f"--ServerApp.root_dir={root}", "--ServerApp.open_browser=False",
                    "--ServerApp.identity_provider_class=" + guard.__name__ + ".TokenOnly",
                    "--ServerApp.disable_check_xsrf=False"], find_extensions=False,
                   new_httpserver=False)
    return app


@pytest.mark.parametrize("case", [c for c in CONFIGS if CONFIGS[c][1]
                                  and "mutually exclusive" not in CONFIGS[c][1]])
def test_guard_gives_each_config_that_would_weaken_the_server_its_reason(case, tmp_path,
                                                                         monkeypatch):
    # guard's rule, in this process, for every config the server refuses (the quick run starts
    # a server under one of them; -m thorough under each): the reason the presenter reads
    from workshop.tools.present import guard
    monkeypatch.setenv(guard.TOKEN_ENV, "a" * 48)
    monkeypatch.setenv(guard.PORT_ENV, "8123")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))   # (no config but the case's)
    config, says = CONFIGS[case]
    config = {**config, "ServerApp": {"port": 8123, **config.get("ServerApp", {})}}
    import signal
    handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)]
    app = _app(config, tmp_path, monkeypatch)
    assert says in (guard.problem(app) or ""), guard.problem(app)
    assert guard.problem(_app({"ServerApp": {"port": 8123}}, tmp_path, monkeypatch)) is None
    assert [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)] == handlers


class _Refuses(http.server.BaseHTTPRequestHandler):
    def do_GET(self):   # a server that answers, but not to present's token
        self.send_response(403)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_server_that_refuses_presents_token_is_one_line_at_once(tmp_path):
    # (guard keeps a config's own token out; should anything else make the server refuse
    # present's, present says so at the first answer, not as "did not answer" 90 s later)
    from workshop.tools.errors import KitError
    from workshop.tools.present.server import Server
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    server = Server.__new__(Server)   # (this process listens: the server is present's own)
    server.port = httpd.server_address[1]
    server.base, server.token = f"http://127.0.0.1:{server.port}", "t"
    server.log, server.proc = tmp_path / "1.log", types.SimpleNamespace(
        pid=os.getpid(), poll=lambda: None)
    try:
        t0 = time.monotonic()
        with pytest.raises(KitError, match=r"^the server refuses present's own token \(403\)"):
            server.wait_ready(timeout=30)
        assert time.monotonic() - t0 < 5
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Records(http.server.BaseHTTPRequestHandler):
    seen: list = []

    def do_GET(self):   # a stranger's server: it answers anything, and keeps what it was sent
        self.seen.append(f"{self.path} {dict(self.headers)}")
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def test_a_program_that_took_the_port_first_is_sent_nothing(tmp_path):
    # Another local user who learns the port before JupyterLab listens and takes it first
    # (reliability probe 2: present's first "is it ready" request gave them its token; they
    # let the port go, the real server started with that token, and they wrote into the
    # checkout). The port is no longer on the command line, and present asks only a listener
    # that is its own server's: the stranger gets no request, the browser no address
    from workshop.tools.errors import KitError
    from workshop.tools.present.server import Server
    server = Server(log=tmp_path / "present.log")
    cmdline = " ".join(psutil.Process(server.proc.pid).cmdline())
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", server.port), _Records)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    opener = server.opener()
    try:
        assert str(server.port) not in cmdline, cmdline   # what `ps` shows every user
        with pytest.raises(KitError, match=r"^another program listens on 127\.0\.0\.1:\d+, "
                                           r"not present's server"):
            server.wait_ready(timeout=60)
        assert _Records.seen == [], _Records.seen
        assert not tmp_path.joinpath("present.ready.js").exists() and opener
    finally:
        httpd.shutdown()
        httpd.server_close()
        server.stop()


def test_a_deck_in_decks_that_links_out_of_the_kit_is_refused(tmp_path, monkeypatch):
    # present 07 where decks/07-….ipynb is a link to a deck outside the kit: refused as the
    # path itself is (a link inside the kit's build/ stands for one in decks/, which the other
    # tests running read)
    from workshop.tools import notebooks as nbs
    from workshop.tools.errors import KitError
    from workshop.tools.present import server
    out = shutil.copy(paths.DECKS / "01-run-it-first.ipynb", tmp_path / "07-link.ipynb")
    link = paths.BUILD / f"07-link-{os.getpid()}.ipynb"
    link.unlink(missing_ok=True)
    link.symlink_to(out)
    monkeypatch.setattr(nbs, "decks", lambda: [link])
    monkeypatch.setattr(server, "Server", lambda *a, **k: pytest.fail("a server was started"))
    try:
        with pytest.raises(KitError, match=f"^{re.escape(str(out))} is outside the kit's folder"):
            server.main("07", open_browser=False)
    finally:
        link.unlink()


@pytest.mark.parametrize("key,value", [
    ("footer", "<img src=x onerror=alert(1)>"), ("footer", "<img/src=x/onerror=alert(1)>"),
    ("header", "<span onmouseover='alert(1)'>A</span>"), ("overlay", "<svg onload=alert(1)>"),
    ("footer", "<a href='javascript:alert(1)'>x</a>"), ("footer", "<SCRIPT>alert(1)</SCRIPT>"),
    ("footer", "<span class='x' style='background:url(//example.org)'>x</span>"),
    ("header", ["not", "text"]),
    # the background image's path goes into src='…' (probe 2: its quote started an onerror)
    ("backimage", "x' onerror='alert(1)"), ("backimage", "javascript:alert(1)"),
    ("backimage", "https://example.org/x.png"), ("backimage", "../../etc/x.png"),
    # RISE reads livereveal's settings too (probe 3: a footer and a background image there ran)
    ("livereveal.footer", "<img src=x onerror=alert(1)>"),
    ("livereveal.backimage", "x' onerror='alert(1)"),
    # and any other setting, however deep (probe 4: a chalkboard key binding's label ran)
    ("chalkboard", {"keyBindings": {"toggleChalkboard": {"keyCode": 66, "key": "<img src=x "
                                                         "onerror=alert(1)>"}}}),
    ("livereveal.chalkboard", {"keyBindings": {"clear": {"key": "x\" onmouseover=\"1"}}})])
def test_a_deck_whose_rise_settings_hold_markup_is_refused_before_a_server_starts(
        tmp_path, monkeypatch, key, value):
    # a deck from someone else: RISE puts its header, footer, overlay and background image into
    # the page as HTML when present opens it, before any cell runs (an <img onerror> in a
    # footer ran: the probe's C12; a quote in the background image's path: probe 2)
    import nbformat

    from workshop.tools import notebooks as nbs
    from workshop.tools.errors import KitError
    from workshop.tools.present import server
    nb = nbs.read(paths.DECKS / "01-run-it-first.ipynb")
    where, key = key.split(".") if "." in key else ("rise", key)
    nb.metadata.setdefault(where, {})[key] = value
    deck = paths.BUILD / f"07-theirs-{os.getpid()}.ipynb"
    nbformat.write(nb, deck)
    monkeypatch.setattr(nbs, "decks", lambda: [deck])
    monkeypatch.setattr(server, "Server", lambda *a, **k: pytest.fail("a server was started"))
    try:
        with pytest.raises(KitError, match=rf"^{re.escape(paths.short(deck))}: its "
                                           rf"metadata.{where}.{key}[.\w]* holds markup") as e:
            server.main("07", open_browser=False)
        assert "\n" not in str(e.value)
    finally:
        deck.unlink()


@pytest.mark.parametrize("folder, name, says", [
    (".hid", "x.ipynb", "Jupyter serves no hidden folder (.hid)"),
    ("talks", 'x" onerror="alert(1)" y=".ipynb', "goes into the slideshow page as markup")])
def test_a_deck_jupyter_would_not_show_or_whose_name_is_markup_is_refused(folder, name, says,
                                                                          monkeypatch):
    # probe 2: a deck in a hidden folder was served and its page found no notebook (404); a
    # deck's name went into the page's <link href="…"> as markup and ran
    import nbformat

    from workshop.tools import notebooks as nbs
    from workshop.tools.errors import KitError
    from workshop.tools.present import server
    where = paths.ROOT / folder / f"probe-{os.getpid()}"
    deck = where / name
    where.mkdir(parents=True)
    nbformat.write(nbs.read(paths.DECKS / "01-run-it-first.ipynb"), deck)
    monkeypatch.setattr(server, "Server", lambda *a, **k: pytest.fail("a server was started"))
    try:
        with pytest.raises(KitError, match=re.escape(says)) as e:
            server.main(str(deck), open_browser=False)
        assert "\n" not in str(e.value)
    finally:
        shutil.rmtree(where)
        if not any((paths.ROOT / folder).iterdir()):
            (paths.ROOT / folder).rmdir()


def test_the_kits_decks_and_a_composed_talks_title_pass_the_rise_markup_check():
    from workshop.tools import notebooks as nbs
    from workshop.tools.present import server
    assert [d.name for d in nbs.decks() if server.markup_problem(nbs.read(d))] == []
    nb = nbs.read(paths.DECKS / "01-run-it-first.ipynb")
    nb.metadata.rise["footer"] = "<span class='workshop-footer'>Ünï &lt;img&gt; &amp; “q”</span>"
    nb.metadata.rise["backimage"] = "images/room-21 background.png"   # a plain path: shown
    assert server.markup_problem(nb) is None


def test_a_deck_named_with_a_hash_or_a_question_mark_is_shown_at_the_address_printed():
    # probe 17 (low): the path went into the URL as it was, and a browser took `#…` as the
    # fragment (or `?…` as the query): it asked for another path, without the token, and got
    # the login page where present had said the deck was
    talks = paths.ROOT / "talks"
    made = not talks.exists()
    talks.mkdir(exist_ok=True)
    deck = tiny(talks / f"t{os.getpid()} #1?.ipynb", "print(1)", deck=True)
    try:
        p, url = start_present(paths.short(deck), free_port())
        try:
            assert "%23" in url and "%3F" in url, url
            with urllib.request.urlopen(url, timeout=30) as page:   # (as a browser splits it)
                assert urlparse(page.url).path == urlparse(url).path, page.url
        finally:
            assert stop_present(p) == 0
    finally:
        deck.unlink()
        if made:
            shutil.rmtree(talks, ignore_errors=True)


def test_present_lists_decks_and_refuses_a_wrong_name():
    run = lambda *a: subprocess.run([sys.executable, "-m", "workshop", "present", *a],
                                    capture_output=True, text=True, cwd=paths.ROOT, timeout=60)
    listing = run()
    assert listing.returncode == 0 and "01-run-it-first" in listing.stdout
    wrong = run("99")
    assert wrong.returncode == 2 and "'99' is not a deck of the kit" in wrong.stderr
    assert "01-run-it-first" in wrong.stderr


@pytest.mark.robust
def test_a_kill_or_a_closed_terminal_stops_the_server_and_its_kernel():
    # SIGTERM (a kill), SIGHUP (the terminal closed) and SIGKILL (a kill -9, which runs none of
    # present's clean-up: the server sees its parent gone and stops itself), three servers at
    # once so their starts and stops overlap; present needs nothing of $HOME: unset for the
    # first, read-only for the second. And Ctrl-C to a present started with SIGINT ignored (a
    # non-interactive shell's `&`): it took no notice and was killed after 30 s (the soak)
    cases = [(signal.SIGTERM, {"HOME": None}, False), (signal.SIGHUP, {"HOME": "/proc/sys"},
             False), (signal.SIGKILL, None, False), (signal.SIGINT, None, True)]
    started = []
    with ThreadPoolExecutor(len(cases)) as pool:
        for (sig, env, ignored), port in zip(cases, [free_port() for _ in cases]):
            started.append((sig, port, pool.submit(start_present, "01", port, env, ignored)))
    done = [f.exception() is None for _, _, f in started]   # (waits for each start)
    procs = [f.result()[0] for (_, _, f), ok in zip(started, done) if ok]
    try:
        assert all(done), [f.exception() for _, _, f in started]
        running = []
        for (sig, port, fut), proc in zip(started, procs):
            u = urlparse(fut.result()[1])
            kernels = call(f"{u.scheme}://{u.netloc}", u.query.split("token=")[1],
                           "/api/kernels")
            assert len(kernels) == 1 and kernel_processes(kernels[0]["id"]), sig.name
            running.append((sig, port, proc, kernels[0]["id"]))
        # four `present 01` at once: four servers, each on its own port with its own kernel
        assert len({tuple(kernel_processes(k)) for *_, k in running}) == len(running)
    except BaseException:
        for proc in procs:
            stop_present(proc)
        raise
    for sig, _, proc, _ in running:
        proc.send_signal(sig)
    end = time.monotonic() + 30
    for sig, port, proc, kernel in running:
        proc.wait(max(1, end - time.monotonic()))
        if sig == signal.SIGINT:
            assert proc.returncode == 0 and "stopping the server" in proc.stdout.read()
        while (port_open(port) or kernel_processes(kernel)) and time.monotonic() < end:
            time.sleep(0.2)
        assert not port_open(port), f"the server still listens after {sig.name}"
        assert kernel_processes(kernel) == [], f"the kernel outlived {sig.name}"


def test_a_port_out_of_range_is_one_line():
    p = subprocess.run([sys.executable, "-m", "workshop", "present", "01", "--no-browser",
                        "--port", "70000"], capture_output=True, text=True, cwd=paths.ROOT,
                       timeout=60)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0
    assert "--port 70000: pick a port from 1024 to 65535" in p.stderr


def test_the_browser_is_opened_without_the_token_on_its_command_line(presenting, tmp_path):
    import stat

    from workshop.tools.present.server import Server
    server = Server.__new__(Server)             # only its log path is needed here
    server.log = tmp_path / "1234.log"
    url = presenting["url"]
    uri = server.opener()
    token = urlparse(url).query.split("token=")[1]
    assert uri.startswith("file://") and token not in uri
    page = tmp_path / "1234.open.html"
    assert stat.S_IMODE(page.stat().st_mode) == 0o600 and token not in page.read_text()
    server.release(url)   # the script the page waits for, once the server is present's own
    ready = tmp_path / "1234.ready.js"
    assert stat.S_IMODE(ready.stat().st_mode) == 0o600
    assert ready.read_text() == f"location.replace({json.dumps(url)});\n"


@pytest.mark.parametrize("case", ["outside the kit", "../ out of the kit",
                                  "a link out of the kit",
                                  "a cell without a slide type", "XLA_FLAGS that abort XLA"])
def test_present_refuses_in_one_line_what_it_cannot_serve(case, tmp_path):
    deck = paths.DECKS / "01-run-it-first.ipynb"
    arg, env, want = str(deck), dict(os.environ), None
    if case == "outside the kit":
        arg = str(shutil.copy(deck, tmp_path / deck.name))
        want = f"{arg} is outside the kit's folder, {paths.ROOT}, which is all that present serves"
    elif case == "../ out of the kit":   # a relative path that climbs out of the checkout
        out = shutil.copy(deck, tmp_path / deck.name)
        arg = os.path.relpath(out, paths.ROOT)
        assert arg.startswith("../")
        want = f"{out} is outside the kit's folder"
    elif case == "a link out of the kit":
        out = shutil.copy(deck, tmp_path / deck.name)
        link = paths.BUILD / f"link-{os.getpid()}.ipynb"
        link.unlink(missing_ok=True)
        link.symlink_to(out)
        arg, want = str(link), f"{out} is outside the kit's folder"
    elif case == "a cell without a slide type":   # a copy inside the kit, one notes cell bare
        nb = json.loads(deck.read_text())
        k = next(i for i, c in enumerate(nb["cells"])
                 if c["metadata"].get("slideshow", {}).get("slide_type") == "notes")
        del nb["cells"][k]["metadata"]["slideshow"]
        bare = paths.BUILD / f"bare-{os.getpid()}.ipynb"
        bare.write_text(json.dumps(nb))
        arg = str(bare)
        want = (f"{paths.short(bare)}: cell {k} has no slide type (set metadata.slideshow."
                "slide_type to one of -, fragment, notes, skip, slide, subslide): it would show "
                "on the slide")
    else:
        env["XLA_FLAGS"] = "--xla_no_such_flag=1"
        arg = "01"
        want = ("XLA_FLAGS='--xla_no_such_flag=1' stops JAX from starting (Unknown flag in "
                "XLA_FLAGS: --xla_no_such_flag=1): unset XLA_FLAGS")
    try:
        p = subprocess.run([sys.executable, "-m", "workshop", "present", arg, "--no-browser"],
                           capture_output=True, text=True, cwd=paths.ROOT, env=env, timeout=120)
    finally:
        for made in paths.ROOT.joinpath("build").glob(f"*-{os.getpid()}.ipynb"):
            made.unlink()
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("workshop present: ")
    assert want in p.stderr, p.stderr
    assert "RISE at" not in p.stdout   # no server was started


# a read-only checkout: the command runs in a mount namespace of its own where the kit's folder
# is a read-only bind of itself (root, as CI and these machines run; the rest of the machine,
# and every other test, still see it writable)
READ_ONLY = ["unshare", "-m", "sh", "-c",
             'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"',
             str(paths.ROOT)]


def _read_only_works() -> bool:
    try:
        p = subprocess.run(READ_ONLY + ["sh", "-c", f"! touch {paths.ROOT}/build/.ro-probe"],
                           capture_output=True, timeout=30)
    except OSError:
        return False
    return p.returncode == 0


@pytest.mark.robust
def test_a_read_only_checkout_presents_and_the_build_says_so_in_one_line():
    if not _read_only_works():
        pytest.skip("needs root and unshare -m (a private mount namespace) to make it read-only")
    # scripts/present, doctor and build start with scripts/setup: a current .venv needs no lock
    # (probe 2: a bash error on build/.setup.lock, then "run it where there is a network")
    setup = subprocess.run(READ_ONLY + ["scripts/setup"], capture_output=True, text=True,
                           cwd=paths.ROOT, timeout=120)
    assert setup.returncode == 0 and setup.stderr == "", setup.stderr
    forced = subprocess.run(READ_ONLY + ["scripts/setup", "--force"], capture_output=True,
                            text=True, cwd=paths.ROOT, timeout=120)
    assert forced.returncode == 2 and forced.stderr.count("\n") == 1, forced.stderr
    assert forced.stderr.startswith("setup: cannot write in "), forced.stderr
    port = free_port()
    proc, url = start_present("01", port, prefix=READ_ONLY)
    try:
        page = urllib.request.urlopen(url, timeout=60)   # the RISE page, from the served deck
        assert page.status == 200
        assert "rise" in page.read().decode().lower()
    finally:
        assert stop_present(proc) == 0
    out = proc.stdout.read()
    assert not port_open(port)
    build = subprocess.run(READ_ONLY + [sys.executable, "-m", "workshop", "build", "--no-pdf",
                                        "01"], capture_output=True, text=True, cwd=paths.ROOT,
                           timeout=120)
    assert build.returncode == 2 and build.stderr.count("\n") == 1, build.stderr
    assert re.match(r"workshop build: cannot write build(/\.build\.lock)?: Read-only file "
                    r"system \(the kit writes build/ and handouts/", build.stderr), build.stderr
    # (build/ itself where a fresh clone has none yet, else its lock file)
    # present said where its log went, and took that folder away when it stopped
    scratch = re.findall(r"are in (\S+) until it stops", out) or re.findall(
        r"(/\S+workshop-present-\w+)/\d+\.log", out)
    assert scratch and not os.path.exists(scratch[0]), out


@pytest.mark.parametrize("folder", ["build/rehearsal", "build"])
def test_a_rehearsal_that_cannot_write_its_log_is_one_line_before_anything_starts(folder):
    # build/ (or only build/rehearsal/) read-only: every slide change would be lost (the
    # server answered each with a 500, and the end said "no slide was shown")
    where = paths.ROOT / folder
    (paths.BUILD / "rehearsal").mkdir(parents=True, exist_ok=True)
    ro = READ_ONLY[:-1] + [str(where)]
    if not _read_only_works():
        pytest.skip("needs root and unshare -m (a private mount namespace) to make it read-only")
    try:
        p = subprocess.run(ro + [sys.executable, "-m", "workshop", "present", "01", "--rehearse",
                                 "--no-browser"], capture_output=True, text=True,
                           cwd=paths.ROOT, timeout=90)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"present served a rehearsal it cannot record: {e.stdout}")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stdout + p.stderr
    assert re.match(r"workshop present: --rehearse: cannot write build/rehearsal/01-run-it-first"
                    r"-[\d-]+\.log \(Read-only file system\): the slides' times would be lost; "
                    r"make build/rehearsal/ writable", p.stderr), p.stderr
    assert "RISE at" not in p.stdout   # no server was started


def test_no_jupyter_config_puts_the_server_or_its_kernel_off_loopback(tmp_path):
    # a presenter's Jupyter config that listens everywhere: the command line outranks it, for
    # the server and (by each class that places them) the kernel's five ports
    import psutil
    cfg = tmp_path / "jupyter-config"
    cfg.mkdir()
    anywhere = "0.0.0.0"
    (cfg / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"ip": anywhere},
         **{c: {"ip": anywhere} for c in ("ConnectionFileMixin", "KernelManager",
                                          "AsyncIOLoopKernelManager", "ServerKernelManager")}}))
    port = free_port()
    proc, url = start_present("01", port, env={"JUPYTER_CONFIG_DIR": str(cfg)})
    try:
        tree = psutil.Process(proc.pid).children(recursive=True)
        kernels = [p for p in tree if "ipykernel" in " ".join(p.cmdline())]
        assert len(kernels) == 1, "present starts the deck's kernel before it prints the URL"
        end = time.monotonic() + 60
        while True:   # the kernel binds its ports once it has started up
            listening = [(p.pid, c.laddr.ip, c.laddr.port) for p in tree
                         for c in p.net_connections("inet") if c.status == psutil.CONN_LISTEN]
            if sum(pid == kernels[0].pid for pid, _, _ in listening) >= 5 or \
                    time.monotonic() > end:
                break
            time.sleep(0.2)
        assert sum(pid == kernels[0].pid for pid, _, _ in listening) >= 5, listening
        assert {ip for _, ip, _ in listening} == {"127.0.0.1"}, listening
    finally:
        assert stop_present(proc) == 0


def test_another_local_user_on_the_kernels_ports_hears_nothing(tmp_path):
    # probe 10's K1, present's half: another local user found the kernel's output port (its
    # owner in /proc/net/tcp), subscribed to it and read each cell and its output as it ran.
    # Its sockets now speak CurveZMQ, with keys in the connection file only the presenter can
    # read, whatever a config says; the presenter's own client, with the keys, hears the cell
    import zmq
    from jupyter_client import BlockingKernelClient

    from workshop.tools.present.server import KERNEL_MANAGERS, LOGS
    cfg = tmp_path / "jupyter-config"
    cfg.mkdir()
    (cfg / "jupyter_server_config.json").write_text(json.dumps(
        {c: {"transport_encryption": "disabled"} for c in KERNEL_MANAGERS[1:]}))
    port = free_port()
    proc, url = start_present("01", port, env={"JUPYTER_CONFIG_DIR": str(cfg)})
    stranger = zmq.Context()
    try:
        kernel = call(url.split("/rise/")[0], url.split("token=")[1], "/api/kernels")[0]
        connection = LOGS / f"{port}.runtime" / f"kernel-{kernel['id']}.json"
        info = json.loads(connection.read_text())
        assert info["transport"] == "tcp" and info["curve_publickey"], sorted(info)
        ears = []
        for name in ("iopub_port", "shell_port"):   # (what a stranger finds is a port)
            sub = stranger.socket(zmq.SUB if name == "iopub_port" else zmq.DEALER)
            if name == "iopub_port":
                sub.setsockopt(zmq.SUBSCRIBE, b"")
            sub.connect(f"tcp://127.0.0.1:{info[name]}")
            ears.append(sub)
        # (and what the stranger sends the kernel, unsigned, reaches it not)
        ears[1].send_multipart([b"<IDS|MSG>", b"", b"{}", b"{}", b"{}", b"{}"])
        owner = BlockingKernelClient()
        owner.load_connection_file(str(connection))
        # (no heartbeat and no wait_for_ready: a heartbeat unanswered for 1 s, under CI's load,
        # read as "kernel died before replying"; the cell's output, asked again, is the proof)
        owner.start_channels(hb=False)
        try:
            said, heard, asked = "the secret of slide 3", "", 0.0
            end = time.monotonic() + 60
            while said not in heard and time.monotonic() < end:
                if time.monotonic() - asked > 5:   # (again, if its output went before the
                    owner.execute(f"print({said!r})")   # subscription took: ZeroMQ's
                    asked = time.monotonic()             # slow joiner)
                try:
                    msg = owner.get_iopub_msg(timeout=1)
                except Exception:
                    continue
                heard += msg["content"].get("text", "")
            assert said in heard, "the presenter's own client heard nothing"
        finally:
            owner.stop_channels()
        poller = zmq.Poller()
        for ear in ears:
            poller.register(ear, zmq.POLLIN)
        assert dict(poller.poll(2000)) == {}, "another user heard the kernel"
    finally:
        stranger.destroy(linger=0)
        assert stop_present(proc) == 0


@pytest.mark.robust
def test_no_writable_tmp_and_present_and_a_build_still_work(tmp_path):
    # /tmp read-only (a locked-down machine): Python's tempfile takes the next writable place
    # (/var/tmp), and the kernels, the server and the build follow it
    # (the kit stays writable where it is itself under /tmp, as CI's clean clone is: its own
    # bind mount, made before /tmp's is turned read-only, keeps its flags)
    no_tmp = ["unshare", "-m", "sh", "-c",
              'mount --bind /tmp /tmp && mount --bind "$0" "$0" && '
              'mount -o remount,ro,bind /tmp && exec "$@"', str(paths.ROOT)]
    if subprocess.run(no_tmp + ["sh", "-c", "! touch /tmp/.probe"], capture_output=True,
                      timeout=30).returncode != 0:
        pytest.skip("needs root and unshare -m (a private mount namespace) to make it read-only")
    port = free_port()
    proc, url = start_present("01", port, prefix=no_tmp)
    try:
        kernel = call(url.split("/rise/")[0], url.split("token=")[1], "/api/kernels")
        assert len(kernel) == 1 and kernel[0]["execution_state"] != "dead", kernel
    finally:
        assert stop_present(proc) == 0
    path = tiny(tmp_path / "no-tmp.ipynb", "import tempfile; print(tempfile.gettempdir())")
    p = subprocess.run(no_tmp + [sys.executable, "-m", "workshop", "build", "--no-pdf",
                                 str(path)], capture_output=True, text=True, cwd=paths.ROOT,
                       timeout=300)
    assert p.returncode == 0 and "FAILED" not in p.stdout, p.stdout + p.stderr


def test_a_deck_named_by_a_path_through_dot_dot_inside_the_kit_is_presented():
    port = free_port()
    proc, url = start_present("decks/../decks/01-run-it-first.ipynb", port)
    try:
        assert "/rise/decks/01-run-it-first.ipynb?token=" in url
    finally:
        assert stop_present(proc) == 0


@pytest.mark.robust
def test_present_and_build_force_of_the_same_deck_at_once_leave_the_deck_as_it_was():
    # the presenter rebuilds the deck on show (`build --force`): the build runs a copy in a
    # kernel of its own; the slideshow's kernel and server go on; the deck's bytes are unchanged
    deck = tiny(paths.BUILD / f"both-{os.getpid()}.ipynb", "print(6 * 7)", deck=True)
    before = deck.read_bytes()
    port = free_port()
    try:
        proc, url = start_present(str(deck), port)
        try:
            p = subprocess.run([sys.executable, "-m", "workshop", "build", "--force",
                                "--no-pdf", str(deck)], capture_output=True, text=True,
                               cwd=paths.ROOT, timeout=300)
            assert p.returncode == 0 and "FAILED" not in p.stdout, p.stdout + p.stderr
            base, token = url.split("/rise/")[0], url.split("token=")[1]
            kernels = call(base, token, "/api/kernels")
            assert len(kernels) == 1 and kernels[0]["execution_state"] != "dead", kernels
            assert urllib.request.urlopen(url, timeout=60).status == 200
        finally:
            assert stop_present(proc) == 0
        assert deck.read_bytes() == before
    finally:
        deck.unlink(missing_ok=True)


def test_a_folder_swapped_for_a_link_after_its_parent_was_closed_is_refused(tmp_path,
                                                                             monkeypatch):
    # probe 5 (umask 000): build/present swapped for another user's link between private_dir's
    # check and its use was used (570 of 20 000 tries). Now build/ is closed to others first,
    # and the folder is opened without following a link: a swap at the last moment, as late
    # as the open itself, is refused, and the link's folder is left as it was
    from workshop.tools.errors import KitError
    from workshop.tools.present import private
    open_to_all = Path(tempfile.mkdtemp(prefix="probe-", dir=paths.BUILD))
    target, elsewhere = open_to_all / "present", tmp_path / "theirs"
    elsewhere.mkdir(mode=0o755)
    order, real_open, real_chmod = [], os.open, os.chmod

    def chmod(path, mode, *a, **k):
        order.append(("chmod", Path(path)))
        return real_chmod(path, mode, *a, **k)

    def swapping_open(path, flags, *a, **k):
        if Path(path) == target and flags & os.O_NOFOLLOW:
            order.append(("open", target))
            shutil.rmtree(target)
            target.symlink_to(elsewhere)
        return real_open(path, flags, *a, **k)
    try:
        os.chmod(open_to_all, 0o777)
        monkeypatch.setattr(private.os, "chmod", chmod)
        monkeypatch.setattr(private.os, "open", swapping_open)
        with pytest.raises(KitError, match=r"probe-\w+/present is a link: present keeps"):
            private.private_dir(target)
        assert order.index(("chmod", open_to_all)) < order.index(("open", target)), order
        assert _mode(open_to_all) == 0o755 and _mode(elsewhere) == 0o755
    finally:
        shutil.rmtree(open_to_all)


def test_present_keeps_its_files_only_in_folders_of_its_own(tmp_path):
    # probe 4: under umask 000 build/ was 0777, another user put a folder of theirs at
    # build/present and present wrote its log, settings and kernels' keys there; a link at
    # build/rehearsal had root make the folder it led to 0700
    from workshop.tools.errors import KitError
    from workshop.tools.present.private import private_dir
    open_to_all = Path(tempfile.mkdtemp(prefix="probe-", dir=paths.BUILD))
    try:
        os.chmod(open_to_all, 0o777)
        made = private_dir(open_to_all / "present")
        assert _mode(made) == 0o700 and _mode(open_to_all) == 0o755   # no longer others'
        elsewhere = tmp_path / "theirs"
        elsewhere.mkdir(mode=0o755)
        (open_to_all / "rehearsal").symlink_to(elsewhere)
        with pytest.raises(KitError, match="rehearsal is a link"):
            private_dir(open_to_all / "rehearsal")
        assert _mode(elsewhere) == 0o755
        if os.geteuid() == 0:   # another user's folder (root can chown one to nobody)
            (open_to_all / "other").mkdir()
            os.chown(open_to_all / "other", 65534, 65534)
            with pytest.raises(KitError, match="other is user 65534's, not yours"):
                private_dir(open_to_all / "other")
    finally:
        shutil.rmtree(open_to_all)


def test_a_ctrl_c_as_the_server_process_starts_stops_it_and_leaves_only_its_log(tmp_path,
                                                                              monkeypatch):
    # probe 18 (low): a Ctrl-C that came while Popen waited for the server's exec was raised
    # before present held the process: it ran alone until it noticed present gone, and its
    # settings, runtime and extension folders stayed for good
    from workshop.tools.present import server as srv
    real, started = srv.subprocess.Popen, []

    def popen(*args, **kwargs):   # (the Ctrl-C lands as the process starts)
        started.append(real(*args, **kwargs))
        os.kill(os.getpid(), signal.SIGINT)
        return started[-1]
    monkeypatch.setattr(srv.subprocess, "Popen", popen)
    log = tmp_path / "logs" / "1.log"
    with pytest.raises(KeyboardInterrupt):
        srv.Server(log=log)
    monkeypatch.setattr(srv.subprocess, "Popen", real)
    assert started and started[0].poll() is not None, "the server was left running"
    assert sorted(p.name for p in log.parent.iterdir()) == ["1.log"]


def test_a_ctrl_c_in_loggings_own_import_is_still_the_commands_one_line():
    # probe 18 (low): the Ctrl-C handler imported logging; in logging's own import it got the
    # half-made module, and an AttributeError traceback came out instead of the one line
    code = ("import os, signal, sys, time, types\n"
            "from workshop.tools import processes\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "processes.quiet_after_ctrl_c()\n"
            "sys.modules['logging'] = types.ModuleType('logging')   # (half made)\n"
            "try:\n"
            "    os.kill(os.getpid(), signal.SIGINT)\n"
            "    time.sleep(5)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=paths.ROOT, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, "interrupted\n", ""), p
