"""The one-machine hub's state folder is one hub's at a time (hub/local.py's lock): a second
hub on it, or `--remove-attendees` while a hub runs there, is refused in one line before either
touches it. Probe 3: a second hub on the same state killed the first's proxy, emptied its log
and replaced its hub.pid, after which --remove-attendees took a logged-in attendee's server and
files mid-session. No hub is started here (the lock is what decides); test_hub.py starts
real ones, as root."""
from __future__ import annotations

import pytest

from workshop.tools import errors
from workshop.tools.hub import local


def test_a_second_holder_of_the_state_is_refused_until_the_first_lets_go(tmp_path):
    first = local.hold_state(tmp_path)
    with pytest.raises(errors.KitError, match=r"^a hub is running on .*stop it"):
        local.hold_state(tmp_path)
    first.close()
    local.hold_state(tmp_path).close()


def test_remove_attendees_while_a_hub_holds_the_state_touches_nothing(tmp_path):
    (tmp_path / "attendees").write_text("ws-nobody-here\n")
    held = local.hold_state(tmp_path)
    try:
        with pytest.raises(errors.KitError, match="a hub is running"):
            local.remove_attendees(state=tmp_path, quiet=True)
        assert (tmp_path / "attendees").read_text() == "ws-nobody-here\n"
    finally:
        held.close()


def test_a_link_or_a_fifo_at_the_lock_is_one_line(tmp_path):
    # probe 4: a traceback
    import os
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / local.LOCK).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(errors.KitError, match="cannot be the hub's lock"):
        local.hold_state(tmp_path)
    (tmp_path / local.LOCK).unlink()
    os.mkfifo(tmp_path / local.LOCK)
    with pytest.raises(errors.KitError, match="cannot be the hub's lock"):
        local.hold_state(tmp_path)
