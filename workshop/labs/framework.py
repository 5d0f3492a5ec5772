"""The check framework every lab's checks are written in: a Task's check(), hint() and
solution(), the Verdict it gives, the guard an answer runs under, what an answer changed for the
whole kernel put back, and the helpers the labs' checkers share.

A check runs the attendee's answer on inputs the attendee did not choose and says what is wrong
in their terms, without giving the answer away. It never crashes: a half-done answer (the
starter's `raise NotImplementedError()`), or answer code that raises, gets a verdict too.
"""
from __future__ import annotations

import contextlib
import functools
import html
import inspect
import json
import os
import shutil
import signal
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from .. import config
from ..palette import HIT, MISS
from . import room


class Wrong(Exception):
    """Raised by a checker with a message in the attendee's terms. hint: the number (from 1)
    of the task's hint that fits the mistake found, appended to the verdict; 0 for none (no
    hint of the task is about it)."""

    def __init__(self, message: str, hint: int = 1):
        super().__init__(message)
        self.hint = hint


class _Stopped(BaseException):
    """The attendee's code ran out of time or tried to end the kernel: a BaseException, so an
    answer's own `except Exception:` cannot swallow it."""




@contextlib.contextmanager
def guarded(seconds: float):
    """Run a check so that the attendee's answer cannot hang it or end the kernel, and writes
    what it writes with relative paths into a scratch folder that is removed afterwards.

    - A time limit (SIGALRM, in the kernel's main thread): a Python loop that never ends is
      stopped after `seconds`. A computation inside XLA (a `lax.while_loop` whose condition
      never turns false) cannot be stopped from Python: Jupyter's own interrupt cannot either.
      For that one a watcher thread says so, once, a little after the limit: restart the
      kernel.
    - `os._exit(...)` would end the kernel: it is replaced for the check's duration and
      becomes a verdict, as `sys.exit(...)` (SystemExit, which IPython would show as a
      traceback) does.
    - The working directory is a fresh scratch folder for the check's duration, and an answer
      that would delete, rename or overwrite a file that exists outside it (by an absolute
      path: `os.remove("/home/…")`, `open(path, "w")`) is stopped before it does (an audit
      hook; what the answer made meanwhile, Python's caches and JAX's compilation cache are
      left to work)."""
    def timed_out(signum, frame):
        raise _Stopped(f"your function did not return within {seconds:g} s: look for a loop "
                       "that never ends (a `while` whose condition stays true)")

    def no_exit(code=0):
        raise _Stopped(f"your code called os._exit({code!r}), which would have ended the "
                       "kernel: a check stopped it")
    alarm = threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGALRM")
    previous = signal.signal(signal.SIGALRM, timed_out) if alarm else None
    if alarm:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    here, scratch = os.getcwd(), _scratch()
    real_exit, os._exit = os._exit, no_exit
    _install_file_guard()
    _GUARDED["scratch"] = os.path.realpath(scratch)
    _GUARDED["since"] = time.time() - 1.0   # (a file system's clock may be coarse)
    done = threading.Event()
    threading.Thread(target=_say_when_stuck, args=(done, seconds), daemon=True).start()
    try:
        os.chdir(scratch)
        yield
    finally:
        _GUARDED["scratch"] = None
        done.set()
        os._exit = real_exit
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        os.chdir(here)
        shutil.rmtree(scratch, ignore_errors=True)


def _scratch() -> str:
    """A fresh scratch folder for a check, named with this kernel's process id; first, those a
    check left whose kernel has ended (this user's alone) are removed. A check stuck in XLA
    ends only with its kernel, restarted, and its folder stayed in /tmp (with nothing in it)."""
    base = tempfile.gettempdir()
    try:
        entries = list(os.scandir(base))
    except OSError:
        entries = []
    for entry in entries:
        pid = entry.name[len("lab-check-"):].split("-")[0]
        if not (entry.name.startswith("lab-check-") and pid.isdigit()):
            continue
        try:
            os.kill(int(pid), 0)
            continue           # (its kernel runs, or another process has the number now)
        except ProcessLookupError:
            pass
        except OSError:
            continue
        try:
            if entry.is_dir(follow_symlinks=False) and \
                    entry.stat(follow_symlinks=False).st_uid == os.getuid():
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            pass
    return tempfile.mkdtemp(prefix=f"lab-check-{os.getpid()}-")


_GUARDED: dict = {"scratch": None, "since": 0.0, "installed": False}
_DESTRUCTIVE = {"os.remove": "delete", "os.rmdir": "delete", "shutil.rmtree": "delete",
                "os.rename": "rename", "os.truncate": "overwrite"}


def _install_file_guard() -> None:
    """An audit hook (once per kernel; it does nothing outside a check)."""
    if not _GUARDED["installed"]:
        sys.addaudithook(_file_guard)
        _GUARDED["installed"] = True


def _may_change(path) -> bool:
    """A path an answer may delete or overwrite: one it made during the check (a temporary
    file of its own), in its scratch folder, Python's byte-code caches or JAX's compilation
    cache; or one that does not exist. Never a file that was there before the check."""
    try:
        real = os.path.realpath(os.fsdecode(path))
        made = os.lstat(real).st_ctime
    except (TypeError, ValueError):
        return True            # a file descriptor: an open file, not a path
    except OSError:
        return True            # nothing there
    if made >= _GUARDED["since"]:
        return True
    jax = sys.modules.get("jax")
    roots = [_GUARDED["scratch"], jax and jax.config.jax_compilation_cache_dir]
    return "__pycache__" in real.split(os.sep) or any(
        r and (real == r or real.startswith(os.path.realpath(r) + os.sep)) for r in roots)


def _file_guard(event: str, args: tuple) -> None:
    if _GUARDED["scratch"] is None:
        return
    what = _DESTRUCTIVE.get(event)
    paths = list(args[:2]) if event == "os.rename" else list(args[:1])
    if event == "open" and len(args) >= 3:
        mode, flags = args[1], args[2]
        if (isinstance(mode, str) and "w" in mode) or (
                mode is None and isinstance(flags, int) and flags & os.O_TRUNC):
            what = "overwrite"
    for path in paths if what else []:
        if path is not None and not _may_change(path):
            raise _Stopped(f"your code would {what} {os.fsdecode(path)}, outside the folder "
                           "a check runs it in: a check lets an answer change only files of "
                           "its own (relative paths); nothing was changed")


STUCK = ("✗ This check has run for {:g} s inside a computation that Python cannot stop (in "
         "XLA: a `lax.while_loop` whose condition never turns false?). Interrupting will not "
         "help: restart the kernel, run the setup cell, then your cells again.")


def _say_when_stuck(done: threading.Event, seconds: float) -> None:
    """The time limit's alarm runs only between Python bytecodes; a check still running a
    little after it is stuck where no signal reaches: say so, once (the answer's thread cannot
    be stopped, but the attendee can act)."""
    after = seconds + max(2.0, seconds / 10)
    if not done.wait(after):
        print(STUCK.format(after), file=sys.stderr, flush=True)


@dataclass
class Verdict:
    ok: bool
    message: str
    hint: str = ""

    def __str__(self) -> str:
        mark = "✓ Correct" if self.ok else "✗ Not yet"
        text = f"{mark}: {self.message}"
        if not self.ok and self.hint:
            text += f"\n  Hint: {self.hint}"
        return text

    __repr__ = __str__

    def _repr_html_(self) -> str:
        color = HIT if self.ok else MISS
        return (f"<pre style='color:{color};white-space:pre-wrap'>{html.escape(str(self))}"
                f"</pre>")


@dataclass(frozen=True)
class Edge:
    """One row of a lab's table of edge inputs (its module's EDGES, {"qN": (Edge, ...)}): an
    input the task's own words call for (a sign, a dtype, a rank, a second call with a fresh
    object) that ordinary inputs leave untried, tried by the task's check beside them. name:
    how the verdict names it; why: the reason, from the task's words; value: the input, as the
    check uses it. For every row tests/wrong_answers holds a wrong answer that only this row
    rejects (tests/test_lab_edges.py takes the row out and sees that answer pass)."""
    name: str
    why: str
    value: Any = None


class Task:
    """One task of a lab. `checker(*answers)` returns a success message or raises Wrong.
    takes: the name of the function the attendee writes, when the answer is one; anything
    else passed is refused before the checker runs."""

    def __init__(self, lab: str, number: int, title: str, checker: Callable[..., str],
                 hints: list[str], takes: str | None = None):
        self.lab, self.number, self.title = lab, number, title
        self._checker, self._hints, self.takes = checker, hints, takes
        self._hint_i = 0

    def check(self, *answers) -> Verdict:
        """The verdict on `answers`. What the answer changed for the whole kernel (JAX's
        config, jax.monitoring's listeners, a mesh set with jax.set_mesh) is put back
        afterwards, and the verdict says so in one line: a later task's check, or the
        attendee's next cell, starts from the kernel as it was. The answer runs `guarded`:
        under a time limit, unable to end the kernel, in a scratch working folder."""
        before, debugging = KernelState(), _debugging()   # (the attendee's, not the answer's)
        theirs = before.replaced   # JAX functions replaced in an earlier cell: JAX's own for
        if theirs:                 # the check's duration, then the attendee's again
            _put({key: _shipped(key) for key in theirs})
            before = KernelState()
        verdict = self._guarded_verdict(*answers)
        if not verdict.ok and debugging:
            # a setting turned on while debugging may fail the check's own computations, or
            # the answer's: judged again with JAX's and NumPy's defaults, and the setting named
            with _defaults(debugging):
                clean = self._guarded_verdict(*answers)
            clean.message += (f"\n  (Checked with {' and '.join(debugging)} put back to the "
                              "default: with your setting the check said: "
                              f"{verdict.message.splitlines()[0]})")
            verdict = clean
        changed = before.restore()
        if changed:
            verdict.message += (f"\n  Your answer left {'; '.join(changed)}: this check "
                                f"put it back ({_instead(changed)}).")
        if theirs:
            _put(theirs)
            verdict.message += (f"\n  ({', '.join(sorted(f'{m}.{k}' for m, k in theirs))} "
                                "replaced in this kernel: the check ran JAX's own, and left "
                                "yours in place.)")
        room.record(self.lab, self.number, verdict.ok)   # on a hub with --room-view only
        return verdict

    def _guarded_verdict(self, *answers) -> Verdict:
        try:
            with guarded(config.CHECK_TIME_LIMIT):   # as it is now (a test sets it)
                return self._verdict(*answers)
        except _Stopped as stop:        # (no hint of the task is about these)
            return Verdict(False, str(stop))
        except SystemExit as e:
            return Verdict(False, f"your code called sys.exit({e.code!r}), which stops "
                                  "whatever runs it: the check could not finish")

    def _hint(self, number: int) -> str:
        """The task's hint `number` (from 1), or none (0)."""
        return self._hints[min(number, len(self._hints)) - 1] if number > 0 else ""

    def _verdict(self, *answers) -> Verdict:
        try:
            if self.takes and not (answers and callable(answers[0])):
                raise Wrong(f"pass your function itself: q{self.number}.check({self.takes})")
            return Verdict(True, self._checker(*answers))
        except NotImplementedError:
            return Verdict(False, "not done yet: replace `raise NotImplementedError()` with "
                                  "your answer, run that cell, then this one.", self._hints[0])
        except Wrong as w:
            return Verdict(False, str(w), self._hint(w.hint))
        except Exception as e:
            first = first_line(e)
            if raised_in_attendee_code(e):   # the attendee's code crashed: say so
                return Verdict(False, f"your code raised {type(e).__name__}: {first}",
                               self._hints[0])
            # no frame of the attendee's code: the check could not use what it was given, or
            # the check itself is wrong; no hint of the task is about either
            report = (f"tell the presenter: lab {self.lab} q{self.number}, and this line")
            if _the_checks_own(e):
                return Verdict(False, f"the check itself failed ({type(e).__name__}: {first})"
                                      f": this is the check's fault, not yours. {report}")
            return Verdict(False, "the check could not use what your answer gave it "
                                  f"({type(e).__name__}: {first}): look at the type, shape "
                                  "and dtype of what your code returns, against the task. If "
                                  "they are what the task asks for, this is the check's "
                                  f"fault, not yours: {report}")

    def next_hint(self) -> str:
        """The next hint's text (they get more specific); the last one repeats."""
        h = self._hints[min(self._hint_i, len(self._hints) - 1)]
        self._hint_i += 1
        return f"Hint {min(self._hint_i, len(self._hints))}/{len(self._hints)}: {h}"

    def hint(self) -> None:
        """Print the next hint (once: it returns nothing, so a notebook shows it once)."""
        print(self.next_hint())

    def solution(self) -> None:
        """Print the solution code (once: it returns nothing). It comes with the package
        (labs/solutions.json, written from exercises/solutions/ by `workshop labs`), so it
        works from any install."""
        print(solution_code(self.lab, self.number))


# settings an attendee turns on while debugging, with JAX's defaults
_DEBUG_FLAGS = {"jax_disable_jit": False, "jax_debug_nans": False, "jax_debug_infs": False,
                "jax_numpy_rank_promotion": "allow"}


def _debugging() -> dict:
    """The debugging settings on in the kernel now, by name (NumPy's errstate as
    np.seterr(...)), each with its value."""
    import jax
    import numpy as np
    on = {k: jax.config.values.get(k, v) for k, v in _DEBUG_FLAGS.items()}
    on = {k: v for k, v in on.items() if v != _DEBUG_FLAGS[k]}
    raises = sorted(k for k, v in np.geterr().items() if v == "raise")
    if raises:
        on[f"np.seterr({', '.join(f'{k}={chr(34)}raise{chr(34)}' for k in raises)})"] = None
    return on


@contextlib.contextmanager
def _defaults(debugging: dict):
    """The settings in `debugging` put back to their defaults for the block, then as they
    were."""
    import jax
    import numpy as np
    try:
        with np.errstate(**{k: "warn" if k != "under" else "ignore"
                            for k, v in np.geterr().items() if v == "raise"}):
            for k in debugging:
                if k in _DEBUG_FLAGS:
                    jax.config.update(k, _DEBUG_FLAGS[k])
            yield
    finally:
        for k, v in debugging.items():
            if k in _DEBUG_FLAGS:
                jax.config.update(k, v)


def _instead(changed: list[str]) -> str:
    """What to do instead, for each kind of change KernelState.restore names."""
    advice = []
    if any(" set to " in c for c in changed):
        advice.append("set a JAX flag inside a `with` block instead")
    if any("listeners" in c for c in changed):
        advice.append("unregister each listener you register, in a `finally:` block")
    if any("mesh" in c for c in changed):
        advice.append("use jax.set_mesh as a `with` block")
    if any(c.endswith(" replaced") for c in changed):
        advice.append("wrap a JAX function only in a try/finally that puts it back")
    if any(c.startswith("logging") for c in changed):
        advice.append("remove each logging handler you add, in a `finally:` block")
    return "; ".join(advice)


# JAX's modules whose functions an answer might wrap or replace (jax.make_jaxpr, a compile
# step in jax._src.compiler, a logger's helper in dispatch), their callables as JAX made them
# read once, at the first check: comparing by identity costs a fraction of a millisecond
_WATCHED = ("jax", "jax.numpy", "jax.lax", "jax.tree_util", "jax.tree", "jax.monitoring",
            "jax.core", "jax._src.api", "jax._src.api_util", "jax._src.core",
            "jax._src.dispatch", "jax._src.compiler", "jax._src.monitoring", "jax._src.pjit",
            "jax._src.linear_util", "jax._src.tree_util", "jax._src.interpreters.pxla",
            "jax._src.interpreters.partial_eval", "jax._src.interpreters.ad",
            "jax._src.interpreters.batching", "jax._src.interpreters.mlir")
_AS_SHIPPED: dict = {}   # module name -> (its namespace, {name: callable as shipped})


def _as_shipped() -> dict:
    if not _AS_SHIPPED:
        for name in _WATCHED:
            module = sys.modules.get(name)
            if module is not None:
                space = vars(module)
                _AS_SHIPPED[name] = (space, {k: v for k, v in space.items()
                                             if callable(v) and not k.startswith("__")})
    return _AS_SHIPPED


def _replaced() -> dict:
    """{(module, name): what it holds now} for each watched function that is not JAX's own
    (None where it was deleted)."""
    return {(m, k): space.get(k) for m, (space, kept) in _as_shipped().items()
            for k, v in kept.items() if space.get(k) is not v}


def _shipped(key):
    return _as_shipped()[key[0]][1][key[1]]


def _put(values: dict) -> None:
    """Each (module, name) given its value."""
    for (m, k), v in values.items():
        _as_shipped()[m][0][k] = v


def _logging() -> dict:
    """JAX's loggers (and the root one) by name: their handlers, level, propagation."""
    import logging
    loggers = {n: lg for n, lg in logging.Logger.manager.loggerDict.items()
               if isinstance(lg, logging.Logger) and (n == "jax" or n.startswith("jax."))}
    loggers["root"] = logging.getLogger()
    return {n: (lg, tuple(lg.handlers), lg.level, lg.propagate) for n, lg in loggers.items()}


_LISTENERS = ("_event_listeners", "_event_duration_secs_listeners",
              "_event_time_span_listeners", "_scalar_listeners")


class KernelState:
    """What an answer can change for everyone in the kernel, as it was when made: JAX's config
    flags (jax.config.update), jax.monitoring's listeners, the mesh jax.set_mesh sets when
    used as a global setter (this thread's abstract and concrete mesh), JAX's functions (one
    wrapped or replaced: _WATCHED's modules) and the handlers and levels of JAX's loggers."""

    def __init__(self):
        import jax
        from jax._src import mesh, monitoring
        self.config = dict(jax.config.values)
        self.listeners = {n: list(getattr(monitoring, n)) for n in _LISTENERS}
        self.mesh = (mesh.abstract_mesh_context_manager.get_local(),
                     mesh.device_context.get_local())
        self.replaced, self.logging = _replaced(), _logging()

    def restore(self) -> list[str]:
        """Put back what differs from then; what had changed, one phrase each."""
        import jax
        from jax._src import mesh, monitoring
        changed, values = [], jax.config.values   # (a property that makes a new dict)
        for name, value in self.config.items():
            now = values.get(name, value)
            if now is not value and now != value:
                changed.append(f"{name} set to {now!r}")
                jax.config.update(name, value)
                values = jax.config.values   # (as it is now that this one is back)
        if any(getattr(monitoring, n) != kept for n, kept in self.listeners.items()):
            changed.append("jax.monitoring's listeners changed")
            for n, kept in self.listeners.items():
                getattr(monitoring, n)[:] = kept
        now = (mesh.abstract_mesh_context_manager.get_local(), mesh.device_context.get_local())
        if any(a is not b for a, b in zip(now, self.mesh)):
            changed.append("a mesh set with jax.set_mesh")
            mesh.abstract_mesh_context_manager.set_local(self.mesh[0])
            mesh.device_context.set_local(self.mesh[1])
        return changed + self._restore_internals()

    def _restore_internals(self) -> list[str]:
        """Put back JAX's functions and loggers as they were; what had changed."""
        changed, now = [], _replaced()
        keys = sorted(k for k in set(now) | set(self.replaced)
                      if now.get(k) is not self.replaced.get(k))
        if keys:
            changed.append(f"{', '.join(f'{m}.{k}' for m, k in keys)} replaced")
            _put({k: self.replaced[k] if k in self.replaced else _shipped(k) for k in keys})
        kept, logs = self.logging, _logging()
        moved = sorted(n for n, (lg, *state) in logs.items()
                       if n not in kept and (state[0] or state[1]) or
                       n in kept and tuple(state) != kept[n][1:])
        if moved:
            changed.append(f"logging changed on the logger{'s' * (len(moved) > 1)} "
                           f"{', '.join(moved)} (a handler added, or its level)")
            for n in moved:
                lg, handlers, level, propagate = kept.get(n, (logs[n][0], (), 0, True))
                lg.handlers[:], lg.propagate = list(handlers), propagate
                lg.setLevel(level)
        return changed


_LIBRARY = tuple({os.path.realpath(sysconfig.get_paths()[k]) + os.sep
                  for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def raised_in_attendee_code(e: BaseException) -> bool:
    """Whether the traceback of `e` passes through code that is neither this kit's package,
    a library (site-packages) nor Python's own: that is, through the attendee's code."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    tb = e.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        name = os.path.realpath(name) if os.path.isabs(name) else name
        if not (name.startswith(here) or "site-packages" in name or "dist-packages" in name
                or name.startswith(_LIBRARY) or name.startswith("<frozen")):
            return True
        tb = tb.tb_next
    cause = e.__cause__ or e.__context__
    return cause is not None and cause is not e and raised_in_attendee_code(cause)


def _the_checks_own(e: BaseException) -> bool:
    """Whether `e` is a mistake in the check itself: a name, an import or an assertion of the
    kit's that failed in the kit's own code (where it was raised), whatever the answer was."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    return (isinstance(e, (NameError, ImportError, AssertionError, SyntaxError))
            and tb is not None
            and os.path.realpath(tb.tb_frame.f_code.co_filename).startswith(here))


def first_line(e: BaseException, most: int = 300) -> str:
    """The first line of what `e` says (`most` characters, with … where it is cut), for a
    verdict."""
    line = (str(e).strip().split("\n") or [""])[0]
    return line if len(line) <= most else line[:most - 1].rstrip() + "…"


def fits(fn, call: str, *args) -> None:
    """Wrong, in the attendee's terms, when fn takes other arguments than the check gives it
    (rather than the TypeError of the call)."""
    try:
        inspect.signature(fn).bind(*args)
    except TypeError:
        raise Wrong(f"your function takes {getattr(fn, '__name__', 'it')}"
                    f"{inspect.signature(fn)}, but the check calls it as {call}: give it "
                    "exactly those arguments") from None
    except ValueError:          # no signature to read (a builtin): the call will say
        pass


def call_as(fn, call: str, *args):
    """fn(*args), as the check calls the attendee's function (`call` says how, for Wrong)."""
    fits(fn, call, *args)
    return fn(*args)


def as_now(fn):
    """fn as it is now, for the check to trace: a new function that calls it. JAX keeps what
    it traced and compiled by the function object (jit's traces and executables, and
    make_jaxpr's, which go through jit): checked a second time, the same object would get its
    first trace back, though the attendee has since redefined a helper it calls or given it a
    new rule (defvjp again). A new object has nothing kept. Its name and signature are fn's."""
    def now(*args, **kwargs):
        return fn(*args, **kwargs)
    return functools.update_wrapper(now, fn, updated=())


def solution_code(lab: str, number: int) -> str:
    """The `number`-th (1-based) solution block of lab `lab` (e.g. 'J1'), as installed with
    the package."""
    from importlib.resources import files
    blocks = json.loads(files(__package__).joinpath("solutions.json").read_text(encoding="utf-8"))
    return blocks[lab][number - 1]


def exact(value):
    """`value` as the plain value it claims to be, to compare with the check's own: a subclass
    of int, float or str (or of a NumPy scalar or array) becomes its base type's value, and a
    list, tuple, set, frozenset or dict of them is rebuilt of plain values, so that no
    `__eq__`, `__ne__` or `__hash__` of the answer's decides a comparison (a value that claims
    to equal everything is judged by what it holds). Anything else is returned as it is.

    >>> class Liar(int):
    ...     def __eq__(self, other): return True
    ...     def __ne__(self, other): return False
    ...     __hash__ = int.__hash__
    >>> Liar(3) != 4, exact(Liar(3)) != 4
    (False, True)
    >>> type(exact({Liar(1): [Liar(2)]})[1][0])
    <class 'int'>
    """
    import numpy as np
    if isinstance(value, bool):
        return bool(value)
    for base in (int, float, str):   # (the base's own conversion, not the subclass's)
        if isinstance(value, base):
            return getattr(base, f"__{base.__name__}__")(value)
    if isinstance(value, (np.generic, np.ndarray)):
        arr = np.asarray(value).view(np.ndarray)
        return arr[()] if isinstance(value, np.generic) else arr
    if isinstance(value, dict):
        return {exact(k): exact(v) for k, v in value.items()}
    for base in (list, tuple, set, frozenset):
        if isinstance(value, base):
            return base(exact(v) for v in value)
    return value


def fresh(value):
    """A copy of each NumPy array in `value` (itself, or in a list, tuple or dict), for an
    answer: what it writes into one (its values, or its shape or dtype set in place) leaves
    the check's own inputs, which it uses again (as references, on the next call). Anything
    else (a JAX array cannot change; a function the check compiles once) as it is.

    >>> import numpy as np
    >>> xs = np.zeros(2)
    >>> fresh((xs, 1.0))[0] is xs, fresh({"x": xs})["x"] is xs
    (False, False)
    """
    import numpy as np
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: fresh(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(fresh(v) for v in value)
    return value


def close(a, b, tol=1e-5) -> bool:
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=tol, atol=tol))


def as_array(value, what: str):
    """`value` as a NumPy array of numbers, or Wrong in the attendee's terms."""
    import numpy as np
    if value is None:
        raise Wrong(f"{what} is None: does your function return its result?")
    try:
        arr = np.asarray(value)
    except Exception:
        raise Wrong(f"{what} is a {type(value).__name__}, not an array of numbers") from None
    import jax.numpy as jnp
    if arr.dtype == object or not (jnp.issubdtype(arr.dtype, jnp.number)
                                   or arr.dtype == bool):
        raise Wrong(f"{what} is a {type(value).__name__}, not an array of numbers")
    return arr


def all_eqns(jaxpr):
    """Every equation of a jaxpr, those of its nested jaxprs (jit bodies, branches, loop
    bodies) included."""
    from jax._src import core
    for e in jaxpr.eqns:
        yield e
        for sub in core.jaxprs_in_params(e.params):
            yield from all_eqns(sub)


CALLBACKS = {"pure_callback", "io_callback", "callback", "debug_callback"}
