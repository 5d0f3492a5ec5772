"""The hub's login on this machine: imported by hub/config.py inside JupyterHub.

The login itself (a name and the workshop's shared code, the first login claiming the name for
its browser, the room's cap, the messages) is hub/login.py's, the file the Kubernetes chart
mounts into its hub too. What this machine adds: each name is a system user of its own,
`ws-NAME`, with a home only that user can open: its server, kernels and files run and live as
that user, so one attendee's code cannot read, write or signal another's.
"""
from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

from traitlets import Unicode

from .. import owned
from . import disk
from .local import ATTENDEE, attendees_made, record_attendee
from .login import ClaimedNameAuthenticator


class WorkshopAuthenticator(ClaimedNameAuthenticator):
    attendee_log = Unicode(config=True, help="the file listing the system users made")

    def name_free(self, name):
        """Not a system user this hub did not make: one a killed hub made, or a hub with
        another state, holds an earlier attendee's home and files (and this hub would neither
        push to it nor remove it; the hub's start names those), and any other local user
        named ws-NAME is someone's account (probe 16: an attendee logged in as it and read
        its files). Nor, with no such user, a group of that name, which useradd (one group per
        user, named as it) refuses to make again (probe 17: a 500 and a traceback at the login,
        and the name held by a hub user with no system user), or a home folder of that name
        already there, which useradd takes as it is (probe 18: someone else's folder, then made
        0700 by the kit)."""
        import grp
        try:
            pwd.getpwnam(name)
        except KeyError:
            try:
                grp.getgrnam(name)
                return False
            except KeyError:
                return not os.path.lexists(os.path.join(home_base(), name))
        return name in attendees_made(Path(self.attendee_log).parent)

    def add_user(self, user):
        """A system user for each hub user, made once (and kept when the hub user is
        deleted: the attendee's files wait for the name's next login)."""
        make_system_user(user.name, self.attendee_log)
        return super().add_user(user)


def make_system_user(name: str, log: str) -> None:
    try:
        pwd.getpwnam(name)
    except KeyError:
        # (no subordinate ids: /etc/subuid's entries go by name, and those a retired attendee
        # left went to the next attendee of that name, with what the first made under them:
        # probe 20; the entries an older kit left for the name go too)
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--user-group",
                        "-K", "SUB_UID_COUNT=0", "-K", "SUB_GID_COUNT=0",
                        "--comment", ATTENDEE, name], check=True,
                       capture_output=True)
        owned.drop_subordinate_ids(name)
        record_attendee(Path(log), name)
        capped = os.environ.get("WORKSHOP_HUB_DISK_CAP")
        if capped:   # (a file system of its own: hub/disk.py)
            try:
                disk.make_home(name, Path(pwd.getpwnam(name).pw_dir),
                               disk.image_of(Path(log).parent, name), float(capped))
            except BaseException:   # (never a home without its cap: the user, just made,
                subprocess.run(["userdel", "--remove", name],   # has run nothing yet)
                               capture_output=True)
                raise
    home = Path(pwd.getpwnam(name).pw_dir)
    os.chmod(home, 0o700)   # useradd's HOME_MODE varies by distribution (0755 on older ones)


def home_base() -> str:
    """The folder useradd makes homes in (`useradd -D`'s HOME, /home by default)."""
    try:
        said = subprocess.run(["useradd", "-D"], capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "/home"
    return next((line.split("=", 1)[1].strip() for line in said.splitlines()
                 if line.startswith("HOME=")), "/home") or "/home"
