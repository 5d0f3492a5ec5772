"""`python -m workshop hub`: the workshop on a JupyterHub on this machine, for attendees whose
laptop cannot run the kit's kernel. They open the hub in a browser and log in with a name and
the workshop's code; each gets a server of their own with their own copy of the decks
(attendee/decks/, as decks/) and exercises/ and the kit's kernel (eight fake CPU devices, the
pinned JAX).

How attendees are kept apart: each name is a system user (`ws-NAME`) whose home only it can
open, and its server and kernels run as that user (JupyterHub's LocalProcessSpawner), so an
attendee's code cannot read or write another's files, read another's kernel connection files
(their keys), or signal another's processes; each server asks the hub who is calling, so one
attendee's browser or token opens no other's server. The first login with a name claims it
(hub/auth.py). Only root can make users and start servers as them, so the hub runs as root,
as The Littlest JupyterHub does.

The attendees' users cannot run the presenter's .venv (its Python usually lives under a home
only its owner opens), so the hub has its own environment, made from the same lock, in
HUB_HOME (default /opt/jax-core-workshop-hub), readable by every user; the kit's package is
installed there (not linked), and the materials copied. It is made again when the lock, the
package or the materials change, beside the old one, which stays until the new one works.

The hub's state (its database, cookie secret, the two codes, its log) is in
/var/lib/jax-core-workshop-hub (STATE), readable by root only: nothing of root's goes into the
presenter's checkout. The attendees' code is made once and printed when the hub starts
(`--code-file` reads the presenter's own from a file only they can read); the presenter logs in
as `presenter` with the admin code in STATE/presenter-code. No code is ever on a command line or
in the environment. Idle servers are stopped after an hour (jupyterhub-idle-culler).

The course site (`scripts/build --site`, build/site/), when built, is copied into HUB_HOME/site
and served at /hub/course/ on the hub's address (hub/course.py says why so); when it is
not, the hub says so in one line and starts without it.
"""
from __future__ import annotations

import errno
import functools
import grp
import hashlib
import ipaddress
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .. import errors, owned, paths
from . import disk, limits, update
from .login import FULL, NAME, NAME_RULE, PREFIX, PRESENTER, TAKEN  # noqa: F401 (the login's)

HUB_HOME = Path(os.environ.get("WORKSHOP_HUB_HOME", "/opt/jax-core-workshop-hub"))
# root's, outside the checkout: a hub run with sudo leaves nothing of root's in the presenter's
# checkout (which their own builds write)
STATE = Path(os.environ.get("WORKSHOP_HUB_STATE", "/var/lib/jax-core-workshop-hub"))
IDLE_MINUTES = 60
NOBODY = 65534
CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"   # no 0/o, 1/l/i: read off a whiteboard
# (what the attendee's folder holds, what it is copied from): the attendee copies of the decks
# (no check cells, no speaker notes) and of the labs (not exercises/solutions/)
MATERIALS = [("decks", "attendee/decks/*.ipynb"), ("exercises", "exercises/*.ipynb")]
# the course site (`scripts/build --site`, builder/site.py's OUT), served to the room by the hub
# at /hub/course/ (hub/course.py) when it was built
SITE = Path(os.environ.get("WORKSHOP_HUB_SITE", paths.BUILD / "site"))
COURSE = "course"   # the site's path under the hub's own /hub/ (hub/course.py)

SITE_PATH = f"hub/{COURSE}/"
MAX_ATTENDEES = 500
# servers started at once before attendees queue: a start is a Python process importing the
# Jupyter server, mostly CPU; two per core keep each start short (hub-load: 4 at once on 2
# cores, 6 s each) and the room's page answering
STARTS_AT_ONCE = 2 * (os.cpu_count() or 1)
# each attendee's cap (hub/limits.py): a lab's kernel at its heaviest (J3, 0.48 GiB), a deck's
# kernel (0.26) and their Jupyter server (0.14) fit in 1 GiB; one core, so on a 2-core machine
# one attendee's busy loop leaves the other core to the room
MEMORY_CAP_GIB = 1.0
CPU_CAP = 1.0
# in the state folder while a hub started with --room-view runs (hub/room.py reads it)
ROOM_MARK = "room-view"


@dataclass(frozen=True)
class Room:
    """What the presenter asked for: how many attendees, starting how many servers at once,
    each capped at how much memory (GiB) and how many cores."""
    attendees: int = 30
    starts: int = STARTS_AT_ONCE
    memory_gib: float = MEMORY_CAP_GIB
    cpus: float = CPU_CAP
    cert: str = ""   # HTTPS: the certificate's and the key's files (PEM), both or neither
    key: str = ""
    view: bool = False   # --room-view: each check records pass/fail per task (labs/room.py)
    disk_gib: float = disk.DISK_CAP_GIB   # each home a file system of this size; 0: not capped

    @property
    def scheme(self) -> str:
        return "https" if self.cert else "http"

    def check(self) -> None:
        if not 1 <= self.attendees <= MAX_ATTENDEES:
            raise errors.KitError(f"--attendees {self.attendees}: from 1 to {MAX_ATTENDEES} "
                                  "(one machine; a larger room goes on Kubernetes, see the "
                                  "README)")
        if not 1 <= self.starts <= self.attendees + 1:
            raise errors.KitError(f"--starts-at-once {self.starts}: from 1 to the attendees "
                                  "(+1, the presenter)")
        if not 0.25 <= self.memory_gib <= 1024:
            raise errors.KitError(f"--memory-cap {self.memory_gib:g}: from 0.25 to 1024 GiB "
                                  "(an attendee's kernel alone needs 0.3)")
        if self.disk_gib != 0 and not 0.25 <= self.disk_gib <= 1024:
            raise errors.KitError(f"--disk-cap {self.disk_gib:g}: 0 (not capped) or from 0.25 "
                                  "to 1024 GiB")
        if not 0.1 <= self.cpus <= (os.cpu_count() or 1):
            raise errors.KitError(f"--cpu-cap {self.cpus:g}: from 0.1 to this machine's "
                                  f"{os.cpu_count()} cores")
        if self.cert or self.key:
            check_tls(self.cert, self.key)


ATTENDEE = "JAX workshop attendee"   # the comment of each attendee's system user (auth.py)


def record_attendee(log: Path, name: str) -> None:
    with open(log, "a", encoding="utf-8") as f:
        f.write(name + "\n")


def attendees_made(state: Path = STATE) -> list[str]:
    log = state / "attendees"
    return sorted(set(log.read_text().split())) if log.exists() else []


def others_attendees(state: Path = STATE) -> list[str]:
    """The attendees' system users on this machine that the hub on `state` did not make (a
    killed hub's, or one's with another state): an attendee who logs in with such a name
    would get an earlier attendee's home, so the login refuses it."""
    made = set(attendees_made(state))
    return sorted(u.pw_name for u in pwd.getpwall()
                  if u.pw_name.startswith(PREFIX) and u.pw_gecos == ATTENDEE
                  and u.pw_name != PREFIX + PRESENTER and u.pw_name not in made)


def others_line(state: Path = STATE) -> str:
    """The hub's lines at its start naming others_attendees, and the numbers a removal that
    left files holds (owned.hold_numbers), or "" if there are none."""
    lines, others, held = [], others_attendees(state), sorted(owned.held_numbers())
    if others:
        lines.append(f"hub: {len(others)} attendee(s) of another hub still on this machine "
                     f"({', '.join(others[:5])}{' …' if len(others) > 5 else ''}): those "
                     "names are refused at the login; --remove-attendees with that hub's "
                     "state, or userdel --remove NAME, removes them")
    if held:
        lines.append(f"hub: {len(held)} removed attendee(s)' files are still on this machine "
                     f"(their numbers held by ws-left-{held[0]}{' …' if len(held) > 1 else ''},"
                     " so no new user gets them): --remove-attendees, with any state, "
                     "removes them")
    return "\n".join(lines)


def runs_as_nobody(cmd: list[str], libdir: str = "") -> bool:
    env = {"PATH": "/usr/bin:/bin", **({"LD_LIBRARY_PATH": libdir} if libdir else {})}
    try:
        return subprocess.run(cmd, user=NOBODY, group=NOBODY, cwd="/", env=env,
                              preexec_fn=owned.keyring_of_its_own(),
                              stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=120).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _lock_hash() -> str:
    """What the attendees' packages are made from: the lock, for this Python."""
    return hashlib.sha256(paths.LOCK.read_bytes() + sys.version.encode()).hexdigest()[:16]


def _kit_hash() -> str:
    """What the kit installed there and the materials are made from."""
    h = hashlib.sha256()
    for p in sorted([paths.ROOT / "pyproject.toml", *(paths.ROOT / "workshop").rglob("*")]):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(paths.ROOT)).encode() + p.read_bytes())
    for folder, pattern in MATERIALS:
        for p in sorted(paths.ROOT.glob(pattern)):
            h.update(f"{folder}/{p.name}".encode() + p.read_bytes())
    return h.hexdigest()[:16]


def _stamp(venv: Path, what: str) -> str:
    f = venv / f"workshop-hub-{what}"
    return f.read_text() if f.exists() else ""


def _interpreter(home: Path) -> tuple[Path, str]:
    """A Python like this one that every user can run, and the folder of its libpython where
    the loader must be told it (else ""): this one where it is readable, else a copy of its
    installation in HUB_HOME (pyenv's lives under /root, and its python's RUNPATH names it)."""
    mine = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    probe = ["-c", "import venv, ssl, sqlite3"]
    if runs_as_nobody([str(mine), *probe]):
        return mine, ""
    copy = home / f"python-{'.'.join(map(str, sys.version_info[:3]))}"
    lib = str(copy / "lib")
    if not runs_as_nobody([str(copy / "bin" / mine.name), *probe], lib):
        shutil.rmtree(copy.with_suffix(".new"), ignore_errors=True)
        shutil.copytree(sys.base_prefix, copy.with_suffix(".new"), symlinks=True)
        _readable(copy.with_suffix(".new"))
        shutil.rmtree(copy, ignore_errors=True)
        copy.with_suffix(".new").rename(copy)
    return copy / "bin" / mine.name, lib


def _readable(root: Path) -> None:
    """Every user may read `root` and run what is runnable in it; only its owner writes."""
    for p in [root, *root.rglob("*")]:
        if p.is_symlink():
            continue
        mode = p.stat().st_mode
        extra = 0o555 if p.is_dir() or mode & stat.S_IXUSR else 0o444
        os.chmod(p, (mode | extra) & ~0o022)


def _run(*cmd) -> None:
    """`cmd` (uv), its temporary files in a folder of its own, removed after it: uv left a
    lock of its build backend's, 0666, in /tmp at each install of the kit (probe 12's L1)."""
    with tempfile.TemporaryDirectory(prefix="workshop-hub-") as scratch:
        try:
            subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True,
                           env=dict(os.environ, TMPDIR=scratch))
        except subprocess.CalledProcessError as e:
            tail = (e.stderr or e.stdout or "").strip().splitlines()[-1:] or ["no output"]
            raise errors.KitError(f"could not make the attendees' environment: "
                                  f"{tail[0]}") from None


def prepare(home: Path = HUB_HOME) -> Path:
    """The hub's environment in `home`; returns its Python. Its packages are made again, beside
    the old ones (which stay until the new work), when the lock changed; the kit and the
    materials, in place and in seconds, when they did."""
    venv, uv = home / "venv", Path(sys.prefix) / "bin" / "uv"
    python = venv / "bin" / "python"
    if _stamp(venv, "lock") != _lock_hash() or not runs_as_nobody(
            [str(python), "-c", "import jax, jupyterhub"], libdir(venv)):
        print(f"hub: making the attendees' environment in {home} from the lock (a minute or "
              "two)", file=sys.stderr, flush=True)
        home.mkdir(parents=True, exist_ok=True)
        os.chmod(home, 0o755)
        _replace(venv, _make_packages(home, uv))
    if _stamp(venv, "kit") != _kit_hash() or not runs_as_nobody(
            [str(python), "-c", "import workshop.labs"], libdir(venv)):
        _install_kit(uv, python)
        _copy_materials(venv)
        (venv / "workshop-hub-kit").write_text(_kit_hash())
        _readable(venv)
        if not runs_as_nobody([str(python), "-c", "import jax, workshop.labs, jupyterhub"],
                              libdir(venv)):
            raise errors.KitError(f"another user cannot run the kit installed in {venv}")
    # the attendees' servers read their Jupyter config here (config.py), where they cannot
    # write: Jupyter's one-time migration from IPython 3 would try to, at a server's start,
    # once ~/.ipython exists; its marker, which they may read but not write, tells it not to
    marker = venv / "etc" / "jupyter" / "migrated"
    if not marker.exists():
        marker.write_text("")
        marker.chmod(0o644)
    return python


def _make_packages(home: Path, uv: Path) -> Path:
    """A new environment from the lock, in home/venv.new: refused if another user cannot run it."""
    base, lib = _interpreter(home)
    new = home / "venv.new"
    shutil.rmtree(new, ignore_errors=True)
    try:
        _run(uv, "venv", "-q", "--relocatable", "--python", base, new)
        _run(uv, "pip", "sync", "-q", "--python", new / "bin" / "python",
             "--require-hashes", "--compile-bytecode", paths.LOCK)
    except errors.KitError:
        shutil.rmtree(new, ignore_errors=True)
        raise
    (new / "workshop-hub-libdir").write_text(lib)
    (new / "workshop-hub-lock").write_text(_lock_hash())
    _readable(new)
    if not runs_as_nobody([str(new / "bin" / "python"), "-c", "import jax, jupyterhub"],
                          lib):
        shutil.rmtree(new, ignore_errors=True)
        raise errors.KitError(f"another user cannot run the environment made in {home}: "
                              "is it on a filesystem mounted noexec, or under a private "
                              "folder?")
    return new


def _replace(venv: Path, new: Path) -> None:
    """The new environment in the old one's place; the old one is set aside until it is there."""
    old = venv.with_name("venv.old")
    shutil.rmtree(old, ignore_errors=True)
    if venv.exists():
        venv.rename(old)
    new.rename(venv)
    shutil.rmtree(old, ignore_errors=True)


def _install_kit(uv: Path, python: Path) -> None:
    """Installs the kit's package into the environment of `python`, again."""
    with tempfile.TemporaryDirectory() as kit:   # built from a copy: the build writes
        for name in ("pyproject.toml", "README.md", "LICENSE", "NOTICE"):   # beside it
            shutil.copyfile(paths.ROOT / name, Path(kit) / name)
        for name in ("LICENSES", "workshop"):
            shutil.copytree(paths.ROOT / name, Path(kit) / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        _run(uv, "pip", "install", "-q", "--python", python, "--no-deps", "--compile-bytecode",
             "--no-build-isolation", "--reinstall-package", "jax-core-workshop", kit)


def _copy_materials(venv: Path) -> None:
    """Copies the attendees' materials into venv/materials, in place of the old copy."""
    materials = venv / "materials.new"
    shutil.rmtree(materials, ignore_errors=True)
    for folder, pattern in MATERIALS:
        for p in sorted(paths.ROOT.glob(pattern)):
            (materials / folder).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, materials / folder / p.name)
    shutil.rmtree(venv / "materials", ignore_errors=True)
    materials.rename(venv / "materials")


def prepare_site(home: Path = HUB_HOME, site: Path = SITE) -> Path | None:
    """The built course site copied into home/site, which every user can read (the server
    serves it as files; the presenter's checkout may be under a private home),
    in place of the old copy; None when it has not been built (and no old copy is served)."""
    copy, site = home / "site", site.resolve()   # (a site named by a link: where it leads)
    if not (site / "index.html").is_file():
        shutil.rmtree(copy, ignore_errors=True)
        return None
    problem = site_problem(site)
    if problem:
        raise errors.KitError(problem)
    new = copy.with_name("site.new")
    shutil.rmtree(new, ignore_errors=True)
    _copy_files(site, new)
    _readable(new)
    _replace(copy, new)
    return copy


def _copy_files(src: Path, dst: Path) -> None:
    """The folders and plain files of `src` into `dst` (made), no link followed, whatever
    happens to `src` meanwhile: the hub copies as root, and a folder swapped for a link between
    a look and the copy led the copy out (probe 5 by umask 000, probe 7 by an ACL). os.fwalk
    opens each folder by a handle on its parent, checked to be the folder it listed; a file
    is opened without following a link and copied only when it is a plain file."""
    dst.mkdir(mode=0o700)
    for folder, _, files, fd in os.fwalk(src, follow_symlinks=False):
        to = dst / os.path.relpath(folder, src)
        to.mkdir(mode=0o700, exist_ok=True)
        for name in files:
            try:
                f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            except OSError:   # (a link, or gone meanwhile: not copied)
                continue
            if not stat.S_ISREG(os.fstat(f).st_mode):   # (a folder swapped in since the
                os.close(f)                            # listing, a FIFO: not copied, and
                continue                               # Python's open() refuses a folder)
            with open(f, "rb") as source, open(to / name, "xb") as out:
                shutil.copyfileobj(source, out)


def site_problem(site: Path) -> str:
    """Why the hub, as root, must not copy and serve `site` ("" when it may): another user
    could change it, a folder or file in it (or a folder above it, up to the kit's) writable
    by others, or owned by another user than the kit's (the site elsewhere: the hub's). Under
    umask 000 a site so built let another local user swap a folder for a link while root copied
    it (a root-only file came out readable by all) or write the page the hub served on its own
    origin (probe 5); a FIFO in it stopped the copy with a traceback; a site another user put
    in its place was judged by its own owner, theirs (probe 7)."""
    inside = site.is_relative_to(paths.ROOT)
    owner = paths.ROOT.lstat().st_uid if inside else os.geteuid()
    # the folders above it: in the kit, up to the kit's; elsewhere up to / (a sticky one, as
    # /tmp, lets no other user move what is not theirs)
    above = [d for d in site.parents if d.is_relative_to(paths.ROOT) or not inside]
    for p in [*above, site, *site.rglob("*")]:
        st = p.lstat()
        if stat.S_ISLNK(st.st_mode) and p != site:
            continue   # (not copied)
        if p in above and st.st_mode & stat.S_ISVTX and st.st_uid == 0:
            continue
        kind = "folder" if stat.S_ISDIR(st.st_mode) else "file"
        why = ("is not a file or a folder" if not (stat.S_ISDIR(st.st_mode) or
                                                  stat.S_ISREG(st.st_mode))
               else "is writable by other users" if _others_write(st, p)
               else f"is user {st.st_uid}'s" if st.st_uid not in (owner, 0) else "")
        if why:
            return (f"the course site cannot be served: {paths.short(p)} {why}, so another "
                    f"user could change what the hub serves as root (the {kind}s of "
                    f"{paths.short(site)} and above it must be yours alone): rebuild it "
                    f"(scripts/build --site) under umask 022, or `chmod -R go-w` it")
    return ""


def _others_write(st: os.stat_result, path: Path | None = None) -> bool:
    """Whether users other than the owner may write what `st` describes: all of them, or its
    group's, unless the group is the owner's own (a user private group, whose umask 002 makes
    a checkout's folders 0775: that is no other user) and no access ACL names other users or
    groups (with an ACL, the group bits are its mask, the most any named one gets: probe 7
    gave `nobody` write through `user:nobody:rwx` on a 0775 folder of root's own group)."""
    if st.st_mode & 0o002:
        return True
    return bool(st.st_mode & 0o020) and not (_own_group(st.st_gid, st.st_uid)
                                             and not _has_acl(path))


def _has_acl(path: Path | None) -> bool:
    """Whether `path` has an access ACL beyond its mode bits (a named user or group)."""
    if path is None:
        return True
    try:
        acl = os.getxattr(path, "system.posix_acl_access", follow_symlinks=False)
    except OSError as e:   # none, or a file system without ACLs
        return e.errno not in (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP)
    # a version (4 bytes), then 8-byte entries: a tag (2), permissions (2), an id (4); the
    # three of the mode bits are USER_OBJ 1, GROUP_OBJ 4 and OTHER 32; any other entry is
    # a named user (2) or group (8), or their mask (16)
    tags = {int.from_bytes(acl[i:i + 2], "little") for i in range(4, len(acl), 8)}
    return bool(tags - {1, 4, 32})


@functools.cache
def _own_group(gid: int, uid: int) -> bool:
    try:
        owner, group = pwd.getpwuid(uid).pw_name, grp.getgrgid(gid)
    except KeyError:
        return False
    return group.gr_name == owner and set(group.gr_mem) <= {owner} and not any(
        u.pw_gid == gid and u.pw_uid != uid for u in pwd.getpwall())


def site_line(served: Path | None, ip: str, port: int, scheme: str = "http") -> str:
    """What the hub's start says of the course site: its address, or how to build it."""
    if served is None:
        return (f"hub: no course site to serve ({paths.short(SITE)}/ is not built): "
                "scripts/build --site builds it, then start the hub again")
    return (f"hub: the course site, for the room without logging in: "
            f"{addresses(ip, port, scheme)[0]}{SITE_PATH}")


def libdir(venv: Path) -> str:
    f = venv / "workshop-hub-libdir"
    return f.read_text() if f.exists() else ""


def _code(state: Path, name: str, make) -> str:
    f = state / name
    if not f.exists():
        fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(make() + "\n")
    return f.read_text().strip()


def attendee_code() -> str:
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(12))
    return "-".join(raw[i:i + 4] for i in range(0, 12, 4))


def read_code_file(path: Path) -> str:
    try:
        st = path.stat()
        text = path.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise errors.KitError(f"--code-file {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise errors.KitError(f"--code-file {path}: not a text file") from None
    owners = {0, os.geteuid()}
    if os.environ.get("SUDO_UID", "").isdigit():   # the presenter who ran sudo
        owners.add(int(os.environ["SUDO_UID"]))
    if st.st_uid not in owners:
        raise errors.KitError(f"--code-file {path}: another user owns it: use a file of "
                              "yours (or root's)")
    if st.st_mode & 0o077:
        raise errors.KitError(f"--code-file {path}: other users can read it (mode "
                              f"{stat.S_IMODE(st.st_mode):o}): chmod 600 {path}")
    if len(text) < 8 or len(text.split()) != 1:
        raise errors.KitError(f"--code-file {path}: the code must be one word of 8 or more "
                              "characters")
    return text


def check_port(ip: str, port: int) -> None:
    if not 1 <= port <= 65535:
        raise errors.KitError(f"--port {port}: pick a port from 1 to 65535")
    try:
        v6 = bool(ip) and ipaddress.ip_address(ip.strip("[]")).version == 6
    except ValueError:   # (a name: the bind below says whether it is this machine's)
        v6 = False
    if v6:   # (it said "not an address of this machine" of ::1: probe 15)
        raise errors.KitError(f"--ip {ip}: an IPv6 address; the hub listens on IPv4 only (give "
                              "an IPv4 address of this machine, or leave --ip out)")
    with socket.socket() as probe:
        # as the proxy binds: a port held only by closed connections waiting out their time
        # (TIME_WAIT, a minute after a hub stopped) is free; one listened on is not
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((ip or "0.0.0.0", port))
        except PermissionError:
            raise errors.KitError(f"--port {port}: this user may not listen there") from None
        except OSError as e:
            if isinstance(e, socket.gaierror) or e.errno == errno.EADDRNOTAVAIL:
                raise errors.KitError(f"--ip {ip}: not an address of this machine (leave "
                                      "--ip out to listen on all of them)") from None
            raise errors.KitError(f"--port {port}: something already listens there (pick "
                                  "another)") from None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def addresses(ip: str, port: int, scheme: str = "http") -> list[str]:
    """The URLs attendees can type: this machine's addresses when the hub listens on all."""
    if ip not in ("", "0.0.0.0"):
        return [f"{scheme}://{ip}:{port}/"]
    found = []
    try:   # the address a packet out would leave from (nothing is sent)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            found.append(s.getsockname()[0])
    except OSError:
        pass
    found.append(socket.gethostname())
    return [f"{scheme}://{a}:{port}/" for a in dict.fromkeys(found)]


LOCK = "hub.lock"   # held (flock) by the `scripts/hub` that runs a hub on this state


def hold_state(state: Path):
    """The state's lock, taken for as long as the returned file stays open; a KitError when
    another hub holds it. A second hub on the same state killed the first's proxy, emptied
    its log and replaced its hub.pid, and then --remove-attendees, reading that pid, took a
    logged-in attendee's server and files mid-session (probe 3)."""
    import fcntl
    try:   # (a link or a FIFO there is not a lock: probe 4 got a traceback)
        fd = os.open(state / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK,
                     0o600)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(errno.EINVAL, "not a file")
    except OSError as e:
        raise errors.KitError(f"{paths.short(state / LOCK)} cannot be the hub's lock "
                              f"({e.strerror or e}): remove it") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise errors.KitError(f"a hub is running on {paths.short(state)} (its lock is held): "
                              "stop it (Ctrl-C where it runs) first") from None
    return os.fdopen(fd, "r+")


def remove_attendees(state: Path = STATE, quiet: bool = False) -> int:
    """Every attendee's system user this hub made, with their home and processes."""
    import psutil

    from ..processes import end_processes
    pid = (state / "hub.pid").read_text().strip() if (state / "hub.pid").exists() else ""
    try:
        running = pid.isdigit() and "jupyterhub" in " ".join(psutil.Process(int(pid)).cmdline())
    except psutil.Error:
        running = False
    if running:
        raise errors.KitError(f"the hub is running (pid {pid}): stop it (Ctrl-C where it runs) "
                              "first")
    held = hold_state(state) if state.is_dir() else None   # (and no hub starts meanwhile)
    try:
        return _remove_attendees(state, quiet, psutil, end_processes)
    finally:
        if held is not None:
            held.close()


def _remove_attendees(state: Path, quiet: bool, psutil, end_processes) -> int:
    names = attendees_made(state)
    # their numbers, kept in the state before any user goes: a removal that stopped after the
    # users went searches for them again when run again (probe 12: the second run found no
    # user, so no number, said "removed" and left every file the first had not reached)
    record = state / "removed-uids.json"
    try:
        uids = {int(u) for u in json.loads(record.read_text())}
    except (OSError, ValueError, TypeError):
        uids = set()
    for name in names:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:   # (removed by hand: whatever it left has no owner's name now)
            pass
    # and what any hub's removal left, its numbers held by placeholders (owned.hold_numbers):
    # searched again here too, so that a state removed by hand does not hold them for good
    uids |= owned.held_numbers()
    if uids and state.is_dir():
        record.write_text(json.dumps(sorted(uids)))
        os.chmod(record, 0o600)
    try:
        _remove_users_and_their_files(names, uids, psutil, end_processes, state)
    except BaseException:   # (whatever stopped it, a Ctrl-C too: the numbers its userdel
        owned.hold_numbers(uids)   # freed are held before it says so; probes 18 and 19)
        raise
    owned.release_numbers(uids)
    disk.remove_images(state)   # (and the images of users removed by hand)
    # and the hub's groups of their caps, if its stop left them (a group still used stays:
    # probe 15 found them after a hub stopped with processes of theirs still running)
    limits.remove_groups(limits.mechanism(), limits.hub_group(state))
    # the names are free again, and nothing of this workshop opens the next one: not its
    # code, nor a browser's claim (signed with the cookie secret)
    for made in ("attendees", "jupyterhub.sqlite", "cookie_secret", "generated-code",
                 "materials-given.json", "removed-uids.json"):
        (state / made).unlink(missing_ok=True)
    if not quiet:
        print(f"hub: removed {len(names)} attendee(s) and their files"
              + (f": {', '.join(names)}" if names else
                 f" (the state {state} holds none)"))
    return 0


def _remove_users_and_their_files(names: list[str], uids: set[int], psutil,
                                  end_processes, state: Path = STATE) -> None:
    """`names`' users removed, then every file of `uids` on the machine's file systems; a
    KitError for what could not be."""
    failed = [why for why in (_remove_user(name, psutil, end_processes, state)
                              for name in names) if why]
    # what of theirs any process holds open loses its setuid and setgid bits, a name or not
    # (their processes are ended: no one may set them again; see owned._unlink)
    owned.disarm_held(uids)
    if failed:
        raise errors.KitError(f"could not remove {', '.join(failed)}")
    # and their files wherever they could write (/tmp, /dev/shm, …): userdel took only the
    # homes, and the next user made gets a freed uid and with it what was left (owned.py)
    left: list[Path] = []
    owned.remove_owned(uids, left=left)
    owned.remove_ipc(uids)   # (shared memory and the like: no file, the same threat)
    if left:   # the state kept: run again, and the same numbers are searched for again;
        # meanwhile no user made on this machine gets one of them (probe 16's R-left)
        raise errors.KitError(
            f"removed the attendees' users, but {len(left)} of their files could not be "
            f"removed (the first: {paths.short(left[0])!r}): see to it, then run "
            "--remove-attendees again (it searches for their numbers again)")


def _remove_user(name: str, psutil, end_processes, state: Path = STATE) -> str:
    """`name`'s processes ended, their home removed (its file system first: hub/disk.py), and
    their user retired (owned.retire: its number never given again): "" if so, else why not
    (one clause)."""
    end_processes([p for p in psutil.process_iter(["username"])   # (userdel refuses a user
                   if p.info["username"] == name], grace=5)        # who still runs)
    end_every_process_of(name)
    try:
        held = disk.unmount_home(pwd.getpwnam(name).pw_dir, disk.image_of(state, name))
    except KeyError:
        held = ""
    except OSError as e:
        return f"{name} (their home's file system: {e.strerror or e})"
    if held:   # (probe 20's R-busy: said removed, and a local user still wrote there)
        print(f"hub: {name}'s home is still open in {held}: its image is deleted, and its "
              "space and what it holds go when that closes", file=sys.stderr)
    inside = _mounted_in_home(name)
    if inside:   # (userdel's removal of the home goes into it: root's files there went)
        return (f"{name} (a file system is mounted in their home, at {inside}: unmount it, "
                "then run --remove-attendees again)")
    try:
        home = pwd.getpwnam(name).pw_dir
    except KeyError:   # (removed by hand)
        return ""
    owned.disarm_setid_files(home)   # (a setuid file there, held open: see owned._unlink)
    try:
        owned.remove_home(home)
    except OSError as e:
        return f"{name} (their home {home}: {e.strerror or e})"
    why = owned.retire(name)   # (their number never given again: not userdel, probe 19)
    return f"{name} ({why})" if why else ""


def _mounted_in_home(name: str) -> str:
    """The first mount point inside `name`'s home, or "" (probe 15: userdel --remove went into
    root's bind mount there and removed its files)."""
    try:
        home = Path(pwd.getpwnam(name).pw_dir)
    except KeyError:
        return ""
    inside = sorted(m for m in owned.mount_points()
                    if Path(m) == home or home in Path(m).parents)
    return inside[0] if inside else ""


def end_every_process_of(name: str) -> None:
    """What is left of `name`'s processes ended (owned.end_processes_of)."""
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        return
    owned.end_processes_of(user.pw_uid, user.pw_gid)


def record_given(state: Path, materials: Path) -> dict[str, list[str]]:
    """Every version of each material the hub has given out (their hashes), with these: an
    attendee's file that is one of them is unedited (hub/update.py)."""
    f = state / "materials-given.json"
    given = json.loads(f.read_text()) if f.exists() else {}
    for rel in update.files(materials):
        h = update.digest(materials / rel)
        if h not in given.setdefault(rel, []):
            given[rel].append(h)
    f.write_text(json.dumps(given))
    os.chmod(f, 0o600)
    return given


def push_materials(state: Path = STATE, home: Path = HUB_HOME,
                   materials: Path | None = None) -> dict[str, dict]:
    """The kit's current materials (or `materials`, a folder every user can read) into every
    attendee's ~/workshop, merged as the attendee (hub/update.py); what each got."""
    venv = home / "venv"
    if materials is None:
        if _stamp(venv, "lock") != _lock_hash():
            raise errors.KitError("the lock changed since the hub's environment was made: "
                                  "stop the hub and start it again (which makes it anew)")
        prepare(home)   # the changed kit and materials, in place (the next servers' copy)
        materials = venv / "materials"
    given, got, missed = record_given(state, materials), {}, []
    known = set(update.files(materials))   # (what an update may say was edited)
    env = {"PATH": "/usr/bin:/bin", **({"LD_LIBRARY_PATH": libdir(venv)} if libdir(venv)
                                       else {})}
    # sealed as their server is (hub/disk.py): an update in the machine's own view, as them,
    # was a door for their sealed processes (/proc/PID/root of a process of their own), to
    # the machine's disk, for as long as they kept it open (probe 20's D-fill-2)
    python = str(venv / "bin" / "python")
    sealed = [] if disk.can_seal(Path(python), state) else ["--sealed", str(UPDATE_TMP)]
    for name in attendees_made(state):
        try:
            user = pwd.getpwnam(name)
        except KeyError:   # removed by hand
            continue
        # isolated (-I) and from /: from their home, `-m` put it first on the path, and a
        # workshop/ package (or a json.py) of theirs there ran in place of the kit's (probe 10)
        # (becoming them after the exec, in hub/become.py: Popen waits for an exec as root; a
        # child that became them first was stopped by a process of theirs before its exec,
        # and the push waited for good, probe 17)
        procs = limits.group_to_join(limits.mechanism(), f"{limits.hub_group(state)}/{name}")
        try:
            r = subprocess.run([python, "-I", "-m", "workshop.tools.hub.become", name, "/",
                                *sealed, "--", python, "-I", "-m", "workshop.tools.hub.update",
                                str(materials)], cwd="/",
                               env=dict(env, HOME=user.pw_dir), input=json.dumps(given),
                               capture_output=True, text=True, timeout=UPDATE_TIMEOUT,
                               preexec_fn=limits.joiner(procs))
            if r.returncode != 0:
                raise ValueError((r.stderr.strip().splitlines() or ["no output"])[-1])
            got[name] = _update_said(r.stdout, known)
        except subprocess.TimeoutExpired:   # (stopped by a process of theirs: probe 11)
            missed.append(f"{name} (in their home, the update did not end in "
                          f"{UPDATE_TIMEOUT} s)")
        except (ValueError, OSError) as e:   # theirs alone: the others are updated the same
            missed.append(f"{name} (in their home, the update said: {str(e)[:160]!r})")
    if missed:
        raise PushIncomplete(got, missed)
    return got


# seconds an attendee's update may take (it takes under one): one stopped by a process of the
# attendee's own held the push for 2 minutes, then ended it for everyone after them (probe 11)
UPDATE_TIMEOUT = 30
UPDATE_TMP = 64 * 2**20   # an update's own /tmp and /var/tmp (it writes only in their home)


def _update_said(out: str, known: set[str]) -> dict:
    """What an attendee's update printed, checked to be its own report: numbers, and edited
    files among the materials' `known` (it runs as the attendee, who may write in its place)."""
    said = json.loads(out)
    if not (isinstance(said, dict) and all(isinstance(said.get(k), int) for k in
                                           ("added", "replaced", "kept"))
            and all(isinstance(said.get(k), list)
                    and all(isinstance(e, str) and e in known for e in said[k])
                    for k in ("edited", "not_files"))):
        raise ValueError("not the update's report")
    return said


class PushIncomplete(errors.KitError):
    """Some attendees' materials were not updated; `got` says what the others got."""

    def __init__(self, got: dict[str, dict], missed: list[str]):
        super().__init__(f"the materials did not reach {len(missed)} attendee(s): "
                         + "; ".join(missed))
        self.got = got


def push_report(got: dict[str, dict]) -> str:
    total = {k: sum(g[k] for g in got.values()) for k in ("added", "replaced", "kept")}
    lines = [f"hub: materials pushed to {len(got)} attendee(s): {total['replaced']} file(s) "
             f"replaced, {total['added']} added, {total['kept']} edited kept"]
    lines += [f"hub: {name} edited {rel}: theirs kept, the new one beside it "
              f"({Path(rel).stem}{update.BESIDE}{Path(rel).suffix})"
              for name, g in got.items() for rel in g["edited"]]
    lines += [f"hub: {name}'s {rel} is no file of theirs the update writes beside (a link, a "
              "folder or a pipe, or its folder unusable): left as it is, the new one not given"
              for name, g in got.items() for rel in g["not_files"]]
    return "\n".join(lines)


def check_tls(cert: str, key: str) -> None:
    """A certificate and its key that go together, the key readable by root only."""
    import ssl
    if not (cert and key):
        raise errors.KitError("--ssl-cert and --ssl-key go together: give both")
    for flag, f in (("--ssl-cert", cert), ("--ssl-key", key)):
        if not os.path.isfile(f):
            raise errors.KitError(f"{flag} {f}: no such file")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (ssl.SSLError, ValueError) as e:
        raise errors.KitError(f"--ssl-cert {cert} with --ssl-key {key}: not a certificate "
                              f"and its key in PEM ({getattr(e, 'reason', '') or e})") from None
    mode = stat.S_IMODE(os.stat(key).st_mode)
    if mode & 0o077:
        raise errors.KitError(f"--ssl-key {key}: other users can read it (mode {mode:o}): "
                              f"chmod 600 {key}")


def fingerprint(cert: str) -> str:
    """The certificate's SHA-256 fingerprint, as browsers show it (for the first slide)."""
    import ssl
    der = ssl.PEM_cert_to_DER_cert(Path(cert).read_text())
    return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())


def check_machine() -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        raise errors.KitError("run it as root (sudo scripts/hub): each attendee is a system "
                              "user of their own, which only root can make and start "
                              "servers as")
    for tool in ("useradd", "userdel"):
        if shutil.which(tool) is None:
            raise errors.KitError(f"this machine has no {tool} (the hub makes a system user "
                                  "per attendee): install the passwd package")


class Hub:
    """JupyterHub as a child process; `stop()` always ends it, its proxy and its servers."""

    def __init__(self, python: Path, ip: str, port: int, room: Room, code: str,
                 state: Path = STATE, site: Path | None = None):
        self.state, self.port, self.ip, self.scheme = state, port, ip, room.scheme
        self.site = site   # the course site's copy it serves (prepare_site), or None
        # the attendees' cgroups (hub/limits.py): made by the hub, removed by stop()
        self.caps, self.cgroup = limits.mechanism(), limits.hub_group(state)
        # and their disk (hub/disk.py): "" where the machine can, else why not
        self.unsealed = disk.can_seal(python, state)
        self.uncapped = (disk.can_cap(state) if room.disk_gib
                         else "not asked for (--disk-cap 0)")
        if not self.uncapped:
            disk.mount_homes(state, attendees_made(state))
            disk.check_room(state, attendees_made(state), room.attendees, room.disk_gib)
        self.log = state / "hub.log"
        code_file = state / "attendee-code"
        code_file.unlink(missing_ok=True)
        fd = os.open(code_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(code + "\n")
        _code(state, "presenter-code", lambda: secrets.token_urlsafe(30))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
        env.update(WORKSHOP_HUB_STATE=str(state), WORKSHOP_HUB_IP=ip,
                   WORKSHOP_HUB_PORT=str(port), WORKSHOP_HUB_ATTENDEES=str(room.attendees),
                   WORKSHOP_HUB_STARTS_AT_ONCE=str(room.starts),
                   WORKSHOP_HUB_CAPS=self.caps, WORKSHOP_HUB_CGROUP=self.cgroup,
                   WORKSHOP_HUB_MEMORY_CAP=str(int(room.memory_gib * 2**30)),
                   WORKSHOP_HUB_CPU_CAP=str(room.cpus),
                   WORKSHOP_HUB_SEALED="" if self.unsealed else "1",
                   WORKSHOP_HUB_DISK_CAP="" if self.uncapped else str(room.disk_gib),
                   WORKSHOP_HUB_SSL_CERT=room.cert, WORKSHOP_HUB_SSL_KEY=room.key,
                   WORKSHOP_HUB_INTERNAL_PORTS=f"{free_port()},{free_port()}",
                   WORKSHOP_HUB_SITE_COPY=str(site or ""),
                   WORKSHOP_HUB_VENV=str(python.parent.parent),
                   WORKSHOP_HUB_IDLE_MINUTES=str(IDLE_MINUTES),
                   WORKSHOP_HUB_ROOM_VIEW="1" if room.view else "")
        (state / ROOM_MARK).unlink(missing_ok=True)
        if room.view:
            (state / ROOM_MARK).touch(mode=0o600)
        config = Path(__file__).with_name("config.py")   # the hub runs as root: it reads it
        self._log = open(self.log, "w")
        os.chmod(self.log, 0o600)
        self.proc = subprocess.Popen(
            [str(python), "-m", "jupyterhub", "-f", str(config)], cwd=state, env=env,
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)

    def wait_ready(self, timeout: float = 90) -> None:
        import ssl
        url = f"{self.scheme}://127.0.0.1:{self.port}/hub/health"
        if self.ip not in ("", "0.0.0.0"):
            url = f"{self.scheme}://{self.ip}:{self.port}/hub/health"
        # (our own hub, asked whether it answers: its certificate may name the room's address)
        context = ssl._create_unverified_context() if self.scheme == "https" else None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise errors.KitError(f"JupyterHub exited ({self.proc.returncode}): "
                                      f"{last_error(self.log)} (all of it: "
                                      f"{self.log})")
            try:
                with urllib.request.urlopen(url, timeout=5, context=context):
                    return
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.5)
        raise errors.KitError(f"JupyterHub did not answer within {timeout:.0f} s; see "
                              f"{self.log}")

    def stop(self) -> None:
        """The hub stops its servers and its proxy on SIGTERM; what it started and left (its
        idle culler outlives it by a few seconds) is ended too."""
        import psutil

        from ..processes import end_processes
        try:
            started = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.Error:
            started = []
        # and its proxy, a session of its own: a hub that failed to start (another local
        # user had bound its own port first) exited without stopping it, and it served that
        # user's page at the hub's address, as init's child (probe 5)
        started += [p for p in [its_proxy(self.state)] if p is not None and p not in started]
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        end_processes(started, grace=10)
        # and what an attendee started and detached from their server (`setsid -f`): it
        # outlived the server and the hub, in their group, with its memory (probe 14's M1-b)
        for name in attendees_made(self.state):
            end_every_process_of(name)
        limits.remove_groups(self.caps, self.cgroup)
        self._log.close()
        for made in ("attendee-code", ROOM_MARK):
            (self.state / made).unlink(missing_ok=True)
        if getattr(self, "held", None) is not None:   # the state's lock, last
            self.held.close()


def its_proxy(state: Path):
    """The proxy the hub on `state` started (JupyterHub keeps its pid in state/proxy.pid, as
    hub/config.py says), if it still runs there: a psutil.Process, or None."""
    import psutil
    try:
        pid = int((state / "proxy.pid").read_text().strip())   # (hub/config.py names it)
        p = psutil.Process(pid)
        if "workshop.tools.hub.proxy" in p.cmdline() and p.cwd() == str(state):
            return p
    except (OSError, ValueError, psutil.Error):
        pass
    return None


def caps_line(kind: str, room: Room) -> str:
    if not kind:
        return ("no per-attendee cap (this machine gives root no cgroup memory and cpu "
                "controllers: in a container, run the hub on its host)")
    return (f"each attendee capped at {room.memory_gib:g} GiB and {room.cpus:g} "
            f"core{'s' if room.cpus != 1 else ''} (cgroups {kind})")


def disk_line(hub: Hub, room: Room) -> str:
    """What caps each attendee's disk (hub/disk.py), or why nothing does."""
    said = []
    if hub.uncapped:
        said.append(f"homes not capped ({hub.uncapped})")
    else:
        said.append(f"each home a file system of {room.disk_gib:g} GiB")
    if hub.unsealed:
        said.append("/tmp and /var/tmp shared and not capped: the machine gives no mount "
                    f"namespace ({hub.unsealed})")
    else:
        said.append("/tmp and /var/tmp their own, in memory, under their memory cap; the "
                    "rest of the disk read-only to their servers")
    return "hub: " + "; ".join(said)


def last_error(log: Path) -> str:
    lines = [l for l in log.read_text(errors="replace").splitlines() if l.strip()]
    bad = [l for l in lines if " E " in l[:40] or "Error" in l] or lines or ["(no output)"]
    return bad[-1].strip()[-200:]


def start(ip: str, port: int, room: Room, code_file: Path | None,
          state: Path = STATE, home: Path = HUB_HOME, site: Path = SITE) -> tuple[Hub, str]:
    check_machine()
    room.check()
    check_port(ip, port)
    code = read_code_file(code_file) if code_file else None
    state.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(state, 0o700)
    held = hold_state(state)   # before anything of the state is touched; kept while it runs
    try:
        if (state / "removed-uids.json").exists():
            # a removal that left files: their numbers are free, and the next user made would
            # get one, and with it what was left (probe 14)
            raise errors.KitError(
                "the last --remove-attendees left files of the attendees it removed: run it "
                "again (it searches for their numbers) before a hub starts on this state")
        code = code or _code(state, "generated-code", attendee_code)
        python = prepare(home)
        record_given(state, python.parent.parent / "materials")   # what the servers copy in
        hub = Hub(python, ip, port, room, code, state, prepare_site(home, site))
    except BaseException:
        held.close()
        raise
    hub.held = held
    try:
        hub.wait_ready()
    except BaseException:
        hub.stop()
        raise
    return hub, code


def main(ip: str, port: int, room: Room, code_file: Path | None, remove: bool,
         push: bool = False) -> int:
    if remove:
        check_machine()
        return remove_attendees()
    if push:
        check_machine()
        try:
            print(push_report(push_materials()))
        except PushIncomplete as e:   # what reached the others, then whom it did not
            print(push_report(e.got))
            raise
        return 0
    from ..processes import end_on_hangup
    end_on_hangup()   # a kill or the terminal closed: stop every server, as Ctrl-C does
    hub, code = start(ip, port, room, code_file)
    try:
        print("hub: open " + "  or  ".join(addresses(ip, port, room.scheme))
              + (f"  (its certificate's SHA-256 fingerprint, for your first slide: "
                 f"{fingerprint(room.cert)})" if room.cert else ""))
        print(f"hub: attendees log in with a name of their choosing and the code  {code}")
        print(f"hub: you log in as '{PRESENTER}' with the code in "
              f"{STATE / 'presenter-code'} (the admin: free a name, see servers)")
        print(f"hub: up to {room.attendees} attendees, {room.starts} server"
              f"{'s' if room.starts > 1 else ''} starting at once (the rest queue); "
              f"{caps_line(hub.caps, room)}; idle servers stop after {IDLE_MINUTES} minutes; "
              "Ctrl-C stops the hub and every server")
        print(disk_line(hub, room))
        print(site_line(hub.site, ip, port, room.scheme), flush=True)
        if room.view:
            print("hub: the room view is on: each attendee's lab checks record pass or fail "
                  "per task (nothing of their answers); sudo scripts/hub --room shows them",
                  flush=True)
        others = others_line(hub.state)
        if others:
            print(others, flush=True)
        while hub.proc.poll() is None:
            time.sleep(1)
        raise errors.KitError(f"JupyterHub stopped ({hub.proc.returncode}): "
                              f"{last_error(hub.log)}")
    finally:
        hub.stop()
