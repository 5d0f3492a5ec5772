"""The course site for the hub's room: `scripts/build --site`'s pages (build/site/), which
local.py copies into HUB_HOME/site, served as files under /services/course/ by this process, a
JupyterHub service the hub starts and stops with itself (hub/config.py).

Why a service: the hub's own proxy routes /services/course/ here, so the room has one copy of
the site, no port of its own to open (this listens on loopback only), and the hub's HTTPS when
it has a certificate; an attendee opens it in a tab beside their JupyterLab, and the login page
and the hub's home page (File, Hub Control Panel) link it. It runs as a system user of its
own, local.COURSE_USER (not nobody, whom any other nobody process could kill to take its port
and serve its own page on the hub's address): it only reads files every user may read. No
login: the pages are the course as published (the talk, the labs
and their solutions, no attendee's work), and an attendee reads them on their phone too, where
logging in would be refused (a name opens from the browser that claimed it only, hub/auth.py).

Run by JupyterHub as `python -m workshop.tools.hub.course FOLDER`, with the address it was
given in JUPYTERHUB_SERVICE_URL and the path the proxy routes in JUPYTERHUB_SERVICE_PREFIX."""
from __future__ import annotations

import asyncio
import os
import sys
from urllib.parse import urlparse

from tornado import web


class Files(web.StaticFileHandler):
    """The site's files as they are (tornado refuses a path outside the folder)."""

    def set_extra_headers(self, path):
        # asked again (cheap: 304 when unchanged), so a site built again shows on the next load
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Content-Type-Options", "nosniff")


def app(folder: str, prefix: str) -> web.Application:
    return web.Application([
        (prefix.rstrip("/"), web.RedirectHandler, {"url": prefix}),
        (prefix + "(.*)", Files, {"path": folder, "default_filename": "index.html"}),
    ])


async def serve(folder: str) -> None:
    url = urlparse(os.environ["JUPYTERHUB_SERVICE_URL"])
    app(folder, os.environ["JUPYTERHUB_SERVICE_PREFIX"]).listen(url.port, url.hostname)
    await asyncio.Event().wait()   # until the hub stops it (SIGTERM)


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))
