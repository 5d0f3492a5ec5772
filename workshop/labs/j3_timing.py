"""Lab J3, task 4: whether the seconds an answer's measure returned are the wall-clock times of
single calls. Calls whose time is known on any machine (a wait on the host), the check's own
timing of each executable, and the verdict on the answer's seconds against it. The task's
check is in j3.py."""
from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from . import Wrong

# Besides 'none' and 'checkpoint' of a 4-block stack, measure is called on one more loss at
# two settings: a call that waits on the host (a callback that sleeps) for 2 ms, and one for
# 30 ms. Their times are known on any machine, whatever its load: a call cannot return before
# its wait is over. XLA's counts of them are tiny and the same for both, so a number of seconds
# that is made up, or estimated from flops, bytes or temp memory, does not follow them, and
# neither does CPU time (time.process_time: a sleep uses none).
_WAITS_MS = (2, 30)


def _waits(w, s):
    """A gradient call that waits len(w) milliseconds on the host, then does almost nothing."""
    ms = w.shape[0]

    def host(s):
        time.sleep(ms / 1000)
        return np.zeros(s.shape, np.float32)
    h = jax.pure_callback(host, jax.ShapeDtypeStruct(s.shape, jnp.float32), s)
    return jnp.mean(w) * jnp.mean(h + 1.0)


def _waits_inputs(ms: int):
    return jnp.ones(ms, jnp.float32), jnp.ones(8, jnp.float32)


_TOO_FAST, _TOO_SLOW, _SLOW_FLOOR = 3.0, 8.0, 0.05
_NO_CALL = 2e-6      # seconds: no call of a compiled executable from Python is this quick
_WAIT_SLOW = 2.5     # a call that mostly sleeps varies little: 3 calls timed as one stand out
_FOLLOWS = 2.0       # the 30 ms call must measure at least this many times the 2 ms one


class Slower(Wrong):
    """A verdict that a busy machine could have caused: a call measured slower than the check's
    own timing of it (load only ever slows a call; it never makes one faster or a number
    constant)."""


def _wait_name(ms: int) -> str:
    return f"the call that waits {ms} ms on the host"


def _time(exe, *args) -> tuple[float, float]:
    """The check's own timing of an executable: (median, fastest) of 5 calls after a warm-up,
    each waited for."""
    jax.block_until_ready(exe(*args))
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        jax.block_until_ready(exe(*args))
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(min(times))


def _check_times(secs: dict, ref: dict, again: bool = False) -> None:
    """Wrong unless the seconds measure returned are wall-clock timings of single calls of the
    executables the check timed: not one number for all, not milliseconds, not CPU time, not
    the dispatch alone, not a compile or several calls, and growing with the work as the
    check's own timing does."""
    names = list(secs)
    if len(set(secs.values())) == 1:
        lo, hi = min(m for m, _ in ref.values()), max(m for m, _ in ref.values())
        raise Wrong(f"measure returned the same {secs[names[0]]!r} seconds for {len(names)} "
                    f"programs whose calls take from {lo * 1e3:.1f} to {hi * 1e3:.1f} ms here: "
                    "time real calls of each one", 2)
    if all(100 < secs[k] / ref[k][0] < 10_000 for k in names):
        raise Wrong("your times are about 1000× the check's own timing of the same "
                    "executables: milliseconds? Return seconds", 2)
    for wrong in (_no_call, _before_its_wait, _too_fast, _too_slow):   # each for every call
        for k in names:
            said = wrong(k, secs[k], ref[k])
            if said:
                raise (Slower if wrong is _too_slow else Wrong)(said)
    _follows_the_work(secs, ref, again)


_WAITS = {_wait_name(ms): ms / 1000 for ms in _WAITS_MS}    # seconds, by the call's name


def _no_call(k: str, secs: float, ref: tuple) -> str | None:
    if secs < _NO_CALL:
        return (f"{k}: {secs * 1e9:.0f} ns, less than a Python call of an "
                "executable takes, let alone its work: that is not the time of a real "
                "call. Return what the wall clock measured, waiting for the result")
    return None


def _before_its_wait(k: str, secs: float, ref: tuple) -> str | None:
    if k in _WAITS and secs < 0.8 * _WAITS[k]:
        return (f"{k}: your measure says {secs * 1e3:.2f} ms, but this call "
                f"cannot return before its {_WAITS[k] * 1e3:.0f} ms wait on the host is "
                "over: time the wall clock from the call until its result is ready, "
                "a real call (CPU time, for one, does not count a wait)")
    return None


def _too_fast(k: str, secs: float, ref: tuple) -> str | None:
    if secs < ref[1] / _TOO_FAST:
        return (f"{k}: {secs * 1e3:.3f} ms, but the same executable takes at "
                f"least {ref[1] * 1e3:.1f} ms a call here: did you wait for the "
                "result (dispatch is asynchronous) and time a real call?")
    return None


def _too_slow(k: str, secs: float, ref: tuple) -> str | None:
    too_slow = ref[0] * _WAIT_SLOW if k in _WAITS and _WAITS[k] > 0.01 else max(
        ref[0] * _TOO_SLOW, _SLOW_FLOOR)
    if secs > too_slow:
        return (f"{k}: {secs * 1e3:.1f} ms, but the same executable takes about "
                f"{ref[0] * 1e3:.1f} ms a call here: did you time more than one "
                "call, or does your timing include the compile or the warm-up? Time "
                "one call of the compiled executable")
    return None


def _follows_the_work(secs: dict, ref: dict, again: bool = False) -> None:
    """Wrong if the 30 ms call does not measure clearly longer than the 2 ms one, where the
    check's own timing of both tells them apart. Where it cannot (a loaded machine: the 2 ms
    call took 8 ms or more), the verdict waits for a second timing of both (`again`), and
    only then gives up: under load, made-up seconds passed once in CI."""
    short, long = (_wait_name(ms) for ms in _WAITS_MS)
    if short in secs and long in secs:
        want, have = ref[long][0] / ref[short][0], secs[long] / secs[short]
        if have < _FOLLOWS and (want >= 2 * _FOLLOWS or not again):
            raise Slower(f"your seconds do not follow the work: {long} takes {want:.0f}× as "
                        f"long as {short} here (the check's own timing of both), your "
                        f"measure says {have:.1f}×: return what the wall clock measured for "
                        "real calls, not a number or an estimate", 2)
