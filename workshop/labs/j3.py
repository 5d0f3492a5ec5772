"""Lab J3 "Own the derivative": the checks.
The tasks are in exercises/J3-own-the-derivative.ipynb. What the checks read from an answer's
program is in j3_reading.py; how task 4 judges an answer's seconds, in j3_timing.py."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from . import Edge, Task, Wrong, as_array, as_now, close
from .j3_reading import (
    _autodiff_traces,
    _bwd_gives_a_tuple,
    _compiled,
    _count_dots,
    _explain_flops,
    _explain_temp,
    _flops,
    _is_own_custom_vjp,
    _nbytes,
    _plain_residuals,
    _prims,
    _remats,
    _residuals,
    _same,
    _temp,
    _wraps_a_loop,
)
from .j3_timing import (
    _WAITS_MS,
    Slower,
    _check_times,
    _time,
    _wait_name,
    _waits,
    _waits_inputs,
)

LAB = "J3"


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
# extreme vectors whose maximum is not first (third in one, last in the other) and whose range
# is wider than float32's exp can take (exp(89) is inf): a shift by x[0], x[-1], the mean or
# the minimum overflows on one of them; only the maximum keeps every exp at most 1
_LSE_LARGE = np.array([0.0, 998.5, 1000.0, 999.0, 990.0, -3.0], np.float32)
_LSE_SMALL = np.array([-1100.0, -1001.0, -1003.5, -1090.0, -1010.0, -1000.0], np.float32)
# near float32's limit (exp(88.7) is finite, exp(88.73) is inf): every exp(x) is finite, their
# sum is not
_LSE_EDGE = np.array([87.9, 87.6, 80.0, 87.8, 0.0, 87.7], np.float32)
_LSE_EXTREME = (("on large inputs", _LSE_LARGE),
                ("on inputs just below float32's limit for exp", _LSE_EDGE),
                ("on very negative inputs", _LSE_SMALL))


def _fmt(a, digits=4) -> list:
    """An array as a list of short Python floats, for a message (float32's 0.9 prints as
    0.8999999761581421 otherwise)."""
    return [round(float(v), digits) for v in np.asarray(a).ravel()]
_LSE_BATCH = (_rng.normal(size=(5, 6)) * 3.0).astype(np.float32)


def _check_lse_forward(f, val, x) -> None:
    """Whether the value is log Σ exp(x) on moderate inputs, and finite and right on extremes."""
    if not close(val, _lse_ref(x), tol=1e-4):
        raise Wrong(f"on a vector of 6 normal draws it gives {float(val):.5f}, "
                    f"not {_lse_ref(x):.5f}")
    for name, case in _LSE_EXTREME:
        v = float(f(jnp.asarray(case)))
        if not np.isfinite(v):
            raise Wrong(f"{name} {_fmt(case)} it gives {v}, not "
                        f"{_lse_ref(case):.3f}: the forward pass is not stable yet")
        if not close(v, _lse_ref(case), tol=1e-3):
            raise Wrong(f"{name} {_fmt(case)} it gives {v:.3f}, not "
                        f"{_lse_ref(case):.3f}: finite, but not log Σ exp(x) there")


def _check_lse_rule(fn, x) -> None:
    """Whether grad runs the answer's own rule: logsumexp is a custom_vjp written from the math."""
    prims = _prims(fn, x)
    if "custom_vjp_call" not in prims and "custom_jvp_call" in prims:
        raise Wrong("the staged program has a custom_jvp_call: a forward-mode rule "
                    "(jax.custom_jvp). The task asks for a backward rule, a jax.custom_vjp "
                    "with fwd and bwd", 2)
    if "custom_vjp_call" not in prims:
        raise Wrong("the values are right, but the staged program has no custom_vjp_call: "
                    "this is plain autodiff, not your rule", 2)
    _bwd_gives_a_tuple(fn, x, "logsumexp")
    if not _is_own_custom_vjp(fn, x):
        raise Wrong("the staged program has a custom_vjp_call, but other work around it "
                    "is differentiated by plain autodiff: make logsumexp itself the "
                    "@jax.custom_vjp, with the whole computation in its fwd and bwd", 2)
    if _autodiff_traces(fn, x) > _autodiff_traces(_lse_own, x):
        raise Wrong("your rule runs JAX's autodiff inside it (a jax.grad or jax.vjp in fwd or "
                    "bwd): grad would differentiate for you. Write the derivative from the "
                    "math: it is a vector you know", 1)


def _check_lse_gradient(f, grad, x) -> None:
    """Whether the gradient is softmax(x), matches finite differences, scales with its cotangent."""
    want = _softmax_ref(x)           # the exact gradient: softmax, NumPy float64
    g = as_array(grad(x), "the gradient")
    if g.shape != want.shape:
        raise Wrong(f"the gradient has shape {g.shape}, not {want.shape}: one entry per input", 2)
    if not close(g, want, tol=1e-4):
        raise Wrong(f"the gradient on 6 normal draws disagrees with softmax(x), the exact "
                    f"gradient (largest difference {np.abs(g - want).max():.3g})", 1)
    eps = 1e-2
    steps = eps * jnp.eye(x.shape[0], dtype=x.dtype)
    fd = np.asarray((jax.vmap(f)(x + steps) - jax.vmap(f)(x - steps)) / (2 * eps))
    if not close(g, fd, tol=5e-3):
        raise Wrong("the gradient disagrees with central finite differences of your own "
                    f"function (largest difference {np.abs(g - fd).max():.3g})", 1)
    _, vjp = jax.vjp(f, x)
    for ct, edge in [(2.5, "")] + [(e.value, e.name) for e in EDGES["q1"]]:
        (gx,) = vjp(jnp.float32(ct))
        if not close(gx, ct * want, tol=1e-4):
            raise Wrong(f"with an incoming cotangent of {ct}" + (f" ({edge})" if edge else "")
                        + f" the result is not {ct} × the gradient: does the backward rule "
                        "use its cotangent argument, as it is?", 3)


def _check_lse_gradient_elsewhere(fn, grad) -> None:
    """Whether the gradient is right on extreme inputs, and on a batch under jit(vmap(grad))."""
    for name, case in _LSE_EXTREME:
        g = np.asarray(grad(jnp.asarray(case)))
        if not np.all(np.isfinite(g)) or not close(g, _softmax_ref(case), tol=1e-4):
            raise Wrong(f"{name} the gradient is {_fmt(g)}: "
                        "the backward rule is not stable yet", 3)
    gb = jax.jit(jax.vmap(jax.grad(fn)))(jnp.asarray(_LSE_BATCH))
    if not close(gb, _softmax_ref(_LSE_BATCH), tol=1e-4):
        raise Wrong("under jit(vmap(grad(...))) over a batch of rows the gradients are wrong", 2)


def _check_lse(fn) -> str:
    fn = as_now(fn)    # its rule as registered now (defvjp again), not as jit kept it
    x = jnp.asarray(_LSE_MODERATE)
    val = as_array(fn(x), "logsumexp of a vector")   # eager first: a half-done answer fails
    if jnp.shape(val) != ():
        raise Wrong(f"logsumexp of a vector should be a scalar, yours has shape {jnp.shape(val)}")
    f, grad = jax.jit(fn), jax.jit(jax.grad(fn))   # one shape (6,): one compile each
    _check_lse_forward(f, val, x)
    _check_lse_rule(fn, x)
    _check_lse_gradient(f, grad, x)
    _check_lse_gradient_elsewhere(fn, grad)
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
    fn = as_now(fn)    # its rule as registered now (defvjp again), not as jit kept it
    x, w = jnp.asarray(_CLIP_X), jnp.asarray(_CLIP_W)
    y = as_array(fn(x), "clip_gradient(x)")
    if not close(y, x):
        raise Wrong(f"the forward pass should leave x alone: on {_fmt(_CLIP_X)} it gives "
                    f"{_fmt(y, 3)}", 1)
    if "custom_vjp_call" not in _prims(fn, x):
        raise Wrong("the staged program has no custom_vjp_call: autodiff will use its own rule", 1)
    _bwd_gives_a_tuple(fn, x, "clip_gradient")
    g = as_array(jax.jit(jax.grad(lambda x: jnp.sum(w * fn(x))))(x), "the gradient")
    want = np.clip(_CLIP_W, -1.0, 1.0)
    if close(g, _CLIP_W):
        raise Wrong("the cotangents pass through unclipped: the gradient equals plain "
                    "autodiff's", 2)
    if not close(g, want):
        raise Wrong(f"with incoming cotangents {_fmt(_CLIP_W)} the gradient is "
                    f"{_fmt(g, 3)}: clip the cotangent, elementwise, to [-1, 1]", 2)
    for e in EDGES["q2"]:
        _clipped_at_the_edge(fn, e)
    gv = jax.vmap(jax.grad(lambda x, w: jnp.sum(w * fn(x))))(
        jnp.stack([x, -x]), jnp.stack([w, 2 * w]))
    if not close(gv, np.stack([want, np.clip(2 * _CLIP_W, -1, 1)])):
        raise Wrong("under vmap the clipped gradients are wrong", 2)
    return ("identity forward, cotangent clipped to [-1, 1] backward (infinite ones to ±1, "
            "NaN kept, the dtype kept), under jit and vmap too")


def _clipped_at_the_edge(fn, e: Edge) -> None:
    """Wrong unless the rule clips the row's cotangents (for an x of the row's dtype) as
    np.clip does, in that dtype."""
    dtype, w = e.value
    _, vjp = jax.vjp(jax.jit(fn), jnp.asarray(_CLIP_X, dtype))
    (gi,) = vjp(jnp.asarray(w, dtype))
    if gi.dtype != dtype:
        raise Wrong(f"for {e.name} with {np.dtype(dtype).name} cotangents the gradient comes "
                    f"back as {gi.dtype}: a gradient has the dtype of its input, so keep g's "
                    "dtype", 2)
    w = np.asarray(jnp.asarray(w, dtype), np.float32)
    gi, want = np.asarray(gi, np.float32), np.clip(w, -1.0, 1.0)
    told = f"with incoming cotangents {_fmt(w)} the gradient is {_fmt(gi, 3)}"
    inf = np.isinf(w)
    if not np.array_equal(gi[inf], want[inf]):
        raise Wrong(f"{told}: an infinite cotangent is beyond 1 too, and clipped it is ±1, "
                    "a finite number", 2)
    if not np.isnan(gi[np.isnan(w)]).all():
        raise Wrong(f"{told}: a NaN cotangent came back as a number. np.clip leaves a NaN a "
                    "NaN, and so should the rule: a NaN turned into a number hides a bug "
                    "upstream", 2)
    if not close(gi[np.isfinite(w)], want[np.isfinite(w)]):
        raise Wrong(f"{told} ({e.name}): clip the cotangent, elementwise, to [-1, 1]", 2)


q2 = Task(LAB, 2, "A gradient that must be clipped", _check_clip, [
    "The forward pass is the identity; only the backward rule changes what flows back.",
    "No residual is needed, so fwd returns x and None; bwd gets g, the cotangent, and "
    "returns a one-entry tuple: g limited to [-1, 1], elementwise (not its norm). An "
    "infinite g comes out as ±1 too (inf / inf, inf − inf and inf · 0 are NaN), a NaN as "
    "NaN, and bounds given as Python floats keep g's dtype.",
], takes="clip_gradient")


# The inputs each task's words call for that ordinary inputs leave untried: a row each, with
# its reason (tests/wrong_answers/j3.py holds for each a wrong answer that only it rejects)
EDGES = {
    "q1": (Edge("a negative cotangent", "bwd gets g, the cotangent, and the gradient scales "
                "with it, sign included: a rule that uses |g| agrees with every positive one",
                -2.5),),
    # task 2's rows: (the dtype of x and of its cotangents, the cotangents)
    "q2": (Edge("an infinite cotangent", "an overflow upstream sends inf: it is beyond 1 like "
                "any other, and clipped to [-1, 1] it is ±1, a finite number",
                (jnp.float32, [np.inf, -np.inf, 0.5, -2.0, np.inf, 1.0, 0.0, 3.0])),
           Edge("a NaN cotangent", "clipped elementwise as np.clip does, a NaN stays a NaN: "
                "a rule that makes it a number hides the bug upstream",
                (jnp.float32, [np.nan, 0.5, -2.0, 1.0, 0.0, -0.25, 3.0, -1.0])),
           Edge("a bfloat16 x", "the gradient has the dtype of its input: bounds given as "
                "float32 arrays would promote a bfloat16 cotangent",
                (jnp.bfloat16, _CLIP_W))),
}


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


_REF = {"none": _ref_loss(block), "checkpoint": _ref_loss(jax.checkpoint(block))}


def _mib(n) -> str:
    return f"{n / 2**20:.1f} MiB"


_Q3_INPUTS: list = []


def _stack_inputs():
    """Task 3's stack: 12 blocks, made once (the check's own input, never the answer's)."""
    if not _Q3_INPUTS:
        _Q3_INPUTS.append(make_params(depth=12, seed=7))
    return _Q3_INPUTS[0]


def _value_grad_temp(fn, params, x):
    exe = _compiled(jax.value_and_grad(fn), params, x)
    v, g = exe(params, x)
    return v, g, _temp(exe)


_KINDS = ("none", "checkpoint", "policy")


def _check_variants(variants) -> str:
    """The three losses read in turn: their checkpoints and policies, what their backward
    passes keep, their loss and gradient, then their temp memory."""
    _three_losses(variants)
    variants = {k: as_now(fn) for k, fn in variants.items()}   # each as it is now
    params, x = _stack_inputs()
    jaxprs = {k: jax.make_jaxpr(variants[k])(params, x) for k in _KINDS}
    remats = {k: _remats(j) for k, j in jaxprs.items()}
    if remats["none"]:
        raise Wrong("'none' already contains a checkpoint (remat2 equation)", 1)
    for k in ("checkpoint", "policy"):
        if not remats[k]:
            raise Wrong(f"{k!r} has no remat2 equation in its jaxpr: where is jax.checkpoint?", 1)
    # what each variant's backward pass keeps with its policies removed
    plain = {k: _plain_residuals(jaxprs[k], params, x) for k in ("checkpoint", "policy")}
    _checkpoint_has_no_policy(variants["checkpoint"], remats["checkpoint"],
                              plain["checkpoint"], params, x)
    _a_policy_of_jax_on_each(remats["policy"])
    for k in ("checkpoint", "policy"):
        if any(_wraps_a_loop(e) for e in remats[k]):
            raise Wrong(f"{k!r}: the checkpoint wraps the whole loop, not each block: put "
                        "jax.checkpoint on the scan body (around the whole loss it keeps "
                        "everything the loop needs, as if there were no checkpoint)", 1)
    kept = _residuals(variants["policy"], params, x)
    _policy_changes_something(kept, plain["policy"], remats["policy"])
    for k in ("checkpoint", "policy"):
        out, total = _count_dots(jaxprs[k])
        if out:
            raise Wrong(f"{k!r}: {out} of the {total} matrix products run outside any "
                        "checkpoint: checkpoint each whole block, the scan body", 1)
    mem = _same_loss_and_gradient(variants, params, x)
    mb = ", ".join(f"{k} {_mib(mem[k])}" for k in _KINDS)
    _memory_in_order(mem, mb)
    return (f"same loss and gradient, each block checkpointed; temp memory none > policy > "
            f"checkpoint ({mb}); your policy keeps {_mib(_nbytes(kept))} of residuals where "
            f"plain checkpoint keeps {_mib(_nbytes(plain['policy']))}. Task 4 puts a price on it")


def _three_losses(variants) -> None:
    """Wrong unless variants is a dict of the three losses by name, each a function."""
    if not isinstance(variants, dict) or set(variants) != set(_KINDS):
        raise Wrong("pass a dict with exactly the keys 'none', 'checkpoint' and 'policy'")
    for name, fn in variants.items():
        if not callable(fn):
            raise Wrong(f"variants[{name!r}] should be a function loss(params, x)")


def _checkpoint_has_no_policy(loss, remats, plain, params, x) -> None:
    """Wrong if 'checkpoint' has a policy that keeps more than its inputs."""
    if any(e.params["policy"] is not None for e in remats):
        kept = _residuals(loss, params, x)
        if kept != plain:     # nothing_saveable is no policy under a name
            raise Wrong("'checkpoint' should save nothing but its inputs: no policy (with "
                        f"its policy it keeps {len(kept)} arrays, {_mib(_nbytes(kept))}, "
                        f"without it {len(plain)}, {_mib(_nbytes(plain))})", 2)


def _a_policy_of_jax_on_each(remats) -> None:
    """Wrong unless every checkpoint of 'policy' has a policy, one of jax's own."""
    without = [e for e in remats if e.params["policy"] is None]
    if len(without) == len(remats):
        raise Wrong("'policy' has a checkpoint but no policy", 2)
    if without:
        raise Wrong(f"'policy': {len(without)} of its {len(remats)} checkpoints "
                    "have no policy: put the policy on every block's checkpoint", 2)
    for e in remats:
        policy = e.params["policy"]
        if not getattr(getattr(policy, "func", policy), "__module__", "").startswith("jax."):
            raise Wrong(f"'policy': its policy, {getattr(policy, '__name__', policy)!r}, is a "
                        "function of your own: the task asks for one from "
                        "jax.checkpoint_policies", 2)


def _policy_changes_something(kept, plain, remats) -> None:
    """Wrong if 'policy' keeps what it would keep with no policy (nothing_saveable)."""
    if kept == plain:
        inside = sum(_count_dots(e.params["jaxpr"])[1] for e in remats
                     if e.params["policy"] is not None)
        why = (" The part it checkpoints has no matrix product, so a policy that keeps "
               "the results of matrix products has nothing to keep there." if not inside
               else "")
        raise Wrong("'policy': with its policy or without one (nothing_saveable), the "
                    f"backward pass keeps the same arrays ({len(kept)}, "
                    f"{_mib(_nbytes(kept))}): the policy changes nothing and plans the same "
                    f"bytes as nothing_saveable.{why}", 2)


def _same_loss_and_gradient(variants, params, x) -> dict:
    """The temp memory of each variant's gradient, once its loss and gradient are plain
    autodiff's (else Wrong)."""
    want, want_g, _ = _value_grad_temp(_REF["none"], params, x)
    mem = {}
    for name in _KINDS:
        v, g, mem[name] = _value_grad_temp(variants[name], params, x)
        if not close(v, want, tol=1e-4):
            raise Wrong(f"{name!r}: loss {float(v):.6f} on a 12-block stack, not "
                        f"{float(want):.6f}: same stack, same loss for all three")
        if not all(close(a, b, tol=1e-4) for a, b in zip(jax.tree.leaves(g),
                                                        jax.tree.leaves(want_g))):
            raise Wrong(f"{name!r}: the gradient differs from plain autodiff's")
    return mem


def _memory_in_order(mem: dict, mb: str) -> None:
    """Wrong unless temp memory goes none > policy > checkpoint."""
    if not mem["checkpoint"] < mem["none"]:
        raise Wrong(f"temp memory of the gradient: {mb}. 'checkpoint' saves nothing: does "
                    "it wrap each block, inside the scan?", 1)
    if not mem["policy"] < mem["none"]:
        raise Wrong(f"temp memory: {mb}. Your policy saves as much as no checkpoint: pick "
                    "one that keeps less", 2)
    if not mem["checkpoint"] < mem["policy"]:
        raise Wrong(f"temp memory: {mb}. Your policy keeps no more than plain checkpoint: "
                    "pick one that keeps some residuals", 2)


q3 = Task(LAB, 3, "Three ways to remat a deep stack", _check_variants, [
    "One scan over the stacked weights with `block` as its body; wrap the body, not the "
    "whole loss, with jax.checkpoint.",
    "jax.checkpoint takes the function to checkpoint, here the scan body, and an optional "
    "policy=...: look in jax.checkpoint_policies for one whose name says it keeps the "
    "results of matrix products, and put it on the whole block, where those products are.",
])


# ----------------------------------------------------------------- task 4: measure

# The check calls measure on 'none' and 'checkpoint' of a 4-block stack (quick to run), and on
# two calls that wait on the host, 2 ms and 30 ms: their times are known on any machine
# (j3_timing.py)
_Q4_DEPTH, _Q4_BATCH = 4, 512


def _cases():
    params, x = make_params(depth=_Q4_DEPTH, seed=11, batch=_Q4_BATCH)
    return ([("'none'", _REF["none"], params, x)]
            + [(_wait_name(ms), _waits, *_waits_inputs(ms)) for ms in _WAITS_MS]
            + [("'checkpoint'", _REF["checkpoint"], params, x)])


def _triple(out, name):
    """(temp_bytes, flops, seconds) from what measure returned, or Wrong."""
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        got = (f"a {len(out)}-tuple" if isinstance(out, (tuple, list))
               else type(out).__name__)
        raise Wrong(f"measure should return three numbers (temp_bytes, flops, seconds), "
                    f"not {got}")
    t, f, s = out
    number = (int, float, np.integer, np.floating)
    if isinstance(t, (float, np.floating)) and isinstance(s, (int, np.integer)):
        raise Wrong("the triple is (temp_bytes, flops, seconds), in that order", 2)
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
        raise Wrong(f"temp_bytes should be a whole number of bytes, not {type(t).__name__}")
    if isinstance(f, bool) or not isinstance(f, number) or not np.isfinite(f) or f < 0:
        raise Wrong(f"flops should be a number, XLA's count, not {f!r}")
    if isinstance(s, bool) or not isinstance(s, number) or not 0 < float(s) < math.inf:
        raise Wrong(f"{s!r} seconds for one gradient call of {name}: seconds as a "
                    "positive float, one call, after a warm-up, waiting for the result")
    return int(t), float(f), float(s)


def _settled(measure, timed: dict, got: dict, ref: dict) -> None:
    """_check_times on the seconds so far. A busy machine only ever makes a call slower, so a
    verdict that a call was too slow stands only if it holds again: measure and the check's
    own timing run once more on the same executables (`timed`: name -> loss, params, x, exe),
    and each call's fastest counts (an answer that times several calls is too slow both
    times; a right one that a burst of load caught, once seen at 0.9× where the check timed
    12×, passes)."""
    secs = {k: v[2] for k, v in got.items()}
    try:
        _check_times(secs, ref)
    except Slower:
        for name, (loss, params, x, exe) in timed.items():
            secs[name] = min(secs[name], _triple(measure(loss, params, x), name)[2])
            got[name] = (*got[name][:2], secs[name])
            ref[name] = tuple(map(min, ref[name], _time(exe, params, x)))
        _check_times(secs, ref, again=True)


def _check_measure(measure) -> str:
    got, ref, timed = {}, {}, {}
    for i, (name, loss, params, x) in enumerate(_cases()):
        temp, flops, secs = _triple(measure(loss, params, x), name)
        exe = _compiled(jax.grad(loss), params, x)
        if temp != _temp(exe) or not _same(flops, _flops(exe)):
            both = _compiled(jax.value_and_grad(loss), params, x)  # value and gradient: the
            if temp != _temp(both) or not _same(flops, _flops(both)):  # same work, accepted
                if temp != _temp(exe):
                    raise Wrong(_explain_temp(name, temp, loss, params, x, exe), 2)
                raise Wrong(_explain_flops(name, flops, loss, params, x, exe), 2)
        got[name], timed[name] = (temp, flops, secs), (loss, params, x, exe)
        ref[name] = _time(exe, params, x)     # right after theirs: the same machine load
        if i == len(_WAITS_MS):      # the seconds so far, before the last compile
            _settled(measure, timed, got, ref)
    _settled(measure, timed, got, ref)
    (tn, fn_, _), (tc, fc, _) = got["'none'"], got["'checkpoint'"]
    return (f"temp bytes and flops equal XLA's analyses of each compiled gradient, and your "
            f"times follow the check's own timing of the same executables. The trade-off on "
            f"a {_Q4_DEPTH}-block stack: 'checkpoint' plans {tn / tc:.1f}× less temp memory "
            f"than 'none' ({tc / 2**20:.2f} vs {tn / 2**20:.2f} MiB) for {fc / fn_:.2f}× its "
            f"flops ({fc / 1e6:.1f} vs {fn_ / 1e6:.1f} M, one block's forward and backward: "
            "XLA counts a loop's body once): each block's forward pass runs again in the "
            "backward pass. Whether the extra flops cost time depends on the machine: on a "
            "CPU they may not show at all")


q4 = Task(LAB, 4, "Measure the trade-off", _check_measure, [
    "jax.jit(jax.grad(loss)).lower(params, x).compile() gives an executable with "
    ".memory_analysis() and .cost_analysis(); time calls of that executable.",
    "Which field of memory_analysis() is the temporaries? cost_analysis() is a dict of XLA's "
    "estimates: which entry counts floating-point operations? A call returns before the work "
    "is done: what makes the clock wait? And the first call is not what you want to time.",
], takes="measure")
