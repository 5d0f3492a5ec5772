"""Folders only the presenter can open, for what present and a rehearsal keep: server logs,
settings, kernels' connection files, rehearsal logs and reports (SECURITY.md T2)."""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .. import errors, paths


def private_dir(folder: Path) -> Path:
    """`folder`, made if needed, readable by this user only; one line (a KitError) when it is
    a link or another user's. The folders above it in the kit are made first, from the top,
    each writable by no one else before the one below it is looked at: under umask 000, build/
    was made 0777 and another local user put a folder of their own at build/present, where
    present then wrote its log, settings and kernels' connection files (probe 4); and when the
    folder was checked before build/ was closed, a link swapped in between was used (probe 5)."""
    uid = os.geteuid()
    for above in [d for d in reversed(folder.parents)
                  if d.is_relative_to(paths.ROOT) and d != paths.ROOT]:
        try:
            above.mkdir(mode=0o755)
        except FileExistsError:
            pass
        st = above.lstat()   # (its own folder above was closed to others already)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            _refuse(above, "a link" if stat.S_ISLNK(st.st_mode) else "not a folder")
        if st.st_mode & 0o022:
            if st.st_uid != uid:
                _refuse(above, f"user {st.st_uid}'s and others can write in it")
            os.chmod(above, st.st_mode & ~0o022)
    if not folder.is_relative_to(paths.ROOT):   # (a folder of the tests', or given)
        folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    try:   # the folder itself, opened without following a link: what is checked is what is used
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as e:   # (O_DIRECTORY's ENOTDIR comes before O_NOFOLLOW's ELOOP)
        _refuse(folder, "a link" if e.errno == errno.ELOOP or folder.is_symlink()
                else "not a folder")
    try:
        st = os.fstat(fd)
        if st.st_uid != uid:
            _refuse(folder, f"user {st.st_uid}'s, not yours")
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
    return folder


def _refuse(folder: Path, what: str):
    raise errors.KitError(f"{paths.short(folder)} is {what}: present keeps its files in "
                          "folders only you can open; remove it and run again")
