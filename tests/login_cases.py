"""The workshop's login (workshop/tools/hub/login.py) against what JupyterHub's login handler
gives it: a real hub database (JupyterHub's own tables, in memory) and one browser's signed
cookie. Plain Python, no pytest and nothing of the kit, so the same cases run in the tests'
process (JupyterHub 6, the kit's) and, under -m thorough, in a venv made from the attendees'
image lock (JupyterHub 5.5, the chart's hub), against the file the chart mounts:

    python tests/login_cases.py FOLDER   # FOLDER holds workshop_login.py
"""
from __future__ import annotations

import asyncio
import hashlib
import importlib
import sys
from types import SimpleNamespace

from jupyterhub import orm
from sqlalchemy import create_engine
from sqlalchemy.orm import Session
from tornado import web

CODE, ADMIN_CODE = "abcd-efgh-jkmn", "p" * 32
NAME_RULE = "A name is a letter, then letters or digits (16 at most), e.g. ada or kim2."


class Handler:
    """What the login asks of JupyterHub's login handler (its database, its users, the
    request, the hub's path), and one browser's cookie."""
    hub = SimpleNamespace(base_url="/hub/")
    request = SimpleNamespace(protocol="http")

    def __init__(self, db, cookie=None):
        self.db, self.cookie = db, cookie

    def find_user(self, name):
        return self.db.query(orm.User).filter_by(name=name).one_or_none()

    def user_from_username(self, name):
        user = orm.User(name=name)
        self.db.add(user)
        self.db.commit()
        return user

    def get_signed_cookie(self, name, max_age_days):
        return self.cookie.encode() if name == "workshop-name" and self.cookie else None

    def set_signed_cookie(self, name, value, **kw):
        assert name == "workshop-name" and kw["httponly"] and kw["path"] == "/hub/"
        assert kw["secure"] is False   # the request was http
        self.cookie = value


def hub_db(*names):
    """A hub's database with these users, its session made as JupyterHub makes its own (what
    was written stays in memory as written, expire_on_commit=False)."""
    db = Session(create_engine("sqlite://"), expire_on_commit=False)
    orm.Base.metadata.create_all(db.get_bind())
    for name in names:
        Handler(db).user_from_username(name)
    return db


def digest(user) -> str:
    return hashlib.sha256(user.cookie_id.encode()).hexdigest()[:32]


def login(auth, handler, name, code=CODE):
    """(the login's answer, None) or (None, the refusal's status and message)."""
    try:
        return asyncio.run(auth.authenticate(handler, {"username": name, "password": code})), None
    except web.HTTPError as e:
        return None, (e.status_code, e.log_message)


def run(cls) -> int:
    """Every case against the authenticator class `cls`; the number of cases."""
    # admin_users as JupyterHub hands them over: normalized (presenter is ws-presenter)
    auth = cls(user_password=CODE, admin_password=ADMIN_CODE, admin_users={"ws-presenter"},
               allow_all=True, attendees=2)
    db = hub_db("ws-presenter", "ws-kim")
    checks = [
        *[(login(auth, Handler(db), bad), (None, (403, NAME_RULE)))
          for bad in ("1st", "a" * 17, "ad a", "")],
        *[(login(auth, Handler(db), kim), (None, (403, "The name kim is taken. Pick another, "
                                                  "or ask the presenter to free it.")))
          for kim in ("kim", "KIM", "ws-kim")],
        (login(auth, Handler(db), "ada", "wrong-code"), (None, None)),
        (login(auth, Handler(db), "presenter", CODE), (None, None)),   # not with the room's
        (login(auth, Handler(db), "presenter", ADMIN_CODE),
         ({"name": "ws-presenter", "admin": True, "groups": []}, None)),
    ]
    browser = Handler(db)
    checks.append((login(auth, browser, " Ada "), ({"name": "ws-ada", "admin": False,
                                                    "groups": []}, None)))
    ada, kim = browser.find_user("ws-ada"), browser.find_user("ws-kim")
    checks += [
        (browser.cookie, f"ws-ada:{digest(ada)}"),
        (login(auth, browser, "ada")[0]["name"], "ws-ada"),   # the browser that claimed it
        # and after the hub restarted (the same database, read afresh)
        (login(auth, Handler(Session(db.get_bind()), cookie=browser.cookie), "ada")[0]["name"],
         "ws-ada"),
        # kim's browser does not open ada
        (login(auth, Handler(db, cookie=f"ws-kim:{digest(kim)}"), "ada")[1][0], 403),
        # the room holds 2 (the presenter is not counted): zoe is told it is full
        (login(auth, Handler(db), "zoe"),
         (None, (403, "The hub is full (2 attendees): ask the presenter."))),
        (auth.normalize_username("Kim"), "ws-kim"),
        ([auth.validate_username(n) for n in ("ws-kim", "kim", "ws-1st")], [True, False, False]),
    ]
    # a name freed (its user deleted) and claimed again is another user: ada's old claim no
    # longer opens it, though SQLite gave the new ada the old one's id
    old = browser.cookie
    db.delete(ada)
    db.commit()
    checks.append((login(auth, Handler(db), "ada")[0]["name"], "ws-ada"))
    checks.append((browser.find_user("ws-ada").id, ada.id))
    checks.append((login(auth, Handler(db, cookie=old), "ada")[1][0], 403))
    wrong = [(i, got, want) for i, (got, want) in enumerate(checks) if got != want]
    assert not wrong, f"case, the login's answer, what scripts/hub's says: {wrong}"
    return len(checks)


if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])   # the file as the chart's hub has it, by its name there
    mounted = importlib.import_module("workshop_login")
    print(f"{run(mounted.ClaimedNameAuthenticator)} cases passed")
