"""Lab J2: plausible wrong answers its checks must reject (tests/test_labs.py runs them).

`_train(...)` is the fixed loop with one cause of recompilation put back (or the mask left
out): one wrong answer per cause, and together the proof of task 2's answer key."""
from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
import numpy as np

from workshop.labs import j2

BACKEND = "/jax/core/compile/backend_compile_duration"


def _listening(keep, seen=None):
    """count_compiles built on a listener that keeps events for which keep(event) holds; with
    `seen` given, one list for every call, so the counts never reset."""
    def count_compiles(fn):
        kept = [] if seen is None else seen
        cb = lambda event, secs, **kw: kept.append(event) if keep(event) else None  # noqa
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
    cb = lambda e, s, **kw: kept.append(e) if e == BACKEND else None  # noqa: E731
    jax.monitoring.register_event_duration_secs_listener(cb)
    fn()
    jax.monitoring.unregister_event_duration_listener(cb)
    return len(kept)


def _swallows(fn):                   # catches fn's error instead of letting it through
    kept = []
    cb = lambda e, s, **kw: kept.append(e) if e == BACKEND else None  # noqa: E731
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
    cb = lambda e, s, **kw: names.add(kw.get("fun_name")) if e == BACKEND else None  # noqa
    jax.monitoring.register_event_duration_secs_listener(cb)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(cb)
    return len(names)


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

def _starter(*args, **kwargs):
    raise NotImplementedError()


WRONG = {
    "q1": [_starter, _listening(lambda e: True),
           _listening(lambda e: e.endswith("trace_duration")),
           _listening(lambda e: e == BACKEND, seen=[]), _compiling_lines, lambda fn: (fn(), 1)[1],
           _no_unregister, _no_finally, _swallows, _distinct_names],
    "q2": [None, set(j2.CAUSES), j2._TRUE - {"weak_decay"}, j2._TRUE | {"numpy_batches"},
           {"static_lr"}, "static_lr", sorted(j2._TRUE | {"float_loss"}),
           {"static_lr", "new_function"}, {1, 2}],
    # the other three one-cause loops run in test_j2_answer_key_each_cause_alone_recompiles
    "q3": [_starter, j2.train_buggy, ONE_CAUSE["weak_decay"], _train(mask=False),
           _train(pad_to="longest"),                 # boundary: the stream's longest batch
           _train(decay_from=0),                     # boundary: weight decay from step 0
           _train(decay_from=j2.WARMUP + 1),         # boundary: one step late
           _train(numpy_only=True),                  # sidestep: no jit at all
           _train(b_fixed=True)],                    # half-done: b never trained
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


RIGHT = {
    "q1": [_count_by_duration_events, _count_with_kit],
    "q2": [sorted(j2._TRUE), frozenset(j2._TRUE)],
    "q3": [_train(), _train_jax_padded],
}
