"""What a lab's check records for the presenter's view of the room (`scripts/hub --room`).

Only on the classroom hub, and only when its presenter started it with `--room-view`: the hub
then sets ENV in each attendee's server, whose kernels inherit it. Each check writes, per lab
task, whether its latest verdict passed and when: nothing of the answer, the code or the
verdict's words. The record is a small file in the attendee's own home, which only they and
root can open (the presenter's command reads it as root). Anywhere else (a venv, Colab, the
build, the tests) ENV is not set and nothing is written; a record that cannot be written (a
full disk, a read-only home) leaves the check's verdict as it is.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
import time

ENV = "WORKSHOP_ROOM_VIEW"   # "1" in an attendee's server on a hub started with --room-view
FILE = ".workshop-room.json"  # in the attendee's home, out of sight of their file browser
MOST = 64 * 1024              # a record is a few hundred bytes; a bigger file is not one
_LAB = re.compile(r"^[A-Z][0-9]{1,2}$")


def record(lab: str, task: int, ok: bool, home: str | None = None) -> None:
    """Records that the latest check of `lab`'s task `task` passed (or not), when ENV says the
    hub's presenter asked for it; never raises."""
    if os.environ.get(ENV) != "1":
        return
    try:
        _write(home or os.path.expanduser("~"), lab, task, ok)
    except Exception:   # (the verdict is the attendee's; the room's view can miss one)
        pass


def _write(home: str, lab: str, task: int, ok: bool) -> None:
    """The record with this task's entry in place of its last, written to a new file that
    then replaces the old one (a reader never sees half of it)."""
    path = os.path.join(home, FILE)
    try:
        with open(path, encoding="utf-8") as f:
            kept = parse(f.read(MOST + 1))
    except (OSError, ValueError):
        kept = {}
    kept[f"{lab} q{task}"] = {"lab": lab, "task": int(task), "ok": bool(ok),
                              "time": int(time.time())}
    fd, tmp = tempfile.mkstemp(dir=home, prefix=FILE + ".")   # (mode 600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(kept, f, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def parse(text: str) -> dict[str, dict]:
    """The well-formed entries of a record, {"J1 q1": {"lab", "task", "ok", "time"}}; anything
    else in it is left out (the attendee owns the file and can write what they like)."""
    if len(text) > MOST:
        raise ValueError("too long to be a record")
    try:
        data = json.loads(text)
    except RecursionError:   # (probe 10: 60 kB of brackets was a traceback in `hub --room`)
        raise ValueError("nested too deeply to be a record") from None
    if not isinstance(data, dict):
        raise ValueError("not a record")
    return {key: entry for key, entry in data.items() if _entry(key, entry)}


def _entry(key, entry) -> bool:
    return (isinstance(entry, dict) and set(entry) == {"lab", "task", "ok", "time"}
            and isinstance(entry["lab"], str) and bool(_LAB.match(entry["lab"]))
            and type(entry["task"]) is int and 1 <= entry["task"] <= 99
            and type(entry["ok"]) is bool and type(entry["time"]) in (int, float)
            and key == f"{entry['lab']} q{entry['task']}")
