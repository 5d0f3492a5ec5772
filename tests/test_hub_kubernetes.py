"""deploy/kubernetes/: what can be checked without a cluster or Docker. The values file, merged
over the chart's defaults as Helm merges them, is valid against the pinned chart release's own
values.schema.yaml (vendored in chart-VERSION/); the hub's login is the kit's own module, mounted
byte for byte, and refuses and admits as scripts/hub's does; the image installs its own lock
(the runtime and the single-user server of the chart's JupyterHub, every package with its hash)
and the kit, nothing else, and copies what scripts/hub copies. Under -m thorough the image's lock
installs in a plain venv, where jax computes, `jupyterhub-singleuser` starts and the mounted
login passes the same cases on the chart's JupyterHub."""
from __future__ import annotations

import ast
import copy
import glob
import importlib
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from traitlets.config import Config

from workshop.tools import lockfile, paths
from workshop.tools.hub import kubernetes, login
from workshop.tools.hub import local as hub

HERE = paths.ROOT / "deploy" / "kubernetes"
CHART_VERSION = "4.4.0"   # the release README.md installs
CHART = HERE / f"chart-{CHART_VERSION}"
DOCKERFILE = (HERE / "Dockerfile").read_text()
VALUES_TEXT = (HERE / "values.yaml").read_text()
VALUES = yaml.safe_load(VALUES_TEXT)
README = (HERE / "README.md").read_text()
IMAGE_LOCK = HERE / "requirements.lock"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # the schema is 3,000 lines
# what README.md's step 2 has the presenter write in their own codes.yaml
CODES = {"hub": {"config": {"SharedPasswordAuthenticator": {
    "user_password": "abcd-efgh-jkmn", "admin_password": "p" * 32}}}}


def _merged(*layers):
    """Helm's merge of values files: maps merged key by key, anything else replaced."""
    out = copy.deepcopy(layers[0])
    for layer in layers[1:]:
        for key, value in layer.items():
            if isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = _merged(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
    return out


def test_the_values_are_valid_against_the_pinned_charts_own_schema():
    # fastjsonschema (Draft 7, as the schema says): jsonschema's import alone takes 3 CPU-s
    import fastjsonschema
    schema = yaml.load((CHART / "values.schema.yaml").read_text(), Loader=LOADER)
    defaults = yaml.load((CHART / "values.yaml").read_text(), Loader=LOADER)
    validate = fastjsonschema.compile(schema)

    def error(values) -> str:
        try:
            validate(_merged(defaults, values, CODES))
        except fastjsonschema.JsonSchemaValueException as e:
            return e.message
        return ""
    assert error(VALUES) == ""
    # the schema is strict where the kit relies on it: a misspelt key, a wrong type are errors
    assert error(_merged(VALUES, {"singleuser": {"memroy": {"limit": "1G"}}})) == \
        "data.singleuser must not contain {'memroy'} properties"
    assert error(_merged(VALUES, {"cull": {"timeout": "an hour"}})).startswith(
        "data.cull.timeout must be integer")


def test_the_readme_pins_the_chart_release_that_is_vendored():
    assert f"--version {CHART_VERSION}" in README
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["name"] == "jupyterhub" and f"JupyterHub {chart['appVersion']}" in README
    assert (CHART / "LICENSE").read_text().startswith("BSD 3-Clause License")
    assert "5c5f5df751588a68a7781ead01d0f62e88e2e72f" in (CHART / "README.md").read_text()
    assert sorted(p.name for p in HERE.glob("chart-*")) == [CHART.name]


def test_the_values_hold_no_code_and_the_measured_sizes():
    assert "user_password" not in VALUES_TEXT and "admin_password" not in VALUES_TEXT
    assert VALUES["cull"]["timeout"] == hub.IDLE_MINUTES * 60
    assert VALUES["hub"]["config"]["Authenticator"]["admin_users"] == [login.PRESENTER]
    # the memory a pod is guaranteed covers the measured attendee (kernel after J3 + server)
    assert int(VALUES["singleuser"]["memory"]["guarantee"].rstrip("M")) >= 470 + 135
    assert VALUES["singleuser"]["image"]["tag"] == _version()


def _version() -> str:
    return tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"]["version"]


# ---- the login: the kit's module, mounted


def test_the_values_mount_the_kits_login_byte_for_byte():
    mounted = VALUES["hub"]["extraFiles"][kubernetes.KEY]
    assert mounted["stringData"] == kubernetes.LOGIN.read_text(), (
        "values.yaml's login differs from workshop/tools/hub/login.py: "
        "run `python -m workshop kubernetes`")
    # beside the chart's jupyterhub_config.py, whose folder it puts on the hub's import path,
    # under the name the config imports
    assert mounted["mountPath"] == "/usr/local/etc/jupyterhub/workshop_login.py"
    assert VALUES["hub"]["config"]["JupyterHub"]["authenticator_class"] == \
        "workshop_login.ClaimedNameAuthenticator"
    # the command rewrites that block only, and the values load back with the new text
    assert kubernetes.with_login(VALUES_TEXT, mounted["stringData"]) == VALUES_TEXT
    changed = yaml.safe_load(kubernetes.with_login(VALUES_TEXT, 'x = 1\n\n"""a"""\n'))
    assert changed["hub"]["extraFiles"][kubernetes.KEY]["stringData"] == 'x = 1\n\n"""a"""\n'
    assert _merged(changed, {"hub": {"extraFiles": None}}) == \
        _merged(VALUES, {"hub": {"extraFiles": None}})


def test_the_login_imports_nothing_but_the_hub_images():
    # the hub's pod has JupyterHub (tornado, traitlets with it) and no kit: the file it is
    # given must import nothing else, at the top or inside a function
    tree = ast.parse(kubernetes.LOGIN.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
             for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree)
              if isinstance(n, ast.ImportFrom) and n.level == 0}
    relative = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
    assert relative == []
    assert names - set(sys.stdlib_module_names) == {"jupyterhub", "tornado", "traitlets"}


@pytest.fixture(scope="module")
def pod_login(tmp_path_factory):
    """The login as the hub's pod has it: the values' file in the config's folder, imported by
    its name; and the values' extraConfig run as the chart runs it."""
    folder = tmp_path_factory.mktemp("hub-config")
    mounted = VALUES["hub"]["extraFiles"][kubernetes.KEY]
    (folder / Path(mounted["mountPath"]).name).write_text(mounted["stringData"])
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module("workshop_login")
        c = Config()
        for code in VALUES["hub"]["extraConfig"].values():
            exec(code, {"c": c})
        yield module, c
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("workshop_login", None)


def test_the_pods_login_refuses_and_admits_as_scripts_hubs_does(pod_login):
    module, c = pod_login
    # (JupyterHub's database: a second to import, paid in this test only)
    import login_cases
    from jupyterhub.auth import Authenticator
    cls = getattr(module, VALUES["hub"]["config"]["JupyterHub"]["authenticator_class"]
                  .removeprefix("workshop_login."))
    assert issubclass(cls, Authenticator) and cls.__module__ == "workshop_login"
    assert login_cases.run(cls) == 21
    assert c.JupyterHub.template_vars == {"announcement_login": login.ANNOUNCEMENT}
    # scripts/hub runs the same class, adding only each attendee's system user, and the
    # room's cap the values set
    from workshop.tools.hub import auth
    assert auth.WorkshopAuthenticator.__mro__[1] is login.ClaimedNameAuthenticator
    assert set(vars(auth.WorkshopAuthenticator)) & {"authenticate", "normalize_username",
                                                   "validate_username"} == set()
    assert VALUES["hub"]["config"]["ClaimedNameAuthenticator"]["attendees"] == 60
    assert "60 attendees" in README


# ---- the image: its own lock, and the kit


def _runs() -> list[str]:
    text = DOCKERFILE.replace("\\\n", " ")
    return [line[4:] for line in text.splitlines() if line.startswith("RUN ")]


def test_the_image_installs_its_own_lock_with_hashes_and_the_kit_nothing_else():
    installs = [shlex.split(cmd.split("&&")[0]) for cmd in _runs() if "pip install" in cmd]
    lock, kit = installs
    assert lock[lock.index("-r") + 1] == "/tmp/requirements.lock"
    assert "--require-hashes" in lock and "--no-deps" in lock
    assert "COPY deploy/kubernetes/requirements.lock /tmp/requirements.lock" in DOCKERFILE
    assert "environment/requirements.lock" not in DOCKERFILE
    assert kit[-1] == "/opt/kit" and "--no-deps" in kit and "-e" not in kit
    # a Python the lock resolves for, as scripts/setup accepts
    base = re.search(r"^FROM python:(3\.\d+)-", DOCKERFILE, re.M).group(1)
    assert base in ("3.12", "3.13")


def _pins(path: Path) -> dict[str, set[str]]:
    """{package: {version, ...}} of a lock (two where a marker splits it by Python)."""
    out: dict[str, set[str]] = {}
    for m in re.finditer(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", path.read_text(), re.M):
        out.setdefault(lockfile.canon(m.group(1)), set()).add(m.group(2))
    return out


def test_the_image_lock_is_the_runtime_and_the_charts_single_user_server():
    image, kit = _pins(IMAGE_LOCK), _pins(paths.LOCK)
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    # the single-user server of the hub the chart runs (the kit's own hub is another major)
    assert image["jupyterhub"] == {chart["appVersion"]}
    # every package the kit's lock pins too, at the kit's version: the kernel the handouts
    # were built with
    assert {p: (v, kit.get(p)) for p, v in image.items()
            if p != "jupyterhub" and v != kit.get(p)} == {}
    project = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"]
    assert {lockfile.canon(d) for d in project["dependencies"]} <= set(image)
    assert {"jupyterlab", "setuptools"} <= set(image)   # the attendees' page; the kit's build
    # and not the maintainer's tool chain
    assert not set(image) & {"pytest", "ruff", "playwright", "uv", "sphinx", "pypdf",
                             "configurable-http-proxy", "jupyterhub-idle-culler", "notebook",
                             "jupyterlab-rise", "axe-playwright-python"}
    # every pin with its hashes, and made from requirements.in as it is now
    text = IMAGE_LOCK.read_text()
    entries = re.split(r"\n(?=[A-Za-z0-9_.-]+==)", text.split("\n", 2)[2])
    assert all("--hash=sha256:" in e for e in entries), [e[:40] for e in entries
                                                           if "--hash" not in e]
    wanted = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (HERE / "requirements.in").read_text(),
                        re.M)
    assert wanted and all(v in image[lockfile.canon(p)] for p, v in wanted)


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


@pytest.mark.thorough
@pytest.mark.slow
def test_the_image_lock_installs_in_a_plain_venv_and_serves(tmp_path):
    """The lock as the image's pip installs it, in a plain venv (the lock's uv: the same
    resolution, faster): the mounted login passes the cases on the chart's JupyterHub with
    nothing of the kit there; then the kit, as the image installs it, computes with jax, and
    the single-user server starts."""
    venv = tmp_path / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    py, uv = venv / "bin" / "python", Path(sys.executable).with_name("uv")

    scratch = tmp_path / "uv-tmp"   # (its build backend's lock, 0666, went to /tmp)
    scratch.mkdir()

    def install(*args):
        return subprocess.run([str(uv), "pip", "install", "-q", "--python", str(py), *args],
                              capture_output=True, text=True, timeout=900,
                              env=dict(os.environ, TMPDIR=str(scratch)))
    got = install("--require-hashes", "--no-deps", "-r", str(IMAGE_LOCK))
    if got.returncode and not os.environ.get("CI"):
        pytest.skip(f"no package index here: {got.stderr.strip().splitlines()[-1:]}")
    assert got.returncode == 0, got.stderr
    folder = tmp_path / "hub-config"
    folder.mkdir()
    (folder / "workshop_login.py").write_text(
        VALUES["hub"]["extraFiles"][kubernetes.KEY]["stringData"])
    cases = subprocess.run([str(py), str(Path(__file__).with_name("login_cases.py")), str(folder)],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert cases.returncode == 0 and cases.stdout == "21 cases passed\n", cases.stderr
    assert install("--no-deps", str(paths.ROOT)).returncode == 0
    run = subprocess.run([str(py), "-c", "import jax, workshop; workshop.setup(); print("
                          "jax.__version__, jax.numpy.arange(8).sum(), len(jax.devices()))"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-3:] == [lockfile.pins()["jax"], "28", "8"], run.stdout
    server = [str(venv / "bin" / "jupyterhub-singleuser")]
    helps = subprocess.run(server + ["--help-all"], capture_output=True, text=True, timeout=300,
                           cwd=tmp_path)
    assert helps.returncode == 0 and "--JupyterHubSingleUser.hub_activity_interval" in \
        helps.stdout, helps.stderr
    version = subprocess.run(server + ["--version"], capture_output=True, text=True, timeout=300)
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert version.stdout.strip() == chart["appVersion"], version
