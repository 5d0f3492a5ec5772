"""The running environment against environment/requirements.lock."""
from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from .paths import LOCK

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: Path | None = None) -> dict[str, str]:
    """{package: version} for every `name==version` line of the lock that applies here (the
    lock is universal: a line such as `appnope==1.0.0 ; sys_platform == 'darwin'` is not)."""
    from packaging.markers import Marker
    out = {}
    for line in (lock or LOCK).read_text().splitlines():
        m = _PIN.match(line)
        if m:
            marker = line.split(";", 1)[1].rstrip(" \\") if ";" in line else ""
            if marker.strip() and not Marker(marker.strip()).evaluate():
                continue
            out[canon(m.group(1))] = m.group(2)
    return out


def installed() -> dict[str, str]:
    return {canon(d.metadata["Name"]): d.version for d in metadata.distributions()
            if d.metadata["Name"]}


def mismatches(lock: Path | None = None) -> list[str]:
    """One line per locked package that is missing or at another version here."""
    have = installed()
    out = []
    for name, want in sorted(pins(lock).items()):
        got = have.get(name)
        if got is None:
            out.append(f"{name}: not installed (lock: {want})")
        elif got != want:
            out.append(f"{name}: {got} installed, lock says {want}")
    return out
