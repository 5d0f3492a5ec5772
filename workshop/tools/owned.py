"""The files of removed users, wherever they could write (the hub's `--remove-attendees`).

`userdel --remove` deletes a user's home and mail, nothing else, and its man page leaves the
rest to the administrator. An attendee could also write in every folder anyone may write:
/tmp, /var/tmp, /dev/shm, /run/lock, and any such folder elsewhere (a debootstrap tree's
/tmp, say). Whatever they left there keeps their numeric owner, and the next user made gets
that number, and so those files: one workshop's attendee would own what an attendee of the
last one left. So every local, writable file system is searched for what the removed users'
numbers own, and that is removed (a folder with all it holds). So is what the kernel keeps of
theirs outside files (`remove_ipc`): System V shared memory, semaphores and message queues,
POSIX message queues and their keyrings outlive their maker too, and the next user with the
number read them (probes 12 and 13)."""
from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

# file systems that hold files (not the kernel's views: /proc, /sys, devices, cgroups)
KINDS = {"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "jfs", "reiserfs", "zfs", "tmpfs",
         "overlay", "nilfs2", "bcachefs"}
VIEWS = ("/proc", "/sys")


def searched(mounts: str = "/proc/self/mounts") -> list[str]:
    """The mount points searched: local file systems of KINDS mounted writable (where no one
    can write, nothing of an attendee's can be), outside the kernel's views."""
    found = []
    for line in Path(mounts).read_text().splitlines():
        _, where, kind, options = line.split()[:4]
        where = where.replace("\\040", " ")
        if kind in KINDS and "rw" in options.split(",") and not any(
                where == v or where.startswith(v + "/") for v in VIEWS):
            found.append(where)
    return sorted(set(found))


def owned_by(uids: set[int], mounts: list[str] | None = None) -> list[Path]:
    """What `uids` own, outermost first (a folder of theirs stands for all it holds)."""
    if not uids:
        return []
    test = [a for u in sorted(uids) for a in ("-o", "-uid", str(u))][1:]
    found: list[Path] = []
    for mount in mounts if mounts is not None else searched():
        # -xdev: each file system once, from its own mount point; -prune: not into theirs
        p = subprocess.run(["find", mount, "-xdev", "(", *test, ")", "-prune", "-print0"],
                           capture_output=True, timeout=1800)
        found += [Path(f.decode(errors="surrogateescape"))
                  for f in p.stdout.split(b"\0") if f]
    return found


def _unclaimed(uids: set[int]) -> set[int]:
    """The numbers no user has now, or only a placeholder (`hold_numbers`): one given to a
    user made since (a second hub, hub-load's scratch room, a test beside) holds that user's
    files, which are not the removed one's."""
    import pwd
    free = set()
    for uid in uids:
        try:
            if pwd.getpwuid(uid).pw_gecos in (PLACEHOLDER, RETIRED):
                free.add(uid)
        except KeyError:
            free.add(uid)
    return free


# the comments of a user that only holds a removed attendee's number (no home, no login): while
# files of theirs are left (searched for again at the next removal), and for good
PLACEHOLDER = "JAX workshop removed attendee, number held while their files are left"
RETIRED = "JAX workshop removed attendee, number retired"


def retire(name: str) -> str:
    """The user `name` (its processes ended, its home removed) made a placeholder of its own
    number, `ws-left-UID` (no home, no login, locked), and its group renamed so: the number is
    never given to another user. userdel freed it, and a setuid file of theirs that a local
    user kept out of every search (a file descriptor in a socket's queue, no name, no process
    holding it) ran after the removal as the next attendee given the number (probe 19). After
    a reboot nothing of theirs can run: `userdel ws-left-UID` frees the number then. "" when
    done, else why not."""
    import grp
    import pwd
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        return ""
    new = f"ws-left-{user.pw_uid}"
    drop_subordinate_ids(name)   # (by name: usermod --login leaves them to the old name)
    r = subprocess.run(["usermod", "--login", new, "--comment", RETIRED, "--shell", _nologin(),
                        "--home", "/nonexistent", "--lock", name], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or [f"usermod: exit {r.returncode}"])[-1]
    try:
        if grp.getgrgid(user.pw_gid).gr_name == name:
            subprocess.run(["groupmod", "--new-name", new, name], capture_output=True)
    except KeyError:
        pass
    return ""


def drop_subordinate_ids(name: str) -> None:
    """Every range of subordinate ids /etc/subuid and /etc/subgid give the name `name` taken
    off (where the machine keeps them: else nothing to take)."""
    subprocess.run(["usermod", "--del-subuids", "1-4294967294", "--del-subgids",
                    "1-4294967294", name], capture_output=True)


def remove_home(home: str) -> None:
    """The folder `home` removed (its owner's processes ended), reached from / with no link
    followed, as `_remove_at` reaches what it removes; an OSError if it cannot be."""
    if not Path(home).is_absolute() or len(Path(home).parts) < 2:
        raise OSError(errno.EINVAL, f"{home}: not an absolute path")
    fd, name = _opened_parent(Path(home))
    try:
        try:
            os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            return
        _rmtree_at(fd, name)
    finally:
        os.close(fd)


def _opened_parent(path: Path) -> tuple[int, str]:
    """The folder that holds the absolute `path`, opened from / with no link followed (ELOOP
    or ENOTDIR where one is on the way), and `path`'s last name in it; the caller closes it."""
    parts = path.parts
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open("/", flags)
    try:
        for part in parts[1:-1]:
            inner = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def hold_numbers(uids: set[int]) -> list[str]:
    """Each of `uids` that no user has is given to a placeholder user, `ws-left-UID` (no home,
    no login, no group of its own): a removal that left files keeps their numbers taken on the
    whole machine, so no user made meanwhile gets one, and with it what was left, whichever
    hub or tool makes it (probe 16's R-left: the guard was the removal's state folder, and a hub
    on another state gave the number to its next attendee, who read the files). The names
    made; a number someone took meanwhile is theirs (`_unclaimed` leaves their files alone)."""
    import pwd
    made = []
    for uid in sorted(uids):
        try:
            user = pwd.getpwuid(uid)
            if user.pw_gecos == RETIRED:   # (retired: searched for again, as one held)
                subprocess.run(["usermod", "--comment", PLACEHOLDER, user.pw_name],
                               capture_output=True)
            continue
        except KeyError:
            pass
        name = f"ws-left-{uid}"
        r = subprocess.run(["useradd", "--no-create-home", "--home-dir", "/nonexistent",
                            "--shell", _nologin(), "--no-user-group", "--uid", str(uid),
                            "--comment", PLACEHOLDER, name], capture_output=True)
        if r.returncode == 0:
            made.append(name)
    return made


def held_numbers() -> set[int]:
    """The numbers placeholder users hold, on this machine (any hub's removal's)."""
    import pwd
    return {u.pw_uid for u in pwd.getpwall() if u.pw_gecos == PLACEHOLDER}


def release_numbers(uids: set[int]) -> None:
    """The placeholders of `uids` retired: their files are gone, and their numbers are not
    searched for again (nor given to anyone: see `retire`)."""
    import pwd
    for u in pwd.getpwall():
        if u.pw_uid in uids and u.pw_gecos == PLACEHOLDER:
            subprocess.run(["usermod", "--comment", RETIRED, u.pw_name], capture_output=True)


def _nologin() -> str:
    for shell in ("/usr/sbin/nologin", "/sbin/nologin", "/bin/false"):
        if os.path.exists(shell):
            return shell
    return "/bin/false"


def remove_owned(uids: set[int], mounts: list[str] | None = None,
                 left: list[Path] | None = None) -> list[Path]:
    """Removes what `uids` own on this machine's file systems (see the module); returns what
    was removed. Run it once the users' processes have ended (they could write more) and the
    users are removed: a number some user has (again) is left alone, before and after the
    search.

    Each path is reached folder by folder from the root without following a link, and judged
    and removed in the folder so opened: a folder on the way that another user swapped for a
    link after the search (theirs, to a folder of root's) is not followed, so what is removed is
    what was judged (probe 10: by name, root's file of the same name behind the link went).
    A path that could not be removed does not stop the others; it is added to `left`."""
    removed = []
    found = owned_by(_unclaimed(uids), mounts)
    free = _unclaimed(uids)
    for path in found:
        try:
            if _remove_at(path, free):
                removed.append(path)
        except OSError:   # (a folder on the way swapped or gone, a link: left where it is)
            if left is not None and os.path.lexists(path):
                left.append(path)
    return removed


# the kinds of System V IPC object, as /proc/sysvipc names them, and ipcrm's flag for each
IPC = {"shm": "-m", "sem": "-s", "msg": "-q"}


def end_processes_of(uid: int, gid: int) -> bool:
    """Every process of the number `uid` ended, those born meanwhile too: a kill of every
    process (-1) sent as that number, which the kernel does in one pass of its process table,
    in which none can fork (probe 10: a process that forked and let its parent exit escaped a
    list then a kill). At a removal, at an attendee's server's stop and start, and at the
    hub's stop: a process detached from a cell (`setsid -f`) outlived the server that started
    it, with its memory charged to the attendee's cap (probe 14). Whether none is left.

    The kill is sent by a child of this process that the attendee cannot signal or trace:
    its effective id is theirs, its real and saved ids a number no process has (a signal
    needs the sender's real or effective id to be the target's real or saved one). A helper
    run as the attendee (`sh -c "kill -KILL -1"`) was stopped by a process of theirs before it
    killed: the process outlived the server and the hub, a stop waited for good, and the
    hub's Ctrl-C ended on a traceback (probe 16)."""
    import time

    import psutil

    def left() -> list:   # (an ended process its parent has not yet waited for is gone)
        return [p for p in psutil.process_iter(["uids", "status"])
                if p.info["uids"] and uid in p.info["uids"]
                and p.info["status"] != psutil.STATUS_ZOMBIE]
    other = _nobodys_number()
    for _ in range(20):   # (the kill first: a process that keeps forking, each one living a
        _kill_every_process_as(uid, gid, other)   # moment, escapes a look)
        time.sleep(0.1)
        rest = left()
        if not rest:
            return True
        # and, from root, each process with their id that the kill as them cannot reach: one
        # with their effective id alone (another user's run of a setuid file of theirs, probe
        # 17), which no kill sent as them ends
        for p in rest:
            try:
                p.kill()
            except psutil.Error:
                pass
    return not left()


def _nobodys_number() -> int:
    """A user id that no process and no user has (the killer's real and saved id)."""
    import pwd

    import psutil
    held = {u for p in psutil.process_iter(["uids"]) if p.info["uids"] for u in p.info["uids"]}
    for candidate in range(2**31 - 2, 2**31 - 1000, -1):
        try:
            pwd.getpwuid(candidate)
        except KeyError:
            if candidate not in held:
                return candidate
    raise OSError(errno.EAGAIN, "no free user id for the kill")


def _kill_every_process_as(uid: int, gid: int, other: int) -> None:
    """kill(-1, SIGKILL) from a child whose effective id is `uid` and real and saved `other`:
    it reaches every process whose real or saved id is `uid` (or `other`, which none has), and
    no process of `uid`'s may signal it. It makes system calls only, and never runs a program."""
    import signal
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(other, gid, other)
            os.setresuid(other, uid, other)
            os.kill(-1, signal.SIGKILL)
            os._exit(0)
        except BaseException:
            os._exit(1)
    os.waitpid(pid, 0)


def keyring_of_its_own():
    """A function for a child's preexec_fn, called once it is the user it runs as: a session
    keyring of its own, new and empty, and no program it or its children run gains privileges
    (no_new_privs: a file's setuid bit is ignored). Each process the hub runs as an attendee
    (their server and kernels, their materials' update, the kill of their processes) had the
    keyring of whoever started the hub or the command (a login by su -, login or runuser -l,
    or a systemd service, makes one): each attendee read root's keys in it, another
    attendee's, and could clear it (probe 15, through their server; probe 16, through the
    update, which any process of theirs may trace). And an attendee with two names ran the
    setuid copy of a program one of them had made: a process with the other's effective id,
    and real and saved ids of its own, that no kill of the other's reached (probe 17). Where
    keyctl is refused (a container's seccomp) there are no keyrings."""
    import ctypes
    number = KEYCTL.get(os.uname().machine)
    libc = ctypes.CDLL(None, use_errno=True)   # (loaded here: the child only makes the calls)

    def join() -> None:
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "could not keep the process from gaining "
                          "privileges")
        if number is not None and libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) < 0 \
                and ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM):
            raise OSError(ctypes.get_errno(), "could not give the process a keyring of its own")
    return join


PR_SET_NO_NEW_PRIVS = 38   # (prctl's option, Linux 3.5 on)


def remove_ipc(uids: set[int], table: str = "/proc/sysvipc") -> list[str]:
    """What of `uids` (no user's now) the kernel keeps outside files, removed; what was, as
    "shm 5", "mqueue /name", "keyrings of 1002". Each outlives every process of its maker,
    and the next user given the number had it: a System V segment (probe 12), a POSIX
    message queue, a key in the user's keyring (probe 13)."""
    free = _unclaimed(uids)
    return _remove_sysv(free, table) + _remove_mqueues(free) + _clear_keyrings(free)


def _remove_sysv(free: set[int], table: str) -> list[str]:
    """System V shared memory, semaphores and message queues (ipcrm)."""
    removed = []
    for kind, flag in IPC.items():
        try:
            lines = Path(table, kind).read_text().splitlines()
        except OSError:   # (a kernel without System V IPC)
            continue
        if not lines:
            continue
        head = lines[0].split()
        for line in lines[1:]:
            row = dict(zip(head, line.split()))
            if {int(row.get("uid", -1)), int(row.get("cuid", -1))} & free:
                ident = row.get("shmid") or row.get("semid") or row.get("msqid")
                r = subprocess.run(["ipcrm", flag, ident], capture_output=True, timeout=30)
                if r.returncode == 0:
                    removed.append(f"{kind} {ident}")
    return removed


def _remove_mqueues(free: set[int]) -> list[str]:
    """POSIX message queues, seen through the mqueue file system (mounted here for a moment
    where it is not mounted: only root can, and does, remove)."""
    import tempfile
    if not free or os.geteuid() != 0:
        return []
    removed, where = [], tempfile.mkdtemp(prefix="workshop-mqueue-")
    try:
        if subprocess.run(["mount", "-t", "mqueue", "none", where], capture_output=True,
                          timeout=30).returncode != 0:
            return []
        try:
            for entry in os.scandir(where):
                if entry.stat(follow_symlinks=False).st_uid in free:
                    os.unlink(entry.path)
                    removed.append(f"mqueue /{entry.name}")
        finally:
            subprocess.run(["umount", where], capture_output=True, timeout=30)
    finally:
        os.rmdir(where)
    return removed


# keyctl's system call, by machine (glibc has no wrapper), and its words
KEYCTL = {"x86_64": 250, "aarch64": 219, "ppc64le": 283, "s390x": 280, "riscv64": 219}
KEYCTL_INVALIDATE, KEYCTL_GET_PERSISTENT, KEYCTL_JOIN_SESSION_KEYRING = 21, 22, 1
USER_KEYRING, USER_SESSION_KEYRING, PROCESS_KEYRING = -4, -5, -2


def _clear_keyrings(free: set[int]) -> list[str]:
    """Each number's user, user-session and persistent keyrings invalidated, by a child that
    takes the number (a keyring is the kernel's, per number, not a file): the next user given
    it found the last one's keys there (probe 13; the persistent one, kept 3 days after its
    last use, probe 14)."""
    import ctypes
    number = KEYCTL.get(os.uname().machine)
    if number is None or os.geteuid() != 0:
        return []
    removed, libc = [], ctypes.CDLL(None, use_errno=True)   # (loaded before the fork: the
    for uid in sorted(free):                                  # child only makes calls)
        pid = os.fork()
        if pid == 0:   # (the child: the number's own, then its keyrings gone)
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                for ring in (USER_KEYRING, USER_SESSION_KEYRING):
                    libc.syscall(number, KEYCTL_INVALIDATE, ring)
                persistent = libc.syscall(number, KEYCTL_GET_PERSISTENT, -1, PROCESS_KEYRING)
                if persistent > 0:   # (-1: a kernel without persistent keyrings)
                    libc.syscall(number, KEYCTL_INVALIDATE, persistent)
                os._exit(0)
            except BaseException:
                os._exit(1)
        if os.waitpid(pid, 0)[1] == 0:
            removed.append(f"keyrings of {uid}")
    return removed


def _remove_at(path: Path, free: set[int]) -> bool:
    """`path` removed if one of `free` owns it, in its folder opened from / with no link
    followed (ELOOP or ENOTDIR where one is on the way); whether it was."""
    import stat
    if len(path.parts) < 2 or path.parts[0] != "/":
        return False
    fd, name = _opened_parent(path)
    try:
        st = os.lstat(name, dir_fd=fd)
        if st.st_uid not in free:
            return False
        if stat.S_ISDIR(st.st_mode):
            _rmtree_at(fd, name)
        else:
            _unlink(name, fd)
        return True
    finally:
        os.close(fd)


def _unlink(name: str, folder: int) -> None:
    """The file `name` in the folder open as `folder` unlinked, its setuid and setgid bits
    taken off first: a process that holds it open keeps the file, and the kernel honours the
    bits on an exec of /proc/PID/fd/N. A local user who held an attendee's setuid copy of
    Python ran it after the removal as the next attendee given the number, and read their
    files (probe 18). The bits go from the file itself, which every name and open file of it
    shares."""
    import stat
    st = os.lstat(name, dir_fd=folder)
    if stat.S_ISREG(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
        disarm(os.open(name, TO_DISARM | os.O_NOFOLLOW, dir_fd=folder))
    os.unlink(name, dir_fd=folder)


# how a file is opened to take its bits off: never a FIFO's wait, nor left to a child
TO_DISARM = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def disarm(fd: int) -> None:
    """The open file `fd`'s setuid and setgid bits taken off (and `fd` closed)."""
    import stat
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
    finally:
        os.close(fd)


def disarm_held(uids: set[int]) -> None:
    """Every setuid or setgid file of `uids` that a process holds open, a name or not, loses
    those bits, through the process's /proc/PID/fd. Run once `uids`' own processes have ended
    (no one else may set the bits on their files): an attendee unlinked their setuid file while
    a local user held it open, and no search of the file systems finds a file with no name."""
    import stat
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{pid}/fd/{fd}"
            try:
                st = os.stat(path)
                if st.st_uid in uids and stat.S_ISREG(st.st_mode) and \
                        st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                    disarm(os.open(path, TO_DISARM))   # (a link of /proc's: followed)
            except OSError:
                continue


def disarm_setid_files(folder: str) -> None:
    """Every setuid or setgid file under `folder` (one file system, no link followed) loses
    those bits: before userdel removes an attendee's home, where a process of another's may
    hold one open (see _unlink)."""
    p = subprocess.run(["find", folder, "-xdev", "-type", "f", "-perm", "/6000", "-print0"],
                       capture_output=True, timeout=1800)
    for raw in p.stdout.split(b"\0"):
        if raw:
            try:
                disarm(os.open(raw, TO_DISARM | os.O_NOFOLLOW))
            except OSError:
                pass


# seconds one found folder may take to remove: past it, what is left of it is said left
REMOVE_LIMIT = 120


def _same_file_system(folder: int, parent: int, mounts: set[str]) -> None:
    """An OSError if `folder` is a mount point (another file system than its parent's, or one
    of `mounts`: a bind mount of the same file system has its device): what is mounted there
    is not the attendee's, and neither is its mode (root's bind mount inside an attendee's
    folder had its files removed and was made 0700: probe 15). The folder above it is left,
    and said."""
    if os.fstat(folder).st_dev != os.fstat(parent).st_dev or \
            os.readlink(f"/proc/self/fd/{folder}") in mounts:
        raise OSError(errno.EXDEV, "a file system is mounted inside it")


def mount_points(table: str = "/proc/self/mountinfo") -> set[str]:
    """Every mount point of this process's view, as paths."""
    import re
    try:
        lines = Path(table).read_text().splitlines()
    except OSError:
        return set()
    return {re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4])
            for line in lines if len(line.split()) > 4}


def _rmtree_at(parent: int, name: str, limit: float | None = None) -> None:
    """`rm -r` of the folder `name` in the folder open as `parent`, following no link, in
    bounded depth and open files: each folder inside is moved up into the top one before it is
    emptied, so the top one never holds more than a level. shutil.rmtree recursed once a level
    (Python 3.12): a folder 1 000 deep that an attendee made stopped the removal with a
    RecursionError, and all that was found after it stayed (probe 12's R1a).

    Each folder is made its owner's alone (0700) as it is opened, before it is listed: the
    attendee's processes are ended, so no one else can add to it. Another local user kept
    filling a folder the attendee had left open to all (0777), and the removal never ended
    (probe 13). One who already stands inside a folder can still write there until it is
    reached: past `limit` seconds the folder is left, and said (an OSError)."""
    import time
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    top = os.open(name, flags, dir_fd=parent)
    limit = REMOVE_LIMIT if limit is None else limit
    moved, end = 0, time.monotonic() + limit
    try:
        mounts = mount_points()
        _same_file_system(top, parent, mounts)
        os.fchmod(top, 0o700)
        while True:
            if time.monotonic() > end:
                raise OSError(errno.EBUSY, f"still being written to after {limit:.0f} s")
            with os.scandir(top) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            if not entries:
                try:
                    os.rmdir(name, dir_fd=parent)
                    return
                except OSError as e:   # (written to since it was listed: again, in time)
                    if e.errno != errno.ENOTEMPTY:
                        raise
                    continue
            for entry, is_dir in entries:
                if not is_dir:
                    _unlink(entry, top)
                    continue
                inner = os.open(entry, flags, dir_fd=top)
                try:
                    _same_file_system(inner, top, mounts)
                    os.fchmod(inner, 0o700)
                    with os.scandir(inner) as it:
                        below = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
                    for sub, sub_is_dir in below:
                        if not sub_is_dir:
                            _unlink(sub, inner)
                            continue
                        while True:   # up a level, under a name not taken in the top folder
                            moved += 1
                            try:
                                os.rename(sub, f".removed-{moved}", src_dir_fd=inner,
                                          dst_dir_fd=top)
                                break
                            except (FileExistsError, IsADirectoryError, NotADirectoryError):
                                continue
                            except OSError as e:
                                if e.errno != errno.ENOTEMPTY:
                                    raise
                finally:
                    os.close(inner)
                try:
                    os.rmdir(entry, dir_fd=top)
                except OSError as e:   # written to since it was listed: listed again, until
                    if e.errno != errno.ENOTEMPTY:   # the limit (it gave up in 3 s: probe 14)
                        raise
    finally:
        os.close(top)
