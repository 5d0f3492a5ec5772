"""Lab J2 "The recompile hunt": the loop, its causes, and the checks.
The tasks are in exercises/J2-the-recompile-hunt.ipynb."""
from __future__ import annotations

import itertools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ..jitcache import compiles
from . import Task, Wrong

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


def reference(w, b, batches, base_lr):
    """The same training in float64 NumPy: what every version must compute."""
    w, b = np.asarray(w, np.float64), float(b)
    losses = []
    for i, (x, y) in enumerate(batches):
        lr, wd = schedule(i, base_lr), float(WD) if i >= WARMUP else 0.0
        x, y = x.astype(np.float64), y.astype(np.float64)
        r = x @ w + b - y
        losses.append(float(np.mean(r ** 2)))
        gw, gb = 2 * x.T @ r / len(x), 2 * r.mean()
        w, b = w - lr * (gw + wd * w), b - lr * gb
    return w, b, losses


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
    f4 = jax.jit(lambda v: v * 2.0 + k)
    return [
        ("one function called three times with one shape", lambda: [f1(x) for _ in range(3)], 1),
        ("one function called with three shapes",
         lambda: [f2(np.ones(n, np.float32)) for n in (2, 3, 4)], 3),
        ("a function that was already compiled", lambda: warm(x), 0),
        ("lowering without compiling", lambda: f4.lower(x), 0),
        ("two new jitted lambdas", lambda: [jax.jit(lambda v, c=c: v + c + k)(x)
                                            for c in (1.0, 2.0)], 2),
    ]


def _check_counter(count_compiles) -> str:
    if not callable(count_compiles):
        raise Wrong("pass your function itself: q1.check(count_compiles)")
    for what, thunk, want in _cases():
        got = count_compiles(thunk)
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            raise Wrong(f"count_compiles should return an int, it returned {type(got).__name__}")
        if got != want:
            raise Wrong(f"for {what}, XLA compiled {want} time(s) but your count says {got}")
    return "it counts XLA compilations, and only those, call by call"


q1 = Task(LAB, 1, "Count compiles", _check_counter, [
    "Register a jax.monitoring duration listener around the call and count one kind of event: "
    "the one recorded when XLA compiles, not when JAX traces or lowers.",
    "The event is '/jax/core/compile/backend_compile_duration'. Count it in a list that is "
    "new on every call, and unregister the listener in a finally block.",
])


# ----------------------------------------------------------------- task 2: the diagnosis

def _n(k: int, one: str, many: str) -> str:
    return f"{k} {one if k == 1 else many}"


def _check_causes(causes) -> str:
    if isinstance(causes, str) or not hasattr(causes, "__iter__"):
        raise Wrong("give a set of names from j2.CAUSES, e.g. {'static_lr', ...}")
    causes = set(causes)
    unknown = causes - set(CAUSES)
    if unknown:
        raise Wrong(f"unknown cause(s) {sorted(unknown)}: pick names from j2.CAUSES")
    extra, missing = causes - _TRUE, _TRUE - causes
    wrong = (f"{_n(len(extra), 'of your causes does', 'of your causes do')} not make "
             "train_buggy recompile")
    if extra and missing:
        raise Wrong(f"{wrong}, and {_n(len(missing), 'cause that does is', 'causes that do are')}"
                    " missing")
    if extra:
        raise Wrong(f"{wrong}: take one out of the loop and watch the counters, they do not "
                    "move")
    if missing:
        raise Wrong(f"you found {_n(len(causes), 'cause', 'causes')}; "
                    f"{_n(len(missing), 'more makes', 'more make')} train_buggy recompile")
    return f"all {len(_TRUE)} causes, and neither decoy"


q2 = Task(LAB, 2, "Name the causes", _check_causes, [
    "Fix one suspect at a time in a copy of the loop and count compiles; or turn on "
    "jax.explain_cache_misses and read why each step's trace missed.",
    "explain_cache_misses names the argument and the two types (look for weak_type), a "
    "different static value, or a function it has never seen. A NumPy argument and float(loss) "
    "never show up there.",
])


# ----------------------------------------------------------------- task 3: the fix

SIZES = [(32, 27, 32, 19, 32, 11, 24, 32), (32, 14, 29, 21, 32, 9, 32, 17)]
_dims = itertools.count(5)


def _check_fixed(train) -> str:
    if not callable(train):
        raise Wrong("pass your function itself: q3.check(train_fixed)")
    dim = next(_dims)      # a size the notebook has not compiled for, on every check
    for run, (seed, base_lr) in enumerate([(101 + dim, 0.05), (202 + dim, 0.03)]):
        batches = make_batches(seed, dim, SIZES[run])
        w0 = jax.device_put(np.zeros(dim, np.float32))
        b0 = jax.device_put(np.float32(0.0))
        with compiles() as c:
            out = train(w0, b0, batches, base_lr)
        if not (isinstance(out, tuple) and len(out) == 3):
            raise Wrong("return (w, b, losses), as train_buggy does")
        w, b, losses = out
        rw, rb, rlosses = reference(w0, b0, batches, base_lr)
        if len(losses) != len(batches):
            raise Wrong(f"losses should have one value per batch ({len(batches)}), "
                        f"it has {len(losses)}")
        for i, (got, want) in enumerate(zip(losses, rlosses)):
            if not np.isclose(float(got), want, rtol=1e-3, atol=1e-5):
                raise Wrong(f"the loss of step {i} is {float(got):.5f}; train_buggy's is "
                            f"{want:.5f}: a fix must not change the numbers")
        if not np.allclose(np.asarray(w), rw, rtol=1e-3, atol=1e-5):
            raise Wrong("the trained weights differ from train_buggy's")
        names = ", ".join(sorted(set(c.names)))
        if run == 0 and c.count > 1:
            raise Wrong(f"on fresh shapes, your loop compiled {c.count} times ({names}); "
                        "after the warm-up it should never compile again, so once in all")
        if run == 1 and c.count:
            raise Wrong(f"run again on new batches and a new base learning rate, it compiled "
                        f"{c.count} more time(s) ({names}); it should compile none")
    return "one compile on fresh shapes, none on a second run, and the same losses"


q3 = Task(LAB, 3, "Fix the loop", _check_fixed, [
    "Fix each cause you named: one jitted step defined once, outside the loop; every "
    "argument with one shape and one type on every step; nothing static that changes.",
    "Pad each batch to MAX_BATCH rows in NumPy and pass a 0/1 mask, so the mean is over the "
    "real rows only; pass lr and wd as np.float32 values, traced.",
])
