"""The hub's proxy follows a route only to a port its owner holds (probe 5): an attendee's
server port, or the hub's own, bound first by another local user, got the room's requests and
the login's redirect, on the hub's origin. Here the kit's proxy (hub/proxy.py), as JupyterHub
starts it, with routes added through its API as JupyterHub adds them."""
from __future__ import annotations

import getpass
import http.server
import ipaddress
import json
import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from workshop.tools.hub import proxy
from workshop.tools.hub.local import free_port


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"the owner's page"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        got = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = f"posted {len(got)}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_OPTIONS(self):   # (as jupyter_server answers a CORS preflight: 200, no login)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page():
    """A page served by this user, on loopback."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def _other_user() -> str:
    return next(u.pw_name for u in pwd.getpwall() if u.pw_uid != os.geteuid())


def test_a_loopback_ports_owners_are_read_from_the_kernels_tables(page):
    import ipaddress
    me = os.geteuid()
    assert proxy.listeners(ipaddress.ip_address("127.0.0.1"), page) == {me}
    with socket.socket(socket.AF_INET6) as any6:   # every address, IPv6 and mapped IPv4 too
        any6.bind(("::", 0))
        any6.listen()
        port = any6.getsockname()[1]
        assert proxy.listeners(ipaddress.ip_address("127.0.0.1"), port) == {me}
    assert proxy.listeners(ipaddress.ip_address("127.0.0.1"), free_port()) == set()
    target = f"http://127.0.0.1:{page}"
    assert proxy.impostor({"target": target, "user": getpass.getuser()}) == ""
    assert proxy.impostor({"target": target, "hub": True}) == ""
    other = _other_user()
    want = pwd.getpwnam(other).pw_uid
    assert proxy.impostor({"target": target, "user": other}) == (
        f"port {page} is held by uid {me}, not by user {other}'s ({want}): not forwarded")
    assert "who has no account here" in proxy.impostor({"target": target, "user": "no-such-u"})
    assert proxy.impostor({"target": "http://10.0.0.5:8888", "user": other}) == ""   # off here
    # loopback by another name is loopback (probe 6: these skipped the check)
    # and so is every address, where a connection lands (probe 7: 0.0.0.0 and :: skipped it)
    # and so is a name of this machine's that leads there (probe 7: only localhost was known)
    here = socket.gethostname()
    named = [here] if socket.gethostbyname(here).startswith("127.") else []
    for host in ("localhost", "127.1", "[::ffff:127.0.0.1]", "0.0.0.0", *named):
        assert "not forwarded" in proxy.impostor({"target": f"http://{host}:{page}",
                                                  "user": other}), host
    assert proxy._ip("example.org") is None and str(proxy._ip("::")) == "::1"
    # and this machine's other addresses (probe 10's O9: a LAN address was never judged; a
    # connection to it stays here, and reaches this user's socket on every address)
    import psutil
    lan = [a.address for addrs in psutil.net_if_addrs().values() for a in addrs
           if a.family == socket.AF_INET and not a.address.startswith("127.")]
    with socket.socket() as every:
        every.bind(("0.0.0.0", 0))
        every.listen()
        for address in lan:
            target = f"http://{address}:{every.getsockname()[1]}"
            assert "not forwarded" in proxy.impostor({"target": target, "user": other}), address
            assert proxy.impostor({"target": target, "user": getpass.getuser()}) == ""


class _Proxy:
    """The kit's proxy on loopback, as JupyterHub starts it (hub/config.py), with its API."""

    def __init__(self, error_target: str, *extra: str):
        taken = {int(error_target.split(":")[2].split("/")[0])}
        self.token = "t" * 32
        for _ in range(3):   # a port another test took between free_port() and the bind
            self.public, self.api = (_port_besides(taken) for _ in range(2))
            self.p = subprocess.Popen(
                [sys.executable, "-m", "workshop.tools.hub.proxy", "--ip", "127.0.0.1",
                 "--port", str(self.public), "--api-ip", "127.0.0.1", "--api-port",
                 str(self.api), "--error-target", error_target, *extra],
                env=dict(os.environ, CONFIGPROXY_AUTH_TOKEN=self.token),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            # ready when both its ports take a connection (CI's first minute is loaded: the
            # wait is long, and a proxy that ended says why)
            end = time.monotonic() + 90
            while not all(_answers(p) for p in (self.public, self.api)):
                if self.p.poll() is not None or time.monotonic() > end:
                    break
                time.sleep(0.1)
            else:
                return
            out = self.stop()
            if "in use" not in out:
                break
        pytest.fail(f"the proxy is not listening: {out[-2000:]}")

    def route(self, path, **data) -> int:
        req = urllib.request.Request(f"http://127.0.0.1:{self.api}/api/routes{path}",
                                     data=json.dumps(data).encode(), method="POST",
                                     headers={"Authorization": f"token {self.token}"})
        return urllib.request.urlopen(req, timeout=30).status

    def get(self, path) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.public}{path}",
                                        timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def post(self, path, size: int) -> tuple[int, str]:
        req = urllib.request.Request(f"http://127.0.0.1:{self.public}{path}",
                                     data=b"x" * size, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def stop(self) -> str:
        self.p.terminate()
        return self.p.communicate(timeout=30)[0]


def _port_besides(taken: set[int]) -> int:
    """A free port that is none of `taken` (which it joins): a port freed a moment ago can
    come back from the next free_port()."""
    while (port := free_port()) in taken:
        pass
    taken.add(port)
    return port


def _answers(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_the_proxy_forwards_a_route_only_to_its_owners_port(page):
    px = _Proxy(error_target=f"http://127.0.0.1:{free_port()}/hub/error")   # (none there)
    try:
        target = f"http://127.0.0.1:{page}"
        assert px.route("/user/mine", target=target, user=getpass.getuser()) == 201
        assert px.route("/user/theirs", target=target, user=_other_user()) == 201
        assert px.route("/", target=target, hub=True) == 201
        assert px.get("/user/mine/lab") == (200, "the owner's page")
        assert px.get("/hub/login") == (200, "the owner's page")
        code, body = px.get("/user/theirs/lab")   # another user's route, this user's port
        assert code == 404 and "the owner's page" not in body, (code, body)
    finally:
        out = px.stop()
    assert f"/user/theirs: port {page} is held by uid {os.geteuid()}" in out, out[-2000:]
    assert "no socket lookup" not in out   # (this kernel answers it)


def test_a_kernel_without_the_socket_lookup_is_said_once_and_still_judged(page, monkeypatch):
    # probe 9's F1: without sock_diag every check reads the tables, slow beside many sockets,
    # and nothing said so; now the proxy says it as it starts, and the tables' verdict stands
    assert proxy.no_lookup() == ""

    def refused(ip, port):
        raise OSError(93, "Protocol not supported")
    monkeypatch.setattr(proxy, "holder", refused)
    assert proxy.no_lookup() == (
        "hub proxy: this kernel answers no socket lookup (netlink sock_diag: Protocol not "
        "supported): each request's owner check reads /proc/net/tcp instead, slower the more "
        "sockets this machine holds")
    target = f"http://127.0.0.1:{page}"
    assert proxy.impostor({"target": target, "user": getpass.getuser()}) == ""
    assert "not forwarded" in proxy.impostor({"target": target, "user": _other_user()})


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's listener: runuser, as root")
def test_another_users_listener_on_the_hubs_ports_gets_no_request():
    # probe 5's H1 and H2: nobody holds an attendee's server port and the hub's own (the
    # error pages' target); the attendee's route and every error page stay off nobody's page
    port = free_port()
    theirs = subprocess.Popen(["runuser", "-u", "nobody", "--", "python3", "-c",
                               "import http.server as h, sys\n"
                               "class P(h.BaseHTTPRequestHandler):\n"
                               "    def do_GET(s):\n"
                               "        s.send_response(200); s.end_headers(); "
                               "s.wfile.write(b'NOBODY')\n"
                               f"h.HTTPServer(('127.0.0.1', {port}), P).serve_forever()"],
                              start_new_session=True)
    px = _Proxy(error_target=f"http://127.0.0.1:{port}/hub/error")
    try:
        end = time.monotonic() + 30
        while not proxy.listeners(__import__("ipaddress").ip_address("127.0.0.1"), port):
            assert time.monotonic() < end and theirs.poll() is None, "nobody's page did not start"
            time.sleep(0.1)
        assert px.route("/user/ada", target=f"http://127.0.0.1:{port}",
                        user=getpass.getuser()) == 201
        assert px.route("/user/nobody", target=f"http://127.0.0.1:{port}", user="nobody") == 201
        for path in ("/user/ada/lab", "/hub/login", "/nowhere"):
            code, body = px.get(path)
            assert code == 404 and "NOBODY" not in body, (path, code, body)
        assert px.get("/user/nobody/") == (200, "NOBODY")   # nobody's own route: theirs
        # probe 6: nobody's IPv6-only socket on the port of a server of this user's, beside
        # it, counted as a second owner and shut the route; the kernel gives it no IPv4
        # connection, and the route is followed. Probe 7: the same beside a server on
        # 127.0.0.1 mapped into IPv6, which the kernel files as 127.0.0.1
        for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::ffff:127.0.0.1")):
            _beside_mine(family, host)
        # probe 9: nobody's socket bound to the device lo, which a connection reaches, was not
        # seen by the kernel's lookup asked with no interface: the route was followed to it
        lo = free_port()
        bound = _nobody_listens("s = socket.socket()\n"
                                "s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b'lo')\n"
                                f"s.bind(('127.0.0.1', {lo}))", lo, 1)
        try:
            assert "held by uid" in proxy.impostor({"target": f"http://127.0.0.1:{lo}",
                                                    "hub": True})
        finally:
            _end(bound)
    finally:
        out = px.stop()
        _end(theirs)
    assert f"error page: port {port} is held by uid {pwd.getpwnam('nobody').pw_uid}" in out
    end = time.monotonic() + 10   # nobody's page ended with the test (not only runuser)
    while _owners_all(port):
        assert time.monotonic() < end, f"nobody's page still listens on {port}"
        time.sleep(0.1)


def _beside_mine(family, host: str) -> None:
    """A server of this user's on `host`, nobody's IPv6-only socket on every address on its
    port: the hub's route to it is followed (the kernel gives nobody's socket no IPv4
    connection)."""
    with socket.socket(family) as mine:
        mine.bind((host, 0))
        mine.listen()
        beside = mine.getsockname()[1]
        six = _nobody_listens("s = socket.socket(socket.AF_INET6)\n"
                              "s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)\n"
                              f"s.bind(('::', {beside}))", beside, 2)
        try:
            assert proxy.impostor({"target": f"http://127.0.0.1:{beside}", "hub": True}) == "", host
        finally:
            _end(six)


def _nobody_listens(bind: str, port: int, owners: int) -> subprocess.Popen:
    """nobody's socket made by `bind` (Python that binds `s`), listening for a minute, once
    `port` has `owners` users listening on it (runuser's group: end it with _end)."""
    proc = subprocess.Popen(["runuser", "-u", "nobody", "--", "python3", "-c",
                             f"import socket, time\n{bind}; s.listen(); time.sleep(60)"],
                            start_new_session=True)
    end = time.monotonic() + 30
    while len(_owners_all(port)) < owners:
        assert time.monotonic() < end and proc.poll() is None, f"nobody's socket: {bind!r}"
        time.sleep(0.1)
    return proc


def _end(proc: subprocess.Popen) -> None:
    """runuser and the program it runs as nobody, both: runuser forks it and waits, so a kill of
    runuser alone left nobody's page serving after the test (seen: one left from a quick run)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _owners_all(port: int) -> set[int]:
    """Every user with a socket listening on `port`, any address (the test's own count)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            f = row.split()
            if f[3] == "0A" and int(f[1].split(":")[1], 16) == port:
                found.add(int(f[7]))
    return found


def test_the_owner_is_asked_of_the_kernel_whatever_else_listens(monkeypatch):
    # probe 7 (medium): each port's owners read from /proc/net/tcp{,6}, 15-25 ms a read, held
    # a room's proxy (8 requests a second at 1.8-4.2 s each); probe 8 (medium): one attendee's
    # 58 000 listening sockets made a whole read 3-4 s, and the room stopped. The kernel's own
    # lookup of the one socket a connection reaches costs the same beside any number of others:
    # the tables are never read
    import resource
    monkeypatch.setattr(proxy, "listening", lambda: pytest.fail("the tables were read"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    many = min(hard, 5000) - 100
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 5000), hard))
    socks = []
    try:
        for k in range(many):   # another program's many sockets, on other addresses
            s = socket.socket()
            s.bind((f"127.0.{1 + k // 250}.{1 + k % 250}", 0))
            s.listen(1)
            socks.append(s)
        room = socks[:30]
        me, other = getpass.getuser(), _other_user()
        start = time.monotonic()
        for _ in range(10):
            for s in room:
                host, port = s.getsockname()
                assert proxy.impostor({"target": f"http://{host}:{port}", "user": me}) == ""
                assert "not forwarded" in proxy.impostor({"target": f"http://{host}:{port}",
                                                          "user": other})
        took = (time.monotonic() - start) / 600
        assert took < 0.02, f"{took * 1000:.1f} ms a check beside {many} sockets"
        assert proxy.owners(ipaddress.ip_address("127.0.0.1"), free_port()) == set()
    finally:
        for s in socks:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_an_idle_connection_is_closed_and_the_proxy_may_open_all_the_files_it_can(page):
    # probe 10's X4: one attendee's 22 000 idle connections to the hub's port took every file
    # the proxy could open (tornado holds a silent connection an hour; the proxy had the shell's
    # 20 000), and the room's requests timed out while they were held
    px = _Proxy(f"http://127.0.0.1:{free_port()}/hub/error", "--idle-timeout=1")
    try:
        idle = [socket.create_connection(("127.0.0.1", px.public)) for _ in range(50)]
        end = time.monotonic() + 10
        for s in idle:
            with s:
                s.settimeout(max(0.1, end - time.monotonic()))
                assert s.recv(1) == b"", "the proxy sent something to a silent connection"
        assert px.route("/", target=f"http://127.0.0.1:{page}", hub=True) == 201
        assert px.get("/hub/login") == (200, "the owner's page")
        limits = Path(f"/proc/{px.p.pid}/limits").read_text()
        soft, hard = re.search(r"Max open files\s+(\d+)\s+(\d+)", limits).groups()
        assert soft == hard, limits
    finally:
        px.stop()


def test_a_body_that_never_comes_is_closed_and_one_address_holds_its_share_at_most(page):
    # probe 12's X4 (medium): the idle timeout covers a request's headers only; connections
    # that sent whole headers with a Content-Length, then no body, stayed open, and 20 000 of
    # them from one client (no login) took the proxy's files: the room's requests timed out
    px = _Proxy(f"http://127.0.0.1:{free_port()}/hub/error", "--body-timeout=1",
                "--per-address=20")
    try:
        assert px.route("/", target=f"http://127.0.0.1:{page}", hub=True) == 201
        head = b"POST /hub/login HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
        waiting = [socket.create_connection(("127.0.0.1", px.public)) for _ in range(5)]
        for s in waiting:
            s.sendall(head + b"part of it")
        end = time.monotonic() + 10   # (the idle timeout is 30 s: this is the body's)
        for s in waiting:
            with s:
                s.settimeout(max(0.1, end - time.monotonic()))
                assert s.recv(1) == b"", "the proxy answered a request without its body"
        # however fast one address opens connections, it holds 20 (here) and no more
        held = [socket.create_connection(("127.0.0.1", px.public)) for _ in range(20)]
        try:
            time.sleep(0.5)
            with socket.create_connection(("127.0.0.1", px.public)) as extra:
                extra.settimeout(10)
                assert extra.recv(1) == b"", "a 21st connection of one address was kept"
        finally:
            for s in held:
                s.close()
        end = time.monotonic() + 10   # (the closes counted, a request of that address is served)
        while time.monotonic() < end:
            try:
                if px.get("/hub/login") == (200, "the owner's page"):
                    break
            except OSError:
                time.sleep(0.1)
        assert px.get("/hub/login") == (200, "the owner's page")
        # a NUL in the path is the proxy's 400, before the hub (probe 13: its static files'
        # handler answered a 500 and wrote a traceback into root's log, per request)
        assert px.get("/hub/static/%00") == (400, "A request's path cannot hold a NUL.\n")
        assert px.get("/hub/course/a%00b.html")[0] == 400
        # a URL of 60 kB is closed unread, before the hub, which logged each whole, twice
        # (probe 14's S2-c: 60 MB of root's log in 5 s); a long one a browser sends is served
        with socket.create_connection(("127.0.0.1", px.public)) as long:
            long.sendall(b"GET /hub/" + b"a" * 60_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            long.settimeout(10)
            assert long.recv(1) == b"", "the proxy took a request line of 60 kB"
        assert px.get("/hub/" + "a" * 8_000) == (200, "the owner's page")
        assert px.get("/hub/static/%00" + "b" * 15_000)[0] == 400
        # a body to the hub holds 64 KiB at most (probe 22's D-small-3: 20 MiB token notes,
        # stored whole, filled the state's disk); a server's own (a notebook saved) is whole
        assert px.post("/hub/api/users/ws-x/tokens", 64 * 1024) == (200, f"posted {64 * 1024}")
        assert px.post("/hub/api/users/ws-x/tokens", 64 * 1024 + 1) == (
            413, "A request to the hub holds 64 KiB at most.\n")
        assert px.post("/user/ws-x/api/contents/big.ipynb", 5 * 2**20) == (
            200, f"posted {5 * 2**20}")
        time.sleep(1)   # (a request's line is logged after its answer is sent)
    finally:
        out = px.stop()
    # and each line of its log is cut short (URLs just under the limit, logged whole, wrote
    # 10 MB a second of root's hub.log: probe 16)
    assert "b" * 300 in out and max(map(len, out.splitlines())) < 600, \
        max(map(len, out.splitlines()))


def test_an_address_holds_its_share_websockets_counted_and_less_once_the_proxy_is_busy():
    # probe 13 (medium, twice): one attendee's 10 000 websockets (upgraded, they leave tornado's
    # count of connections, so the cap did not see them) and 21 addresses' 1 000 connections
    # each took the proxy's files. An address's connections are counted by their streams, open
    # until closed however they are served; once the proxy holds `busy`, an address holding
    # its `share` already gets no more, while one of the room's, holding less, does
    class Stream:
        def __init__(self):
            self.open = True

        def closed(self):
            return not self.open

        def close(self):
            self.open = False

    served = []

    class Plain:
        def handle_stream(self, stream, address):
            served.append(stream)
    capped = proxy._capped(Plain, most=4, busy=6, share=2)()

    def connect(host):
        s = Stream()
        capped.handle_stream(s, (host, 5000))
        return s
    first = [connect("10.0.0.1") for _ in range(5)]
    assert [s.open for s in first] == [True] * 4 + [False]   # 4 at most
    first[0].open = False                                      # (a websocket ends: no word
    assert connect("10.0.0.1").open                            # of it but its stream's)
    two = [connect("10.0.0.2") for _ in range(2)]
    capped.counted = (0.0, 0)                                  # (counted again now: 6)
    assert all(s.open for s in two) and not connect("10.0.0.2").open   # busy: share is 2
    assert connect("10.0.0.3").open and connect("10.0.0.3").open       # the room's: less
    assert not connect("10.0.0.3").open
    assert len(served) == 4 + 1 + 2 + 2


def test_one_clients_addresses_are_counted_as_one():
    # probe 14's X4-many (medium): 340 loopback addresses of one local user, 60 connections
    # each (under the share an address keeps once the proxy is busy), filled the proxy's files.
    # The loopback is one client, and so is an IPv6 /64 (a host picks its addresses there);
    # IPv4 addresses, and other /64s, are others
    assert {proxy.client(h) for h in ("127.0.0.1", "127.0.0.2", "127.255.3.4", "::1",
                                      "::ffff:127.0.0.9")} == {"loopback"}
    assert proxy.client("2001:db8:1:2::5") == proxy.client("2001:db8:1:2:ffff::1") \
        == "2001:db8:1:2::/64"
    assert proxy.client("2001:db8:1:3::5") != proxy.client("2001:db8:1:2::5")
    assert proxy.client("fe80::1%lo") == "fe80::/64"
    assert proxy.client("::ffff:10.0.0.7") == proxy.client("10.0.0.7") == "10.0.0.7"
    assert proxy.client("10.0.0.8") != proxy.client("10.0.0.7")
    assert proxy.client("") == ""

    class Plain:
        def handle_stream(self, stream, address):
            pass

    class Stream:
        open = True

        def closed(self):
            return not self.open

        def close(self):
            self.open = False
    capped = proxy._capped(Plain, most=3, busy=100)()
    got = []
    for host in ("127.0.0.1", "127.0.0.2", "::1", "127.0.0.3", "2001:db8::1", "2001:db8::2",
                 "2001:db8::3", "2001:db8::4", "2001:db8:0:1::1"):
        s = Stream()
        capped.handle_stream(s, (host, 5000) if ":" not in host else (host, 5000, 0, 0))
        got.append(s.open)
    assert got == [True, True, True, False, True, True, True, False, True]


def test_a_client_an_attendees_server_answered_keeps_its_connections_when_the_proxy_is_busy(
        page):
    # probe 15 (medium): eleven addresses without a login, 1 000 connections each, made the
    # proxy busy, and then the room's one NAT address, holding its 300, could open nothing
    # more, not a page nor a kernel's websocket. A client an attendee's server answered (its
    # API, which needs a login; a kernel's websocket) is exempt from the busy proxy's share.
    # Here the loopback is the only client: busy at 10, a share of 2
    assert not proxy.known("10.9.9.9")
    for prefix, path, code in (("/", "/hub/api/user", 200), ("/user/ada", "/user/ada/api/",
                                                                  200),
                               ("/user/ada", "/user/ada/static/x.js", 200),
                               ("/user/ada", "/user/ada/api/status", 403),
                               ("/user/ada", "/user/ada/lab", 302)):
        proxy.answered("10.9.9.9", prefix, path, code)
        assert not proxy.known("10.9.9.9"), (prefix, path, code)
    for method in ("OPTIONS", "HEAD"):   # (a CORS preflight needs no login: probe 16)
        proxy.answered("10.9.9.9", "/user/ada", "/user/ada/api/status", 200, method)
        assert not proxy.known("10.9.9.9"), method
    proxy.answered("10.9.9.9", "/user/ada", "/user/ada/api/kernels", 200)
    proxy.answered("2001:db8::7", "/user/kim", "/user/kim/terminals/websocket/1", 101)
    assert proxy.known("10.9.9.9") and proxy.known("2001:db8::/64")
    px = _Proxy(f"http://127.0.0.1:{free_port()}/hub/error", "--busy=10", "--share=2",
                "--per-address=50")

    def served() -> bool:
        try:
            return px.get("/user/ada/api/status") == (200, "the owner's page")
        except OSError:   # (closed as it came)
            return False

    def holding(n):
        held = [socket.create_connection(("127.0.0.1", px.public)) for _ in range(n)]
        time.sleep(1.2)   # (the proxy counts its connections again once a second)
        return held
    try:
        assert px.route("/user/ada", target=f"http://127.0.0.1:{page}") == 201
        preflight = urllib.request.Request(f"http://127.0.0.1:{px.public}/user/ada/api/status",
                                           method="OPTIONS")
        assert urllib.request.urlopen(preflight, timeout=10).status == 200   # (no login)
        held = holding(12)
        try:
            assert not served(), "the busy proxy let a client without a login past its share"
        finally:
            for c in held:
                c.close()
        time.sleep(1.2)
        assert served()   # (not busy: an answer of ada's server's API, 200)
        held = holding(12)
        try:
            assert served(), "a client ada's server answered got nothing from the busy proxy"
        finally:
            for c in held:
                c.close()
    finally:
        px.stop()
    # and a kernel's websocket that kim's server took (101) makes the client known too
    import websocket
    ws_port = _echo_websockets()
    px = _Proxy(f"http://127.0.0.1:{free_port()}/hub/error", "--busy=10", "--share=2",
                "--per-address=50")
    try:
        assert px.route("/user/kim", target=f"http://127.0.0.1:{ws_port}") == 201
        ws = websocket.create_connection(f"ws://127.0.0.1:{px.public}/user/kim/api/kernels/k/"
                                         "channels", timeout=10)
        ws.send("hello")
        assert ws.recv() == "hello"
        held = holding(12)
        try:
            assert px.get("/user/kim/api/status")[0] == 400, "the busy proxy closed it"
        finally:   # (its echo's answer to no websocket: it was let through)
            ws.close()
            for c in held:
                c.close()
    finally:
        px.stop()


def _echo_websockets() -> int:
    """A websocket server on loopback that sends back what it gets, in a thread; its port."""
    import asyncio

    import tornado.web
    import tornado.websocket

    class Echo(tornado.websocket.WebSocketHandler):
        def on_message(self, message):
            self.write_message(message)
    said = []

    def serve():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        server = tornado.web.Application([(r".*", Echo)]).listen(0, "127.0.0.1")
        said.append(next(iter(server._sockets.values())).getsockname()[1])
        loop.run_forever()
    threading.Thread(target=serve, daemon=True).start()
    while not said:
        time.sleep(0.05)
    return said[0]


def test_a_websocket_asked_of_a_page_is_its_error_page_and_no_traceback(page):
    # probe 15 (low): `Upgrade: websocket` to the hub's login page, no login needed, was a 503
    # and a traceback of 12 lines in root's hub.log, per request
    px = _Proxy(f"http://127.0.0.1:{page}/hub/error")   # (an error page that is there)
    try:
        assert px.route("/", target=f"http://127.0.0.1:{page}", hub=True) == 201
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", px.public)) as s:
                s.sendall(b"GET /hub/login HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                          b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="
                          b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
                s.settimeout(10)
                assert s.recv(12) == b"HTTP/1.1 503"
        assert px.get("/hub/login") == (200, "the owner's page")
        time.sleep(1)   # (a request's line is logged after its answer is sent)
    finally:
        out = px.stop()
    assert "Traceback" not in out and out.count("503 GET /hub/login") >= 3, out[-2000:]


def test_out_of_files_is_said_once_a_minute_not_per_try():
    import logging
    once = proxy._OncePerMinute()
    record = lambda err: logging.LogRecord("asyncio", logging.ERROR, "", 0, "Exception in "
                                           "callback", (), (type(err), err, None))
    emfile = OSError(24, "Too many open files")
    first = record(emfile)
    assert once.filter(first) and first.getMessage().startswith("hub proxy: out of open files")
    assert first.exc_info is None
    assert not once.filter(record(emfile))                      # within the minute: dropped
    assert once.filter(record(OSError(13, "Permission denied")))   # any other error: said
