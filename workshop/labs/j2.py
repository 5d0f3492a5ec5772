"""Lab J2 "The recompile hunt": the loop, its causes, and the checks.
The tasks are in exercises/J2-the-recompile-hunt.ipynb."""
from __future__ import annotations

import itertools
from contextlib import contextmanager
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ..jitcache import compiles
from . import Edge, KernelState, Task, Wrong, as_array, call_as, exact

LAB = "J2"
MAX_BATCH = 32            # no batch is bigger
WARMUP = 3                # steps without weight decay
WD = np.float32(1e-3)     # weight decay after the warm-up

# What might make train_buggy recompile. Some do, some do not: find out with the counters.
CAUSES = {
    "static_lr": "the learning rate is a static argument of the step",
    "batch_shape": "the batches do not all have the same number of rows",
    "weak_decay": "the weight decay is a Python 0.0 during warm-up, a NumPy float32 after",
    "new_function": "the step function is defined (and jitted) inside the loop",
    "numpy_batches": "the batches are NumPy arrays, not jax.Arrays",
    "float_loss": "float(loss) is called on every step",
}
_TRUE = {"static_lr", "batch_shape", "weak_decay", "new_function"}


def make_batches(seed: int, dim: int = 3, sizes=(32, 27, 32, 19, 32, 11, 24, 32)):
    """A linear-regression stream: NumPy float32 batches (x: n×dim, y: n) of the given sizes."""
    rng = np.random.default_rng(seed)
    w_true = rng.normal(size=dim).astype(np.float32)
    out = []
    for n in sizes:
        x = rng.normal(size=(n, dim)).astype(np.float32)
        y = (x @ w_true + 0.5 + 0.1 * rng.normal(size=n)).astype(np.float32)
        out.append((x, y))
    return out


def schedule(i: int, base_lr: float) -> float:
    """The learning rate of step i: a Python float that decays every step."""
    return base_lr * 0.9 ** i


def mse_step(w, b, x, y, lr, wd):
    """One SGD step on the mean squared error of x @ w + b against y."""
    def loss_fn(w, b):
        return jnp.mean((x @ w + b - y) ** 2)
    loss, (gw, gb) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w, b)
    return w - lr * (gw + wd * w), b - lr * gb, loss


def train_buggy(w, b, batches, base_lr):
    """Correct numbers, and a compile on (almost) every step."""
    losses = []
    for i, (x, y) in enumerate(batches):
        lr = schedule(i, base_lr)
        wd = WD if i >= WARMUP else 0.0

        @partial(jax.jit, static_argnums=4)
        def step(w, b, x, y, lr, wd):
            return mse_step(w, b, x, y, lr, wd)

        w, b, loss = step(w, b, x, y, lr, wd)
        losses.append(float(loss))
    return w, b, losses


def reference(w, b, batches, base_lr, dtype=np.float64):
    """The same training in float64 NumPy: what every version must compute. (In float32, it
    shows how far float32's rounding alone moves the numbers.)"""
    w, b = np.asarray(w, dtype), dtype(b)
    losses = []
    for i, (x, y) in enumerate(batches):
        lr, wd = dtype(schedule(i, base_lr)), dtype(WD) if i >= WARMUP else dtype(0.0)
        x, y = x.astype(dtype), y.astype(dtype)
        r = x @ w + b - y
        losses.append(float(np.mean(r ** 2)))
        gw, gb = 2 * x.T @ r / len(x), 2 * r.mean()
        w, b = w - lr * (gw + wd * w), b - lr * gb
    return w, b, losses


def _left_for_everyone(what: str, state: KernelState, hint: int) -> None:
    """Wrong if the attendee's code left the kernel changed since `state` (JAX's config,
    jax.monitoring's listeners, a global mesh, a JAX function wrapped, a logging handler);
    put back first, either way. hint: the task's
    hint about cleaning up, if it has one."""
    changed = state.restore()
    if changed:
        advice = []
        if any(" set to " in c for c in changed):
            advice.append("change a JAX setting only inside a `with` block "
                          "(jax.log_compiles(True), jax.enable_x64(True))")
        if any("listeners" in c for c in changed):
            advice.append("unregister only the listeners you registered")
        if any("mesh" in c for c in changed):
            advice.append("use jax.set_mesh as a `with` block")
        if any(c.endswith(" replaced") for c in changed):
            advice.append("put back a JAX function you wrap, in a `finally:` block")
        if any(c.startswith("logging") for c in changed):
            advice.append("remove the logging handler you add, in a `finally:` block")
        advice = "; ".join(advice)
        raise Wrong(f"{what} left {'; '.join(changed)} for everyone in this kernel (this "
                    f"check put it back): every later cell would run with it. "
                    f"{advice[:1].upper()}{advice[1:]}", hint)


# ----------------------------------------------------------------- task 1: a compile counter

_fresh = itertools.count()


def _cases():
    """(description, thunk, compiles it makes): fresh functions on every check."""
    k = next(_fresh)
    x = np.ones(3, np.float32)

    f1 = jax.jit(lambda v: jnp.sin(v) * k)
    f2 = jax.jit(lambda v: jnp.cos(v) + k)
    warm = jax.jit(lambda v: jnp.tanh(v) - k)
    warm(x)
    return [
        ("one function called three times with one shape", lambda: [f1(x) for _ in range(3)], 1),
        ("one function called with three shapes",
         lambda: [f2(np.ones(n, np.float32)) for n in (2, 3, 4)], 3),
        ("a function that was already compiled", lambda: warm(x), 0),
        ("two new jitted lambdas", lambda: [jax.jit(lambda v, c=c: v + c + k)(x)
                                            for c in (1.0, 2.0)], 2),
    ] + [(e.name, e.value[0](k, x), e.value[1]) for e in EDGES["q1"]]


def _lowered(k, x):
    """A thunk that lowers a fresh jitted function and never compiles it."""
    f = jax.jit(lambda v: v * 2.0 + k)
    return lambda: f.lower(x)


# The inputs task 1's words call for that ordinary inputs leave untried: a row each, with its
# reason (tests/wrong_answers/j2.py holds for each a wrong answer that only it rejects); a row's
# value: (a thunk made from a fresh constant and x, the compiles it makes)
EDGES = {
    "q1": (Edge("lowering without compiling", "the task counts XLA's compilations, not JAX's "
                "traces or lowerings: a function jitted and lowered, never compiled, is "
                "traced once and compiled not at all", (_lowered, 0)),),
}


class _Boom(Exception):
    """Raised by the check's own thunk: count_compiles must let it through and clean up."""


def _listeners() -> int:
    from jax._src import monitoring
    return sum(len(getattr(monitoring, name, ())) for name in (
        "_event_listeners", "_event_duration_secs_listeners", "_event_time_span_listeners",
        "_scalar_listeners"))


def _someone_elses(event, secs, **kw):
    """A listener that is not the attendee's: their counter must leave it registered."""


def _check_counter(count_compiles) -> str:
    jax.monitoring.register_event_duration_secs_listener(_someone_elses)
    try:
        return _check_counting(count_compiles)
    finally:
        from jax._src import monitoring
        if _someone_elses in monitoring._event_duration_secs_listeners:
            monitoring.unregister_event_duration_listener(_someone_elses)


def _check_counting(count_compiles) -> str:
    from jax._src import monitoring
    before, counted = _listeners(), 0
    for what, thunk, want in _cases():
        state = KernelState()
        got = call_as(count_compiles, "count_compiles(fn)", thunk)
        if _someone_elses not in monitoring._event_duration_secs_listeners:
            raise Wrong(f"after counting {what}, a listener your count_compiles did not "
                        "register is gone (clear_event_listeners removes everyone's): "
                        "unregister only your own", 2)
        if _listeners() != before:
            raise Wrong(f"after counting {what}, your listener is still registered: every "
                        "later compile in this kernel would call it. Unregister it", 2)
        _left_for_everyone(f"after counting {what}, your count_compiles", state, 2)
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            raise Wrong(f"count_compiles should return an int, it returned {type(got).__name__}")
        got = exact(got)   # (what it holds, not what its own __ne__ says)
        if got != want and counted and got == counted + want:
            raise Wrong(f"for {what}, XLA compiled {want} time(s) but your count says {got}: "
                        f"these {want} plus the {counted} counted on the calls before. Count "
                        "in a list that is new on every call", 2)
        if got != want:
            raise Wrong(f"for {what}, XLA compiled {want} time(s) but your count says {got}")
        counted += got

    # a count inside another one's fn, as when a counted function counts a part of itself
    k, x, inner = next(_fresh), np.ones(3, np.float32), []
    f, g = jax.jit(lambda v: v * 3.0 + k), jax.jit(lambda v: v * 5.0 - k)

    def outer():
        f(x)
        inner.append(count_compiles(lambda: g(x)))
    got = count_compiles(outer)
    inner, got = exact(inner), exact(got)
    if inner != [1] or got != 2:
        raise Wrong("for a count_compiles called inside the fn of another, XLA compiled 1 "
                    f"time in the inner call and 2 in the outer, but your counts say "
                    f"{inner[0] if inner else None} and {got}: does each call count in a "
                    "list of its own, kept apart from the other's?", 2)

    def fails():
        jax.jit(lambda v: v - next(_fresh))(np.ones(2, np.float32))
        raise _Boom()
    try:
        count_compiles(fails)
    except _Boom:
        pass
    else:
        raise Wrong("when fn() raises, count_compiles should let the error through", 2)
    if _listeners() != before:
        raise Wrong("when fn() raises, your listener stays registered: unregister it in a "
                    "`finally:` block", 2)
    return "it counts XLA compilations, and only those, call by call, and cleans up"


q1 = Task(LAB, 1, "Count compiles", _check_counter, [
    "Register a jax.monitoring duration listener around the call and count one kind of event: "
    "the one recorded when XLA compiles, not when JAX traces or lowers.",
    "Print the events a listener sees around one call of a fresh jitted function: one name "
    "has 'compile' and 'backend' in it. Count in a list that is new on every call, and "
    "clean up even when fn() raises.",
], takes="count_compiles")


# ----------------------------------------------------------------- task 2: the diagnosis

def _check_causes(causes) -> str:
    if causes is None or isinstance(causes, str) or not hasattr(causes, "__iter__"):
        raise Wrong("give a set of names from j2.CAUSES, e.g. {'static_lr', ...}")
    if isinstance(causes, dict):
        raise Wrong("give the set of the names that make the count rise, not a dict of every "
                    "suspect")
    causes = list(causes)
    if not all(isinstance(c, str) for c in causes):
        raise Wrong("give the suspects by their names in j2.CAUSES (strings)")
    causes = exact(causes)   # (str subclasses as the names they hold)
    unknown = set(causes) - set(CAUSES)
    if unknown:
        raise Wrong(f"unknown name(s) {sorted(unknown)}: pick names from j2.CAUSES")
    if set(causes) != _TRUE:
        # one message for every wrong set: no count of right or wrong picks to search with
        raise Wrong("not this set. For each suspect, show it with the counters: in a clean "
                    "loop (one compile) put that suspect back alone, and see whether the count "
                    "rises. Name exactly those that make it rise")
    return f"all {len(_TRUE)} causes, and no suspect that does not recompile"


q2 = Task(LAB, 2, "Name the causes", _check_causes, [
    "Fixing one suspect in the buggy loop tells you little: the others still recompile every "
    "step and hide it. Start from a clean loop that compiles once, then put one suspect back.",
    "A clean loop: a step jitted once outside the loop, nothing static, every argument of one "
    "shape and one dtype on every step (batches of one size: make_batches(seed, "
    "sizes=(32,) * 8)), no Python conversion of the results. count_compiles says 1.",
    "Then, one suspect at a time, copy the one line the suspect describes from train_buggy "
    "into the clean loop, count, and undo it. jax.explain_cache_misses says why a count rose.",
])


# ----------------------------------------------------------------- task 3: the fix

# the first stream never reaches MAX_BATCH (padding to the stream's own longest batch would
# pass it), the second does, and is one batch longer (a loop compiled for the number of
# batches would compile again); both have a one-row batch
SIZES = [(27, 14, 27, 19, 8, 11, 24, 1), (32, 14, 29, 21, 32, 9, 1, 17, 26)]
# feature sizes far from those the notebook uses (its count_fresh counts up from 10): the
# attendee's step has never been compiled for them
_dims = itertools.count(41)


@contextmanager
def _jitted_results():
    """Every jitted call made in the block, as (name, arguments, results). JAX runs a jitted
    function it has seen with these argument types in C++ (its fast path), out of Python's
    sight; for a function first called with them in the block, that path is left unmade, so
    each of its calls comes through Python and is recorded. So is an ahead-of-time compiled
    step's (jax.jit(step).lower(...).compile(), as J3 task 4 teaches): a Compiled first
    called in the block gets no C++ path either."""
    from jax._src import pjit
    from jax._src.interpreters import pxla
    seen = []
    kept = (pjit._get_fastpath_data, pxla.ExecuteReplicated.__call__,
            pxla.MeshExecutable.create_cpp_call)
    call = kept[1]

    def record(self, *args):
        out = call(self, *args)
        seen.append((self.name, args, out))
        return out
    pjit._get_fastpath_data = lambda *args, **kwargs: None
    pxla.ExecuteReplicated.__call__ = record
    pxla.MeshExecutable.create_cpp_call = lambda self, params: None
    try:
        yield seen
    finally:
        (pjit._get_fastpath_data, pxla.ExecuteReplicated.__call__,
         pxla.MeshExecutable.create_cpp_call) = kept


def _numbers(arrays) -> set:
    """Every floating-point number in `arrays`, as float32."""
    out = set()
    for a in arrays:
        a = np.asarray(a)
        if np.issubdtype(a.dtype, np.floating):
            out.update(a.astype(np.float32).ravel().tolist())
    return out


def _not_computed_by_jit(losses, w, batches, ran) -> str | None:
    """None if each step's loss came out of a jitted call that was given that step's batch,
    and w out of a jitted call; else what did not."""
    calls = [(name, _numbers(args), _numbers(out)) for name, args, out in ran]
    names = ", ".join(sorted({name for name, *_ in calls})) or "none"
    for i, (loss, (x, _)) in enumerate(zip(losses, batches)):
        gave = [(name, given) for name, given, out in calls if float(np.float32(loss)) in out]
        if not gave:
            return (f"the loss of step {i} did not come out of any jitted function your "
                    f"loop ran (it ran: {names})")
        rows = set(x.astype(np.float32).ravel().tolist())
        if not any(rows <= given for _, given in gave):
            return (f"the loss of step {i} came out of {', '.join(sorted({n for n, _ in gave}))}"
                    f", which was not given step {i}'s batch")
    w = np.asarray(w, np.float32)
    if not any(np.asarray(o).shape == w.shape and np.array_equal(np.asarray(o, np.float32), w)
               for _, _, out in ran for o in out):
        return f"the trained weights w did not come out of any jitted function (it ran: {names})"
    return None


def _check_fixed(train) -> str:
    dim = next(_dims)      # a size the notebook has not compiled for, on every check
    rng = np.random.default_rng(dim)
    for run, (seed, base_lr) in enumerate([(101 + dim, 0.05), (202 + dim, 0.03)]):
        batches = make_batches(seed, dim, SIZES[run])
        # weights that do not start at zero: weight decay moves them from the first step
        w0 = jax.device_put(rng.normal(size=dim).astype(np.float32))
        b0 = jax.device_put(np.float32(rng.normal()))
        out, c, ran = _run_counted(train, w0, b0, batches, base_lr)
        losses, w = _same_numbers(out, w0, b0, batches, base_lr)
        _compiles_as_fixed(run, c)
        outside = _not_computed_by_jit(losses, w, batches, ran)
        if outside:
            raise Wrong(f"the right numbers, but {outside}: each step should run through the "
                        "one jitted step, on its batch, not in NumPy beside it")
    return "one compile on fresh shapes, none on a second run, and the same losses"


def _run_counted(train, w0, b0, batches, base_lr):
    """What train_fixed returns, the compiles it made and the jitted calls it ran; Wrong if it
    left the kernel changed (put back, either way)."""
    with compiles() as c, _jitted_results() as ran:
        state = KernelState()
        try:
            out = call_as(train, "train_fixed(w, b, batches, base_lr)", w0, b0,
                          [(np.array(x), np.array(y)) for x, y in batches],   # (its copy:
                          base_lr)                        # the check computes on its own)
        except BaseException:
            state.restore()        # (the counter's own listener too): the error is told
            raise
        _left_for_everyone("your train_fixed", state, 0)
    return out, c, ran


def _same_numbers(out, w0, b0, batches, base_lr):
    """The losses (as floats) and w that train_fixed returned, once they and b are
    train_buggy's; else Wrong."""
    if not (isinstance(out, tuple) and len(out) == 3):
        raise Wrong("return (w, b, losses), as train_buggy does")
    w, b, losses = out
    rw, rb, rlosses = reference(w0, b0, batches, base_lr)
    try:
        losses = [float(v) for v in losses]
    except (TypeError, ValueError):
        raise Wrong("losses should be a list of one number per batch") from None
    if len(losses) != len(batches):
        raise Wrong(f"losses should have one value per batch ({len(batches)}), "
                    f"it has {len(losses)}")
    # float32 against float64 differs by about 1e-7 (more where a residual is a small
    # difference of big terms: float32's own rounding, measured, sets the margin); weight
    # decay on a wrong step, or off, moves the numbers by about 1e-5 or more
    rounding = np.abs(np.subtract(reference(w0, b0, batches, base_lr, np.float32)[2],
                                  rlosses))
    for i, (got, want) in enumerate(zip(losses, rlosses)):
        if not abs(got - want) <= 3e-6 * abs(want) + 1e-7 + 8 * rounding[i]:
            raise Wrong(f"the loss of step {i} (a batch of {len(batches[i][0])} rows) is "
                        f"{got:.7f}; train_buggy's is {want:.7f}: a fix must not change "
                        "the numbers")
    w = as_array(w, "the w your loop returns")
    b = as_array(b, "the b your loop returns")
    if w.shape != rw.shape or not np.allclose(w, rw, rtol=1e-5, atol=1e-6):
        raise Wrong("the trained weights w differ from train_buggy's")
    if b.shape != () or not np.allclose(b, rb, rtol=1e-5, atol=1e-7):
        raise Wrong("the trained bias b differs from train_buggy's")
    return losses, w


def _compiles_as_fixed(run: int, c) -> None:
    """Wrong unless the first run compiled once and the second not at all."""
    names = ", ".join(sorted(set(c.names)))
    if run == 0 and c.count == 0:
        raise Wrong("the right numbers, but nothing compiled on fresh shapes: the step "
                    "should run as one jitted function (fixed_step), not in NumPy")
    if run == 0 and c.count > 1:
        raise Wrong(f"on fresh shapes, your loop compiled {c.count} times ({names}); "
                    "after the warm-up it should never compile again, so once in all")
    if run == 1 and c.count:
        raise Wrong(f"run again on new batches and a new base learning rate, it compiled "
                    f"{c.count} more time(s) ({names}); it should compile none")


q3 = Task(LAB, 3, "Fix the loop", _check_fixed, [
    "Fix each cause you named: one jitted step defined once, outside the loop; every "
    "argument with one shape and one type on every step; nothing static that changes.",
    "One shape: pad each batch to the same number of rows, one that no stream can exceed, "
    "and say with the mask which rows are real, so the mean is over those only. One type: "
    "what dtype, and what weak type, does each argument have on step 0, and on step 5?",
], takes="train_fixed")
