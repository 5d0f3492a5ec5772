"""`python -I -m workshop.tools.hub.become NAME WHERE [--server] [--sealed BYTES] -- PROGRAM …`:
become the attendee NAME (their group, their groups, their user id), then run PROGRAM in WHERE
(`home`: their home), in a session keyring of its own and with no way to gain privileges
(owned.keyring_of_its_own). With --sealed (their server), first a mount namespace of its own:
the disk read-only but their home, and /tmp and /var/tmp of BYTES in memory (hub/disk.py).
With --server, what they broke in their home for their own server is mended or worked around
for that start, each with a line (their home's mode, ~/workshop, the runtime folder, the log).

Run by root as the program of a child: the hub's spawner starts each attendee's server through
it, and the materials' push each update. Whoever starts it waits only for the exec of this
program, as root, which no process of the attendee's may signal. From a change of ids to its
exec, any process of theirs may stop a child (SIGSTOP); when the change was made in the child
before its exec (Popen's `user=` or preexec_fn), the parent waited for that exec without end:
JupyterHub in its event loop, so the hub stopped answering everyone, and `--update-materials`
for good (probe 17). Stopped here, the attendee's start or update times out alone."""
from __future__ import annotations

import errno
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
    if "server" in options:
        _home_theirs_to_open(name, user)
    os.setgroups(groups)
    os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
    os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
    own()
    where = user.pw_dir if where == "home" else where
    try:
        os.chdir(where)
        if "server" in options:
            _workshop_folder(name, user.pw_dir)
            _server_files(name, user.pw_dir)
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


def _home_theirs_to_open(name: str, user) -> None:
    """Their home opened to them again (0700) where they closed it to themselves: a home of
    mode 000 was a server that never started (probe 20's N-home-5), and only root mends it."""
    import stat
    try:
        st = os.stat(user.pw_dir)
    except OSError:
        return
    if st.st_uid == user.pw_uid and stat.S_ISDIR(st.st_mode) and st.st_mode & 0o700 != 0o700:
        os.chmod(user.pw_dir, 0o700)
        print(f"become: {name}'s home was mode {stat.S_IMODE(st.st_mode):04o}: made 0700 again",
              file=sys.stderr, flush=True)


def _workshop_folder(name: str, home: str) -> None:
    """~/workshop, the server's folder, a folder: anything else there (a file they made) moved
    aside, kept, with a line. It was a server that never started (probe 20's N-home-5)."""
    import time
    folder = os.path.join(home, "workshop")
    if os.path.lexists(folder) and not os.path.isdir(folder):
        aside = f"{folder}.moved-{time.strftime('%Y%m%d-%H%M%S')}"
        try:
            os.rename(folder, aside)
        except OSError:
            return
        print(f"become: {name}'s ~/workshop was not a folder: moved to ~/{os.path.basename(aside)}",
              file=sys.stderr, flush=True)


# under this much free in their home, bytes or files, the server's files go to /tmp (a full
# home: probe 20; its files all used, probe 21)
HOME_FLOOR, FILES_FLOOR = 1 << 20, 64


def _server_files(name: str, home: str) -> None:
    """Where the server keeps its runtime files and writes its output (fds 1 and 2, opened
    here): Jupyter's runtime folder and ~/.jupyter-server.log, in their home, where they can
    make and write them; else, this time, a folder and a file of their own in /tmp (their own
    when sealed), and one line in the hub's log says why. Each was a server that never
    started, and no word of why: a file where ~/.local/share/jupyter/runtime goes, or ~/.local
    unreadable (probe 19's N-home-2: a 500, then "pending" for good); a full home (probe 20's
    N-home-3: the same); a FIFO at the log (N-home-4: the start waited 300 s on its open)."""
    import tempfile
    runtime = os.path.join(home, ".local", "share", "jupyter", "runtime")
    st = os.statvfs(home)
    whys, moved, fd = [], [], -1
    if st.f_bavail * st.f_frsize < HOME_FLOOR or (st.f_files and st.f_favail < FILES_FLOOR):
        whys.append(f"their home is full ({st.f_bavail * st.f_frsize} bytes and "
                    f"{st.f_favail} files free)")
        moved = ["runtime files", "log"]
    else:
        unusable = _unusable_folder(runtime, home)
        if unusable:
            whys.append(f"~/.local/share/jupyter/runtime: {unusable}")
            moved.append("runtime files")
        fd, unusable = _appended(os.path.join(home, ".jupyter-server.log"))
        if unusable:
            whys.append(f"~/.jupyter-server.log: {unusable}")
            moved.append("log")
    if "runtime files" in moved:
        os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="jupyter-runtime-")
    if fd < 0:
        fd, _ = tempfile.mkstemp(prefix="jupyter-server-", suffix=".log")
    if whys:
        print(f"become: {name}'s server: {'; '.join(whys)}: its {' and '.join(moved)} "
              f"{'goes' if moved == ['log'] else 'go'} to {tempfile.gettempdir()} this time",
              file=sys.stderr, flush=True)
    os.set_blocking(fd, True)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _unusable_folder(folder: str, home: str) -> str:
    """"" if `folder` is (or is made) a folder of their home they can write that holds only
    files and sockets, else why not: a FIFO there, at a name the server writes
    (jpserver-PID-open.html, for each PID), held its start (probe 21's N-home-8), a folder at
    such a name ended it (probe 22's N-home-9), and the runtime folder a link to a folder a
    second name of theirs wrote FIFOs into after this look held it (N-home-10)."""
    import stat
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not (os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK)):
            return "not a folder they can write"
        if not os.path.realpath(folder).startswith(os.path.realpath(home) + os.sep):
            return "not a folder of their home"
        with os.scandir(folder) as entries:
            for entry in entries:
                mode = entry.stat(follow_symlinks=False).st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
                    return f"{entry.name} there is not a file"
        return ""
    except OSError as e:
        return e.strerror or str(e)


def _appended(path: str) -> tuple[int, str]:
    """`path` opened to append, made if not there, and never a link, a FIFO or a device:
    (its fd, "") or (-1, why not)."""
    import stat
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except OSError as e:
        return -1, ("a link" if e.errno == errno.ELOOP else "a FIFO" if e.errno == errno.ENXIO
                    else e.strerror or str(e))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return -1, "not a file"
    return fd, ""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
