"""`python -I -m workshop.tools.hub.become NAME WHERE [--server] [--sealed BYTES] -- PROGRAM …`:
become the attendee NAME (their group, their groups, their user id), then run PROGRAM in WHERE
(`home`: their home), in a session keyring of its own and with no way to gain privileges
(owned.keyring_of_its_own). With --sealed (their server), first a mount namespace of its own:
the disk read-only but their home, and /tmp and /var/tmp of BYTES in memory (hub/disk.py).
With --server, a Jupyter runtime folder they broke in their home is worked around.

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

USAGE = "become: NAME WHERE [--server] [--sealed BYTES] -- PROGRAM ARGS…"


def main(argv: list[str]) -> int:
    try:
        name, where, options, program = _parsed(argv)
    except ValueError:
        print(USAGE, file=sys.stderr)
        return 2
    from ..owned import keyring_of_its_own
    user = pwd.getpwnam(name)
    groups = os.getgrouplist(name, user.pw_gid)
    own = keyring_of_its_own()   # (loaded as root: after the change it only makes calls)
    if "sealed" in options:
        from .disk import seal
        try:
            seal(user.pw_dir, options["sealed"])
        except OSError as e:
            print(f"become: {name}'s server cannot be sealed: {e.strerror or e}",
                  file=sys.stderr)
            return 126
    os.setgroups(groups)
    os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
    os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
    own()
    where = user.pw_dir if where == "home" else where
    try:
        os.chdir(where)
        if "server" in options:
            _runtime_folder(name, user.pw_dir)
        os.execvp(program[0], program)
    except OSError as e:   # (one line in the hub's log, and the start fails at once: a home
        # they made unreadable (chmod 000 ~) was a traceback, and their server stayed pending)
        print(f"become: {name} cannot run {program[0]} in {where}: {e.strerror or e}",
              file=sys.stderr)
        return 126
    return 127   # (not reached: execvp replaces this process)


def _parsed(argv: list[str]) -> tuple[str, str, dict, list[str]]:
    """NAME, WHERE, the options ({"server": True, "sealed": BYTES}) and the program; a
    ValueError for anything else."""
    if len(argv) < 4 or "--" not in argv[2:]:
        raise ValueError(argv)
    cut = argv.index("--", 2)
    name, where, middle, program = argv[0], argv[1], argv[2:cut], argv[cut + 1:]
    options: dict = {}
    while middle:
        if middle[0] == "--server":
            options["server"], middle = True, middle[1:]
        elif middle[0] == "--sealed" and len(middle) > 1 and middle[1].isdigit():
            options["sealed"], middle = int(middle[1]), middle[2:]
        else:
            raise ValueError(middle)
    if not program:
        raise ValueError(argv)
    return name, where, options, program


def _runtime_folder(name: str, home: str) -> None:
    """Where the server keeps its runtime files: Jupyter's, in their home, where they can make
    and write it; else a folder of its own in /tmp (their own, when sealed) this time, and a
    line says why. An attendee who put a file where ~/.local/share/jupyter/runtime goes, or
    made ~/.local unreadable, got a 500 and a server pending for good (probe 19's N-home-2)."""
    import tempfile
    runtime = os.environ.get("JUPYTER_RUNTIME_DIR") or os.path.join(
        home, ".local", "share", "jupyter", "runtime")
    try:
        os.makedirs(runtime, mode=0o700, exist_ok=True)
        if os.path.isdir(runtime) and os.access(runtime, os.W_OK | os.X_OK):
            return
        why = "not a folder they can write"
    except OSError as e:
        why = e.strerror or str(e)
    os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="jupyter-runtime-")
    print(f"become: {name}'s {runtime.replace(home, '~', 1)}: {why}; their server's runtime "
          f"files go to {os.environ['JUPYTER_RUNTIME_DIR']} this time", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
