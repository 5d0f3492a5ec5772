"""Each attendee's disk, capped (hub/disk.py): their home a file system of its own, and their
server sealed in a mount namespace where the disk is read-only but that home, and /tmp and
/var/tmp are theirs, in memory. Probe 19's D-fill: one cell's `fallocate` put 3 and 5 GB into
the machine's /tmp and /var/tmp at once. The pieces, as root, without a hub (test_hub.py runs
them in one, through an attendee's kernel)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workshop.tools import errors, owned
from workshop.tools.hub import disk, local

as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="mounts and mount namespaces are root's")


def test_a_mounts_table_is_read_with_its_escapes_and_its_own_flags(tmp_path):
    table = tmp_path / "mountinfo"
    table.write_text(
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "30 27 0:40 / /a\\040b rw,nosuid,nodev,noexec,relatime shared:5 - ext4 /dev/x rw\n"
        "31 27 0:41 / /tmp ro,nosuid - tmpfs tmpfs rw,size=1k\n")
    assert disk._mounts(str(table)) == [
        ("/", "ext4", disk.MS["relatime"]),
        ("/a b", "ext4", disk.MS["nosuid"] | disk.MS["nodev"] | disk.MS["noexec"]
         | disk.MS["relatime"]),
        ("/tmp", "tmpfs", disk.MS["ro"] | disk.MS["nosuid"])]


def test_a_room_whose_homes_could_outgrow_the_disk_is_refused_in_one_line(tmp_path):
    # probes 20 and 21: on a disk too small for the room's homes, the presenter's uncounted,
    # one attendee who filled their own home filled it, and logins, the hub's database and
    # another attendee's saved work failed. Each image takes its space as it is made, and
    # what the images hold already counts as taken
    import shutil
    free = shutil.disk_usage(tmp_path).free / 2**30
    fits = int((free - disk.RESERVE_GIB) // 1) - 1   # (and the presenter's home)
    disk.check_room(tmp_path, [], fits, 1)
    with pytest.raises(errors.KitError, match=rf"^{fits + 1} attendees' homes and the "
                       r"presenter's, 1 GiB each \(--disk-cap\), need [0-9.]+ GiB more, and "
                       r"the disk of .* has [0-9.]+ GiB free \(1 of it kept for the hub's log "
                       r"and database\): --disk-cap 0\.[0-9]+, fewer --attendees, or a larger "
                       r"disk$"):
        disk.check_room(tmp_path, [], fits + 1, 1)
    image = disk.image_of(tmp_path, "ws-full")
    image.parent.mkdir()
    with open(image, "wb") as f:   # (a home made: on the disk already)
        os.posix_fallocate(f.fileno(), 0, 2**30)
    try:
        free = shutil.disk_usage(tmp_path).free / 2**30
        room = int((free - disk.RESERVE_GIB) // 1)
        disk.check_room(tmp_path, ["ws-full"], room, 1)   # (its GiB counted once)
        with pytest.raises(errors.KitError):
            disk.check_room(tmp_path, [], room, 1)
    finally:
        image.unlink()


@as_root
def test_a_home_takes_its_space_as_it_is_made_or_is_refused_in_one_line(tmp_path):
    home, image = tmp_path / "home", disk.image_of(tmp_path / "state", "ws-big")
    home.mkdir()
    (tmp_path / "state").mkdir()
    with pytest.raises(OSError, match=r"no room for nobody's home of 100000 GiB on the disk of "
                                      r".*state/homes \(it keeps 1 GiB for the hub's log and "
                                      r"database\)$"):
        disk.make_home("nobody", home, image, 100000)
    assert not image.exists() and str(home) not in owned.mount_points()


@pytest.mark.parametrize("gib,ok", [(0, True), (0.25, True), (2, True), (1024, True),
                                    (0.2, False), (-1, False), (2048, False)])
def test_the_disk_cap_is_none_or_a_quarter_gib_to_a_tib(gib, ok):
    room = local.Room(disk_gib=gib)
    if ok:
        room.check()
    else:
        with pytest.raises(errors.KitError, match=r"^--disk-cap .*: 0 \(not capped\) or from "
                                                  r"0\.25 to 1024 GiB$"):
            room.check()


def test_the_hubs_line_says_what_caps_the_disk_or_why_nothing_does(tmp_path):
    class Hub:
        uncapped = unsealed = ""
        state = tmp_path
    assert local.disk_line(Hub, local.Room(attendees=1, disk_gib=3)) == (
        "hub: each home a file system of 3 GiB; /tmp and /var/tmp their own, in memory, under "
        "their memory cap; the rest of the disk read-only to their servers")
    Hub.uncapped, Hub.unsealed = "no loop device", "Operation not permitted"
    assert local.disk_line(Hub, local.Room()) == (
        "hub: homes not capped (no loop device); /tmp and /var/tmp shared and not capped: the "
        "machine gives no mount namespace (Operation not permitted)")


SEALED = """
import os, subprocess, sys
from workshop.tools.hub.disk import seal
home, tmp, other = sys.argv[1:]
seal(home, 4 << 20, private=(tmp,))
for f in (home + "/x", tmp + "/x", other + "/x"):
    try:
        with open(f, "wb") as out:
            out.write(b"x" * (5 << 20))
        print(f, "written")
    except OSError as e:
        print(f, e.strerror)
"""


@as_root
def test_a_sealed_process_writes_its_home_and_its_own_small_tmp_and_nothing_else(tmp_path):
    home, tmp, other = (tmp_path / n for n in ("home", "tmp", "other"))
    for folder in (home, tmp, other):
        folder.mkdir()
    r = subprocess.run([sys.executable, "-I", "-c", SEALED, str(home), str(tmp), str(other)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"{home}/x written", f"{tmp}/x No space left on device",
                                     f"{other}/x Read-only file system"]
    # and nothing of it reached the machine's view: its tmpfs was its own
    assert (home / "x").stat().st_size == 5 << 20
    assert not (tmp / "x").exists() and not (other / "x").exists()
    assert str(tmp) not in owned.mount_points()


@as_root
def test_a_home_of_its_own_is_capped_mounted_and_gone_with_its_image(tmp_path):
    import pwd
    import shutil
    home, image = tmp_path / "home", tmp_path / "state" / disk.IMAGES / "ws-x.ext4"
    home.mkdir()
    (home / ".bashrc").write_text("# the skeleton\n")
    nobody = pwd.getpwnam("nobody")
    os.chown(home / ".bashrc", nobody.pw_uid, nobody.pw_gid)
    (tmp_path / "state").mkdir()
    disk.make_home("nobody", home, image, 0.25)
    try:
        assert str(home) in owned.mount_points()
        st = os.stat(home)
        assert (st.st_uid, st.st_mode & 0o777) == (nobody.pw_uid, 0o700)
        assert sorted(os.listdir(home)) == [".bashrc"]   # (no lost+found)
        assert (home / ".bashrc").read_text() == "# the skeleton\n"
        assert 0.2 * 2**30 < shutil.disk_usage(home).total <= 0.25 * 2**30
        assert image.stat().st_size == 2**30 // 4
        assert image.stat().st_blocks * 512 >= 2**30 // 4   # (its space taken, all of it)
        assert os.stat(image.parent).st_mode & 0o777 == 0o700
    finally:
        disk.unmount_home(str(home), image)
    assert str(home) not in owned.mount_points() and not image.exists()


@as_root
def test_a_home_still_held_open_is_detached_and_its_holder_named(tmp_path):
    # probe 20's R-busy: a local user held a folder of an attendee's home (sent to them by the
    # attendee); the removal said "removed", and the home stayed theirs to write
    home, image = tmp_path / "home", disk.image_of(tmp_path / "state", "ws-held")
    home.mkdir()
    (tmp_path / "state").mkdir()
    disk.make_home("nobody", home, image, 0.25)
    held = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert disk.unmount_home(str(home), image) == f"process {os.getpid()} (root)"
        assert str(home) not in owned.mount_points() and not image.exists()
    finally:
        os.close(held)
    assert disk.unmount_home(str(home), image) == ""
    # and one held by a mapping alone, no file open (probe 21): a child of ours, named
    image = disk.image_of(tmp_path / "state", "ws-mapped")
    disk.make_home("nobody", home, image, 0.25)
    (home / "f").write_bytes(b"x" * 4096)
    holder = subprocess.Popen([sys.executable, "-c", "import mmap, os, sys, time\n"
                               f"fd = os.open({str(home / 'f')!r}, os.O_RDWR)\n"
                               "m = mmap.mmap(fd, 4096)\nos.close(fd)\nprint('held', flush=True)\n"
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert disk.unmount_home(str(home), image) == f"process {holder.pid} (root)"
    finally:
        holder.kill()
        holder.wait()


@as_root
def test_a_removal_deletes_the_images_no_home_is_on_and_keeps_one_that_is(tmp_path):
    # (a user removed by hand leaves their image in the state: the next removal deletes it)
    import pwd
    state, home = tmp_path / "state", tmp_path / "home"
    (state / disk.IMAGES).mkdir(parents=True)
    home.mkdir()
    left = state / disk.IMAGES / "ws-gone.ext4"
    left.write_bytes(b"")
    kept = disk.image_of(state, "ws-on")
    disk.make_home("nobody", home, kept, 0.25)
    try:
        assert pwd.getpwnam("nobody")
        disk.remove_images(state)
        assert not left.exists() and kept.exists()
    finally:
        disk.unmount_home(str(home), kept)


@as_root
def test_a_home_that_cannot_be_mounted_again_stops_the_start_in_one_line(tmp_path,
                                                                          monkeypatch):
    import pwd
    image = disk.image_of(tmp_path, "ws-x")
    image.parent.mkdir()
    image.write_bytes(b"not a file system")
    monkeypatch.setattr(pwd, "getpwnam", lambda name: pwd.struct_passwd(
        ("ws-x", "x", 1, 1, "", str(tmp_path), "/bin/sh")))
    with pytest.raises(errors.KitError, match=r"^could not mount ws-x's home \(.*ws-x\.ext4\): "
                                              r"mount: .*; mend it \(e2fsck -p\), or "
                                              r"--remove-attendees$"):
        disk.mount_homes(tmp_path, ["ws-x"])


@as_root
def test_become_seals_a_server_or_refuses_in_one_line():
    r = subprocess.run([sys.executable, "-I", "-m", "workshop.tools.hub.become", "nobody",
                        "/", "--sealed", "1048576", "--", "sh", "-c",
                        "df --output=fstype,size /tmp | tail -1; touch /opt/x"],
                       capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["tmpfs", "1024"]
    assert "Read-only file system" in r.stderr and r.returncode == 1
    bad = subprocess.run([sys.executable, "-I", "-m", "workshop.tools.hub.become", "nobody",
                          "/", "--sealed", "--", "true"], capture_output=True, text=True)
    assert (bad.returncode, bad.stderr) == (2, "become: NAME WHERE [--server] [--sealed "
                                               "BYTES] -- PROGRAM ARGS…\n")


@as_root
def test_the_machine_here_can_cap_and_seal(tmp_path):
    # (this kit's test machine can: the hub's tests hold what a capped, sealed server does)
    assert disk.can_cap(tmp_path) == "" and disk.can_seal(Path(sys.executable), tmp_path) == ""
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("breaks,says", [
    (None, ""),
    ("folder", "jpserver-1-open.html there is not a file"),
    ("fifo", "jpserver-1-open.html there is not a file"),
    ("link", "not a folder of their home")])
def test_a_runtime_folder_that_could_hold_a_start_is_not_used(tmp_path, breaks, says):
    # probes 21 and 22 (N-home-8, 9, 10): a FIFO or a folder at jpserver-PID-open.html in the
    # runtime folder held or ended each start; so did a runtime folder that was a link to a
    # folder their second name wrote FIFOs into after this look
    from workshop.tools.hub import become
    home = tmp_path / "home"
    runtime = home / ".local" / "share" / "jupyter" / "runtime"
    elsewhere = tmp_path / "shared"
    elsewhere.mkdir()
    if breaks == "link":
        runtime.parent.mkdir(parents=True)
        runtime.symlink_to(elsewhere)
    else:
        runtime.mkdir(parents=True)
        (runtime / "jpserver-2.json").write_text("{}")
    if breaks == "folder":
        (runtime / "jpserver-1-open.html").mkdir()
    elif breaks == "fifo":
        os.mkfifo(runtime / "jpserver-1-open.html")
    assert become._unusable_folder(str(runtime), str(home)) == says
