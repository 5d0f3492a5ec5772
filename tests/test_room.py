"""The presenter's view of the room (`scripts/hub --room`): what a check records in the
attendee's home (labs/room.py), only where the hub's presenter turned it on, and the table the
presenter reads (hub/room.py). No kernel, no hub: tests/test_hub.py runs it end to end."""
from __future__ import annotations

import json
import os
import stat
import types

import pytest

from workshop.labs import Task, Wrong, room
from workshop.tools.hub import local
from workshop.tools.hub import room as view

SECRET = "my-answer-42"   # what an attendee's answer holds: never in a record


def _checker(answer) -> str:
    if answer != SECRET:
        raise Wrong(f"{answer!r} is not it")
    return f"yes, {answer}"


TASK = Task("J1", 2, "Count the equations", _checker, ["a hint"])


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(room.ENV, raising=False)
    return tmp_path


def _record(home) -> dict:
    return json.loads((home / room.FILE).read_text())


@pytest.mark.parametrize("env", [None, "", "0"])
def test_a_check_records_nothing_unless_the_hub_turned_the_view_on(home, monkeypatch, env):
    if env is not None:
        monkeypatch.setenv(room.ENV, env)
    assert TASK.check(SECRET).ok and not TASK.check("no").ok
    assert list(home.iterdir()) == []


def test_each_check_records_its_tasks_latest_pass_or_fail_and_nothing_else(home, monkeypatch):
    monkeypatch.setenv(room.ENV, "1")
    assert not TASK.check("no").ok
    assert _record(home)["J1 q2"]["ok"] is False
    assert TASK.check(SECRET).ok
    room.record("L5", 1, False)
    got = _record(home)
    assert set(got) == {"J1 q2", "L5 q1"}
    assert {k: v for k, v in got["J1 q2"].items() if k != "time"} == \
        {"lab": "J1", "task": 2, "ok": True}
    assert abs(got["J1 q2"]["time"] - __import__("time").time()) < 60
    text = (home / room.FILE).read_text()
    assert SECRET not in text and "not it" not in text and "hint" not in text
    assert stat.S_IMODE((home / room.FILE).stat().st_mode) == 0o600
    assert [p.name for p in home.iterdir()] == [room.FILE]   # no temporary file left


def test_a_record_that_cannot_be_written_leaves_the_verdict_alone(home, monkeypatch):
    monkeypatch.setenv(room.ENV, "1")
    monkeypatch.setenv("HOME", str(home / "not-a-folder"))
    (home / "not-a-folder").write_text("a file where the home should be")
    verdict = TASK.check(SECRET)
    assert verdict.ok and verdict.message == f"yes, {SECRET}"
    assert sorted(p.name for p in home.iterdir()) == ["not-a-folder"]


def test_a_record_that_is_not_one_is_written_afresh(home, monkeypatch):
    monkeypatch.setenv(room.ENV, "1")
    (home / room.FILE).write_text("{not json")
    room.record("J1", 1, True)
    assert list(_record(home)) == ["J1 q1"]


def test_only_well_formed_entries_are_read():
    good = {"lab": "J1", "task": 1, "ok": True, "time": 5}
    text = json.dumps({"J1 q1": good,
                       "J1 q2": dict(good, task=2, ok="yes"),             # not a bool
                       "J1 q3": dict(good, task=3, answer=SECRET),        # more than it holds
                       "J1 q4": dict(good),                               # key and entry differ
                       "x q1": dict(good, lab="x")})
    assert room.parse(text) == {"J1 q1": good}
    for bad in ("[1, 2]", "nope", " " * (room.MOST + 1), "[" * 30_000 + "]" * 30_000):
        with pytest.raises(ValueError):
            room.parse(bad)


def test_the_presenter_reads_a_record_as_root_but_no_link_fifo_or_huge_file(tmp_path):
    entry = {"J1 q1": {"lab": "J1", "task": 1, "ok": True, "time": 5}}
    for name, make in [("plain", lambda f: f.write_text(json.dumps(entry))),
                       ("link", lambda f: f.symlink_to(tmp_path / "plain" / room.FILE)),
                       ("fifo", lambda f: os.mkfifo(f)),
                       ("huge", lambda f: f.write_text(json.dumps(entry) + " " * room.MOST))]:
        (tmp_path / name).mkdir()
        make(tmp_path / name / room.FILE)
    assert view.read_record(tmp_path / "plain") == entry
    for name in ("link", "fifo", "huge", "absent"):
        assert view.read_record(tmp_path / name) == {}, name


def _rec(**tasks) -> dict:
    return {k.replace("_", " "): {"lab": k[:2], "task": int(k[-1]), "ok": ok, "time": 5}
            for k, ok in tasks.items()}


def test_the_table_counts_each_tasks_passes_out_of_the_attendees():
    got = {"ada": _rec(J1_q1=True, J1_q2=True), "kim": _rec(J1_q1=False), "lee": {},
           "max": _rec(J9_q1=True)}   # a task the kit has not: counted, not a row
    lines = view.table(got).splitlines()
    assert lines[0].startswith("hub: the room's lab checks, 4 attendees")
    assert lines[-1] == "hub: 1 record entry names no task of the kit's, left out: 1 attendee"
    rows = {" ".join(line.split()[:2]): line for line in lines[1:-1]}
    assert list(rows) == [f"{lab} q{n}" for lab, n, _ in view.tasks()]
    assert len(view.tasks()) > 20
    assert rows["J1 q1"].split()[-4:] == ["1/4", "pass", "(2", "checked)"]
    assert "Predict the equation count" in rows["J1 q1"]
    assert rows["J1 q2"].split()[-4:] == ["1/4", "pass", "(1", "checked)"]
    assert rows["J2 q1"].split()[-4:] == ["0/4", "pass", "(0", "checked)"]
    named = view.table(got, names=True).splitlines()
    at = next(i for i, line in enumerate(named) if line.split()[:2] == ["J1", "q1"])
    assert named[at + 1].split() == ["pass:", "ada;", "not", "yet:", "kim"]
    assert SECRET not in view.table(got, names=True)


def test_one_attendees_made_up_tasks_do_not_bury_the_room():
    # probe 12's RV (low): one record of 780 well-formed entries for labs the kit has not
    # (A10 … Z39), and one whose lab ends in a line break ("J1\n"), made --room --names 1 587
    # lines, one row split in two. The view is the kit's tasks, each one line
    made_up = {f"{chr(65 + i % 26)}{10 + i // 26} q1": {"lab": f"{chr(65 + i % 26)}"
                                                        f"{10 + i // 26}", "task": 1,
                                                        "ok": True, "time": 5}
               for i in range(780)}
    made_up["J1\n q1"] = {"lab": "J1\n", "task": 1, "ok": True, "time": 5}
    got = {"ada": made_up, "kim": _rec(J1_q1=False)}
    for names in (False, True):
        lines = view.table(got, names=names).splitlines()
        rows = [line for line in lines[1:-1] if not line.startswith("           pass:")]
        assert [" ".join(r.split()[:2]) for r in rows] == \
            [f"{lab} q{n}" for lab, n, _ in view.tasks()]
        assert lines[-1] == ("hub: 781 record entries name no task of the kit's, left out: "
                             + ("ada" if names else "1 attendee"))
    assert view.table(got).splitlines()[1].split()[-4:] == ["0/2", "pass", "(1", "checked)"]


def test_the_room_is_the_attendees_the_hub_made_not_the_presenter(tmp_path, monkeypatch):
    (tmp_path / "attendees").write_text("ws-ada\nws-presenter\nws-gone\nws-kim\n")
    for name in ("ada", "kim", "presenter"):
        (tmp_path / name).mkdir()
        (tmp_path / name / room.FILE).write_text(json.dumps(_rec(J1_q1=name != "kim")))

    def getpwnam(user):
        if user == "ws-gone":   # removed by hand
            raise KeyError(user)
        return types.SimpleNamespace(pw_dir=str(tmp_path / user.removeprefix(local.PREFIX)))
    monkeypatch.setattr(view.pwd, "getpwnam", getpwnam)
    got = view.records(tmp_path)
    assert sorted(got) == ["ada", "kim"]
    assert got["ada"]["J1 q1"]["ok"] and not got["kim"]["J1 q1"]["ok"]
