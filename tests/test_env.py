"""The environment matches the lock; the lock pins everything; JupyterLab shows nothing broken."""
from __future__ import annotations

import re

import jax
from packaging.markers import Marker

from workshop import PINNED_JAX
from workshop.tools import lockfile
from workshop.tools.doctor import PYTHONS
from workshop.tools.paths import ROOT

IN = ROOT / "environment" / "requirements.in"


def test_running_env_matches_the_lock():
    assert lockfile.mismatches() == [], "run scripts/setup --force"


def test_lock_pins_every_package_with_hashes():
    text = lockfile.LOCK.read_text()
    reqs = [b for b in re.split(r"\n(?=\S)", text) if b.strip() and not b.startswith("#")]
    assert len(reqs) > 50
    for block in reqs:
        # universal lock: a platform's package carries its marker (`; sys_platform == ...`)
        assert re.match(r"^[A-Za-z0-9._-]+==[^\s;]+( ; [^\n]+)? \\$", block.split("\n")[0]), \
            block.split("\n")[0]
        assert "--hash=sha256:" in block, block.split("\n")[0]


def test_every_direct_dependency_has_a_reason_and_is_locked():
    pins, lines = lockfile.pins(), IN.read_text().splitlines()
    direct = [(i, ln) for i, ln in enumerate(lines) if ln and not ln.startswith("#")]
    assert len(direct) >= 14
    for i, line in direct:
        pin, _, marker = line.partition(";")
        name, version = pin.strip().split("==")
        # a pin that differs by Python: its lines stand together under one reason
        assert lines[i - 1].startswith(("# ", f"{name}==")), f"{name}: no reason above it"
        if not marker.strip() or Marker(marker.strip()).evaluate():
            assert pins[lockfile.canon(name)] == version, f"{name}: .in and lock disagree"
    # and for each Python claimed, exactly one of its lines applies
    for name in {ln.split("==")[0] for _, ln in direct if ";" in ln}:
        for a, b in PYTHONS:
            here = {"python_version": f"{a}.{b}", "python_full_version": f"{a}.{b}.0"}
            applies = [ln for _, ln in direct if ln.startswith(f"{name}==")
                       and Marker(ln.split(";", 1)[1].strip()).evaluate(here)]
            assert len(applies) == 1, f"{name} on Python {a}.{b}: {applies or 'no pin'}"


def test_pinned_jax_is_the_one_running():
    assert lockfile.pins()["jax"] == PINNED_JAX == jax.__version__


def test_jupyterlab_marks_no_extension_incompatible_and_rise_is_enabled():
    # what `jupyter labextension list` prints, from its own function in this process (the
    # command took 20 s at load); the doctor reads the same listing
    from workshop.tools import doctor
    text = doctor.lab_extensions()
    assert "JupyterLab v" in text, text
    assert "jupyterlab-rise" in text and "mathjax3" not in text
    assert "incompatible" not in text and " X" not in text, text


OLDEST = ("3.12.0", "3.13.0", "3.14.0", "3.15.0")   # the first release of each Python claimed


def test_every_locked_package_admits_the_oldest_pythons_claimed():
    from importlib import metadata

    from packaging.specifiers import SpecifierSet
    checked, refuse = 0, []
    for name in lockfile.pins():
        req = metadata.metadata(name).get("Requires-Python")
        checked += 1
        for oldest in OLDEST:
            if req and oldest not in SpecifierSet(req):
                refuse.append(f"{name} needs Python {req}, not {oldest}")
    assert checked == len(lockfile.pins()) > 50 and refuse == []
