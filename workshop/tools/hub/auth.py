"""The hub's login and the attendee's server: imported by hub/config.py inside JupyterHub.

Login: a name and the workshop's shared code (JupyterHub's SharedPasswordAuthenticator). A
shared code alone would let anyone log in as anyone; here the first login with a name claims it
for that browser (a cookie signed with the hub's secret, which Log Out keeps), and the code
opens it from no other browser. The presenter, the hub's admin, frees a name by deleting that
user in the admin panel, which keeps the attendee's files for the next login with that name.
Each name is a system user of its own, `ws-NAME`, with a home only that user can open: its
server, kernels and files run and live as that user, so one attendee's code cannot read, write
or signal another's.
"""
from __future__ import annotations

import asyncio
import os
import pwd
import subprocess
from pathlib import Path

from jupyterhub import orm
from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
from tornado import web
from traitlets import Integer, Unicode

from .local import FULL, NAME, NAME_RULE, PREFIX, PRESENTER, TAKEN, record_attendee

CLAIM, CLAIM_DAYS = "workshop-name", 14   # the signed cookie of the browser that claimed a name


class WorkshopAuthenticator(SharedPasswordAuthenticator):
    attendees = Integer(30, config=True, help="the most attendees' names the hub admits")
    attendee_log = Unicode(config=True, help="the file listing the system users made")

    def __init__(self, **kw):
        super().__init__(**kw)
        self._claiming = asyncio.Lock()

    def normalize_username(self, username):
        name = super().normalize_username(username).strip()
        return name if name.startswith(PREFIX) else PREFIX + name

    def validate_username(self, username):
        return bool(NAME.match(username.removeprefix(PREFIX))) and username.startswith(PREFIX)

    async def authenticate(self, handler, data):
        raw = data.get("username", "").strip().lower().removeprefix(PREFIX)
        if not NAME.match(raw):
            raise web.HTTPError(403, NAME_RULE)
        got = await super().authenticate(handler, data)
        if got is None or got.get("admin"):
            return got
        name = got["name"]
        async with self._claiming:   # one login at a time decides who gets a name
            user = handler.find_user(name)
            if user is not None:
                # claimed: only by the browser that claimed this user (after a Log Out too;
                # a name freed and claimed again is another user, with another id)
                if (handler.get_signed_cookie(CLAIM, max_age_days=CLAIM_DAYS) or b"") != \
                        f"{name}:{user.id}".encode():
                    raise web.HTTPError(403, TAKEN.format(name=raw))
            else:
                taken = handler.db.query(orm.User).filter(
                    orm.User.name != PREFIX + PRESENTER).count()
                if taken >= self.attendees:
                    raise web.HTTPError(403, FULL.format(n=self.attendees))
                user = handler.user_from_username(name)   # made now: a second login waits
                self.add_user(user)                        # above, then finds it
            # sent to the hub's pages only (an attendee's server never sees it)
            handler.set_signed_cookie(CLAIM, f"{name}:{user.id}", expires_days=CLAIM_DAYS,
                                      httponly=True, path=handler.hub.base_url,
                                      secure=handler.request.protocol == "https")
        return got

    def add_user(self, user):
        """A system user for each hub user, made once (and kept when the hub user is
        deleted: the attendee's files wait for the name's next login)."""
        make_system_user(user.name, self.attendee_log)
        return super().add_user(user)


def make_system_user(name: str, log: str) -> None:
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--user-group",
                        "--comment", "JAX workshop attendee", name], check=True,
                       capture_output=True)
        record_attendee(Path(log), name)
    home = Path(pwd.getpwnam(name).pw_dir)
    os.chmod(home, 0o700)   # useradd's HOME_MODE varies by distribution (0755 on older ones)
