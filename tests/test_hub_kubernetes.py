"""deploy/kubernetes/: what can be checked without a cluster. The image installs the lock (every
package with its hash, nothing else) and the kit, and copies what scripts/hub copies; the values
file names only keys Zero to JupyterHub's values.schema.yaml documents; its login code refuses
what scripts/hub's refuses, in the same words."""
from __future__ import annotations

import asyncio
import glob
import re
import shlex

import pytest
import yaml
from tornado import web
from traitlets.config import Config

from workshop.tools import paths
from workshop.tools.hub import local as hub

HERE = paths.ROOT / "deploy" / "kubernetes"
DOCKERFILE = (HERE / "Dockerfile").read_text()
VALUES = yaml.safe_load((HERE / "values.yaml").read_text())

# The keys the values file may name: read from values.schema.yaml of chart 4.4.0 (its
# `properties`, each path here is documented there). Under a passthrough object (hub.config,
# hub.extraConfig, singleuser.lifecycleHooks) the chart documents no keys of its own.
DOCUMENTED = {
    "hub.config": "passthrough", "hub.extraConfig": "passthrough",
    "singleuser.image.name": "string", "singleuser.image.tag": "string",
    "singleuser.lifecycleHooks": "passthrough", "singleuser.defaultUrl": "string",
    "singleuser.memory.guarantee": "size", "singleuser.memory.limit": "size",
    "singleuser.cpu.guarantee": "number", "singleuser.cpu.limit": "number",
    "singleuser.storage.capacity": "string", "singleuser.startTimeout": "integer",
    "singleuser.networkPolicy.enabled": "boolean",
    "cull.enabled": "boolean", "cull.timeout": "integer", "cull.every": "integer",
}
TYPES = {"string": str, "size": (str, int), "number": (int, float), "integer": int,
         "boolean": bool, "passthrough": dict}


def _leaves(node, prefix=""):
    for key, value in node.items():
        path = f"{prefix}{key}"
        if path in DOCUMENTED or not isinstance(value, dict):
            yield path, value
        else:
            yield from _leaves(value, path + ".")


def test_the_values_name_only_documented_keys_with_their_types():
    leaves = dict(_leaves(VALUES))
    assert set(leaves) <= set(DOCUMENTED), set(leaves) - set(DOCUMENTED)
    for path, value in leaves.items():
        assert isinstance(value, TYPES[DOCUMENTED[path]]), (path, value)
        assert not isinstance(value, bool) or DOCUMENTED[path] == "boolean", path


def test_the_values_hold_no_code_and_the_measured_sizes():
    text = (HERE / "values.yaml").read_text()
    assert "user_password" not in text and "admin_password" not in text
    assert VALUES["cull"]["timeout"] == hub.IDLE_MINUTES * 60
    assert VALUES["hub"]["config"]["Authenticator"]["admin_users"] == [hub.PRESENTER]
    # the memory a pod is guaranteed covers the measured attendee (kernel after J3 + server)
    assert int(VALUES["singleuser"]["memory"]["guarantee"].rstrip("M")) >= 470 + 135
    assert VALUES["singleuser"]["image"]["tag"] == _version()


def _version() -> str:
    return re.search(r'^version = "([^"]+)"', (paths.ROOT / "pyproject.toml").read_text(),
                     re.M).group(1)


def _runs() -> list[str]:
    text = DOCKERFILE.replace("\\\n", " ")
    return [line[4:] for line in text.splitlines() if line.startswith("RUN ")]


def test_the_image_installs_the_lock_with_hashes_and_nothing_else():
    installs = [shlex.split(cmd.split("&&")[0]) for cmd in _runs() if "pip install" in cmd]
    lock, kit = installs
    assert lock[lock.index("-r") + 1] == "/tmp/requirements.lock"
    assert "--require-hashes" in lock and "--no-deps" in lock
    assert "COPY environment/requirements.lock /tmp/requirements.lock" in DOCKERFILE
    assert kit[-1] == "/opt/kit" and "--no-deps" in kit and "-e" not in kit
    # a Python the lock resolves for, as scripts/setup accepts
    base = re.search(r"^FROM python:(3\.\d+)-", DOCKERFILE, re.M).group(1)
    assert base in ("3.12", "3.13")
    assert "jupyterhub==" in paths.LOCK.read_text()   # the singleuser server comes from it


def test_the_image_copies_what_exists_and_what_scripts_hub_copies():
    copies = [line.split()[1:] for line in DOCKERFILE.splitlines() if line.startswith("COPY ")]
    for *sources, _ in copies:
        for s in sources:
            assert glob.glob(str(paths.ROOT / s)), f"COPY {s}: nothing there"
    materials = {(d.rsplit("/", 2)[-2], s) for *ss, d in copies if d.startswith("/srv/materials")
                 for s in ss}
    assert set(hub.MATERIALS) == materials
    assert not any("solutions" in s for *ss, _ in copies for s in ss)
    hook = VALUES["singleuser"]["lifecycleHooks"]["postStart"]["exec"]["command"]
    assert "cp -Rn /srv/materials/. ~/workshop/" in hook[-1]   # -n: never over their own work


class _User:
    def __init__(self, name, id):
        self.name, self.id = name, id


class _Handler:
    """What the login asks of JupyterHub's login handler (its users, the request, the hub's
    path), and one browser's cookie."""
    hub = type("Hub", (), {"base_url": "/hub/"})
    request = type("Request", (), {"protocol": "http"})

    def __init__(self, users, claimed=None):
        self.users, self.cookie = users, claimed   # users: name -> id

    def find_user(self, name):
        return _User(name, self.users[name]) if name in self.users else None

    def user_from_username(self, name):
        self.users[name] = max(self.users.values(), default=0) + 1
        return self.find_user(name)

    def get_signed_cookie(self, name, max_age_days):
        return self.cookie.encode() if name == "workshop-name" and self.cookie else None

    def set_signed_cookie(self, name, value, **kw):
        assert name == "workshop-name" and kw["httponly"] and kw["path"] == "/hub/"
        self.cookie = value


def _authenticator():
    from jupyterhub.auth import Authenticator
    c = Config()
    exec(VALUES["hub"]["extraConfig"]["claimedNames"], {"c": c})
    cls = c.JupyterHub.authenticator_class
    assert issubclass(cls, Authenticator)
    return cls(user_password="abcd-efgh-jkmn", admin_password="p" * 32,
               admin_users={"presenter"}, allow_all=True)


@pytest.mark.parametrize("name,password,taken,says", [
    ("kim", "abcd-efgh-jkmn", {"kim": 1},
     "The name kim is taken. Pick another, or ask the presenter to free it."),
    ("1st", "abcd-efgh-jkmn", {},
     "A name is a letter, then letters or digits (16 at most), e.g. ada or kim2."),
    ("a" * 17, "abcd-efgh-jkmn", {},
     "A name is a letter, then letters or digits (16 at most), e.g. ada or kim2."),
    ("ad a", "abcd-efgh-jkmn", {},
     "A name is a letter, then letters or digits (16 at most), e.g. ada or kim2."),
])
def test_the_values_login_refuses_as_scripts_hubs_does(name, password, taken, says):
    auth = _authenticator()
    with pytest.raises(web.HTTPError) as e:
        asyncio.run(auth.authenticate(_Handler(taken), {"username": name, "password": password}))
    assert e.value.status_code == 403 and e.value.log_message == says
    # scripts/hub's login says the same (workshop/tools/hub/auth.py)
    assert says in (hub.TAKEN.format(name=name), hub.NAME_RULE)


def test_the_values_login_admits_a_new_name_its_browser_again_and_the_presenter():
    auth = _authenticator()
    code = {"password": "abcd-efgh-jkmn"}
    browser = _Handler({"kim": 1})
    got = asyncio.run(auth.authenticate(browser, {"username": "Ada", **code}))
    assert got["name"] == "ada" and not got["admin"] and browser.cookie == "ada:2"
    again = asyncio.run(auth.authenticate(browser, {"username": "ada", **code}))
    assert again["name"] == "ada"
    # kim's browser does not open ada; nor does ada's old claim once the name was freed and
    # claimed again (another user, another id)
    for cookie, users in [("kim:1", {"kim": 1, "ada": 2}), ("ada:2", {"kim": 1, "ada": 3})]:
        with pytest.raises(web.HTTPError):
            asyncio.run(auth.authenticate(_Handler(users, claimed=cookie),
                                          {"username": "ada", **code}))
    got = asyncio.run(auth.authenticate(_Handler({"presenter": 9}), {"username": "presenter",
                                                                     "password": "p" * 32}))
    assert got["admin"] is True
    assert asyncio.run(auth.authenticate(_Handler({}), {"username": "ada",
                                                        "password": "wrong-code"})) is None
