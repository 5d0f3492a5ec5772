"""Lab J3 "Own the derivative": the checks.
The tasks are in exercises/J3-own-the-derivative.ipynb."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import core

from . import Task, Wrong, as_array, close

LAB = "J3"


def _eqns(jaxpr: core.Jaxpr):
    """Every equation of a jaxpr, sub-jaxprs (scan bodies, remat bodies, ...) included.
    Since JAX 0.12 there is no ClosedJaxpr: make_jaxpr gives a core.Jaxpr that carries its
    consts, and so does every jaxpr in an equation's params (custom_vjp_call's call_jaxpr,
    scan's and remat2's jaxpr, cond's tuple of branches)."""
    for e in jaxpr.eqns:
        yield e
        for v in e.params.values():
            for sub in (v if isinstance(v, (tuple, list)) else [v]):
                if isinstance(sub, core.Jaxpr):
                    yield from _eqns(sub)


def _prims(fn, *args) -> list[str]:
    return [e.primitive.name for e in _eqns(jax.make_jaxpr(fn)(*args))]


def _is_own_custom_vjp(fn, *args) -> bool:
    """fn is a jax.custom_vjp, or its top-level jaxpr is one custom_vjp_call equation
    whose outputs are the jaxpr's outputs (a thin wrapper around one)."""
    if isinstance(fn, jax.custom_vjp):
        return True
    jaxpr = jax.make_jaxpr(fn)(*args)
    return (len(jaxpr.eqns) == 1 and jaxpr.eqns[0].primitive.name == "custom_vjp_call"
            and list(jaxpr.outvars) == list(jaxpr.eqns[0].outvars))


def _autodiff_traces(fn, *args) -> int:
    """How many JVP/linearize traces JAX opens while staging jax.grad(fn): one is grad's
    own; more mean autodiff ran inside the rule (a jax.grad, jax.vjp, ... in fwd or bwd)."""
    from jax._src.interpreters import ad
    classes = [c for c in (getattr(ad, "JVPTrace", None), getattr(ad, "LinearizeTrace", None))
               if c is not None]
    seen = [0]
    originals = {c: c.__dict__["__init__"] for c in classes}

    def counting(init):
        def __init__(self, *a, **k):
            seen[0] += 1
            return init(self, *a, **k)
        return __init__
    for c, init in originals.items():
        c.__init__ = counting(init)
    try:
        jax.make_jaxpr(jax.grad(fn))(*args)
    finally:
        for c, init in originals.items():
            c.__init__ = init
    return seen[0]


@jax.custom_vjp
def _lse_own(x):
    return jax.nn.logsumexp(x)


_lse_own.defvjp(lambda x: (_lse_own(x), jax.nn.softmax(x)), lambda s, g: (g * s,))


# ----------------------------------------------------------------- task 1: log-sum-exp

def _lse_ref(x):
    x = np.asarray(x, np.float64)
    m = x.max(axis=-1, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[..., 0]


def _softmax_ref(x):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


_rng = np.random.default_rng(3)
_LSE_MODERATE = (_rng.normal(size=6) * 2.0).astype(np.float32)
_LSE_LARGE = np.array([1000.0, 998.5, -3.0, 999.0, 990.0, 0.0], np.float32)
_LSE_SMALL = np.array([-1000.0, -1001.0, -1003.5, -1000.5, -1010.0, -1002.0], np.float32)
_LSE_BATCH = (_rng.normal(size=(5, 6)) * 3.0).astype(np.float32)


def _check_lse(fn) -> str:
    x = jnp.asarray(_LSE_MODERATE)
    val = as_array(fn(x), "logsumexp of a vector")   # eager first: a half-done answer fails
    if jnp.shape(val) != ():
        raise Wrong(f"logsumexp of a vector should be a scalar, yours has shape {jnp.shape(val)}")
    f, grad = jax.jit(fn), jax.jit(jax.grad(fn))   # one shape (6,): one compile each
    if not close(val, _lse_ref(x), tol=1e-4):
        raise Wrong(f"on a vector of 6 normal draws it gives {float(val):.5f}, "
                    f"not {_lse_ref(x):.5f}")
    for name, case in (("large", _LSE_LARGE), ("very negative", _LSE_SMALL)):
        v = f(jnp.asarray(case))
        if not np.isfinite(float(v)) or not close(v, _lse_ref(case), tol=1e-3):
            raise Wrong(f"on {name} inputs {case.tolist()} it gives {float(v)}, not "
                        f"{_lse_ref(case):.3f}: the forward pass is not stable yet")
    if "custom_vjp_call" not in _prims(fn, x):
        raise Wrong("the values are right, but the staged program has no custom_vjp_call: "
                    "this is plain autodiff, not your rule")
    if not _is_own_custom_vjp(fn, x):
        raise Wrong("the staged program has a custom_vjp_call, but other work around it "
                    "is differentiated by plain autodiff: make logsumexp itself the "
                    "@jax.custom_vjp, with the whole computation in its fwd and bwd")
    if _autodiff_traces(fn, x) > _autodiff_traces(_lse_own, x):
        raise Wrong("your rule runs JAX's autodiff inside it (a jax.grad or jax.vjp in fwd or "
                    "bwd): grad would differentiate for you. Write the derivative from the "
                    "math: it is a vector you know")
    want = _softmax_ref(x)           # the exact gradient: softmax, NumPy float64
    g = as_array(grad(x), "the gradient")
    if g.shape != want.shape:
        raise Wrong(f"the gradient has shape {g.shape}, not {want.shape}: one entry per input")
    if not close(g, want, tol=1e-4):
        raise Wrong(f"the gradient on 6 normal draws disagrees with softmax(x), the exact "
                    f"gradient (largest difference {np.abs(g - want).max():.3g})")
    eps = 1e-2
    steps = eps * jnp.eye(x.shape[0], dtype=x.dtype)
    fd = np.asarray((jax.vmap(f)(x + steps) - jax.vmap(f)(x - steps)) / (2 * eps))
    if not close(g, fd, tol=5e-3):
        raise Wrong("the gradient disagrees with central finite differences of your own "
                    f"function (largest difference {np.abs(g - fd).max():.3g})")
    ct = 2.5
    _, vjp = jax.vjp(f, x)
    (gx,) = vjp(jnp.float32(ct))
    if not close(gx, ct * want, tol=1e-4):
        raise Wrong("with an incoming cotangent of 2.5 the result is not 2.5 × the gradient: "
                    "does the backward rule use its cotangent argument?")
    for name, case in (("large", _LSE_LARGE), ("very negative", _LSE_SMALL)):
        g = np.asarray(grad(jnp.asarray(case)))
        if not np.all(np.isfinite(g)) or not close(g, _softmax_ref(case), tol=1e-4):
            raise Wrong(f"on {name} inputs the gradient is {np.round(g, 4).tolist()}: "
                        "the backward rule is not stable yet")
    gb = jax.jit(jax.vmap(jax.grad(fn)))(jnp.asarray(_LSE_BATCH))
    if not close(gb, _softmax_ref(_LSE_BATCH), tol=1e-4):
        raise Wrong("under jit(vmap(grad(...))) over a batch of rows the gradients are wrong")
    return ("finite on extreme inputs, the gradient matches softmax (NumPy float64) and "
            "finite differences, and logsumexp is itself a custom_vjp: grad runs your rule")


q1 = Task(LAB, 1, "A stable log-sum-exp with its own VJP", _check_lse, [
    "Forward: subtract the maximum before exp, add it back after log. The derivative of "
    "log Σ exp(x) with respect to x is a vector you know from classification.",
    "fwd returns (value, residuals): keep what bwd needs, the gradient itself if you can "
    "compute it stably now. bwd(residuals, g) returns a tuple with one entry per input.",
    "The shape of it: fwd computes y = logsumexp(x) and one array from x and y; bwd "
    "multiplies that array by g. The array is exp(something) that never overflows.",
], takes="logsumexp")


# ----------------------------------------------------------------- task 2: clipped gradient

_CLIP_X = np.array([4.0, -3.0, 0.25, -0.5, 2.0, -7.5, 1.5, 0.0], np.float32)
# cotangents on both sides of both bounds, and on the bounds themselves
_CLIP_W = np.array([3.0, -0.5, -7.0, 0.9, 1.0, -1.5, -1.0, 1.0001], np.float32)


def _check_clip(fn) -> str:
    x, w = jnp.asarray(_CLIP_X), jnp.asarray(_CLIP_W)
    y = as_array(fn(x), "clip_gradient(x)")
    if not close(y, x):
        raise Wrong(f"the forward pass should leave x alone: on {_CLIP_X.tolist()} it gives "
                    f"{np.round(np.asarray(y), 3).tolist()}")
    if "custom_vjp_call" not in _prims(fn, x):
        raise Wrong("the staged program has no custom_vjp_call: autodiff will use its own rule")
    g = as_array(jax.jit(jax.grad(lambda x: jnp.sum(w * fn(x))))(x), "the gradient")
    want = np.clip(_CLIP_W, -1.0, 1.0)
    if close(g, _CLIP_W):
        raise Wrong("the cotangents pass through unclipped: the gradient equals plain "
                    "autodiff's")
    if not close(g, want):
        raise Wrong(f"with incoming cotangents {_CLIP_W.tolist()} the gradient is "
                    f"{np.round(g, 3).tolist()}: clip the cotangent, elementwise, to [-1, 1]")
    gv = jax.vmap(jax.grad(lambda x, w: jnp.sum(w * fn(x))))(
        jnp.stack([x, -x]), jnp.stack([w, 2 * w]))
    if not close(gv, np.stack([want, np.clip(2 * _CLIP_W, -1, 1)])):
        raise Wrong("under vmap the clipped gradients are wrong")
    return "identity forward, cotangent clipped to [-1, 1] backward, under jit and vmap too"


q2 = Task(LAB, 2, "A gradient that must be clipped", _check_clip, [
    "The forward pass is the identity; only the backward rule changes what flows back.",
    "No residual is needed, so fwd returns x and None; bwd gets g, the cotangent, and "
    "returns a one-entry tuple: g limited to [-1, 1], elementwise (not its norm).",
], takes="clip_gradient")


# ----------------------------------------------------------------- task 3 and 4: remat

WIDTH, BATCH = 64, 512


def block(h, w):
    """One residual MLP block of the stack: h + tanh(gelu(h @ w1) @ w2), a scan body."""
    w1, w2 = w
    return h + jnp.tanh(jax.nn.gelu(h @ w1) @ w2), None


def make_params(depth: int = 16, seed: int = 0, batch: int = BATCH):
    """(w1 stacked over the depth, w2 stacked over the depth) and an input batch x."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((depth, WIDTH, 4 * WIDTH), np.float32) / math.sqrt(WIDTH)
    w2 = rng.standard_normal((depth, 4 * WIDTH, WIDTH), np.float32) / math.sqrt(16 * WIDTH)
    x = rng.standard_normal((batch, WIDTH), np.float32)
    return (jnp.asarray(w1), jnp.asarray(w2)), jnp.asarray(x)


def _ref_loss(body):
    def loss(params, x):
        h, _ = jax.lax.scan(body, x, params)
        return jnp.mean(h ** 2)
    return loss


_REF = {"none": _ref_loss(block), "checkpoint": _ref_loss(jax.checkpoint(block)),
        "policy": _ref_loss(jax.checkpoint(block,
                                           policy=jax.checkpoint_policies.dots_saveable))}


def temp_bytes(loss, params, x) -> int:
    """Temp memory XLA assigns to the compiled gradient of `loss`."""
    c = jax.jit(jax.grad(loss)).lower(params, x).compile()
    return int(c.memory_analysis().temp_size_in_bytes)


def _remats(fn, params, x):
    return [e for e in _eqns(jax.make_jaxpr(fn)(params, x)) if e.primitive.name == "remat2"]


_SEEN: dict = {}   # id(fn) -> (fn, value, grad, temp bytes): a second check reuses them


def _stack_inputs():
    if "inputs" not in _SEEN:
        _SEEN["inputs"] = make_params(depth=12, seed=7)
    return _SEEN["inputs"]


def _value_grad_temp(fn, params, x):
    hit = _SEEN.get(id(fn))
    if hit is None or hit[0] is not fn:
        c = jax.jit(jax.value_and_grad(fn)).lower(params, x).compile()
        v, g = c(params, x)
        hit = _SEEN[id(fn)] = (fn, v, g, int(c.memory_analysis().temp_size_in_bytes))
    return hit[1:]


def _check_variants(variants) -> str:
    if not isinstance(variants, dict) or set(variants) != {"none", "checkpoint", "policy"}:
        raise Wrong("pass a dict with the keys 'none', 'checkpoint' and 'policy'")
    params, x = _stack_inputs()
    want, want_g, _ = _value_grad_temp(_REF["none"], params, x)
    mem = {}
    for name, fn in variants.items():
        if not callable(fn):
            raise Wrong(f"variants[{name!r}] should be a function loss(params, x)")
        v, g, mem[name] = _value_grad_temp(fn, params, x)
        if not close(v, want, tol=1e-4):
            raise Wrong(f"{name!r}: loss {float(v):.6f} on a 12-block stack, not "
                        f"{float(want):.6f}: same stack, same loss for all three")
        if not all(close(a, b, tol=1e-4) for a, b in zip(jax.tree.leaves(g),
                                                        jax.tree.leaves(want_g))):
            raise Wrong(f"{name!r}: the gradient differs from plain autodiff's")
    remats = {k: _remats(fn, params, x) for k, fn in variants.items()}
    if remats["none"]:
        raise Wrong("'none' already contains a checkpoint (remat2 equation)")
    for k in ("checkpoint", "policy"):
        if not remats[k]:
            raise Wrong(f"{k!r} has no remat2 equation in its jaxpr: where is jax.checkpoint?")
    if any(e.params["policy"] is not None for e in remats["checkpoint"]):
        raise Wrong("'checkpoint' should save nothing but its inputs: no policy")
    if all(e.params["policy"] is None for e in remats["policy"]):
        raise Wrong("'policy' has a checkpoint but no policy")
    mb = ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in mem.items())
    if not mem["checkpoint"] < mem["none"]:
        raise Wrong(f"temp memory of the gradient: {mb}. 'checkpoint' saves nothing: does "
                    "it wrap each block, inside the scan?")
    if not mem["policy"] < mem["none"]:
        raise Wrong(f"temp memory: {mb}. Your policy saves as much as no checkpoint: pick "
                    "one that keeps less")
    if not mem["checkpoint"] < mem["policy"]:
        raise Wrong(f"temp memory: {mb}. Your policy keeps no more than plain checkpoint: "
                    "pick one that keeps some residuals")
    return f"same loss and gradient; temp memory none > policy > checkpoint ({mb})"


q3 = Task(LAB, 3, "Three ways to remat a deep stack", _check_variants, [
    "One scan over the stacked weights with `block` as its body; wrap the body, not the "
    "whole loss, with jax.checkpoint.",
    "jax.checkpoint takes the function to checkpoint, here the scan body, and an optional "
    "policy=...: look in jax.checkpoint_policies for one whose name says it keeps the "
    "results of matrix products.",
])


_REF_TEMP: dict = {}


_MEASURED: dict = {}


def _measure_all(measure, params, x) -> dict:
    got = {}
    for name, loss in _REF.items():
        out = measure(loss, params, x)
        if not isinstance(out, tuple) or len(out) != 2:
            raise Wrong("measure should return a pair (temp_bytes, seconds)")
        t, s = out
        if isinstance(s, (int, np.integer)) and not isinstance(t, (int, np.integer)):
            raise Wrong("the pair is (temp_bytes, seconds), in that order")
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
            raise Wrong(f"temp_bytes should be a whole number of bytes, not "
                        f"{type(t).__name__}")
        if isinstance(s, bool) or not (isinstance(s, (float, int, np.floating))
                                       and 0 < float(s) < 5.0):
            raise Wrong(f"{s!r} seconds for one gradient step of 6 small blocks: seconds as "
                        "a float, one call, after a warm-up, waiting for the result")
        got[name] = (int(t), float(s))
        _reference_seconds(name, params, x)    # right after theirs: the same machine load
    return got


_REF_EXE: dict = {}


def _reference_seconds(name, params, x) -> float:
    """The check's own timing of the same executable: median of 5 calls after a warm-up,
    each waited for."""
    import time
    key = (name, params[0].shape, x.shape)
    if key not in _REF_EXE:
        _REF_EXE[key] = [jax.jit(jax.grad(_REF[name])).lower(params, x).compile(), []]
    exe, times = _REF_EXE[key]
    jax.block_until_ready(exe(params, x))
    for _ in range(5):
        t0 = time.perf_counter()
        jax.block_until_ready(exe(params, x))
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


_FACTOR = 4.0          # generous: the machine may be busy; a missed wait or a compile is not


def _check_measure(measure) -> str:
    params, x = make_params(depth=6, seed=11, batch=1024)
    hit = _MEASURED.get(id(measure))
    if hit and hit[0] is measure and hit[1] is measure.__code__:
        got = hit[2]                  # the same function checked again: reuse its numbers
    else:
        got = _measure_all(measure, params, x)
        _MEASURED[id(measure)] = (measure, measure.__code__, got)
    if "none" not in _REF_TEMP:
        _REF_TEMP["none"] = temp_bytes(_REF["none"], params, x)
    want = _REF_TEMP["none"]
    if got["none"][0] != want:
        raise Wrong(f"for a stack of 6 blocks without checkpoints your temp_bytes is "
                    f"{got['none'][0]}, but the compiled gradient's memory analysis says "
                    f"{want}: measure the gradient's executable, its temp size")
    if not got["checkpoint"][0] < got["policy"][0] < got["none"][0]:
        raise Wrong("your measured temp bytes do not order checkpoint < policy < none: "
                    f"{ {k: v[0] for k, v in got.items()} }")
    for name, (_, secs) in got.items():
        times = _REF_EXE[(name, params[0].shape, x.shape)][1]
        # too fast against the fastest real call (a busy machine only slows calls down), too
        # slow against the median: a missed wait is 100× off, a timed compile about 10×
        ref, fastest = float(np.median(times)), float(min(times))
        if secs < fastest / _FACTOR:
            raise Wrong(f"{name!r}: {secs * 1e3:.2f} ms, but the same executable takes at "
                        f"least {fastest * 1e3:.1f} ms a call here: did you wait for the result "
                        "(dispatch is asynchronous) and time a real call?")
        if secs > ref * _FACTOR:
            raise Wrong(f"{name!r}: {secs * 1e3:.1f} ms, but the same executable takes about "
                        f"{ref * 1e3:.1f} ms a call here: does your timing include the "
                        "compile or the warm-up? Time calls of the compiled executable only")
    ms = ", ".join(f"{k} {v[1] * 1e3:.1f} ms" for k, v in got.items())
    mem = got["none"][0] / max(got["checkpoint"][0], 1)
    slow = got["checkpoint"][1] / got["none"][1]
    trade = ("the recompute costs time, as the books say" if slow > 1 else
             "and no slower: on this CPU the recompute costs less than the memory traffic "
             "it saves, so here the trade-off shows only in memory")
    return (f"temp bytes match XLA's memory analysis; ordering holds; run times {ms}, "
            f"close to the check's own timing. 'checkpoint' plans {mem:.1f}× less temp "
            f"memory at {slow:.2f}× the time of 'none': {trade}")


q4 = Task(LAB, 4, "Measure the trade-off", _check_measure, [
    "jax.jit(jax.grad(loss)).lower(params, x).compile() gives an executable with "
    ".memory_analysis(); time calls of that executable.",
    "Which field of memory_analysis() is the temporaries? A call returns before the work "
    "is done: what makes the clock wait? And the first call is not what you want to time.",
], takes="measure")

