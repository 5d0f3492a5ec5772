"""Plausible wrong answers for lab J3 "Own the derivative": each must be rejected with a hint."""
from __future__ import annotations

import time

import jax
import jax.numpy as jnp

from workshop.labs import j3

cp = jax.checkpoint_policies


def _starter(*args, **kwargs):
    raise NotImplementedError()


# --------------------------------------------------------------- q1: log-sum-exp

def _naive_lse(x):                       # overflows for large x
    return jnp.log(jnp.sum(jnp.exp(x)))


def _lse_with(fwd_value, bwd):
    """A custom_vjp log-sum-exp with the given forward value and backward rule."""
    @jax.custom_vjp
    def lse(x):
        return fwd_value(x)

    def fwd(x):
        return fwd_value(x), jax.nn.softmax(x)

    lse.defvjp(fwd, bwd)
    return lse


_stable = jax.nn.logsumexp
_lse_ignores_g = _lse_with(_stable, lambda s, g: (s,))                 # drops the cotangent
_lse_unnormalised = _lse_with(_stable, lambda s, g: (g * jnp.exp(s),)) # not softmax
_lse_naive_fwd = _lse_with(_naive_lse, lambda s, g: (g * s,))          # unstable forward
_lse_bare_array = _lse_with(_stable, lambda s, g: g * s)               # not a tuple


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


_lse_naive_bwd = _lse_with(_stable, lambda s, g: (g * s,))
_lse_naive_bwd.defvjp(lambda x: (_stable(x), _naive_softmax(x)),   # boundary: overflows at 1000
                      lambda s, g: (g * s,))
_lse_keepdims = _lse_with(lambda x: jax.nn.logsumexp(x, keepdims=True),
                          lambda s, g: (g * s,))                    # shape (1,), not ()

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


# --------------------------------------------------------------- q3: remat variants

def _scan_loss(body):
    def loss(params, x):
        h, _ = jax.lax.scan(body, x, params)
        return jnp.mean(h ** 2)
    return loss


def _sum_loss(params, x):
    h, _ = jax.lax.scan(jax.checkpoint(j3.block), x, params)
    return jnp.sum(h ** 2)


_none = _scan_loss(j3.block)
_ckpt = _scan_loss(jax.checkpoint(j3.block))
_dots = _scan_loss(jax.checkpoint(j3.block, policy=cp.dots_saveable))
_everything = _scan_loss(jax.checkpoint(j3.block, policy=cp.everything_saveable))

# --------------------------------------------------------------- q4: measure


def _measure_forward(loss, params, x):         # measures the loss, not its gradient
    c = jax.jit(loss).lower(params, x).compile()
    t = time.perf_counter()
    jax.block_until_ready(c(params, x))
    return c.memory_analysis().temp_size_in_bytes, time.perf_counter() - t


def _measure_peak(loss, params, x):            # the wrong field
    c = jax.jit(jax.grad(loss)).lower(params, x).compile()
    t = time.perf_counter()
    jax.block_until_ready(c(params, x))
    return c.memory_analysis().peak_memory_in_bytes, time.perf_counter() - t


def _measure_ms(loss, params, x):              # milliseconds, not seconds
    c = jax.jit(jax.grad(loss)).lower(params, x).compile()
    jax.block_until_ready(c(params, x))
    t = time.perf_counter()
    jax.block_until_ready(c(params, x))
    return c.memory_analysis().temp_size_in_bytes, (time.perf_counter() - t) * 1e3


def _measure_swapped(loss, params, x):         # (seconds, bytes)
    c = jax.jit(jax.grad(loss)).lower(params, x).compile()
    t = time.perf_counter()
    jax.block_until_ready(c(params, x))
    return time.perf_counter() - t, c.memory_analysis().temp_size_in_bytes


def _measure_with(wait=True, warm=True, compile_inside=False, constant=None):
    def measure(loss, params, x):
        c = jax.jit(jax.grad(loss)).lower(params, x).compile()
        if constant is not None:
            return c.memory_analysis().temp_size_in_bytes, constant
        if warm:
            jax.block_until_ready(c(params, x))
        t = time.perf_counter()
        if compile_inside:
            c = jax.jit(jax.grad(loss)).lower(params, x).compile()
        out = c(params, x)
        if wait:
            jax.block_until_ready(out)
        return c.memory_analysis().temp_size_in_bytes, time.perf_counter() - t
    return measure


WRONG = {
    "q1": [_starter, _naive_lse, _stable, _lse_ignores_g, _lse_unnormalised, _lse_naive_fwd,
           _lse_bare_array, _lse_around_ident, _lse_grad_in_bwd, _lse_vjp_residual,
           _lse_naive_bwd, _lse_keepdims],
    "q2": [_starter, lambda x: x, _clip_value, _clip_identity_rule, _clip_the_primal,
           _clip_lower_only, _clip_norm, _clip_late, _clip_to_zero],
    "q3": [_starter, {"none": _none},
           {"none": _none, "checkpoint": _none, "policy": _none},
           {"none": _none, "checkpoint": _ckpt, "policy": _ckpt},
           {"none": _none, "checkpoint": _ckpt, "policy": _everything},
           {"none": _none, "checkpoint": jax.checkpoint(_none), "policy": _dots},
           {"none": _none, "checkpoint": _sum_loss, "policy": _dots},
           [_none, _ckpt, _dots]],
    "q4": [_starter, _measure_forward, _measure_peak, _measure_ms, _measure_swapped,
           _measure_with(constant=1e-9),              # sidestep: a made-up number
           _measure_with(wait=False),                 # measures the dispatch only
           _measure_with(compile_inside=True)],       # half-done: times the compile too
}


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
        compiled(params, x)[0][0].block_until_ready()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(params, x))
        times.append(time.perf_counter() - t0)
    return int(compiled.memory_analysis().temp_size_in_bytes), sorted(times)[2]


def _measure_monotonic(loss, params, x):
    exe = jax.jit(jax.grad(loss)).trace(params, x).lower().compile()
    jax.block_until_ready(exe(params, x))
    t0 = time.monotonic()
    jax.tree.map(lambda a: a.block_until_ready(), exe(params, x))
    return exe.memory_analysis().temp_size_in_bytes, time.monotonic() - t0


RIGHT = {
    "q1": [_lse_shifted, lambda x: _lse_shifted(x)],
    "q2": [_clip_where, _clip_with(lambda x, g: (jnp.minimum(jnp.maximum(g, -1.0), 1.0),))],
    "q3": [{"none": _none, "checkpoint": _ckpt,
            "policy": _scan_loss(jax.checkpoint(
                j3.block, policy=cp.dots_with_no_batch_dims_saveable))},
           {"policy": _dots, "checkpoint": _scan_loss(jax.remat(j3.block)), "none": _none}],
    "q4": [_measure_median, _measure_monotonic],
}
