"""Lab J2: plausible wrong answers its checks must reject (tests/test_labs.py runs them).

`_train(...)` is the fixed loop with one cause of recompilation put back (or the mask left
out): one wrong answer per cause, and together the proof of task 2's answer key."""
from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
import numpy as np

from workshop.labs import j2
from wrong_answers import LiarInt, W

BACKEND = "/jax/core/compile/backend_compile_duration"


def _listening(keep, seen=None):
    """count_compiles built on a listener that keeps events for which keep(event) holds; with
    `seen` given, one list for every call, so the counts never reset."""
    def count_compiles(fn):
        kept = [] if seen is None else seen
        cb = lambda event, secs, **kw: kept.append(event) if keep(event) else None
        jax.monitoring.register_event_duration_secs_listener(cb)
        try:
            fn()
        finally:
            jax.monitoring.unregister_event_duration_listener(cb)
        return len(kept)
    return count_compiles


def _compiling_lines(fn):            # log_compiles' "Compiling ..." lines come at lowering
    lines = []
    h = logging.Handler()
    h.emit = lambda record: lines.append(record.getMessage())
    lg = logging.getLogger("jax._src.interpreters.pxla")
    lg.addHandler(h)
    try:
        with jax.log_compiles(True):
            fn()
    finally:
        lg.removeHandler(h)
    return sum(line.startswith("Compiling") for line in lines)


def _no_unregister(fn):              # half-done: the listener is never removed
    kept = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda e, s, **kw: kept.append(e) if e == BACKEND else None)
    fn()
    return len(kept)


def _no_finally(fn):                 # unregisters, but not when fn() raises
    kept = []
    cb = lambda e, s, **kw: kept.append(e) if e == BACKEND else None
    jax.monitoring.register_event_duration_secs_listener(cb)
    fn()
    jax.monitoring.unregister_event_duration_listener(cb)
    return len(kept)


def _swallows(fn):                   # catches fn's error instead of letting it through
    kept = []
    cb = lambda e, s, **kw: kept.append(e) if e == BACKEND else None
    jax.monitoring.register_event_duration_secs_listener(cb)
    try:
        fn()
    except Exception:
        pass
    finally:
        jax.monitoring.unregister_event_duration_listener(cb)
    return len(kept)


def _distinct_names(fn):             # one per function name: two lambdas count once
    names = set()
    cb = lambda e, s, **kw: names.add(kw.get("fun_name")) if e == BACKEND else None
    jax.monitoring.register_event_duration_secs_listener(cb)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(cb)
    return len(names)


def _returns_names(fn):               # the names, not how many
    names = []
    cb = lambda e, s, **kw: names.append(kw.get("fun_name")) if e == BACKEND else None
    jax.monitoring.register_event_duration_secs_listener(cb)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(cb)
    return names


def _calls_with_args(f, *args):       # count_compiles(f, x) as if it called f(x) itself
    kept = []
    cb = lambda e, s, **kw: kept.append(e) if e == BACKEND else None
    jax.monitoring.register_event_duration_secs_listener(cb)
    try:
        f(*args)
    finally:
        jax.monitoring.unregister_event_duration_listener(cb)
    return len(kept)


def _calls_f_with(f, x):              # the same, with one argument it must be given
    return _calls_with_args(f, x)


def _train(static_lr=False, batch_shape=False, weak_decay=False, new_function=False,
           mask=True, pad_to=None, decay_from=None, numpy_only=False, b_fixed=False):
    def step_fn(w, b, x, y, m, lr, wd):
        def loss_fn(w, b):
            r = (x @ w + b - y) * m
            return jnp.sum(r ** 2) / jnp.sum(m)
        loss, (gw, gb) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w, b)
        return w - lr * (gw + wd * w), b - lr * gb, loss

    statics = (5,) if static_lr else ()
    once = jax.jit(step_fn, static_argnums=statics)

    def train(w, b, batches, base_lr):
        losses = []
        for i, (x, y) in enumerate(batches):
            n = len(x)
            if batch_shape:
                xp, yp, m = x, y, np.ones(n, np.float32)
            else:
                rows = max(len(x) for x, _ in batches) if pad_to == "longest" else j2.MAX_BATCH
                xp = np.zeros((rows, x.shape[1]), np.float32)
                yp = np.zeros(rows, np.float32)
                xp[:n], yp[:n] = x, y
                m = (np.arange(rows) < n).astype(np.float32) if mask \
                    else np.ones(rows, np.float32)
            lr = j2.schedule(i, base_lr)
            lr = lr if static_lr else np.float32(lr)
            start = j2.WARMUP if decay_from is None else decay_from
            wd = j2.WD if i >= start else (0.0 if weak_decay else np.float32(0.0))
            step = jax.jit(lambda *a: step_fn(*a), static_argnums=statics) \
                if new_function else once
            if numpy_only:                         # sidestep: the same step in NumPy
                w, b = np.asarray(w, np.float32), np.float32(b)
                r = (xp @ w + b - yp) * m
                loss = np.sum(r ** 2) / np.sum(m)
                gw, gb = 2 * xp.T @ r / np.sum(m), 2 * np.sum(r) / np.sum(m)
                w, b = w - lr * (gw + wd * w), b - lr * gb
            else:
                w, b2, loss = step(w, b, xp, yp, m, lr, wd)
                b = b if b_fixed else b2
            losses.append(float(loss))
        return w, b, losses
    return train


ONE_CAUSE = {cause: _train(**{cause: True}) for cause in
             ["static_lr", "batch_shape", "weak_decay", "new_function"]}

@jax.jit
def _loss_only(w, b, x, y, m):
    return jnp.sum(((x @ w + b - y) * m) ** 2) / jnp.sum(m)


def _jitted_loss_numpy_update(w, b, batches, base_lr):    # the loss jitted, the step in NumPy
    w, b, losses = np.asarray(w, np.float32), np.float32(b), []
    for i, (x, y) in enumerate(batches):
        n, rows = len(x), j2.MAX_BATCH
        xp, yp = np.zeros((rows, x.shape[1]), np.float32), np.zeros(rows, np.float32)
        xp[:n], yp[:n] = x, y
        m = (np.arange(rows) < n).astype(np.float32)
        losses.append(float(_loss_only(w, b, xp, yp, m)))
        lr, wd = np.float32(j2.schedule(i, base_lr)), j2.WD if i >= j2.WARMUP else 0.0
        r = (xp @ w + b - yp) * m
        gw, gb = 2 * xp.T @ r / n, 2 * r.sum() / n
        w, b = w - lr * (gw + wd * w), b - lr * gb
    return w, b, losses


def _counts_itself_then_clears(w, b, batches, base_lr):   # its own counter, then clears all
    seen = []
    jax.monitoring.register_event_duration_secs_listener(lambda e, s, **kw: seen.append(e))
    out = _train()(w, b, batches, base_lr)
    jax.monitoring.clear_event_listeners()
    return out


def _without_base_lr(w, b, batches):     # a fixed learning rate: takes three arguments
    return _train()(w, b, batches, 0.05)


# ----------------------------------------------------------------- ring 2
# Written by an independent tester after reading each task and its checker (issue 29;
# tests/wrong_answers/ring2/j2.py): the code as written there.

# ----------------------------------------------------------------- q1: count compiles

_SEEN: list = []


# One list for the whole module, emptied at the start of each call: a count_compiles called
# inside another one's fn empties the outer count and both listeners append to the one list.
# count_compiles(lambda: (f(x), count_compiles(lambda: g(x)))): the inner call returns 2,
# not 1.
def count_shared_list(fn):
    _SEEN.clear()
    cb = lambda e, s, **kw: _SEEN.append(e) if e == BACKEND else None
    jax.monitoring.register_event_duration_secs_listener(cb)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(cb)
    return len(_SEEN)


# Cleans up with jax.monitoring.clear_event_listeners(): it removes every listener in the
# kernel, not only its own. Inside `with workshop.jitcache.compiles() as c:` (or any other
# listener), a call leaves the kit's counter deaf: later compiles in the block are not counted.
def count_clear_listeners(fn):
    kept = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda e, s, **kw: kept.append(e) if e == BACKEND else None)
    try:
        fn()
    finally:
        jax.monitoring.clear_event_listeners()
    return len(kept)


# Counts log_compiles' "Finished XLA compilation" lines, switching the flag on with
# jax.config.update and never back: after one call every compile in the kernel logs a
# WARNING (jax.config.jax_log_compiles stays True).
def count_log_compiles_left_on(fn):
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logger = logging.getLogger("jax._src.dispatch")
    logger.addHandler(handler)
    jax.config.update("jax_log_compiles", True)
    try:
        fn()
    finally:
        logger.removeHandler(handler)
    return sum(line.startswith("Finished XLA compilation") for line in lines)


# The audit's: log_compiles as a `with` block (the flag comes back), but the handler that
# reads its lines is added on every call and never removed: each call adds one more to the
# kernel's jax._src.dispatch logger
def count_handler_left(fn):
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logging.getLogger("jax._src.dispatch").addHandler(handler)
    with jax.log_compiles(True):
        fn()
    return sum(line.startswith("Finished XLA compilation") for line in lines)


# Wraps JAX's compile step to count its calls and never puts it back: every later compile
# in the kernel runs through the wrapper (a JAX internal wrapped and never restored)
def count_wrapped_compile(fn):
    from jax._src import compiler
    calls, real = [], compiler.backend_compile_and_load

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    compiler.backend_compile_and_load = counting
    fn()
    return len(calls)


# Counts explain_cache_misses' "TRACING CACHE MISS" lines (switched on, never off): a trace
# cache miss is not a compile (f.lower(x) misses and compiles nothing), and the flag stays on.
def count_cache_misses_left_on(fn):
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logger = logging.getLogger("jax._src.interpreters.partial_eval")
    logger.addHandler(handler)
    jax.config.update("jax_explain_cache_misses", True)
    try:
        fn()
    finally:
        logger.removeHandler(handler)
    return sum("TRACING CACHE MISS" in line for line in lines)


# A scalar listener (compile start times are recorded as scalars) registered on every call
# and never unregistered: after n calls n listeners run on every compile in the kernel.
def count_scalar_never_unregistered(fn):
    kept = []
    jax.monitoring.register_scalar_listener(
        lambda e, v, **kw: kept.append(e) if e == BACKEND else None)
    fn()
    return len(kept)


# register_event_listener instead of the duration listener: a compile is recorded as a
# duration (and a scalar), never as a plain event, so this counts 0 for every compile.
def count_plain_events(fn):
    kept = []
    cb = lambda e, **kw: kept.append(e) if e == BACKEND else None
    jax.monitoring.register_event_listener(cb)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_listener(cb)
    return len(kept)


# (right) Counts the compile-start scalar, with a listener removed in `finally`.
def count_scalar_listener(fn):
    kept = []

    def cb(event, value, **kw):
        if event == BACKEND:
            kept.append(kw.get("fun_name"))
    jax.monitoring.register_scalar_listener(cb)
    try:
        fn()
    finally:
        jax.monitoring.unregister_scalar_listener(cb)
    return len(kept)


# ----------------------------------------------------------------- q2: the causes

CAUSES_NO_STATIC = j2._TRUE - {"static_lr"}          # a static lr "is only a number"
CAUSES_NO_SHAPE = j2._TRUE - {"batch_shape"}         # shapes thought to be traced, not keyed
CAUSES_NO_NEW_FUNCTION = j2._TRUE - {"new_function"}  # "jit caches by the code"
CAUSES_AS_VERDICTS = {name: name in j2._TRUE for name in j2.CAUSES}   # every suspect, a bool
CAUSES_AS_TEXT = {j2.CAUSES[name] for name in j2._TRUE}   # the descriptions, not the names
CAUSES_NONE: set = set()                             # "the loop only recompiles on shapes"
CAUSES_TYPO = (j2._TRUE - {"new_function"}) | {"new_functions"}
CAUSES_ONLY_EXPLAINED = {"batch_shape", "weak_decay"}   # what explain_cache_misses' input-type
# lines would name on a loop with one jitted step: misses the static lr and the new function


# ----------------------------------------------------------------- q3: the fix

@jax.jit
def _step(w, b, x, y, m, lr, wd):
    def loss_fn(w, b):
        r = (x @ w + b - y) * m
        return jnp.sum(r ** 2) / jnp.sum(m)
    loss, (gw, gb) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w, b)
    return w - lr * (gw + wd * w), b - lr * gb, loss


def _padded(x, y, rows=j2.MAX_BATCH):
    n = len(x)
    xp = np.zeros((rows, x.shape[1]), np.float32)
    yp = np.zeros(rows, np.float32)
    xp[:n], yp[:n] = x, y
    return xp, yp, (np.arange(rows) < n).astype(np.float32)


def _wd(i):
    return j2.WD if i >= j2.WARMUP else np.float32(0.0)


def _numpy_training(w, b, batches, base_lr):
    """train_buggy's training in float64 NumPy, as j2.reference does it."""
    w, b = np.asarray(w, np.float64), float(b)
    losses = []
    for i, (x, y) in enumerate(batches):
        lr, wd = j2.schedule(i, base_lr), float(j2.WD) if i >= j2.WARMUP else 0.0
        x, y = x.astype(np.float64), y.astype(np.float64)
        r = x @ w + b - y
        losses.append(float(np.mean(r ** 2)))
        gw, gb = 2 * x.T @ r / len(x), 2 * r.mean()
        w, b = w - lr * (gw + wd * w), b - lr * gb
    return w, b, losses


_touch = jax.jit(lambda v: v * 1.0)
_identity = jax.jit(lambda *a: a)


# Sidestep (the issue's): trains in float64 NumPy and makes one throwaway jit call so that
# the compile counter reads 1 then 0. No step runs jitted.
def train_numpy_throwaway_jit(w, b, batches, base_lr):
    _touch(w)                                           # compiles once per feature size
    return _numpy_training(w, b, batches, base_lr)


# Sidestep: the same NumPy training, then every result passed through one jitted identity,
# so w, b and the losses all "come out of a jitted call" (one compile, then none).
def train_numpy_then_jit_identity(w, b, batches, base_lr):
    w, b, losses = _numpy_training(w, b, batches, base_lr)
    w, b, losses = _identity(np.float32(w), np.float32(b), np.asarray(losses, np.float32))
    return w, b, list(np.asarray(losses))


# One jitted lax.scan over all the batches, stacked: one compile per number of batches, not
# per kernel. A stream of 8 batches, then one of 5 (new batches): it compiles again.
@jax.jit
def _scan_all(w, b, xs, ys, ms, lrs, wds):
    def body(carry, batch):
        w, b = carry
        w, b, loss = _step(w, b, *batch)
        return (w, b), loss
    (w, b), losses = jax.lax.scan(body, (w, b), (xs, ys, ms, lrs, wds))
    return w, b, losses


def train_scan_stacked(w, b, batches, base_lr):
    xs, ys, ms = (np.stack(t) for t in zip(*[_padded(x, y) for x, y in batches]))
    lrs = np.array([j2.schedule(i, base_lr) for i in range(len(batches))], np.float32)
    wds = np.array([_wd(i) for i in range(len(batches))], np.float32)
    w, b, losses = _scan_all(w, b, xs, ys, ms, lrs, wds)
    return w, b, np.asarray(losses).tolist()


# Centres each batch's targets in place "for a better-conditioned fit": the batches it was
# given change under the check (which computed its reference on its own copy)
def train_centres_in_place(w, b, batches, base_lr):
    losses = []
    for i, (x, y) in enumerate(batches):
        y -= y.mean()
        xp, yp, m = _padded(x, y)
        w, b, loss = _step(w, b, xp, yp, m, np.float32(j2.schedule(i, base_lr)), _wd(i))
        losses.append(float(loss))
    return w, b, losses


# Turns jax_enable_x64 on "so the losses match the float64 reference" and leaves it on: every
# later cell of the kernel computes in 64 bits (jnp.ones(3).dtype is float64).
def train_x64_left_on(w, b, batches, base_lr):
    jax.config.update("jax_enable_x64", True)
    losses = []
    for i, (x, y) in enumerate(batches):
        xp, yp, m = _padded(x, y)
        w, b, loss = _step(w, b, xp, yp, m, np.float32(j2.schedule(i, base_lr)), _wd(i))
        losses.append(float(loss))
    return w, b, losses


# Debugging left in: jax_log_compiles switched on and never off; every later compile in the
# kernel logs a WARNING.
def train_log_compiles_left_on(w, b, batches, base_lr):
    jax.config.update("jax_log_compiles", True)
    losses = []
    for i, (x, y) in enumerate(batches):
        xp, yp, m = _padded(x, y)
        w, b, loss = _step(w, b, xp, yp, m, np.float32(j2.schedule(i, base_lr)), _wd(i))
        losses.append(float(loss))
    return w, b, losses


# Converts the padded batches with jnp.asarray: each new shape compiles a small copy, so the
# first run compiles 3 times (the step and two copies), not once.
def train_jnp_asarray(w, b, batches, base_lr):
    losses = []
    for i, (x, y) in enumerate(batches):
        xp, yp, m = (jnp.asarray(a) for a in _padded(x, y))
        w, b, loss = _step(w, b, xp, yp, m, np.float32(j2.schedule(i, base_lr)), _wd(i))
        losses.append(float(loss))
    return w, b, losses


@jax.jit
def _step_mean_all(w, b, x, y, m, lr, wd):
    def loss_fn(w, b):
        return jnp.mean(((x @ w + b - y) * m) ** 2)     # the mean over all MAX_BATCH rows
    loss, (gw, gb) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w, b)
    return w - lr * (gw + wd * w), b - lr * gb, loss


# Masks the padded rows out of the residual but still averages over all MAX_BATCH rows: every
# batch shorter than 32 rows gets a loss (and gradient) n/32 of the right one.
def train_mean_over_padding(w, b, batches, base_lr):
    losses = []
    for i, (x, y) in enumerate(batches):
        xp, yp, m = _padded(x, y)
        w, b, loss = _step_mean_all(w, b, xp, yp, m, np.float32(j2.schedule(i, base_lr)),
                                    _wd(i))
        losses.append(float(loss))
    return w, b, losses


# Off by one in the mask (np.arange(MAX_BATCH) <= n): one padded row (x = 0, y = 0, residual
# b) counts as real in every batch shorter than 32 rows.
def train_mask_off_by_one(w, b, batches, base_lr):
    losses = []
    for i, (x, y) in enumerate(batches):
        xp, yp, _ = _padded(x, y)
        m = (np.arange(j2.MAX_BATCH) <= len(x)).astype(np.float32)
        w, b, loss = _step(w, b, xp, yp, m, np.float32(j2.schedule(i, base_lr)), _wd(i))
        losses.append(float(loss))
    return w, b, losses


_STEPS: dict = {}


# A step jitted once per base learning rate (the schedule closed over): the second run, with
# a new base_lr, compiles again.
def train_step_per_base_lr(w, b, batches, base_lr):
    if base_lr not in _STEPS:
        def step(w, b, x, y, m, decay, wd):
            return _step(w, b, x, y, m, base_lr * decay, wd)
        _STEPS[base_lr] = jax.jit(step)
    losses = []
    for i, (x, y) in enumerate(batches):
        xp, yp, m = _padded(x, y)
        w, b, loss = _STEPS[base_lr](w, b, xp, yp, m, np.float32(0.9 ** i), _wd(i))
        losses.append(float(loss))
    return w, b, losses


# Pads each batch to the next power of two (bucketing): a few shapes, so a few compiles on
# the first run (8, 16 and 32 rows: 1, 8, 11, 14, 19, 24, 27 rows land in 4 buckets).
def train_power_of_two_buckets(w, b, batches, base_lr):
    losses = []
    for i, (x, y) in enumerate(batches):
        rows = 1 << max(len(x) - 1, 0).bit_length()
        xp, yp, m = _padded(x, y, rows)
        w, b, loss = _step(w, b, xp, yp, m, np.float32(j2.schedule(i, base_lr)), _wd(i))
        losses.append(float(loss))
    return w, b, losses


# (right) The learning rate left a Python float: a dynamic (not static) Python float is a
# weakly typed float32 on every step, so it does not recompile.
def train_python_float_lr(w, b, batches, base_lr):
    losses = []
    for i, (x, y) in enumerate(batches):
        xp, yp, m = _padded(x, y)
        w, b, loss = _step(w, b, xp, yp, m, j2.schedule(i, base_lr), _wd(i))
        losses.append(float(loss))
    return w, b, losses


def _starter(*args, **kwargs):
    raise NotImplementedError()


WRONG = {
    "q1": [W(_starter, "not done yet"),
           W(_listening(lambda e: True), "your count says 3"),   # traced, lowered, compiled
           W(_listening(lambda e: e.endswith("trace_duration")), "lowering without compiling",
             edge="lowering without compiling"),
           W(_listening(lambda e: e == BACKEND, seen=[]), "calls before"),    # never resets
           W(_compiling_lines, "lowering without compiling"),  # "Compiling" comes at lowering
           W(lambda fn: (fn(), 1)[1], "your count says 1"),
           W(_no_unregister, "your listener is still registered"),
           W(_no_finally, "unregister it in a `finally:` block"),
           W(_swallows, "let the error through"),
           W(_distinct_names, "your count says 1"),
           W(_returns_names, "it returned list"),
           W(_calls_f_with, "the check calls it as count_compiles(fn)"),
           # ring 2
           W(count_shared_list, "inside the fn of another"),
           W(count_clear_listeners, "did not register"),
           W(count_log_compiles_left_on, "jax_log_compiles set to True"),
           W(count_cache_misses_left_on, "jax_explain_cache_misses set to True"),
           W(count_handler_left, "left logging changed on the logger jax._src.dispatch"),
           W(count_wrapped_compile, "left jax._src.compiler.backend_compile_and_load replaced"),
           W(count_scalar_never_unregistered, "your listener is still registered"),
           W(count_plain_events, "your count says 0"),
           W(lambda fn: (fn(), LiarInt(1))[1], "your count says 1")],   # hostile: equals all
    "q2": [W(None, "give a set of names"), W(set(j2.CAUSES), "not this set"),
           W(j2._TRUE - {"weak_decay"}, "not this set"),
           W(j2._TRUE | {"numpy_batches"}, "not this set"),
           W({"static_lr"}, "not this set"), W("static_lr", "give a set of names"),
           W(sorted(j2._TRUE | {"float_loss"}), "not this set"),
           W({"static_lr", "new_function"}, "not this set"), W({1, 2}, "(strings)"),
           W({c.upper() for c in j2._TRUE}, "unknown name"),
           # ring 2
           W(CAUSES_NO_STATIC, "not this set"), W(CAUSES_NO_SHAPE, "not this set"),
           W(CAUSES_NO_NEW_FUNCTION, "not this set"), W(CAUSES_AS_VERDICTS, "not a dict"),
           W(CAUSES_AS_TEXT, "unknown name"), W(CAUSES_NONE, "not this set"),
           W(CAUSES_TYPO, "unknown name(s) ['new_functions']"),
           W(CAUSES_ONLY_EXPLAINED, "not this set")],
    # the other three one-cause loops run in test_j2_answer_key_each_cause_alone_recompiles
    "q3": [W(_starter, "not done yet"),
           W(j2.train_buggy, "compiled 8 times"),
           W(ONE_CAUSE["weak_decay"], "compiled 2 times"),
           W(_train(mask=False), "a fix must not change the numbers"),
           # boundary: the stream's longest batch, not MAX_BATCH
           W(_train(pad_to="longest"), "it compiled 1 more time"),
           W(_train(decay_from=0), "a fix must not change the numbers"),      # boundary
           W(_train(decay_from=j2.WARMUP + 1), "a fix must not change the numbers"),  # late
           W(_train(numpy_only=True), "nothing compiled on fresh shapes"),   # no jit at all
           W(_train(b_fixed=True), "a fix must not change the numbers"),     # b never trained
           W(_jitted_loss_numpy_update, "the trained weights w did not come out"),
           W(_counts_itself_then_clears, "jax.monitoring's listeners changed"),
           W(_without_base_lr, "the check calls it as train_fixed(w, b, batches, base_lr)"),
           # ring 2
           W(train_numpy_throwaway_jit, "the loss of step 0 did not come out of any jitted"),
           W(train_numpy_then_jit_identity, "which was not given step 0's batch"),
           W(train_scan_stacked, "it compiled 1 more time"),     # one more batch: a new shape
           W(train_x64_left_on, "jax_enable_x64 set to True"),
           W(train_centres_in_place, "train_buggy's is"),   # changes the batches it is given
           W(train_log_compiles_left_on, "jax_log_compiles set to True"),
           W(train_jnp_asarray, "compiled 3 times"),
           W(train_mean_over_padding, "a fix must not change the numbers"),
           W(train_mask_off_by_one, "a fix must not change the numbers"),
           W(train_step_per_base_lr, "it compiled 1 more time"),
           W(train_power_of_two_buckets, "compiled 4 times")],
}


def _count_by_duration_events(fn):
    events = []

    def listener(event, secs, **kw):
        events.append(event)
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    return events.count(BACKEND)


def _count_with_kit(fn):
    from workshop.jitcache import compiles
    with compiles() as c:
        fn()
    return c.count


@jax.jit
def _step_where(w, b, x, y, m, lr, wd):
    def loss_fn(w, b):
        r = jnp.where(m > 0, x @ w + b - y, 0.0)
        return jnp.mean(r ** 2) * m.shape[0] / jnp.sum(m)
    loss, (gw, gb) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w, b)
    return w - lr * (gw + wd * w), b - lr * gb, loss


def _train_jax_padded(w, b, batches, base_lr):     # pads with jnp, keeps jax losses
    losses = []
    for i, (x, y) in enumerate(batches):
        n = x.shape[0]
        xp = np.pad(x, ((0, j2.MAX_BATCH - n), (0, 0)))
        yp = np.pad(y, (0, j2.MAX_BATCH - n))
        m = np.concatenate([np.ones(n, np.float32), np.zeros(j2.MAX_BATCH - n, np.float32)])
        wd = np.float32(j2.WD) * np.float32(i >= j2.WARMUP)
        w, b, loss = _step_where(w, b, xp, yp, m, np.float32(j2.schedule(i, base_lr)), wd)
        losses.append(loss)
    return w, b, losses


_AHEAD: dict = {}


def _train_ahead_of_time(w, b, batches, base_lr):   # the step compiled ahead of time (J3 q4's
    losses = []                                      # lower().compile()), once per shape
    for i, (x, y) in enumerate(batches):
        args = (w, b, *_padded(x, y), np.float32(j2.schedule(i, base_lr)), _wd(i))
        key = tuple((np.shape(a), np.result_type(a)) for a in args)
        if key not in _AHEAD:
            _AHEAD[key] = _step.lower(*args).compile()
        w, b, loss = _AHEAD[key](*args)
        losses.append(float(loss))
    return w, b, losses


def _count_time_spans(fn):            # the same event, seen by a time-span listener
    spans = []

    def listener(event, start, end, **kw):
        if event == BACKEND:
            spans.append(end - start)
    jax.monitoring.register_event_time_span_listener(listener)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_time_span_listener(listener)
    return len(spans)


def _count_finished_lines(fn):        # log_compiles' line at compile time, the flag put back
    lines = []
    h = logging.Handler()
    h.emit = lambda record: lines.append(record.getMessage())
    lg = logging.getLogger("jax._src.dispatch")
    lg.addHandler(h)
    try:
        with jax.log_compiles(True):
            fn()
    finally:
        lg.removeHandler(h)
    return sum(line.startswith("Finished XLA compilation") for line in lines)


RIGHT = {
    "q1": [_count_by_duration_events, _count_with_kit, _count_time_spans, _count_finished_lines,
           count_scalar_listener],                                          # ring 2
    "q2": [sorted(j2._TRUE), frozenset(j2._TRUE)],
    "q3": [_train(), _train_jax_padded, _train_ahead_of_time,
           train_python_float_lr],                                          # ring 2: the last
}
