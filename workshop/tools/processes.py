"""Processes the tools start, and ending them: a tool that answers a kill or a closed terminal as
it answers Ctrl-C, a process tree ended (SIGTERM, then SIGKILL), and the build's pool workers,
which end with the build however it ends. Shared by the build's executor, the slideshow
(`present`) and the classroom hub."""
from __future__ import annotations

import os
import signal
import sys
import time


def worker_init(build_pid: int, scratch: str | None = None) -> None:
    """In each pool worker: the build answers Ctrl-C (and then ends the worker and its kernel;
    nbclient arms its own SIGINT/SIGTERM handlers while a notebook runs, which only shut that
    kernel down). A watcher ends the worker and its kernel as soon as the build is gone, even
    when the build was SIGKILLed and had no chance to clean up."""
    import tempfile
    import threading
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if scratch:   # its temporary folder, and its kernels', is one the build removes
        os.environ["TMPDIR"] = tempfile.tempdir = scratch
    # started with SIGINT blocked (execute.run_many): a Ctrl-C meanwhile is dropped now, and
    # the kernels it starts get SIGINT, their interrupt, unblocked
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    # a process group of its own, so a terminal's Ctrl-C (SIGINT to the foreground group)
    # reaches the build alone: nbclient replaces the ignore above while a notebook runs, and
    # answered the group's SIGINT by closing its kernel's sockets mid-cell, racing the build's
    # own clean-up (a ZMQError traceback and exit 1 instead of one line, seen once)
    os.setpgid(0, 0)
    # the terminal closed: SIGHUP goes to the whole group; the build ends the workers as on
    # Ctrl-C (SIGTERM, which nbclient answers by shutting its kernel down and cleaning up)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # a worker ended mid-run: nbclient's own kernel clean-up can race the kernel manager's
    # (both shut the kernel down), and asyncio then printed a 30-line "Task exception was
    # never retrieved" for it beside the build's one line (seen once in CI on Ctrl-C)
    import logging
    logging.getLogger("asyncio").addFilter(_CleanupRace())
    threading.Thread(target=_watch, args=(build_pid,), daemon=True).start()


class _CleanupRace:
    """Drops asyncio's report of an nbclient kernel clean-up that lost the race (only that)."""

    def filter(self, record) -> bool:
        return "_async_cleanup_kernel" not in record.getMessage()


def quiet_after_ctrl_c() -> None:
    """Ctrl-C (where it is still Python's KeyboardInterrupt) also silences asyncio's reports of
    what it cut off: Playwright's driver and futures, the child watcher's "exit status already
    read", printed 3 to 40 lines beside the command's one line, before and after it (probe 7)."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def interrupted(signum, frame):
        logging = sys.modules.get("logging")   # (not imported here: a Ctrl-C in logging's own
        try:                                   # import got it half made, and an AttributeError
            logging.getLogger("asyncio").disabled = True   # traceback, probe 18)
        except AttributeError:   # (no logging yet, or half made: nothing of asyncio's to say)
            pass
        signal.default_int_handler(signum, frame)
    signal.signal(signal.SIGINT, interrupted)
    # A KeyboardInterrupt raised where Python cannot pass it on (a weakref's callback, an
    # object's __del__: importlib's module locks have one) is printed as "Exception ignored"
    # and dropped, and the command went on (probe 17: present started its server after the
    # Ctrl-C). Such a Ctrl-C is sent again a moment later, from a thread, once the callback
    # is done: sent from here, it was raised in the hook and dropped the same way, and so it
    # was once when threading's Timer, which waits here for its thread to start, took longer
    # than its delay (CI's rehearsal); _thread's start does not wait
    import _thread
    import time
    previous = sys.unraisablehook

    def send() -> None:
        time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    def sent_again(unraisable) -> None:
        if unraisable.exc_type is KeyboardInterrupt:
            _thread.start_new_thread(send, ())
        else:
            previous(unraisable)
    sys.unraisablehook = sent_again


def quiet_exit_on_ctrl_c(code: int) -> None:
    """From now on (the command done), Ctrl-C ends this process at once, with `code`, its
    output flushed and nothing more printed."""
    def done(signum, frame):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(code if isinstance(code, int) else 1)
    signal.signal(signal.SIGINT, done)


def _watch(build_pid: int) -> None:
    while os.getppid() == build_pid:
        time.sleep(0.5)
    end_processes(children(), grace=1.0)
    os._exit(1)


def children() -> list:
    """Every process this one started, and theirs (psutil.Process objects)."""
    import psutil
    return psutil.Process().children(recursive=True)


def end_on_hangup() -> None:
    """A kill or the terminal closed: end every process as Ctrl-C does (a KeyboardInterrupt
    where the tool is, so its clean-up runs)."""
    def ended(signum, frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, ended)


STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def stop_once(note: str):
    """Ctrl-C, a kill or the terminal closed stop the tool once: the first raises
    KeyboardInterrupt where the tool is (so its clean-up runs, as end_on_hangup); any later one
    prints `note` once and is otherwise ignored, so it cannot cut that clean-up short (a
    presenter's habitual second Ctrl-C lost the rehearsal report). Returns `cleaning`: called
    where a clean-up starts that no signal began, it answers signals with `note` from then on.
    A clean-up must end of itself (present's: the server's stop, at most 20 s, then a kill).
    Also where the tool was started with SIGINT ignored (a non-interactive shell's `&`)."""
    said = []

    def later(signum, frame):
        if not said:   # (written past Python's buffer: a print interrupted by this handler
            said.append(signum)   # would make print() in here a reentrant call, an error)
            try:
                os.write(1, (note + "\n").encode())
            except OSError:
                pass

    def cleaning() -> None:
        for sig in STOPS:
            signal.signal(sig, later)

    def first(signum, frame):
        cleaning()
        raise KeyboardInterrupt

    for sig in STOPS:
        signal.signal(sig, first)
    return cleaning


def ignore_stops() -> None:
    """The tool has cleaned up and is about to exit: a late Ctrl-C is ignored (Python puts
    the default handlers back as it shuts down, and one then killed the tool mid-exit, exit
    status 130 after its clean-up had succeeded)."""
    for sig in STOPS:
        signal.signal(sig, signal.SIG_IGN)


def end_processes(procs, grace: float = 3.0) -> None:
    """SIGTERM `procs` (psutil.Process objects), then SIGKILL what is left after `grace`."""
    import psutil
    for p in procs:
        try:
            p.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=grace)


def tracker_outlives_the_terminal() -> None:
    """multiprocessing's resource tracker ignores SIGINT and SIGTERM but not SIGHUP: when the
    terminal closed it died with the group, was started again, and the new one printed a
    warning and a KeyError traceback for each semaphore it never knew. Started here with
    SIGHUP ignored (an ignored signal stays ignored across exec), it ends with the build."""
    import threading
    from multiprocessing import resource_tracker
    if threading.current_thread() is not threading.main_thread():
        return            # (signals are set in the main thread only: the tests' prefetch)
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, old)


def is_resource_tracker(proc) -> bool:
    """multiprocessing's resource tracker (it runs `multiprocessing.resource_tracker.main`)."""
    import psutil
    try:
        return any("multiprocessing.resource_tracker" in a for a in proc.cmdline())
    except psutil.Error:
        return False
