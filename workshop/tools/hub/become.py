"""`python -I -m workshop.tools.hub.become NAME WHERE -- PROGRAM ARGS…`: become the attendee
NAME (their group, their groups, their user id), then run PROGRAM in WHERE (`home`: their home),
in a session keyring of its own and with no way to gain privileges (owned.keyring_of_its_own).

Run by root as the program of a child: the hub's spawner starts each attendee's server through
it, and the materials' push each update. Whoever starts it waits only for the exec of this
program, as root, which no process of the attendee's may signal. From a change of ids to its
exec, any process of theirs may stop a child (SIGSTOP); when the change was made in the child
before its exec (Popen's `user=` or preexec_fn), the parent waited for that exec without end:
JupyterHub in its event loop, so the hub stopped answering everyone, and `--update-materials`
for good (probe 17). Stopped here, the attendee's start or update times out alone."""
from __future__ import annotations

import os
import pwd
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("become: NAME WHERE -- PROGRAM ARGS…", file=sys.stderr)
        return 2
    name, where, _, *program = argv
    from ..owned import keyring_of_its_own
    user = pwd.getpwnam(name)
    groups = os.getgrouplist(name, user.pw_gid)
    own = keyring_of_its_own()   # (loaded as root: after the change it only makes calls)
    os.setgroups(groups)
    os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
    os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
    own()
    where = user.pw_dir if where == "home" else where
    try:
        os.chdir(where)
        os.execvp(program[0], program)
    except OSError as e:   # (one line in the hub's log, and the start fails at once: a home
        # they made unreadable (chmod 000 ~) was a traceback, and their server stayed pending)
        print(f"become: {name} cannot run {program[0]} in {where}: {e.strerror or e}",
              file=sys.stderr)
        return 126
    return 127   # (not reached: execvp replaces this process)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
