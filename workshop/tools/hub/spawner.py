"""The attendees' servers: JupyterHub's LocalProcessSpawner (a process as the attendee's system
user), each in the attendee's capped cgroup (hub/limits.py) with its mem_limit and cpu_limit,
which LocalProcessSpawner itself does not enforce. Imported by hub/config.py inside JupyterHub,
which runs as root."""
from __future__ import annotations

import os

from jupyterhub.spawner import LocalProcessSpawner

from . import limits


class CappedSpawner(LocalProcessSpawner):
    def make_preexec_fn(self, name):
        drop = super().make_preexec_fn(name)   # the attendee's uid, gid, home
        kind = os.environ.get("WORKSHOP_HUB_CAPS", "")
        if not kind:
            return drop
        procs = [str(p) for p in limits.make_group(
            kind, f"{os.environ['WORKSHOP_HUB_CGROUP']}/{name}", int(self.mem_limit),
            float(self.cpu_limit), int(os.environ["WORKSHOP_HUB_ATTENDEES"]))]

        def preexec():
            # in the child, still root: join the group, then become the attendee (whose
            # kernels, started by this server, are born in it)
            for f in procs:
                fd = os.open(f, os.O_WRONLY)
                try:
                    os.write(fd, str(os.getpid()).encode())
                finally:
                    os.close(fd)
            drop()
        return preexec
