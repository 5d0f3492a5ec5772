"""The attendees' servers: JupyterHub's LocalProcessSpawner (a process as the attendee's system
user), each in the attendee's capped cgroup (hub/limits.py) with its mem_limit and cpu_limit,
which LocalProcessSpawner itself does not enforce. Imported by hub/config.py inside JupyterHub,
which runs as root."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner

from . import limits
from .local import end_every_process_of


class CappedSpawner(LocalProcessSpawner):
    def make_preexec_fn(self, name):
        """In the child, still root: it joins the attendee's capped group (their server's
        kernels are born in it). It becomes the attendee after its exec, in `become` (start)."""
        kind = os.environ.get("WORKSHOP_HUB_CAPS", "")
        procs = []
        if kind:
            procs = limits.make_group(
                kind, f"{os.environ['WORKSHOP_HUB_CGROUP']}/{name}", int(self.mem_limit),
                float(self.cpu_limit), int(os.environ["WORKSHOP_HUB_ATTENDEES"]))
        return limits.joiner(procs) or (lambda: None)

    async def start(self):
        """Before the server starts: what outlived the attendee's last server, processes and
        shared memory, ended and removed, in a thread: the hub serves everyone meanwhile (in
        its event loop, 250 000 folders in /dev/shm stopped every login and start for 11 s,
        probe 15)."""
        import asyncio
        if os.geteuid() == 0:   # (the kit's hub runs as root; as stop())
            await asyncio.to_thread(_left_of_the_last_server, self.user.name)
        # The server's program becomes the attendee (hub/become.py): JupyterHub's Popen, in
        # its event loop, waits only for the exec of a program of root's. A child that became
        # them before its exec was stopped there by a process with their id, and the hub
        # stopped answering everyone (probe 17's H-freeze)
        # and, where the machine can, in a mount namespace of its own: the disk read-only but
        # their home, /tmp and /var/tmp their own in memory (hub/disk.py; probe 19's D-fill)
        cmd = self.cmd
        sealed = (["--sealed", str(int(self.mem_limit))]
                  if os.environ.get("WORKSHOP_HUB_SEALED") else [])
        self.cmd = [sys.executable, "-I", "-m", "workshop.tools.hub.become", self.user.name,
                    "home", "--server", *sealed, "--", *cmd]
        import time
        started = time.time()
        try:
            ip_port = await super().start()   # (its Popen comes before any await)
        finally:
            self.cmd = cmd
        await self._up_or_ended(ip_port, started)
        return ip_port

    async def _up_or_ended(self, ip_port, started: float) -> None:
        """Back once the server listens; an error, which the attendee's page shows, as soon as
        it ended instead. JupyterHub waited on its address for 300 s, and meanwhile answered
        its start with a 500 and its own InvalidStateError traceback, and "pending" (probe 20:
        a home they broke, `~/workshop` a file, a home of mode 000)."""
        import asyncio
        ip, port = ip_port
        end = asyncio.get_running_loop().time() + self.http_timeout
        while asyncio.get_running_loop().time() < end:
            code = self.proc.poll() if self.proc is not None else None
            if code is not None:
                # (an HTTPError: the message on their page, and no traceback in root's log)
                from tornado import web
                raise web.HTTPError(500, "%s", f"your server stopped as it started (exit "
                                    f"{code}); {_last_words(self.user.name, started)}")
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection(ip, port), 2)
            except (OSError, asyncio.TimeoutError):
                await asyncio.sleep(0.5)
                continue
            writer.close()
            return

    async def stop(self, now=False):
        """The server stopped (by the attendee, the presenter, the idle culler or the hub's
        stop), and then every process of the attendee's: one detached from a cell (`setsid
        -f`) outlived the server, with its memory and its processes charged to their caps
        (probe 14's M1-b)."""
        import asyncio
        await super().stop(now=now)
        if os.geteuid() == 0:   # (the kit's hub runs as root)
            await asyncio.to_thread(end_every_process_of, self.user.name)


def _last_words(name: str, since: float) -> str:
    """The last line of the attendee's server log (theirs: ~/.jupyter-server.log) if it was
    written since `since`, cut short and printable, or where to look."""
    import pwd
    try:
        home = pwd.getpwnam(name).pw_dir
        fd = os.open(os.path.join(home, ".jupyter-server.log"),
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            import stat
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_mtime < since:
                raise OSError("not this start's")
            os.lseek(fd, max(0, st.st_size - 4096), os.SEEK_SET)
            lines = os.read(fd, 4096).decode(errors="replace").strip().splitlines()
        finally:
            os.close(fd)
    except (KeyError, OSError):
        lines = []
    if lines:
        last = "".join(c if c.isprintable() else "?" for c in lines[-1][-200:])
        return f"its log (~/.jupyter-server.log) ends: {last}"
    return "the presenter sees why in the hub's log"


def _left_of_the_last_server(name: str) -> None:
    end_every_process_of(name)   # (none runs now but what outlived their last server)
    stale_shared_memory(name)


SHM = "/dev/shm"


def stale_shared_memory(name: str, shm: str = SHM, table: str = "/proc/sysvipc") -> list[str]:
    """What the attendee `name` left in shared memory, removed as their server starts (none
    of their processes runs then): a file in /dev/shm is memory their group is charged for
    until it goes. One of 1 GiB ended their server at the cap and kept them out of it for the
    rest of the workshop: each start was ended at once (probe 13). Their System V segments go
    too (the same charge). What went, as paths and "shm N"."""
    import pwd

    from .. import owned
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return []
    gone = []
    try:   # (theirs alone, by the listing's own look at each: 600 000 files of another
        # attendee's there, each opened from / in turn, held every start for 11 s: probe 15)
        with os.scandir(shm) as it:
            entries = [e.name for e in it if _owner(e) == uid]
    except OSError:
        entries = []
    for entry in entries:
        path = Path(shm) / entry
        try:
            if owned._remove_at(path, {uid}):
                gone.append(str(path))
        except OSError:
            continue
    return gone + owned._remove_sysv({uid}, table)


def _owner(entry: os.DirEntry) -> int | None:
    try:
        return entry.stat(follow_symlinks=False).st_uid
    except OSError:
        return None
