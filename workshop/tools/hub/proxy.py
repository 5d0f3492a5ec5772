"""The hub's proxy: configurable-http-proxy (PyPI's, in Python), with room for a whole room's
requests at once. It forwards through tornado's shared HTTP client, which by default sends at
most 10 requests at a time and answers a request that waited 20 s in its queue with a bare
"503 Timeout in request queue": 30 attendees starting their servers at once (each start holds a
request open for up to 10 s) were a third of them turned away by that page, not by the hub.
config.py runs this in place of the proxy's own command."""
import sys

from tornado.httpclient import AsyncHTTPClient

# requests forwarded at once: more than a room's attendees, each with a few open (their page,
# the start of their server, the kernel's websocket is not counted: it has its own connection)
AT_ONCE = 1000


def main() -> int:
    AsyncHTTPClient.configure(None, max_clients=AT_ONCE)
    from configurable_http_proxy.cli import main as proxy
    return proxy()


if __name__ == "__main__":
    sys.exit(main())
