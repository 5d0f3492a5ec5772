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


def _train(static_lr=False, batch_shape=False, weak_decay=False, new_function=False,
           mask=True):
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
                xp = np.zeros((j2.MAX_BATCH, x.shape[1]), np.float32)
                yp = np.zeros(j2.MAX_BATCH, np.float32)
                xp[:n], yp[:n] = x, y
                m = (np.arange(j2.MAX_BATCH) < n).astype(np.float32) if mask \
                    else np.ones(j2.MAX_BATCH, np.float32)
            lr = j2.schedule(i, base_lr)
            lr = lr if static_lr else np.float32(lr)
            wd = j2.WD if i >= j2.WARMUP else (0.0 if weak_decay else np.float32(0.0))
            step = jax.jit(lambda *a: step_fn(*a), static_argnums=statics) \
                if new_function else once
            w, b, loss = step(w, b, xp, yp, m, lr, wd)
            losses.append(float(loss))
        return w, b, losses
    return train


ONE_CAUSE = {cause: _train(**{cause: True}) for cause in
             ["static_lr", "batch_shape", "weak_decay", "new_function"]}

WRONG = {
    "q1": [_listening(lambda e: True), _listening(lambda e: e.endswith("trace_duration")),
           _listening(lambda e: e == BACKEND, seen=[]), _compiling_lines, lambda fn: (fn(), 1)[1]],
    "q2": [set(j2.CAUSES), j2._TRUE - {"weak_decay"}, j2._TRUE | {"numpy_batches"},
           {"static_lr"}, "static_lr", sorted(j2._TRUE | {"float_loss"})],
    # the other three one-cause loops run in test_j2_answer_key_each_cause_alone_recompiles
    "q3": [j2.train_buggy, ONE_CAUSE["weak_decay"], _train(mask=False)],
}
