"""`python -m workshop hub --room`: the presenter's view of the room, per lab task how many
attendees' latest check passed, read from the records their kernels wrote (labs/room.py) on a
hub started with `--room-view`. Run as root beside the hub: each record is in its attendee's
home, which only they and root can open. A record is what the attendee's kernel said (they own
the file): a view of where the room is, not a mark.
"""
from __future__ import annotations

import ast
import functools
import os
import pwd
import stat
from importlib.resources import files
from pathlib import Path

from ...labs import room
from . import local


@functools.cache
def tasks() -> list[tuple[str, int, str]]:
    """Every lab task the kit has, in the labs' order: (lab, number, title), read from the
    labs' modules (the `qN = Task(LAB, N, "title", ...)` lines) without importing JAX."""
    import json
    labs = files("workshop.labs")
    order = list(json.loads(labs.joinpath("solutions.json").read_text(encoding="utf-8")))
    found = []
    for lab in order:
        tree = ast.parse(labs.joinpath(f"{lab.lower()}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Task"
                    and len(node.args) >= 3
                    and all(isinstance(a, ast.Constant) for a in node.args[1:3])):
                found.append((lab, node.args[1].value, node.args[2].value))
    return sorted(found, key=lambda t: (order.index(t[0]), t[1]))


def read_record(home: Path) -> dict[str, dict]:
    """An attendee's record, read as root from a file they own: not followed if a link, not
    read if not a plain file or too long; {} if none or not a record."""
    try:
        fd = os.open(home / room.FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return {}
        data = f.read(room.MOST + 1)
    try:
        return room.parse(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}


def records(state: Path = local.STATE) -> dict[str, dict[str, dict]]:
    """{attendee's name: their record} for every attendee the hub made (not the presenter)."""
    got = {}
    for user in local.attendees_made(state):
        name = user.removeprefix(local.PREFIX)
        if name == local.PRESENTER:
            continue
        try:
            home = Path(pwd.getpwnam(user).pw_dir)
        except KeyError:   # removed by hand
            continue
        got[name] = read_record(home)
    return got


def table(got: dict[str, dict[str, dict]], names: bool = False) -> str:
    """Per lab task: attendees whose latest check passed / attendees, and how many checked
    it; with `names`, who passed and who has not yet."""
    # the kit's tasks only: an entry that names another (a lab the kit has not, a lab's name
    # with a line break) is the attendee's writing, and one record of 780 made-up tasks made
    # the presenter's view 1 587 lines (probe 12's RV); such entries are counted, not shown
    rows = tasks()
    keys = {f"{lab} q{n}" for lab, n, _ in rows}
    other = {a: sum(k not in keys for k in rec) for a, rec in got.items()}
    width = max([len(t[2]) for t in rows] + [5])
    lines = [f"hub: the room's lab checks, {len(got)} attendee{'s' * (len(got) != 1)} "
             "(each task's latest check; pass/fail only, nothing of the answers)"]
    for lab, n, title in rows:
        key = f"{lab} q{n}"
        passed = sorted(a for a, rec in got.items() if rec.get(key, {}).get("ok"))
        failed = sorted(a for a, rec in got.items() if key in rec and not rec[key]["ok"])
        lines.append(f"  {key:<6} {title:<{width}}  {len(passed):>3}/{len(got)} pass  "
                     f"({len(passed) + len(failed)} checked)")
        if names and (passed or failed):
            lines.append(f"           pass: {', '.join(passed) or '-'};  not yet: "
                         f"{', '.join(failed) or '-'}")
    if any(other.values()):
        who = sorted(a for a, n in other.items() if n)
        n = sum(other.values())
        whose = (", ".join(who) if names else
                 f"{len(who)} attendee{'s' * (len(who) != 1)}")
        lines.append(f"hub: {n} record {'entries name' if n != 1 else 'entry names'} no task "
                     f"of the kit's, left out: {whose}")
    return "\n".join(lines)


def main(state: Path = local.STATE, names: bool = False) -> int:
    print(table(records(state), names))
    if not (state / local.ROOM_MARK).exists():
        print("hub: no hub is recording checks now: start it with --room-view to turn the "
              "room view on (attendees' checks are recorded from then on)")
    return 0
