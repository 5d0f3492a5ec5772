"""Plausible wrong answers for lab J3 "Own the derivative": each must be rejected with a hint
that names its mistake (W(answer, words the message must contain)); and right answers written
differently from the solution, which must pass."""
from __future__ import annotations

import random
import time

import jax
import jax.numpy as jnp
from jax.ad_checkpoint import checkpoint_name

from workshop.labs import j3
from wrong_answers import W

cp = jax.checkpoint_policies


def _starter(*args, **kwargs):
    raise NotImplementedError()


# --------------------------------------------------------------- q1: log-sum-exp

def _naive_lse(x):                       # overflows for large x
    return jnp.log(jnp.sum(jnp.exp(x)))


def _lse_with(fwd_value, bwd, residual=jax.nn.softmax):
    """A custom_vjp log-sum-exp with the given forward value, residual and backward rule."""
    @jax.custom_vjp
    def lse(x):
        return fwd_value(x)

    def fwd(x):
        return fwd_value(x), residual(x)

    lse.defvjp(fwd, bwd)
    return lse


def _shifted_by(shift):
    """log Σ exp(x), stabilised by subtracting shift(x) instead of the maximum."""
    def value(x):
        m = jax.lax.stop_gradient(shift(x))
        return m + jnp.log(jnp.sum(jnp.exp(x - m)))
    return value


def _softmax_shifted_by(shift):
    def softmax(x):
        e = jnp.exp(x - shift(x))
        return e / jnp.sum(e)
    return softmax


_stable = jax.nn.logsumexp
_lse_ignores_g = _lse_with(_stable, lambda s, g: (s,))                 # drops the cotangent
_lse_unnormalised = _lse_with(_stable, lambda s, g: (g * jnp.exp(s),))  # not softmax
_lse_naive_fwd = _lse_with(_naive_lse, lambda s, g: (g * s,))          # unstable forward
_lse_bare_array = _lse_with(_stable, lambda s, g: g * s)               # not a tuple
_lse_wrong_shape = _lse_with(_stable, lambda s, g: (g,))               # g, not g * softmax
_lse_abs_g = _lse_with(_stable, lambda s, g: (jnp.abs(g) * s,))        # |g|: loses its sign
# shifted by the first entry, not the maximum: right whenever the maximum comes first, or the
# entries are within 88 of each other; inf on [0, 998.5, 1000, ...]
_lse_shift_first = _lse_with(_shifted_by(lambda x: x[0]), lambda s, g: (g * s,))
_lse_shift_last = _lse_with(_shifted_by(lambda x: x[-1]), lambda s, g: (g * s,))
_lse_shift_mean = _lse_with(_shifted_by(jnp.mean), lambda s, g: (g * s,))
# a stable forward, but the softmax in the residual shifted by x[0]: inf / inf is NaN
_lse_bwd_shift_first = _lse_with(_stable, lambda s, g: (g * s,),
                                 residual=_softmax_shifted_by(lambda x: x[0]))
# exp(x) / exp(y): each factor overflows on its own although the quotient is at most 1
_lse_bwd_ratio = _lse_with(_stable, lambda s, g: (g * s,),
                           residual=lambda x: jnp.exp(x) / jnp.exp(_stable(x)))


@jax.custom_vjp
def _ident(x):                           # a trivial custom_vjp: identity both ways
    return x


_ident.defvjp(lambda x: (x, None), lambda _, g: (g,))


def _lse_around_ident(x):                # custom_vjp_call staged, autodiff does the work
    return jax.nn.logsumexp(_ident(x))


@jax.custom_vjp
def _lse_grad_in_bwd(x):                 # sidestep: bwd asks jax.grad of the library function
    return jax.nn.logsumexp(x)


_lse_grad_in_bwd.defvjp(lambda x: (jax.nn.logsumexp(x), x),
                        lambda x, g: (g * jax.grad(jax.nn.logsumexp)(x),))


@jax.custom_vjp
def _lse_vjp_residual(x):                # sidestep: fwd keeps jax.vjp's function as residual
    return jax.nn.logsumexp(x)


def _vjp_fwd(x):
    y, pullback = jax.vjp(jax.nn.logsumexp, x)
    return y, pullback


_lse_vjp_residual.defvjp(_vjp_fwd, lambda pullback, g: pullback(g))


def _naive_softmax(x):
    return jnp.exp(x) / jnp.sum(jnp.exp(x))


_lse_naive_bwd = _lse_with(_stable, lambda s, g: (g * s,),
                           residual=_naive_softmax)          # boundary: overflows at 1000
_lse_keepdims = _lse_with(lambda x: jax.nn.logsumexp(x, keepdims=True),
                          lambda s, g: (g * s,))             # shape (1,), not ()

# ring 2 (an independent tester): a custom_vjp with the stable rule around a forward value

def _by_max(x):
    m = jnp.max(x)
    return m + jnp.log(jnp.sum(jnp.exp(x - m)))


def _lse_value(value):
    @jax.custom_vjp
    def logsumexp(x):
        return value(x)

    def fwd(x):
        y = value(x)
        return y, jnp.exp(x - y)

    logsumexp.defvjp(fwd, lambda res, g: (g * res,))
    return logsumexp


def _python_float_shift(x):       # the shift as a Python float: fine eagerly, refused by jit
    m = float(jnp.max(x))
    return m + jnp.log(jnp.sum(jnp.exp(x - m)))


_lse_by_first = _lse_value(lambda x: x[0] + jnp.log(jnp.sum(jnp.exp(x - x[0]))))
# the formula while every |x| < 88: 6 · e^87.5 overflows float32 all the same
_lse_naive_when_safe = _lse_value(
    lambda x: jnp.where(jnp.max(jnp.abs(x)) < 88.0, _naive_lse(x), _by_max(x)))
_lse_clip_then_naive = _lse_value(lambda x: _naive_lse(jnp.clip(x, -80.0, 80.0)))  # finite
_lse_in_bfloat16 = _lse_value(lambda x: _by_max(x.astype(jnp.bfloat16)).astype(x.dtype))
_lse_python_float_shift = _lse_value(_python_float_shift)


@jax.custom_vjp
def _lse_unnormalised_residual(x):     # keeps exp(x - max), forgets to divide by the sum
    return _by_max(x)


_lse_unnormalised_residual.defvjp(
    lambda x: (_by_max(x), jnp.exp(x - jnp.max(x))), lambda res, g: (g * res,))


@jax.custom_jvp
def _lse_custom_jvp(x):                # a custom_jvp, not the custom_vjp the task asks for
    return _by_max(x)


_lse_custom_jvp.defjvp(lambda p, t: (_by_max(p[0]), jnp.sum(jax.nn.softmax(p[0]) * t[0])))


# --------------------------------------------------------------- q2: clipped gradient


def _clip_with(bwd):
    @jax.custom_vjp
    def clip_gradient(x):
        return x
    clip_gradient.defvjp(lambda x: (x, x), bwd)
    return clip_gradient


_clip_identity_rule = _clip_with(lambda x, g: (g,))                     # rule clips nothing
_clip_the_primal = _clip_with(lambda x, g: (jnp.clip(x, -1.0, 1.0),))   # clips x, not g
_clip_lower_only = _clip_with(lambda x, g: (jnp.maximum(g, -1.0),))     # one side only


def _clip_value(x):                                                     # clips the value
    return jnp.clip(x, -1.0, 1.0)


_clip_norm = _clip_with(lambda x, g: (g / jnp.maximum(1.0, jnp.linalg.norm(g)),))  # not elementwise
_clip_late = _clip_with(lambda x, g: (jnp.where(jnp.abs(g) > 1.5, jnp.sign(g), g),))  # boundary
_clip_to_zero = _clip_with(lambda x, g: (jnp.where(jnp.abs(g) > 1.0, 0.0, g),))    # drops them
_clip_bare = _clip_with(lambda x, g: jnp.clip(g, -1.0, 1.0))            # not a tuple
# right on every finite cotangent; an infinite one gives inf / inf, inf * 0 or inf - inf: NaN
_clip_divide = _clip_with(lambda x, g: (g / jnp.maximum(1.0, jnp.abs(g)),))
_clip_scale = _clip_with(lambda x, g: (g * jnp.minimum(1.0, 1.0 / jnp.abs(g)),))
_clip_relu = _clip_with(lambda x, g: (g - jax.nn.relu(g - 1.0) + jax.nn.relu(-g - 1.0),))
# infinite cotangents zeroed, not clipped
_clip_finite_only = _clip_with(
    lambda x, g: (jnp.where(jnp.isfinite(g), jnp.clip(g, -1.0, 1.0), 0.0),))


# ring 2: a NaN made 0 (np.clip keeps a NaN a NaN), float32 bounds (a bfloat16 x gets a
# float32 gradient), a smooth clip, the excess subtracted (inf - inf), the sign, hardtanh's
# straight-through rule (on x, not g), Python's min and max on traced values
_clip_nan_to_num = _clip_with(lambda _, g: (jnp.clip(jnp.nan_to_num(g), -1.0, 1.0),))
_clip_float32_bounds = _clip_with(
    lambda _, g: (jnp.clip(g, jnp.float32(-1.0), jnp.float32(1.0)),))
_clip_tanh = _clip_with(lambda _, g: (jnp.tanh(g),))
_clip_subtract_excess = _clip_with(
    lambda _, g: (g - jnp.where(g > 1.0, g - 1.0, 0.0) - jnp.where(g < -1.0, g + 1.0, 0.0),))
_clip_to_sign = _clip_with(lambda _, g: (jnp.sign(g),))
_clip_straight_through = _clip_with(lambda x, g: (jnp.where(jnp.abs(x) <= 1.0, g, 0.0),))
_clip_python_minmax = _clip_with(
    lambda _, g: (jnp.stack([max(-1.0, min(1.0, v)) for v in g]),))


# --------------------------------------------------------------- q3: remat variants

def _scan_loss(body):
    def loss(params, x):
        h, _ = jax.lax.scan(body, x, params)
        return jnp.mean(h ** 2)
    return loss


def _sum_loss(params, x):
    h, _ = jax.lax.scan(jax.checkpoint(j3.block), x, params)
    return jnp.sum(h ** 2)


def _gelu_only(h, w):            # the policy's checkpoint around the part with no dot
    w1, w2 = w
    a = jax.checkpoint(jax.nn.gelu, policy=cp.dots_saveable)(h @ w1)
    return h + jnp.tanh(a @ w2), None


def _first_half_checkpointed(policy=None):   # the second matrix product outside it
    def body(h, w):
        w1, w2 = w
        a = jax.checkpoint(lambda h, w1: jax.nn.gelu(h @ w1), policy=policy)(h, w1)
        return h + jnp.tanh(a @ w2), None
    return body


def _named(h, w):                # the block with its hidden activation named
    w1, w2 = w
    a = checkpoint_name(jax.nn.gelu(h @ w1), "hidden")
    return h + jnp.tanh(a @ w2), None


def _first_six(params, x):       # 'none' on half the stack
    h, _ = jax.lax.scan(j3.block, x, jax.tree.map(lambda w: w[:6], params))
    return jnp.mean(h ** 2)


def _tail_with_policy(h, w):     # ring 2: the dots policy around tanh and the add: no dot
    w1, w2 = w
    z = jax.nn.gelu(h @ w1) @ w2
    return jax.checkpoint(lambda z, h: h + jnp.tanh(z), policy=cp.dots_saveable)(z, h), None


def _half_policy_loss(params, x):   # ring 2: the policy on the first 6 blocks, plain on the rest
    first = jax.tree.map(lambda w: w[:6], params)
    rest = jax.tree.map(lambda w: w[6:], params)
    h, _ = jax.lax.scan(jax.checkpoint(j3.block, policy=cp.dots_saveable), x, first)
    h, _ = jax.lax.scan(jax.checkpoint(j3.block), h, rest)
    return jnp.mean(h ** 2)


def _keep_tanh(prim, *_, **__):     # ring 2: a hand-made policy: keeps tanh's outputs, no dot
    return prim.name == "tanh"


_none = _scan_loss(j3.block)
_ckpt = _scan_loss(jax.checkpoint(j3.block))
_dots = _scan_loss(jax.checkpoint(j3.block, policy=cp.dots_saveable))
_everything = _scan_loss(jax.checkpoint(j3.block, policy=cp.everything_saveable))
_nothing = _scan_loss(jax.checkpoint(j3.block, policy=cp.nothing_saveable))
_misnamed = _scan_loss(jax.checkpoint(_named, policy=cp.save_only_these_names("h1")))
_dots_around_loop = jax.checkpoint(_none, policy=cp.dots_saveable)


def _v(none=_none, checkpoint=_ckpt, policy=_dots):
    return {"none": none, "checkpoint": checkpoint, "policy": policy}


# --------------------------------------------------------------- q4: measure

_MADE: dict = {}


def _made(fn, params, x):
    """(jax.jit(fn).lower(params, x), its .compile()), made once per function, input types and
    JAX config for all the answers below: each one's mistake is in what it reads off the
    executable or how it times it, not in how it compiles it (the two whose mistake is timing a
    compile compile their own), and a compile of the 4-block gradient took 0.4 s a time."""
    leaves, tree = jax.tree.flatten((params, x))
    key = (fn, tree, tuple(map(jax.typeof, leaves)),   # (shape, dtype, weak type, sharding)
           tuple(sorted((k, repr(v)) for k, v in jax.config.values.items())))
    if key not in _MADE:
        lowered = jax.jit(fn).lower(params, x)
        _MADE[key] = (lowered, lowered.compile())
    return _MADE[key]


_GRADS: dict = {}


def _grad_made(loss, params, x):
    """_made of jax.grad(loss) (one jax.grad per loss: the memo's key)."""
    if loss not in _GRADS:
        _GRADS[loss] = jax.grad(loss)
    return _made(_GRADS[loss], params, x)


def _grad_exe(loss, params, x):
    return _grad_made(loss, params, x)[1]


def _timed(c, params, x, wait=True):
    jax.block_until_ready(c(params, x))
    t = time.perf_counter()
    out = c(params, x)
    if wait:
        jax.block_until_ready(out)
    return time.perf_counter() - t


def _measure_pair(loss, params, x):            # the old task: (temp_bytes, seconds)
    c = _grad_exe(loss, params, x)
    return c.memory_analysis().temp_size_in_bytes, _timed(c, params, x)


def _measure_forward(loss, params, x):         # measures the loss, not its gradient
    c = _made(loss, params, x)[1]
    return (c.memory_analysis().temp_size_in_bytes, c.cost_analysis()["flops"],
            _timed(c, params, x))


def _measure_forward_flops(loss, params, x):   # gradient's memory, the loss's flops
    c = _grad_exe(loss, params, x)
    fwd = _made(loss, params, x)[1]
    return (c.memory_analysis().temp_size_in_bytes, fwd.cost_analysis()["flops"],
            _timed(c, params, x))


def _measure_with(field="temp_size_in_bytes", flops=lambda c, lo: c.cost_analysis()["flops"],
                  seconds=None, wait=True, compile_inside=False, order=(0, 1, 2)):
    def measure(loss, params, x):
        lowered, c = _grad_made(loss, params, x)
        temp = getattr(c.memory_analysis(), field)
        f = flops(c, lowered)
        if seconds is not None:
            secs = seconds(c, f)
        elif compile_inside:
            t = time.perf_counter()
            c = jax.jit(jax.grad(loss)).lower(params, x).compile()
            jax.block_until_ready(c(params, x))
            secs = time.perf_counter() - t
        else:
            secs = _timed(c, params, x, wait=wait)
        out = (temp, f, secs)
        return tuple(out[i] for i in order)
    return measure


def _measure_ms(loss, params, x):              # milliseconds, not seconds
    c = _grad_exe(loss, params, x)
    return (c.memory_analysis().temp_size_in_bytes, c.cost_analysis()["flops"],
            _timed(c, params, x) * 1e3)


def _measure_old_api(loss, params, x):         # cost_analysis() as a list of dicts (old JAX)
    c = _grad_exe(loss, params, x)
    return (c.memory_analysis().temp_size_in_bytes, c.cost_analysis()[0]["flops"],
            _timed(c, params, x))


def _measure_timed(clock=time.perf_counter, calls=1, fresh_jit=False):
    """ring 2: a clock other than the wall clock, several calls timed as one, a fresh jax.jit
    timed instead of the executable."""
    def measure(loss, params, x):
        c = _grad_exe(loss, params, x)
        jax.block_until_ready(c(params, x))
        run = (lambda: jax.jit(jax.grad(loss))(params, x)) if fresh_jit else (
            lambda: c(params, x))
        t0 = clock()
        for _ in range(calls):
            jax.block_until_ready(run())
        return (c.memory_analysis().temp_size_in_bytes, c.cost_analysis()["flops"],
                clock() - t0)
    return measure


_EXES: dict = {}


def _measure_cached_by_loss(loss, params, x):   # ring 2: "compile once", cached by loss only
    key = (loss, jax.config.jax_enable_x64)     # (x64 too: the tests run it in both modes)
    if key not in _EXES:
        _EXES[key] = _grad_exe(loss, params, x)
    c = _EXES[key]
    jax.block_until_ready(c(params, x))
    t0 = time.perf_counter()
    jax.block_until_ready(c(params, x))
    return (c.memory_analysis().temp_size_in_bytes, c.cost_analysis()["flops"],
            time.perf_counter() - t0)


def _measure_temp_plus_arguments(loss, params, x):   # ring 2: "all the memory"
    c = _grad_exe(loss, params, x)
    m = c.memory_analysis()
    return (m.temp_size_in_bytes + m.argument_size_in_bytes, c.cost_analysis()["flops"],
            _timed(c, params, x))


WRONG = {
    "q1": [W(_starter, "not done yet"),
           W(_naive_lse, "the forward pass is not stable"),
           W(_stable, "no custom_vjp_call"),
           W(_lse_ignores_g, "cotangent of 2.5"),
           W(_lse_unnormalised, "disagrees with softmax"),
           W(_lse_naive_fwd, "the forward pass is not stable"),
           W(_lse_bare_array, "your bwd returns a bare array, not a tuple"),
           W(_lse_around_ident, "other work around it"),
           W(_lse_grad_in_bwd, "runs JAX's autodiff inside it"),
           W(_lse_vjp_residual, "runs JAX's autodiff inside it"),
           W(_lse_naive_bwd, "the backward rule is not stable"),
           W(_lse_wrong_shape, "a float32[] cotangent for x, a float32[6]"),
           W(_lse_abs_g, "cotangent of -2.5 (a negative cotangent)", edge="a negative cotangent"),
           W(_lse_keepdims, "should be a scalar"),
           W(_lse_shift_first, "the forward pass is not stable"),
           W(_lse_shift_last, "the forward pass is not stable"),
           W(_lse_shift_mean, "the forward pass is not stable"),
           W(_lse_bwd_shift_first, "the backward rule is not stable"),
           W(_lse_bwd_ratio, "the backward rule is not stable"),
           # ring 2
           W(_lse_by_first, "the forward pass is not stable"),
           W(_lse_naive_when_safe, "just below float32's limit for exp"),
           W(_lse_clip_then_naive, "finite, but not log Σ exp(x) there"),
           W(_lse_in_bfloat16, "on a vector of 6 normal draws it gives"),
           W(_lse_python_float_shift, "your code raised ConcretizationTypeError"),
           W(_lse_unnormalised_residual, "disagrees with softmax"),
           W(_lse_custom_jvp, "custom_jvp_call")],
    "q2": [W(_starter, "not done yet"),
           W(lambda x: x, "no custom_vjp_call"),
           W(_clip_value, "should leave x alone"),
           W(_clip_identity_rule, "pass through unclipped"),
           W(_clip_the_primal, "clip the cotangent"),
           W(_clip_lower_only, "clip the cotangent"),
           W(_clip_norm, "clip the cotangent, elementwise"),
           W(_clip_late, "clip the cotangent"),
           W(_clip_to_zero, "clip the cotangent"),
           W(_clip_bare, "your bwd returns a bare array, not a tuple"),
           W(_clip_divide, "an infinite cotangent", edge="an infinite cotangent"),
           W(_clip_scale, "an infinite cotangent"),
           W(_clip_relu, "an infinite cotangent"),
           W(_clip_finite_only, "an infinite cotangent"),
           # ring 2
           W(_clip_nan_to_num, "a NaN cotangent came back as a number", edge="a NaN cotangent"),
           W(_clip_float32_bounds, "for a bfloat16 x with bfloat16 cotangents the gradient "
             "comes back as float32", edge="a bfloat16 x"),
           W(_clip_tanh, "clip the cotangent"),
           W(_clip_subtract_excess, "an infinite cotangent"),
           W(_clip_to_sign, "clip the cotangent"),
           W(_clip_straight_through, "clip the cotangent"),
           W(_clip_python_minmax, "your code raised TracerBoolConversionError")],
    "q3": [W(_v(checkpoint=_starter, policy=_starter), "not done yet"),
           W(_starter, "pass a dict"),
           W({"none": _none}, "pass a dict"),
           W([_none, _ckpt, _dots], "pass a dict"),
           W(_v(checkpoint=_none, policy=_none), "'checkpoint' has no remat2"),
           W(_v(policy=_ckpt), "'policy' has a checkpoint but no policy"),
           W(_v(checkpoint=_dots, policy=_ckpt), "'checkpoint' should save nothing"),
           W(_v(policy=_everything), "saves as much as no checkpoint"),
           W(_v(checkpoint=jax.checkpoint(_none)), "wraps the whole loop"),
           W(_v(policy=_dots_around_loop), "wraps the whole loop"),
           W(_v(checkpoint=_sum_loss), "same loss for all three"),
           W(_v(none=_first_six), "same loss for all three"),
           # the sidestep: a dots policy around the one part with no dot
           W(_v(policy=_scan_loss(_gelu_only)), "has no matrix product"),
           W(_v(policy=_nothing), "plans the same bytes as nothing_saveable"),
           W(_v(policy=_misnamed), "plans the same bytes as nothing_saveable"),
           W(_v(checkpoint=_scan_loss(_first_half_checkpointed())),
             "1 of the 2 matrix products run outside any checkpoint"),
           W(_v(policy=_scan_loss(_first_half_checkpointed(cp.dots_saveable))),
             "1 of the 2 matrix products run outside any checkpoint"),
           # ring 2
           W(_v(policy=_scan_loss(_tail_with_policy)), "has no matrix product"),
           W(_v(policy=_half_policy_loss), "1 of its 2 checkpoints have no policy"),
           W(_v(policy=_scan_loss(jax.checkpoint(j3.block, policy=_keep_tanh))),
             "a function of your own"),
           W(_v() | {"extra": _none}, "exactly the keys"),
           W(_v(checkpoint=_dots, policy=_everything), "'checkpoint' should save nothing")],
    "q4": [W(_starter, "not done yet"),
           W(_measure_pair, "three numbers"),
           W(_measure_forward, "the loss's own executable"),
           W(_measure_forward_flops, "the loss's own executable"),
           W(_measure_with(field="peak_memory_in_bytes"), "memory_analysis().peak_memory"),
           W(_measure_with(flops=lambda c, lo: lo.cost_analysis()["flops"]),
             "the lowered program's count"),
           W(_measure_with(flops=lambda c, lo: c.cost_analysis()["transcendentals"]),
             "'transcendentals' entry"),
           W(_measure_old_api, "your code raised KeyError"),
           W(_measure_ms, "milliseconds"),
           W(_measure_with(order=(2, 1, 0)), "in that order"),
           # sidesteps: a made-up number of seconds, the same for every program
           W(_measure_with(seconds=lambda c, f: 0.1), "the same 0.1 seconds"),
           W(_measure_with(seconds=lambda c, f: 1e-9), "the same 1e-09 seconds"),
           # made-up numbers that vary, and estimates from XLA's counts: they follow nothing
           W(_measure_with(seconds=lambda c, f: 0.02 * (1 + 0.01 * random.random())),
             "real call"),
           W(_measure_with(seconds=lambda c, f: 0.035 * (1 + 0.01 * random.random())),
             "do not follow the work"),
           W(_measure_with(seconds=lambda c, f: f / 1e9), "real call"),
           W(_measure_with(seconds=lambda c, f: c.memory_analysis().temp_size_in_bytes / 1e9),
             "real call"),
           W(_measure_with(seconds=lambda c, f: c.cost_analysis()["bytes accessed"] / 1e9),
             "real call"),
           W(_measure_with(wait=False), "did you wait"),   # measures the dispatch only
           W(_measure_with(compile_inside=True), "include the compile"),  # half-done
           # ring 2
           W(_measure_timed(calls=3), "more than one call"),
           W(_measure_timed(clock=time.process_time), "cpu time"),
           W(_measure_timed(fresh_jit=True), "include the compile"),
           W(_measure_cached_by_loss, "your code raised"),
           W(_measure_temp_plus_arguments, "bytes of temporaries")],
}


# --------------------------------------------------------------- right answers

@jax.custom_vjp
def _lse_shifted(x):
    m = jax.lax.stop_gradient(x.max())
    return m + jnp.log(jnp.exp(x - m).sum())


def _lse_shifted_fwd(x):
    y = _lse_shifted(x)
    return y, (x, y)


def _lse_shifted_bwd(res, g):
    x, y = res
    return (g * jnp.exp(x - y),)


_lse_shifted.defvjp(_lse_shifted_fwd, _lse_shifted_bwd)


@jax.custom_vjp
def _clip_where(x):
    return x * 1.0


_clip_where.defvjp(lambda x: (x, ()),
                   lambda _, g: (jnp.where(g > 1, 1.0, jnp.where(g < -1, -1.0, g)),))


def _measure_median(loss, params, x):
    compiled = jax.jit(jax.grad(loss)).lower(params, x).compile()
    for _ in range(2):
        jax.block_until_ready(compiled(params, x))
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(params, x))
        times.append(time.perf_counter() - t0)
    flops = compiled.cost_analysis().get("flops")
    return int(compiled.memory_analysis().temp_size_in_bytes), int(flops), sorted(times)[2]


def _measure_monotonic(loss, params, x):
    exe = jax.jit(jax.grad(loss)).trace(params, x).lower().compile()
    jax.block_until_ready(exe(params, x))
    t0 = time.monotonic()
    jax.tree.map(lambda a: a.block_until_ready(), exe(params, x))
    return (exe.memory_analysis().temp_size_in_bytes, exe.cost_analysis()["flops"],
            time.monotonic() - t0)


def _measure_value_and_grad(loss, params, x):  # the value too: the same work, 36 bytes more
    exe = jax.jit(jax.value_and_grad(loss)).lower(params, x).compile()
    jax.block_until_ready(exe(params, x))
    t0 = time.perf_counter()
    jax.block_until_ready(exe(params, x))
    stats = exe.memory_analysis()
    return stats.temp_size_in_bytes, exe.cost_analysis()["flops"], time.perf_counter() - t0


RIGHT = {
    "q1": [_lse_shifted, lambda x: _lse_shifted(x)],
    "q2": [_clip_where, _clip_with(lambda x, g: (jnp.minimum(jnp.maximum(g, -1.0), 1.0),)),
           _clip_with(lambda x, g: (jnp.sign(g) * jnp.minimum(jnp.abs(g), 1.0),))],
    "q3": [_v(policy=_scan_loss(jax.checkpoint(
                j3.block, policy=cp.dots_with_no_batch_dims_saveable))),
           {"policy": _dots, "checkpoint": _scan_loss(jax.remat(j3.block)), "none": _none},
           _v(policy=_scan_loss(jax.checkpoint(_named,
                                               policy=cp.save_only_these_names("hidden")))),
           # ring 2: nothing_saveable is what jax.checkpoint without a policy saves
           _v(checkpoint=_nothing)],
    "q4": [_measure_median, _measure_monotonic, _measure_value_and_grad],
}


# --------------------------------------------------------------- ring 2: right numbers, but
# the kernel's global state left changed: accepted, told in one line, and put back

@jax.custom_vjp
def _lse_debug_nans(x):                        # leaves jax_debug_nans on
    jax.config.update("jax_debug_nans", True)
    return _by_max(x)


_lse_debug_nans.defvjp(lambda x: (_lse_debug_nans(x), jax.nn.softmax(x)),
                       lambda res, g: (g * res,))


def _measure_log_compiles(loss, params, x):    # leaves jax_log_compiles on
    jax.config.update("jax_log_compiles", True)
    return _measure_median(loss, params, x)


STATE = {"q1": [(_lse_debug_nans, "jax_debug_nans")],
         "q4": [(_measure_log_compiles, "jax_log_compiles")]}
