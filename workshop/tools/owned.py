"""The files of removed users, wherever they could write (the hub's `--remove-attendees`).

`userdel --remove` deletes a user's home and mail, nothing else, and its man page leaves the
rest to the administrator. An attendee could also write in every folder anyone may write:
/tmp, /var/tmp, /dev/shm, /run/lock, and any such folder elsewhere (a debootstrap tree's
/tmp, say). Whatever they left there keeps their numeric owner, and the next user made gets
that number, and so those files: one workshop's attendee would own what an attendee of the
last one left. So every local, writable file system is searched for what the removed users'
numbers own, and that is removed (a folder with all it holds)."""
from __future__ import annotations

import shutil
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
    """The numbers no user has now: one given to a user made since (a second hub, hub-load's
    scratch room, a test beside) holds that user's files, which are not the removed one's."""
    import pwd
    free = set()
    for uid in uids:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            free.add(uid)
    return free


def remove_owned(uids: set[int], mounts: list[str] | None = None) -> list[Path]:
    """Removes what `uids` own on this machine's file systems (see the module); returns what
    was removed. Run it once the users' processes have ended (they could write more) and the
    users are removed: a number some user has (again) is left alone, before and after the
    search.

    Each path is reached folder by folder from the root without following a link, and judged
    and removed in the folder so opened: a folder on the way that another user swapped for a
    link after the search (theirs, to a folder of root's) is not followed, so what is removed is
    what was judged (probe 10: by name, root's file of the same name behind the link went)."""
    removed = []
    found = owned_by(_unclaimed(uids), mounts)
    free = _unclaimed(uids)
    for path in found:
        try:
            if _remove_at(path, free):
                removed.append(path)
        except OSError:   # (a folder on the way swapped or gone, a link: left where it is)
            continue
    return removed


def _remove_at(path: Path, free: set[int]) -> bool:
    """`path` removed if one of `free` owns it, in its folder opened from / with no link
    followed (ELOOP or ENOTDIR where one is on the way); whether it was."""
    import os
    import stat
    parts = path.parts
    if len(parts) < 2 or parts[0] != "/":
        return False
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open("/", flags)
    try:
        for part in parts[1:-1]:
            inner = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = inner
        name = parts[-1]
        st = os.lstat(name, dir_fd=fd)
        if st.st_uid not in free:
            return False
        if stat.S_ISDIR(st.st_mode):   # (rmtree by the folder's fd: no link inside followed)
            shutil.rmtree(name, dir_fd=fd)
        else:
            os.unlink(name, dir_fd=fd)
        return True
    finally:
        os.close(fd)
