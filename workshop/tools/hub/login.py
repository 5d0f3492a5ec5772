"""The workshop's login, the one both hubs run: `scripts/hub` on one machine (hub/auth.py adds
each attendee's system user to it) and the Kubernetes chart, whose values mount this very file
into the hub's pod as `workshop_login.py` (deploy/kubernetes/values.yaml, hub.extraFiles,
written from this file by `python -m workshop kubernetes`). So it imports nothing of the kit:
only the standard library and what the chart's hub image has (JupyterHub 5.3 or newer, for
SharedPasswordAuthenticator; tornado; traitlets).

A name and the workshop's shared code. A shared code alone would let anyone log in as anyone;
here the first login with a name claims it for that browser (a cookie signed with the hub's
secret, which Log Out keeps), and the code opens it from no other browser. The presenter, the
hub's admin, frees a name by deleting that user in the admin panel (the attendee's files stay
for the next login with that name). Each name is the hub user `ws-NAME`, the room holds
`attendees` names at most, and a refused login says why in one sentence.
"""
from __future__ import annotations

import asyncio
import hashlib
import re

PREFIX = "ws-"                                # every attendee's hub user (and system user): ws-NAME
NAME = re.compile(r"^[a-z][a-z0-9]{0,15}$")  # what an attendee may type as their name
PRESENTER = "presenter"                      # the admin's name at the login
NAME_RULE = "A name is a letter, then letters or digits (16 at most), e.g. ada or kim2."
TAKEN = "The name {name} is taken. Pick another, or ask the presenter to free it."
FULL = "The hub is full ({n} attendees): ask the presenter."
ANNOUNCEMENT = ("Your name: a letter, then letters or digits (e.g. ada). "
                "Password: the workshop's code.")   # on the login page
CLAIM, CLAIM_DAYS = "workshop-name", 14   # the signed cookie of the browser that claimed a name


def claim(user) -> str:
    """What the claiming browser's cookie holds: the user, named by a digest of its cookie id
    (random, made with the user and kept across Log Out). A name freed and claimed again is
    another user with another cookie id, but not always another id: SQLite, the hub's
    database, gives a deleted newest row's id to the next one. A digest, not the cookie id:
    that is what the hub's own login cookie carries."""
    return f"{user.name}:{hashlib.sha256(user.cookie_id.encode()).hexdigest()[:32]}"


def __getattr__(name: str):
    """`ClaimedNameAuthenticator`, made when first asked for: it needs JupyterHub, whose import
    takes a second, and the `hub` command reads only the names and messages above."""
    if name != "ClaimedNameAuthenticator":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = made = _authenticator()
    return made


def _authenticator():
    from jupyterhub import orm
    from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
    from tornado import web
    from traitlets import Integer

    class ClaimedNameAuthenticator(SharedPasswordAuthenticator):
        attendees = Integer(30, config=True, help="the most attendees' names the hub admits")

        def __init__(self, **kw):
            super().__init__(**kw)
            self._claiming = asyncio.Lock()

        def name_free(self, name):
            """Whether a name this hub has no user for may be given (a hub that keeps more
            than its database says no to some: hub/auth.py)."""
            return True

        def normalize_username(self, username):
            name = super().normalize_username(username).strip()
            return name if name.startswith(PREFIX) else PREFIX + name

        def validate_username(self, username):
            return username.startswith(PREFIX) and bool(NAME.match(username[len(PREFIX):]))

        async def authenticate(self, handler, data):
            raw = data.get("username", "").strip().lower().removeprefix(PREFIX)
            if not NAME.match(raw):
                raise web.HTTPError(403, NAME_RULE)
            # the name as normalized: JupyterHub 6's SharedPasswordAuthenticator normalizes
            # it, 5.5's (the chart's hub) compares and returns it as typed
            got = await super().authenticate(handler, {**data, "username": PREFIX + raw})
            if got is None or got.get("admin"):
                return got
            name = got["name"]
            async with self._claiming:   # one login at a time decides who gets a name
                user = handler.find_user(name)
                if user is not None:
                    # claimed: only by the browser that claimed this user (after a Log Out
                    # too), never by one that claimed a user of this name freed since
                    if (handler.get_signed_cookie(CLAIM, max_age_days=CLAIM_DAYS) or b"") != \
                            claim(user).encode():
                        raise web.HTTPError(403, TAKEN.format(name=raw))
                else:
                    if not self.name_free(name):
                        raise web.HTTPError(403, TAKEN.format(name=raw))
                    taken = handler.db.query(orm.User).filter(
                        orm.User.name != PREFIX + PRESENTER).count()
                    if taken >= self.attendees:
                        raise web.HTTPError(403, FULL.format(n=self.attendees))
                    user = handler.user_from_username(name)   # made now: a second login
                    self.add_user(user)                        # waits above, then finds it
                # sent to the hub's pages only (an attendee's server never sees it)
                handler.set_signed_cookie(CLAIM, claim(user), expires_days=CLAIM_DAYS,
                                          httponly=True, path=handler.hub.base_url,
                                          secure=handler.request.protocol == "https")
            return got

    return ClaimedNameAuthenticator
