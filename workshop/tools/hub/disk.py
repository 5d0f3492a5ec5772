"""Each attendee's disk, capped (probe 19's D-fill: one cell's `fallocate -l 70G /tmp/x` would
have filled the machine's disk in a second, and then every attendee's save, the hub's database
and log, and the presenter's build failed until someone found the file).

- Their home is a file system of its own: an ext4 image of `--disk-cap` GiB, in the hub's
  state folder (homes/ws-NAME.ext4, root's), its space taken in full when it is made, and
  mounted on their home with no setuid and no devices. It is made with their user (auth.py),
  mounted again at each hub start (after a reboot), and unmounted and deleted by
  `--remove-attendees`. (Sparse images, probes 20 and 21: on a disk too small for them all, an
  attendee who filled their own home filled the disk, and another's saved file was lost.)
- Their server, and so their kernels and terminals, run in a mount namespace of its own
  (`seal`, from hub/become.py): every file system on a disk is read-only there but their home,
  and /tmp and /var/tmp are memory file systems of their own, whose pages count against their
  memory cap (the kernel charges a tmpfs page to the group of the process that wrote it).

Where the machine cannot (no loop device, or no mount namespaces: a container without
CAP_SYS_ADMIN), the hub's start says so in one line and runs without, as it does without
cgroups (`caps_line`)."""
from __future__ import annotations

import ctypes
import errno
import os
import subprocess
from pathlib import Path

DISK_CAP_GIB = 1.0
IMAGES = "homes"   # in the state folder, 0700
RESERVE_GIB = 1.0   # of the state's disk, kept for the hub's log and database
# a disk's file systems (made read-only in a server's namespace); memory ones stay as they are
ON_DISK = {"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "jfs", "reiserfs", "zfs", "overlay",
           "nilfs2", "bcachefs", "vfat", "exfat", "ntfs", "ntfs3", "fuseblk"}
PRIVATE = ("/tmp", "/var/tmp")
CLONE_NEWNS = 0x20000
MS = {"ro": 1, "nosuid": 2, "nodev": 4, "noexec": 8, "nosymfollow": 256, "noatime": 1024,
      "nodiratime": 2048, "relatime": 1 << 21, "strictatime": 1 << 24}
MS_REMOUNT, MS_BIND, MS_REC, MS_SLAVE = 32, 4096, 16384, 1 << 19


def image_of(state: Path, name: str) -> Path:
    return state / IMAGES / f"{name}.ext4"


def _run(*cmd: str) -> None:
    """`cmd`, or an OSError with its last line of error."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise OSError(errno.EIO, f"{cmd[0]}: {e}") from None
    if p.returncode:
        said = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        raise OSError(errno.EIO, f"{cmd[0]}: {said}")


def make_home(name: str, home: Path, image: Path, gib: float) -> None:
    """`name`'s home (made by useradd, with its skeleton) becomes a file system of `gib` GiB:
    the image made from it, then mounted on it (what useradd put there is hidden under the
    mount until the removal)."""
    import pwd
    import shutil
    user = pwd.getpwnam(name)
    image.parent.mkdir(mode=0o700, exist_ok=True)
    size = int(gib * 2**30)
    if shutil.disk_usage(image.parent).free - size < RESERVE_GIB * 2**30:
        raise OSError(errno.ENOSPC, f"no room for {name}'s home of {gib:g} GiB on the disk of "
                      f"{image.parent} (it keeps {RESERVE_GIB:g} GiB for the hub's log and "
                      "database)")
    fd = os.open(image, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.posix_fallocate(fd, 0, size)   # (its space taken now: never short of it later)
    except OSError:
        os.close(fd)
        image.unlink(missing_ok=True)
        raise
    os.close(fd)
    try:
        _run("mkfs.ext4", "-q", "-F", "-m", "0", "-J", "size=4",
             "-E", f"root_owner={user.pw_uid}:{user.pw_gid},nodiscard",   # (space kept)
             "-d", str(home), str(image))
        # (the folder under the mount too: a server sealed before it saw that folder)
        os.chmod(home, 0o700)
        mount_home(image, home)
    except BaseException:
        image.unlink(missing_ok=True)
        raise


def mount_home(image: Path, home: Path) -> None:
    _run("mount", "-o", "loop,nosuid,nodev", str(image), str(home))
    try:
        os.rmdir(home / "lost+found")   # (e2fsck's, root's: not the attendee's to see)
    except OSError:
        pass
    os.chmod(home, 0o700)


def check_room(state: Path, names: list[str], attendees: int, gib: float) -> None:
    """A KitError unless the room's homes, the presenter's too, fit on the state's disk beside
    the hub's log and database (each image takes its space in full as it is made: a home a
    name freed on the admin page adds one, and a login with no room for it fails alone)."""
    import math
    import shutil

    from .. import errors
    taken = 0
    for name in names:   # (what their images hold already is on the disk, and counted free)
        try:
            taken += min(image_of(state, name).stat().st_blocks * 512, int(gib * 2**30))
        except OSError:
            pass
    homes = attendees + 1   # (and the presenter's: probe 21)
    need = (homes * gib * 2**30 - taken) / 2**30
    free = shutil.disk_usage(state).free / 2**30
    if need > free - RESERVE_GIB:
        fits = math.floor((free - RESERVE_GIB + taken / 2**30) / homes * 4) / 4
        raise errors.KitError(
            f"{attendees} attendees' homes and the presenter's, {gib:g} GiB each (--disk-cap), "
            f"need {need:.1f} GiB more, "
            f"and the disk of {state} has {free:.1f} GiB free ({RESERVE_GIB:g} of it kept for "
            "the hub's log and database): "
            + (f"--disk-cap {fits:g}, " if fits >= 0.25 else "")
            + "fewer --attendees, or a larger disk")


def mount_homes(state: Path, names: list[str]) -> None:
    """Each of `names`' images mounted on their home where it is not (after a reboot); a
    KitError names one that cannot be (their server would write to the machine's disk)."""
    import pwd

    from .. import errors
    from ..owned import mount_points
    mounted = mount_points()
    for name in names:
        image = image_of(state, name)
        try:
            home = pwd.getpwnam(name).pw_dir
        except KeyError:
            continue
        if image.is_file() and home not in mounted:
            try:
                mount_home(image, Path(home))
            except OSError as e:
                raise errors.KitError(
                    f"could not mount {name}'s home ({image}): {e.strerror or e}; mend it "
                    "(e2fsck -p), or --remove-attendees") from None


def remove_images(state: Path) -> None:
    """What is left in the state's images (of users removed by hand) deleted, unless one is
    mounted still (then it stays, for the removal's search and the next removal)."""
    import shutil
    if shutil.which("losetup") is None:
        return
    for image in (state / IMAGES).glob("*.ext4") if (state / IMAGES).is_dir() else []:
        p = subprocess.run(["losetup", "--associated", str(image)], capture_output=True,
                           text=True)
        if p.returncode == 0 and not p.stdout.strip():
            image.unlink(missing_ok=True)


def unmount_home(home: str, image: Path) -> str:
    """The image's file system off `home`, and the image deleted: "", or, where a file of it
    is still open (a process of someone else's, a file descriptor in a socket's queue), what
    holds it, which keeps it, and only it, until it closes (it is detached)."""
    from ..owned import mount_points
    held = ""
    if image.is_file() and home in mount_points():
        try:
            _run("umount", home)
        except OSError:
            held = _holders(home)
            _run("umount", "--lazy", home)
    image.unlink(missing_ok=True)
    return held


def _holders(folder: str) -> str:
    """Which processes have a file of the file system at `folder` open (as their files, folder,
    root or a mapping: probe 21 held one by a mapping alone), as "process PID (USER)", or where
    else it may be held."""
    import pwd
    device, found = os.stat(folder).st_dev, []
    mapped = f" {os.major(device):02x}:{os.minor(device):02x} "   # (as /proc/PID/maps says)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            opened = [f"/proc/{pid}/fd/{fd}" for fd in os.listdir(f"/proc/{pid}/fd")]
            with open(f"/proc/{pid}/maps") as maps:
                maps_it = any(mapped in line for line in maps)
            if maps_it or device in {_device(p) for p in
                                     (f"/proc/{pid}/cwd", f"/proc/{pid}/root", *opened)}:
                uid = os.stat(f"/proc/{pid}").st_uid
                found.append(f"process {pid} ({_name_of(uid, pwd)})")
        except OSError:
            continue
    return ", ".join(found[:5]) or "a file descriptor no process shows (a socket's queue)"


def _device(path: str) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def _name_of(uid: int, pwd) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def can_cap(state: Path) -> str:
    """"" if homes of their own can be made here (a loop device, mkfs.ext4, mount), else why."""
    import shutil
    import tempfile
    for tool in ("mkfs.ext4", "mount", "umount"):
        if shutil.which(tool) is None:
            return f"this machine has no {tool}"
    folder = Path(tempfile.mkdtemp(prefix="disk-check-", dir=state))
    image = folder / "check.ext4"
    try:
        fd = os.open(image, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.ftruncate(fd, 16 * 2**20)
        os.close(fd)
        _run("mkfs.ext4", "-q", "-F", str(image))
        (folder / "on").mkdir()
        _run("mount", "-o", "loop,nosuid,nodev", str(image), str(folder / "on"))
        _run("umount", str(folder / "on"))
    except OSError as e:
        return f"{e.strerror or e}"
    finally:
        image.unlink(missing_ok=True)
        for leftover in (folder / "on", folder):
            try:
                leftover.rmdir()
            except OSError:
                pass
    return ""


def can_seal(python: Path, state: Path) -> str:
    """"" if a server can be given a mount namespace of its own here, else why: tried by
    `python` (the hub's) in a child, as become does, on folders of `state`."""
    import tempfile
    folder = Path(tempfile.mkdtemp(prefix="seal-check-", dir=state))
    try:
        (folder / "home").mkdir()
        (folder / "tmp").mkdir()
        p = subprocess.run([str(python), "-I", "-c",
                            "import sys; from workshop.tools.hub.disk import seal; "
                            "seal(sys.argv[1], 1 << 20, private=(sys.argv[2],))",
                            str(folder / "home"), str(folder / "tmp")],
                           capture_output=True, text=True, timeout=60)
    finally:
        for leftover in (folder / "home", folder / "tmp", folder):
            try:
                leftover.rmdir()
            except OSError:
                pass
    return "" if p.returncode == 0 else (p.stderr.strip().splitlines() or ["failed"])[-1]


def seal(home: str, tmp_bytes: int, private: tuple[str, ...] = PRIVATE) -> None:
    """This process (root, about to become the attendee) in a mount namespace of its own:
    every file system on a disk read-only but `home`, and a memory file system of `tmp_bytes`
    (their memory cap) on each of `private`, with no setuid and no devices."""
    libc = ctypes.CDLL(None, use_errno=True)

    def mount(source, target, kind, flags, data=None) -> None:
        if libc.mount(source, target.encode(), kind, flags, data) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"mount {target}: {os.strerror(e)}")
    if libc.unshare(CLONE_NEWNS) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"a mount namespace of its own: {os.strerror(e)}")
    # nothing of it reaches the machine's; the machine's later mounts (homes made since, or
    # unmounted) reach it where its root is shared (systemd's)
    mount(None, "/", None, MS_REC | MS_SLAVE)
    mounts = _mounts()
    if os.path.isdir(home) and home != "/" and home not in {m for m, _, _ in mounts}:
        mount(home.encode(), home, None, MS_BIND)   # (its own mount: kept writable)
    for where, kind, options in mounts:
        if kind in ON_DISK and where != home and not options & MS["ro"]:
            mount(None, where, None, MS_REMOUNT | MS_BIND | options | MS["ro"])
    for where in private:
        if os.path.isdir(where):
            mount(b"tmpfs", where, b"tmpfs", MS["nosuid"] | MS["nodev"],
                  f"size={tmp_bytes},mode=1777".encode())


def _mounts(table: str = "/proc/self/mountinfo") -> list[tuple[str, str, int]]:
    """Each mount as (its point, its kind, its own flags as MS_ bits)."""
    import re
    found = []
    for line in Path(table).read_text().splitlines():
        fields = line.split()
        kind = fields[fields.index("-") + 1]
        where = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        flags = 0
        for option in fields[5].split(","):
            flags |= MS.get(option, 0)
        found.append((where, kind, flags))
    return found
