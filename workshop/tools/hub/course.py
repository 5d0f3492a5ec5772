"""The course site for the hub's room: `scripts/build --site`'s pages (build/site/), which
local.py copies into HUB_HOME/site, served as files under /hub/course/ by the hub's own process
(hub/config.py adds these handlers to JupyterHub's).

Why in the hub: the room has one copy of the site, no port to open and the hub's HTTPS when it
has a certificate, as a service would give; but a service is a process of its own on a loopback
port, and another local user could take that port (killing the service, or binding it first
at the hub's start: probes 3 and 4), after which the hub's proxy handed that user's page to
whoever opened the site, on the hub's address, where its script acted as them (an admin token
minted). The hub's own process has no port another user can take without the hub failing to
start. (JupyterHub calls extra_handlers deprecated in favour of services, for this reason the
kit keeps them: its log says so once at the start.)

An attendee opens it in a tab beside their JupyterLab; the login page and the hub's home page
(File, Hub Control Panel) link it. No login: the pages are the course as published (the talk,
the labs and their solutions, no attendee's work), and an attendee reads them on their phone
too, where logging in would be refused (a name opens from the browser that claimed it only,
hub/auth.py)."""
from __future__ import annotations

import os

from tornado import web


class Files(web.StaticFileHandler):
    """The site's files as they are (tornado refuses a path outside the folder)."""

    def validate_absolute_path(self, root, absolute_path):
        # tornado compares the path as written; the hub reads as root, so a link (the copy has
        # none: local.prepare_site) must not lead out of the site either. A NUL (%00) is no
        # file's name: a 404, not realpath's ValueError, a 500 and a traceback in root's log
        # per request, from anyone (probe 12's S2)
        if "\0" in absolute_path:
            raise web.HTTPError(404)
        real, top = os.path.realpath(absolute_path), os.path.realpath(root)
        if real != top and not real.startswith(top + os.sep):
            raise web.HTTPError(403)
        return super().validate_absolute_path(root, absolute_path)

    def set_extra_headers(self, path):
        # asked again (cheap: 304 when unchanged), so a site built again shows on the next load
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Content-Type-Options", "nosniff")


def handlers(folder: str, prefix: str = "/hub/course/") -> list[tuple]:
    """JupyterHub's extra_handlers for the site in `folder` (JupyterHub puts its /hub/ in front
    of each pattern: `prefix` is where they end up)."""
    inside = "/" + prefix.strip("/").split("/", 1)[1]   # /hub/course/ -> /course
    return [(inside, web.RedirectHandler, {"url": prefix}),
            (inside + "/(.*)", Files, {"path": folder, "default_filename": "index.html"})]
