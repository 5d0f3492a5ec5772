"""Folders only the presenter can open, for what present and a rehearsal keep: server logs,
settings, kernels' connection files, rehearsal logs and reports (SECURITY.md T2)."""
from __future__ import annotations

import os
from pathlib import Path

from .. import errors, paths


def private_dir(folder: Path) -> Path:
    """`folder`, made if needed, readable by this user only; one line (a KitError) when it is
    a link or another user's. The folders above it in the kit that this user owns are made
    writable by no one else: under umask 000, build/ was made 0777 and another local user put
    a folder of their own at build/present, where present then wrote its log, settings and
    kernels' connection files (probe 4); and a link at build/rehearsal had a folder it led to
    made 0700."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = folder.lstat()
    if not os.path.isdir(folder) or folder.is_symlink() or st.st_uid != os.geteuid():
        what = "a link" if folder.is_symlink() else f"user {st.st_uid}'s, not yours"
        raise errors.KitError(f"{paths.short(folder)} is {what}: present keeps its files in "
                              "folders only you can open; remove it and run again")
    os.chmod(folder, 0o700)
    for above in folder.parents:
        if above == paths.ROOT or not above.is_relative_to(paths.ROOT):
            break
        st = above.lstat()
        if st.st_uid == os.geteuid() and not above.is_symlink() and st.st_mode & 0o022:
            os.chmod(above, st.st_mode & ~0o022)
    return folder
