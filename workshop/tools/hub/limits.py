"""Per-attendee memory and CPU caps on one machine: a control group (cgroup) per attendee,
which their server and every kernel it starts are in, with a memory limit (past it the kernel
that allocates is ended, by the group's own out-of-memory killer, not another attendee's) and a
CPU quota (one attendee's busy loop gets its share of the cores, no more).

Which mechanism, and why: systemd's resource control (jupyterhub-systemdspawner) needs systemd
as PID 1, which a container or a VM like this kit's test machine does not have; the cgroup
filesystem itself is there wherever the Linux kernel has the controllers, with or without
systemd. cgroups v2 (`memory.max`, `cpu.max`) where its hierarchy has the memory and cpu
controllers, else cgroups v1's memory and cpu hierarchies (`memory.limit_in_bytes`,
`cpu.cfs_quota_us`: what this kit's test machine has). Not RLIMITs: they cap each process, not
an attendee (two kernels get twice the memory), and RLIMIT_AS counts the address space XLA
reserves, not the memory it uses. Without either the hub says so when it starts and runs
uncapped.

The hub, as root, makes each attendee's group before their server starts and moves the server's
process into it before it drops root (hub/spawner.py); the groups' files are root's, so an
attendee cannot move out or change their cap. The hub's groups are under one folder per hub
(its state folder's hash), removed when the hub stops.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

CGROUP = Path(os.environ.get("WORKSHOP_HUB_CGROUP_ROOT", "/sys/fs/cgroup"))
TOP = "jax-core-workshop-hub"
PERIOD_US = 100_000
# the processes and threads an attendee may have at once, where the kernel has the pids
# controller: uncapped, one attendee's cell made 3 000 threads and had room for 24 000, most of
# a machine's 32 768 PIDs, after which nothing (the hub, the presenter's shell) could fork
# (probe 10). A JAX kernel runs some 40 threads on 2 cores, a few hundred on a large machine
PIDS = 2048


def mechanism(root: Path = CGROUP) -> str:
    """"v2", "v1", or "" (no cgroup this user can cap memory and CPU with)."""
    try:
        if {"memory", "cpu"} <= set((root / "cgroup.controllers").read_text().split()):
            return "v2" if os.access(root / "cgroup.subtree_control", os.W_OK) else ""
    except OSError:
        pass
    v1 = [root / "memory" / "memory.limit_in_bytes", root / "cpu" / "cpu.cfs_quota_us"]
    if all(f.exists() for f in v1) and all(os.access(f.parent, os.W_OK) for f in v1):
        return "v1"
    return ""


def hub_group(state: Path) -> str:
    """The folder, under each hierarchy, of one hub's attendees' groups."""
    return f"{TOP}/{hashlib.sha256(str(state.resolve()).encode()).hexdigest()[:12]}"


def _folders(kind: str, group: str, root: Path) -> list[Path]:
    if kind == "v2":
        return [root / group]
    return [root / "memory" / group, root / "cpu" / group] + \
        ([root / "pids" / group] if _pids_v1(root) else [])


def _pids_v1(root: Path) -> bool:
    return (root / "pids" / "pids.max").exists() or os.access(root / "pids", os.W_OK)


def _pids_v2(root: Path) -> bool:
    try:
        return "pids" in (root / "cgroup.controllers").read_text().split()
    except OSError:
        return False


def make_group(kind: str, group: str, memory: int, cpus: float, attendees: int,
               root: Path = CGROUP) -> list[Path]:
    """An attendee's group (`group`: HUB_GROUP/NAME) capped at `memory` bytes (no swap) and
    `cpus` cores; the files a process writes its pid to, to join it. The hub's folders above
    weigh as much as `attendees` processes: the scheduler shares the cores between groups, so
    at the default weight a whole room would weigh as much as the hub's own process."""
    parents = group.split("/")[:-1]
    if kind == "v2":
        parts = group.split("/")
        for depth in range(len(parts)):   # each level hands memory and cpu to the next
            here = root.joinpath(*parts[:depth])
            (here / parts[depth]).mkdir(exist_ok=True)
            _write(here / "cgroup.subtree_control",
                   "+memory +cpu" + (" +pids" if _pids_v2(root) else ""))
        for depth in range(1, len(parents) + 1):
            _write(root.joinpath(*parents[:depth], "cpu.weight"), str(min(10000, 100 * attendees)))
        leaf = root / group
        _write(leaf / "memory.max", str(memory))
        if (leaf / "memory.swap.max").exists():
            _write(leaf / "memory.swap.max", "0")
        _write(leaf / "cpu.max", f"{round(cpus * PERIOD_US)} {PERIOD_US}")
        if _pids_v2(root):
            _write(leaf / "pids.max", str(PIDS))
        return [leaf / "cgroup.procs"]
    mem, cpu, *pids = _folders("v1", group, root)
    for folder in (mem, cpu, *pids):
        folder.mkdir(parents=True, exist_ok=True)
    for folder in pids:
        _write(folder / "pids.max", str(PIDS))
    for depth in range(1, len(parents) + 1):
        _write(root.joinpath("cpu", *parents[:depth], "cpu.shares"),
               str(min(262144, 1024 * attendees)))
    _write(mem / "memory.limit_in_bytes", str(memory))
    if (mem / "memory.memsw.limit_in_bytes").exists():   # memory and swap together
        _write(mem / "memory.memsw.limit_in_bytes", str(memory))
    _write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
    _write(cpu / "cpu.cfs_quota_us", str(round(cpus * PERIOD_US)))
    return [mem / "cgroup.procs", cpu / "cgroup.procs", *(f / "cgroup.procs" for f in pids)]


def group_to_join(kind: str, group: str, root: Path = CGROUP) -> list[Path]:
    """The files to join the attendee's group by, where their server made it: their
    materials' update runs in it (probe 21: a process of theirs traced the update, outside
    every cap, and ran 1.5 GiB past their 1 GiB). Where it is not, no process of theirs runs
    (each ends with their server) to trace the update with."""
    folders = _folders(kind, group, root) if kind else []
    return [f / "cgroup.procs" for f in folders] if folders and all(
        f.is_dir() for f in folders) else []


def joiner(procs: list[Path]):
    """A preexec_fn that puts the child, still root before its exec, into the group whose
    `procs` files these are (None when there are none)."""
    names = [str(p) for p in procs]

    def join() -> None:
        for f in names:
            fd = os.open(f, os.O_WRONLY)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)
    return join if names else None


def _write(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def remove_groups(kind: str, hub: str, root: Path = CGROUP) -> None:
    """The hub's groups, once their processes ended (a group still in use stays)."""
    for folder in _folders(kind, hub, root) if kind else []:
        if not folder.is_dir():
            continue
        for leaf in sorted(folder.iterdir()):
            if leaf.is_dir():
                _rmdir(leaf)
        _rmdir(folder)
        _rmdir(folder.parent)   # TOP, when no other hub runs


def _rmdir(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass
