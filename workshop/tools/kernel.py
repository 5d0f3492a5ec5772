"""A fresh kernel of this Python, on IPC sockets in a private folder (nothing on TCP)."""
from __future__ import annotations

import contextlib
import os
import tempfile


@contextlib.contextmanager
def fresh_kernel_manager(asynchronous: bool = False, kernel_name: str = "python3",
                         gracefully: bool = False):
    """A KernelManager (not started) whose kernel is always shut down afterwards; by default
    a kernel of this Python, or any installed kernel spec by name. gracefully: asked to shut
    down first (its atexit handlers run, as when a server stops it), killed after 3 s.

    asynchronous: an AsyncKernelManager, for nbclient. With a blocking manager nbclient's
    event loop is frozen while it waits for a reply, so its cell timeout never fires and a dead
    kernel is never noticed (a 140 s cell under a 120 s timeout came back "ok").
    """
    from jupyter_client.manager import AsyncKernelManager, KernelManager
    from jupyter_core.utils import run_sync
    cls = _starting_without_ctrl_c(AsyncKernelManager if asynchronous else KernelManager)
    with tempfile.TemporaryDirectory(prefix="workshop-kernel-", dir=_socket_base()) as sockets:
        km = cls(kernel_name=kernel_name, transport="ipc", ip=f"{sockets}/ipc")
        try:
            yield km
        finally:
            if km.has_kernel:
                km.shutdown_wait_time = 3.0
                stop = run_sync(km.shutdown_kernel) if asynchronous else km.shutdown_kernel
                stop(now=not gracefully)


def _starting_without_ctrl_c(cls):
    """`cls`, whose kernel starts with SIGINT ignored (as a shell's `trap '' INT` leaves it
    across exec), as ipykernel sets it itself once started (`init_signal`); it takes SIGINT,
    its interrupt, only while it runs a request. A shutdown interrupts the kernel first
    (jupyter_client): a Ctrl-C as a build's kernel started reached it in its own imports, and
    it printed Python's KeyboardInterrupt traceback under the build's one line (CI's
    rehearsal). Any kernel spec's command, through /bin/sh's exec: the same process."""
    class Manager(cls):
        def format_kernel_cmd(self, extra_arguments=None):
            return ["/bin/sh", "-c", "trap '' INT; exec \"$@\"", "sh",
                    *super().format_kernel_cmd(extra_arguments)]
    Manager.__name__ = Manager.__qualname__ = cls.__name__
    return Manager


# a Unix socket's path holds 107 bytes at most (Linux; 103 on macOS): the kernel's five are
# <folder>/workshop-kernel-XXXXXXXX/ipc-N
_SOCKET_PATH_MAX = 100


def _socket_base() -> str | None:
    """Where the kernel's socket folder goes: the temporary folder, unless its path is too long
    for a socket's (a TMPDIR deep in a test's or a build's folder: zmq said "File name too
    long"), then the first short one this user may write in."""
    base = tempfile.gettempdir()
    if len(os.path.join(base, "workshop-kernel-xxxxxxxx", "ipc-99")) <= _SOCKET_PATH_MAX:
        return None
    for short in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(short) and os.access(short, os.W_OK | os.X_OK):
            return short
    return None


def run_code(code: str, timeout: float = 60) -> str:
    """Run `code` in a fresh kernel; return what it printed, and any error's traceback."""
    with fresh_kernel_manager() as km:
        km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=timeout)
            out = []

            def hook(msg):
                c = msg["content"]
                if msg["msg_type"] == "stream":
                    out.append(c["text"])
                elif msg["msg_type"] == "error":
                    out.append("\n".join(c["traceback"]))
            kc.execute_interactive(code, timeout=timeout, output_hook=hook)
            return "".join(out).strip()
        finally:
            kc.stop_channels()
