"""The hub's proxy: configurable-http-proxy (PyPI's, in Python), with room for a whole room's
requests at once, and HTTPS. It forwards through tornado's shared HTTP client, which by default
sends at most 10 requests at a time and answers a request that waited 20 s in its queue with a
bare "503 Timeout in request queue": 30 attendees starting their servers at once (each start
holds a request open for up to 10 s) were a third of them turned away by that page, not by the
hub. Its --ssl-key/--ssl-cert stop it ("not supported yet"): this launcher takes them and gives
the proxy's public server a TLS context (its API, on loopback, stays plain HTTP), and tells the
hub which requests came over HTTPS. config.py runs this in place of the proxy's own command."""
import ssl
import sys

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


if __name__ == "__main__":
    sys.exit(main())
