"""What a maintainer expects around the kit: its licences, complete package metadata, a version
with a changelog entry, every import declared, and pre-commit hooks that pass."""
from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from workshop import env
from workshop import notebooks as nbs

ROOT = nbs.ROOT
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_licences_are_there_and_say_which_is_which():
    mit = (ROOT / "LICENSE").read_text()
    assert mit.startswith("MIT License") and "Copyright (c) 20" in mit
    cc = (ROOT / "LICENSES" / "CC-BY-4.0.txt").read_text()
    assert cc.startswith("Creative Commons Attribution 4.0 International") and len(cc) > 15000
    notice = (ROOT / "NOTICE").read_text()
    assert "Apache License, Version 2.0" in notice and "The JAX Authors" in notice
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Licence and credit", 1)[1].split("\n## ", 1)[0]
    for says in ("MIT", "CC BY 4.0", "Apache", "NOTICE", "LICENSE"):
        assert says in section, f"the README's licence section does not say {says}"


def test_metadata_is_complete():
    assert PROJECT["license"] == "MIT"
    assert set(PROJECT["license-files"]) >= {"LICENSE", "LICENSES/*", "NOTICE"}
    assert PROJECT["readme"] == "README.md" and PROJECT["urls"]
    assert PROJECT["description"]
    # what scripts/setup, doctor and the README accept: 3.12 and 3.13, from their first release
    claimed = SpecifierSet(PROJECT["requires-python"])
    assert all(v in claimed for v in ("3.12.0", "3.12.9", "3.13.0", "3.13.5"))
    assert not any(v in claimed for v in ("3.11.9", "3.14.0"))


def test_the_version_has_a_changelog_entry():
    version = PROJECT["version"]
    assert re.fullmatch(r"20\d\d\.(1[0-2]|[1-9])\.[1-9]\d*", version), \
        f"{version}: YEAR.MONTH.N, the Nth delivery of that month"
    log = (ROOT / "CHANGELOG.md").read_text()
    first = re.search(r"^## (\S+) · (\d{4}-\d{2}-\d{2})$", log, re.M)
    assert first and first.group(1) == version, \
        f"CHANGELOG.md's first entry should be “## {version} · YYYY-MM-DD”"
    entry = log[first.end():].split("\n## ", 1)[0]
    for reader in ("Presenters", "Readers", "Attendees"):
        assert f"### {reader}" in entry, f"the {version} entry says nothing for {reader}"


def _third_party_imports(paths) -> dict[str, set[str]]:
    """{distribution: {file, ...}} for every module the files import that is not the
    standard library, the kit itself, or a local test module."""
    local = {p.stem for p in (ROOT / "tests").rglob("*.py")} | {"workshop"} | {
        p.name for p in (ROOT / "tests").iterdir() if p.is_dir()}   # tests/wrong_answers
    dists = packages_distributions()
    out: dict[str, set[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in local:
                    continue
                for dist in dists.get(top, [f"(no distribution for {top})"]):
                    out.setdefault(env.canon(dist), set()).add(nbs.short(path))
    return out


def _declared(*groups: str) -> set[str]:
    names = list(PROJECT["dependencies"])
    for g in groups:
        names += PROJECT["optional-dependencies"][g]
    return {env.canon(re.split(r"[\[<>=!~; ]", n, maxsplit=1)[0]) for n in names} \
        - {"jax-core-workshop"}


def test_every_import_is_declared_and_locked():
    # the package: the runtime (an attendee's `pip install`) plus the `build` extra; the tests:
    # the `dev` extra as well. Every declared name is in the lock, so setup installs it.
    package = _third_party_imports(sorted((ROOT / "workshop").rglob("*.py")))
    missing = {d: sorted(f)[:3] for d, f in package.items() if d not in _declared("build")}
    assert not missing, f"imported by the package, not declared in pyproject.toml: {missing}"
    tests = _third_party_imports(sorted((ROOT / "tests").rglob("*.py")))
    missing = {d: sorted(f)[:3] for d, f in tests.items()
               if d not in _declared("build", "dev")}
    assert not missing, f"imported by the tests, not declared in the dev extra: {missing}"
    unlocked = _declared("build", "dev") - set(env.pins())
    assert not unlocked, f"declared but not in environment/requirements.lock: {unlocked}"


def test_the_runtime_is_only_what_a_kernel_needs():
    # an attendee installs the runtime alone (tests/test_attendee_venv.py runs every lab so):
    # the browser, the PDF tools and the server are the build's
    runtime = _declared()
    assert not runtime & {"playwright", "pypdf", "psutil", "jupyterlab", "nbconvert", "pytest"}


def _hooks():
    import yaml
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    return [h for repo in config["repos"] for h in repo["hooks"]]


def test_pre_commit_runs_ruff_fmt_and_labs_with_the_kits_venv():
    entries = {h["id"]: h["entry"] for h in _hooks()}
    assert entries == {
        "ruff": ".venv/bin/ruff check --force-exclude",
        "notebooks-normalised": ".venv/bin/python -m workshop fmt --check",
        "attendee-copies-current": ".venv/bin/python -m workshop labs --check"}
    assert all(h["language"] == "system" for h in _hooks()), "no hook environment to download"


@pytest.mark.parametrize("hook", _hooks(), ids=lambda h: h["id"])
def test_each_pre_commit_hook_passes_on_the_kit(hook):
    # as `pre-commit run --all-files` runs it, with this venv's tools (the hooks name .venv's;
    # in a clean clone they are the same), over the folders the lint always covered
    cmd = shlex.split(hook["entry"])
    cmd[0] = str(Path(sys.executable).with_name(Path(cmd[0]).name))
    files = ["workshop", "tests", "decks", "exercises"] if hook.get("pass_filenames", True) else []
    p = subprocess.run(cmd + files, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
