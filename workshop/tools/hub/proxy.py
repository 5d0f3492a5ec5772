"""The hub's proxy: configurable-http-proxy (PyPI's, in Python), with room for a whole room's
requests at once, and HTTPS. It forwards through tornado's shared HTTP client, which by default
sends at most 10 requests at a time and answers a request that waited 20 s in its queue with a
bare "503 Timeout in request queue": 30 attendees starting their servers at once (each start
holds a request open for up to 10 s) were a third of them turned away by that page, not by the
hub. Its --ssl-key/--ssl-cert stop it ("not supported yet"): this launcher takes them and gives
the proxy's public server a TLS context (its API, on loopback, stays plain HTTP), and tells the
hub which requests came over HTTPS. config.py runs this in place of the proxy's own command."""
import errno
import functools
import ipaddress
import os
import pwd
import socket
import ssl
import struct
import sys
import time
import urllib.parse
from pathlib import Path

from tornado.httpclient import AsyncHTTPClient

# requests forwarded at once: more than a room's attendees, each with a few open (their page,
# the start of their server; a kernel's websocket is not counted: it has its own connection)
AT_ONCE = 1000


def _take(flag: str) -> str:
    """The value of `flag` on the command line, taken off it ("" when absent)."""
    for i, arg in enumerate(sys.argv):
        if arg == flag and i + 1 < len(sys.argv):
            value = sys.argv[i + 1]
            del sys.argv[i:i + 2]
            return value
        if arg.startswith(flag + "="):
            del sys.argv[i]
            return arg.split("=", 1)[1]
    return ""


# seconds a connection may hold the proxy without a whole request's headers (tornado's
# default is an hour): one attendee's 22 000 idle connections took every file the proxy may
# open, and the room's requests timed out for as long as they were held (probe 10's X4)
IDLE = 30
# seconds a request's body may take, whole (tornado's default: no end): a connection that sent
# its headers, Content-Length among them, then nothing, outlived the idle timeout, and 20 000
# of them from one client took the proxy's files (probe 12's X4). An upload through the proxy
# is one request of 15 MB at most (JupyterLab sends bigger files in chunks of 1 MB)
BODY = 120
# connections one client (an address; the loopback, and an IPv6 /64, are one: see client) may
# hold at once to the room's port, its websockets counted (see _capped): a room behind one
# NAT address is 30 browsers of some 10 connections each; more are closed as they come, so
# one client cannot take the files the room's connections need, however fast it opens them
PER_ADDRESS = 1000
# bytes of a request's line and headers (tornado's default: 64 KiB): JupyterHub logs each URL
# whole, twice, so 500 requests for 60 kB URLs, no login needed, wrote 60 MB into root's
# hub.log in 5 s (probe 14's S2-c). A browser's requests to the hub are some 2 kB
HEADERS = 16 * 1024
# bytes of a request's body to the hub's own pages and API (/hub/; not a server's, where
# notebooks are saved): JupyterHub stored a token's note of any size in its database, and one
# attendee filled the state's disk with 160 notes of 20 MiB in 75 s (probe 22's D-small-3). A
# login form or an API call of the hub's is some hundred bytes
HUB_BODY = 64 * 1024
# what an address may still open once the proxy holds half the files it may open (BUSY),
# unless an attendee's server answered it lately (KNOWN)
SHARE = 64
# clients (see client) an attendee's server answered as a logged-in attendee (its API, or a
# kernel's websocket), and when: once the proxy is busy they keep their 1 000, not 64. Eleven
# addresses without a login, 1 000 connections each, made the proxy busy, and then the room,
# behind one NAT address with its 300, could open nothing, not a page nor a kernel (probe 15)
KNOWN: dict[str, float] = {}
KNOWN_FOR = 3600   # seconds (JupyterLab asks its server's API every few seconds)


def main() -> int:
    AsyncHTTPClient.configure(None, max_clients=AT_ONCE)
    _forward_to_owners_only()
    slow = no_lookup()
    if slow:
        print(slow, file=sys.stderr, flush=True)
    _more_files()
    _quiet_when_out_of_files()
    from configurable_http_proxy import cli
    cert, key = _take("--ssl-cert"), _take("--ssl-key")
    idle = float(_take("--idle-timeout") or IDLE)
    body = float(_take("--body-timeout") or BODY)
    per_address = int(_take("--per-address") or PER_ADDRESS)
    share = int(_take("--share") or SHARE)
    import resource
    busy = int(_take("--busy") or resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 2)
    context = None
    if cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key or None)
        _forward_https()
    plain, made = cli.HTTPServer, []

    def server(app, **kw):
        # the proxy's main makes its public server first, then its API's (the hub's alone)
        made.append(app)
        tls = {"ssl_options": context} if context and len(made) == 1 else {}
        kind = _capped(plain, per_address, busy, share) if len(made) == 1 else plain
        return kind(app, **kw, **tls, idle_connection_timeout=idle, body_timeout=body,
                    max_header_size=HEADERS)
    cli.HTTPServer = server
    return cli.main()


def _capped(plain, most: int, busy: int, share: int = SHARE):
    """tornado's HTTPServer, closing a connection as it comes from an address that holds
    `most` already (PER_ADDRESS), its websockets counted; and, once the proxy holds `busy`
    connections in all (its files half taken), from an address that holds `share` or more:
    many addresses of one client filled the proxy's files 1 000 each, and websockets, which
    leave tornado's count of connections when they are upgraded, 10 000 from one (probe 13).
    A room's address holds some 10 connections per browser."""
    class Capped(plain):
        held: dict = {}   # address: its connections' streams (the closed dropped as seen)

        def _holds(self, host: str) -> set:
            mine = self.held.get(host, set())
            for gone in [s for s in mine if s.closed()]:
                mine.discard(gone)
            if not mine:
                self.held.pop(host, None)
            return mine

        counted = (0.0, 0)   # (when, how many): counted again at most once a second

        def _total(self) -> int:
            when, total = self.counted
            if time.monotonic() - when > 1:
                total = sum(len(self._holds(h)) for h in list(self.held))
                self.counted = (time.monotonic(), total)
            return total

        def handle_stream(self, stream, address):
            host = client(address[0] if isinstance(address, tuple) and address else "")
            mine = self._holds(host)
            if len(mine) >= most or (len(mine) >= share and self._total() >= busy
                                     and not known(host)):
                stream.close()
                return
            self.held.setdefault(host, mine).add(stream)
            super().handle_stream(stream, address)
    return Capped


def known(host: str) -> bool:
    """Whether an attendee's server answered the client `host` lately (KNOWN)."""
    when = KNOWN.get(host)
    return when is not None and time.monotonic() - when < KNOWN_FOR


def answered(remote_ip: str, prefix: str, path: str, code: int, method: str = "GET") -> None:
    """A response the proxy sent: a server's answer to a logged-in attendee (a 2xx of its API
    to a method that needs a login, or a kernel's websocket, 101) makes the client known. Not
    OPTIONS nor HEAD: jupyter_server answers a CORS preflight to anyone, 200 (probe 16)."""
    if method not in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        return
    if not prefix.startswith("/user/") or not (code == 101 or 200 <= code < 300):
        return
    rest = urllib.parse.unquote(path)[len(prefix):]
    if code == 101 or (rest.startswith("/api/") and len(rest) > len("/api/")):
        if len(KNOWN) > 10_000:   # (the stale ones go first)
            for old in [h for h in KNOWN if not known(h)]:
                del KNOWN[old]
        KNOWN[client(remote_ip)] = time.monotonic()


def client(host: str) -> str:
    """What one client's connections are counted as: its address, but any IPv6 address of a
    /64 is one (a host picks addresses from its /64 at will), and so is this machine's
    loopback (127.0.0.0/8 and ::1: a local user connected from 340 of them, 60 each, under the
    share each, and filled the proxy's files: probe 14's X4-many)."""
    try:
        ip = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return host
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _more_files() -> None:
    """As many open files as this process may have (as root, as the kernel allows): a room's
    connections, not the shell's default, bound what the proxy holds at once."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        most = int(Path("/proc/sys/fs/nr_open").read_text())
        resource.setrlimit(resource.RLIMIT_NOFILE, (most, most))
    except (OSError, ValueError):   # (not root: up to its hard limit)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (OSError, ValueError):
            pass


class _OncePerMinute:
    """A logging filter that lets one "too many open files" record through a minute: at the
    limit, tornado's accept loop logged a traceback per try, 37 MB in 13 s (probe 10)."""

    def __init__(self):
        self.last = -60.0

    def filter(self, record) -> bool:
        err = record.exc_info[1] if record.exc_info else None
        if not (isinstance(err, OSError) and err.errno == errno.EMFILE):
            return True
        now = time.monotonic()
        if now - self.last < 60:
            return False
        self.last = now
        record.msg, record.args, record.exc_info = (
            "hub proxy: out of open files: new connections wait until some close (said once "
            "a minute)", (), None)
        return True


def _quiet_when_out_of_files() -> None:
    import logging
    once = _OncePerMinute()
    for name in ("tornado.application", "tornado.general", "asyncio"):
        logging.getLogger(name).addFilter(once)
    for name in ("tornado.access", "configurable_http_proxy"):
        logging.getLogger(name).addFilter(ShortLines())


class ShortLines:
    """A log's line cut at MOST characters (its traceback, if any, stays whole): the proxy and
    the hub logged each request's URL whole, and a client without a login, its URLs just
    under the proxy's 16 KiB, wrote 10 MB a second of root's hub.log (probe 16). Added to
    tornado.access here and in hub/config.py."""
    MOST = 400

    def filter(self, record) -> bool:
        said = record.getMessage()
        if len(said) > self.MOST:
            record.msg, record.args = f"{said[:self.MOST]}… ({len(said)} characters)", ()
        return True


def _forward_https() -> None:
    """The hub told that a request came over HTTPS (X-Forwarded-Proto), so that its cookies
    are marked Secure: the proxy's own header reads the scheme from the request's path, which
    never has one, and always says http."""
    from configurable_http_proxy import handlers
    build = handlers.ProxyHandler._get_proxy_request

    def _get_proxy_request(self, url):
        request = build(self, url)
        request.headers["x-forwarded-proto"] = self.request.protocol
        return request
    handlers.ProxyHandler._get_proxy_request = _get_proxy_request



# ----------------------------------------------------------------- whose port a route leads to
# A server's port on loopback is chosen before the server binds it (an attendee's server binds
# its port some 4 s after JupyterHub picked it; the hub binds its own after it started this
# proxy, whose command line names it): another local user who bound it first got the room's
# requests, and the login's redirect took an attendee, or the presenter, to their page on the
# hub's origin, where it could mint an admin token (probe 5). So a route is followed, and an
# error page fetched, only to a loopback port that its owner holds: an attendee's server to the
# attendee's user, the hub's routes to this proxy's own user (JupyterHub's, which started it).

# The owner is asked of the kernel itself, for each request: sock_diag's lookup of one socket
# (netlink, as `ss` asks) finds the socket a connection from loopback to the target would
# reach, by the kernel's own rules (an exact address before a wildcard, IPv4 before a dual-stack
# IPv6 socket, an IPv6-only one never for IPv4), in a hash lookup: 0.3 ms whatever else listens.
# Reading /proc/net/tcp instead cost 15-25 ms a read and grew with every socket of the machine:
# one attendee's 58 000 listening sockets, made from a cell, made each read 3-4 s and stopped
# the room (probe 8); read per port, 30 servers held the proxy's thread (probe 7). Where the
# kernel has no sock_diag, the tables are read (listening, listeners).
SOCK_DIAG_BY_FAMILY, NLMSG_ERROR = 20, 2


def holder(ip, port: int) -> int | None:
    """The user whose socket a connection from this machine to `ip`:`port` reaches (None when
    none listens there), asked of the kernel (sock_diag; OSError where it has none)."""
    family = socket.AF_INET if ip.version == 4 else socket.AF_INET6
    client = ipaddress.ip_address("127.0.0.1" if ip.version == 4 else "::1")

    def wide(a) -> bytes:
        return a.packed + bytes(16 - len(a.packed))
    # inet_diag_sockid: the socket's port and address (the target), the peer's (a client on
    # loopback, port 1: no connection has it), the loopback interface a connection comes in
    # on (with none, a socket bound to the device lo, which a connection does reach, was not
    # found: probe 9), no cookie
    sockid = struct.pack("!HH16s16s", port, 1, wide(ip), wide(client)) + \
        struct.pack("=III", _loopback(), 0xFFFFFFFF, 0xFFFFFFFF)
    req = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF) + sockid
    msg = struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY, 1, 1, 0) + req   # REQUEST
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 4) as nl:   # NETLINK_SOCK_DIAG
        nl.settimeout(5)
        nl.sendto(msg, (0, 0))
        data = nl.recv(4096)
    kind = struct.unpack_from("=H", data, 4)[0]
    if kind == NLMSG_ERROR:
        code = -struct.unpack_from("=i", data, 16)[0]
        if code == errno.ENOENT:
            return None
        raise OSError(code, os.strerror(code))
    # inet_diag_msg: family, state, timer, retrans, the sockid (48), expires, rqueue, wqueue, uid
    return struct.unpack_from("=I", data, 16 + 4 + 48 + 12)[0]


def no_lookup() -> str:
    """Why the kernel answers no socket lookup here, in a line the proxy says as it starts
    ("" where it does): every owner check then reads the kernel's tables, whose cost grows with
    every socket on the machine (probe 9: 0.5 s a request beside 58 000)."""
    try:
        holder(ipaddress.ip_address("127.0.0.1"), 1)
    except OSError as e:
        return (f"hub proxy: this kernel answers no socket lookup (netlink sock_diag: "
                f"{e.strerror or e}): each request's owner check reads /proc/net/tcp instead, "
                "slower the more sockets this machine holds")
    return ""


@functools.cache
def _loopback() -> int:
    """The loopback interface's index (1 on Linux)."""
    try:
        return socket.if_nametoindex("lo")
    except OSError:
        return 1


def owners(ip, port: int) -> set[int]:
    """The user whose socket a connection to `ip`:`port` reaches ({} when none): the kernel's
    answer, or where it has no sock_diag its tables' (listeners)."""
    try:
        found = holder(ip, port)
    except OSError:
        return listeners(ip, port)
    return set() if found is None else {found}


def listening() -> dict[int, list]:
    """Every listening socket of this network namespace by port: [(address, uid)], from
    /proc/net/tcp and tcp6 (a kernel without sock_diag)."""
    found: dict[int, list] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if len(f) < 8 or f[3] != "0A":   # LISTEN
                continue
            addr, hexport = f[1].split(":")
            found.setdefault(int(hexport, 16), []).append((_address(addr), int(f[7])))
    return found


def listeners(ip, port: int) -> set[int]:
    """The users whose sockets listening on `port` a connection to `ip` reaches, read from the
    kernel's tables as the kernel picks: a socket bound to that very address first, then one on
    every IPv4 address, then IPv6's (every address, or `ip` mapped)."""
    exact, anywhere, six = set(), set(), set()
    for local, uid in listening().get(port, []):
        if local == ip or getattr(local, "ipv4_mapped", None) == ip:   # (the same, mapped:
            exact.add(uid)                                  # the kernel files it so; probe 7)
        elif local.version == ip.version and local.is_unspecified:
            anywhere.add(uid)
        elif local.is_unspecified or getattr(local, "ipv4_mapped", None) == ip:
            six.add(uid)
    return exact or anywhere or six


def _address(hexaddr: str):
    """An address as /proc/net/tcp prints it: each 32-bit word in the machine's byte order."""
    raw = bytes.fromhex(hexaddr)
    if sys.byteorder == "little":
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(raw)


def _ip(host: str):
    """The address a target's host names, loopback's names and short forms too (localhost,
    127.1, ::ffff:127.0.0.1 and 0.0.0.0 are 127.0.0.1; :: is ::1); None for a name off this
    machine."""
    if host == "localhost":
        host = "127.0.0.1"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        try:
            ip = ipaddress.ip_address(socket.inet_aton(host))
        except OSError:
            ip = _named(host)
            if ip is None:
                return None
    ip = getattr(ip, "ipv4_mapped", None) or ip
    if ip.is_unspecified:   # a connection to 0.0.0.0 or :: reaches this machine's loopback
        ip = ipaddress.ip_address("127.0.0.1" if ip.version == 4 else "::1")
    return ip


@functools.lru_cache(maxsize=256)
def _named(host: str):
    """The address a name leads to, as the proxy's connection would resolve it (this machine's
    own name, localhost., ip6-localhost lead to loopback: probe 7); None when it resolves to
    nothing."""
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    return ipaddress.ip_address(found[0][4][0].split("%")[0]) if found else None


def _here(ip) -> bool:
    """Whether `ip` is one of this machine's addresses (a LAN address: a connection to it stays
    on this machine, where another user may hold the port; probe 10's O9)."""
    try:
        with socket.socket(socket.AF_INET if ip.version == 4 else socket.AF_INET6) as s:
            s.bind((str(ip), 0))
        return True
    except OSError:
        return False


def impostor(data: dict) -> str:
    """Why a route's target must not be followed ("" when it may): its loopback port held by a
    user other than the route's (an attendee's server: that attendee; anything else the hub
    routes: this proxy's own user), on loopback or another of this machine's addresses.
    Targets off this machine are not ours to judge."""
    target = urllib.parse.urlparse(str(data.get("target", "")))
    ip, port = _ip(target.hostname or ""), target.port
    if ip is None or not port:
        return ""
    if not (ip.is_loopback or _here(ip)):
        return ""
    user = data.get("user")
    try:
        want = pwd.getpwnam(user).pw_uid if user else os.geteuid()
    except KeyError:
        return f"the route of user {user!r}, who has no account here, is not followed"
    found = owners(ip, port)
    if found and found != {want}:
        whose = f"user {user}'s" if user else "the hub's"
        return (f"port {port} is held by uid {', '.join(map(str, sorted(found)))}, not by "
                f"{whose} ({want}): not forwarded")
    return ""


def _refused(request) -> tuple[int, str] | None:
    """The proxy's own answer to a request no page takes, before the hub, or None."""
    # a NUL (%00) in a request's path is no page's: a 400 here, before the hub, whose
    # handlers (its static files', the course site's) took it to realpath's ValueError, a
    # 500 and a traceback in root's log per request, from anyone (probes 12 and 13)
    if "\0" in urllib.parse.unquote(request.path):
        return 400, "A request's path cannot hold a NUL.\n"
    if request.path.startswith("/hub/") and len(request.body or b"") > HUB_BODY:
        return 413, f"A request to the hub holds {HUB_BODY // 1024} KiB at most.\n"
    return None


def _forward_to_owners_only() -> None:
    from configurable_http_proxy import configproxy, handlers
    from tornado.web import HTTPError

    def target_for_req(self, host, path):
        route = self._routes.get_target(("/" + host if host else "") + urllib.parse.unquote(path))
        if not route:
            return None
        problem = impostor(route.data)
        if problem:
            self.log.error(f"{route.prefix}: {problem}")
            return None
        return {"prefix": route.prefix, "target": route.data["target"]}
    configproxy.PythonProxy.target_for_req = target_for_req

    fetch_error_page = handlers.ProxyHandler.handle_proxy_error

    async def handle_proxy_error(self, code, err):
        problem = self.proxy.error_target and impostor({"target": self.proxy.error_target})
        if problem:   # (the error pages are the hub's, on its own port)
            self.proxy.log.error(f"error page: {problem}")
            raise HTTPError(code)
        return await fetch_error_page(self, code, err)
    handlers.ProxyHandler.handle_proxy_error = handle_proxy_error

    def prepare(self):
        refused = _refused(self.request)
        if refused:
            self.set_status(refused[0])
            self.finish(refused[1])
    handlers.ProxyHandler.prepare = prepare

    finished = handlers.ProxyHandler.on_finish

    def prefix(handler) -> str:
        return (getattr(handler, "target", None) or {}).get("prefix", "")

    def on_finish(self):   # (a request's, and a websocket's as it is taken: 101)
        finished(self)
        answered(self.request.remote_ip or "", prefix(self), self.request.path,
                 self.get_status(), self.request.method or "")
    handlers.ProxyHandler.on_finish = on_finish

    start_ws_client = handlers.ProxyHandler.start_ws_client

    async def start_ws_client_quietly(self, path=None):
        # a websocket asked of a page that is none (the hub's login, say): the error page is
        # sent, and that is all. It went on to raise, and each such request, no login needed,
        # wrote a traceback of 12 lines into root's hub.log (probe 15)
        try:
            await start_ws_client(self, path)
        except Exception:
            if not self._finished:
                raise
            self.ws_client = None
    handlers.ProxyHandler.start_ws_client = start_ws_client_quietly


if __name__ == "__main__":
    sys.exit(main())
