"""The hub's proxy: configurable-http-proxy (PyPI's, in Python), with room for a whole room's
requests at once, and HTTPS. It forwards through tornado's shared HTTP client, which by default
sends at most 10 requests at a time and answers a request that waited 20 s in its queue with a
bare "503 Timeout in request queue": 30 attendees starting their servers at once (each start
holds a request open for up to 10 s) were a third of them turned away by that page, not by the
hub. Its --ssl-key/--ssl-cert stop it ("not supported yet"): this launcher takes them and gives
the proxy's public server a TLS context (its API, on loopback, stays plain HTTP), and tells the
hub which requests came over HTTPS. config.py runs this in place of the proxy's own command."""
import functools
import ipaddress
import os
import pwd
import socket
import ssl
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


def main() -> int:
    AsyncHTTPClient.configure(None, max_clients=AT_ONCE)
    _forward_to_owners_only()
    from configurable_http_proxy import cli
    cert, key = _take("--ssl-cert"), _take("--ssl-key")
    if cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key or None)
        plain, made = cli.HTTPServer, []

        def server(app, **kw):
            # the proxy's main makes its public server first, then its API's
            made.append(app)
            return plain(app, **kw, **({"ssl_options": context} if len(made) == 1 else {}))
        cli.HTTPServer = server
        _forward_https()
    return cli.main()


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

# The kernel's tables are read whole, for every port at once, at most every OWNERS_FOR s: a
# read costs 15-25 ms however few sockets there are (150 ms beside another user's 19 000), and
# read per port, a room's 30 servers held the proxy's one thread: 8 requests a second at 1.8-4.2
# s each, against 400 at 60 ms without the check (probe 7). A port the last read did not see
# listening (a server just started) is read again, at most every FRESH s.
OWNERS_FOR = 0.5
FRESH = 0.05
_tables: list = [-1e9, {}]   # when read (monotonic), {port: [(address, uid)]} listening


def listening() -> dict[int, list]:
    """Every listening socket of this network namespace by port: [(address, uid)]."""
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


def _kept(port: int) -> list:
    """The sockets listening on `port`, from a read at most OWNERS_FOR s old (FRESH s for a
    port that read did not see)."""
    age = time.monotonic() - _tables[0]
    if age > OWNERS_FOR or (port not in _tables[1] and age > FRESH):
        _tables[:] = [time.monotonic(), listening()]
    return _tables[1].get(port, [])


def listeners(ip, port: int, sockets: list | None = None) -> set[int]:
    """The users whose sockets listening on `port` a connection to `ip` reaches (`sockets`: the
    port's, as `listening` gives them; read now when None), as the kernel picks: a socket bound
    to that very address first, then one on every IPv4 address, then IPv6's (every address, or
    `ip` mapped). So another user's socket beside the right one (an IPv6-only `[::]` one, say:
    probe 6 shut the hub with it when every socket on the port counted) changes nothing."""
    exact, anywhere, six = set(), set(), set()
    for local, uid in listening().get(port, []) if sockets is None else sockets:
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


def impostor(data: dict) -> str:
    """Why a route's target must not be followed ("" when it may): its loopback port held by a
    user other than the route's (an attendee's server: that attendee; anything else the hub
    routes: this proxy's own user). Targets off this machine are not ours to judge."""
    target = urllib.parse.urlparse(str(data.get("target", "")))
    ip, port = _ip(target.hostname or ""), target.port
    if ip is None:
        return ""
    if not ip.is_loopback or not port:
        return ""
    user = data.get("user")
    try:
        want = pwd.getpwnam(user).pw_uid if user else os.geteuid()
    except KeyError:
        return f"the route of user {user!r}, who has no account here, is not followed"
    owners = listeners(ip, port, _kept(port))
    if owners and owners != {want}:
        whose = f"user {user}'s" if user else "the hub's"
        return (f"port {port} is held by uid {', '.join(map(str, sorted(owners)))}, not by "
                f"{whose} ({want}): not forwarded")
    return ""


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


if __name__ == "__main__":
    sys.exit(main())
