"""Lab L5: plausible wrong answers its checks must reject, and right answers written
differently from the solution that they must accept (tests/test_labs.py runs both)."""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from workshop.labs import l5
from wrong_answers import W


def _starter(*args, **kwargs):
    raise NotImplementedError()


def _pair_class(register=None):
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    if register:
        register(Pair)
    return Pair


def _no_keys(P):
    jax.tree_util.register_pytree_node(P, lambda p: ((p.a, p.b), None),
                                       lambda aux, ch: P(*ch))


def _swapped(P):
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("a"), p.a), (K("b"), p.b)), None), lambda aux, ch: P(ch[1], ch[0]))


def _b_static(P):
    jax.tree_util.register_pytree_node(P, lambda p: ((p.a,), float(p.b)),
                                       lambda aux, ch: P(ch[0], aux))


def _dict_keys(P):              # key paths that read ['a'], ['b']
    K = jax.tree_util.DictKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("a"), p.a), (K("b"), p.b)), None), lambda aux, ch: P(*ch))


def _one_leaf(P):               # half-done: a and b as one tuple leaf
    jax.tree_util.register_pytree_node(P, lambda p: (((p.a, p.b),), None),
                                       lambda aux, ch: P(*ch[0]))


def _scan_from(init, combine):
    def running(xs):
        def step(c, x):
            c = combine(c, x)
            return c, c
        return jax.lax.scan(step, jnp.array(init, xs.dtype), xs)[1]
    return running


def _scan_last_only(xs):        # half-done: returns the final carry, not the ys
    return jax.lax.scan(lambda c, x: (jnp.maximum(c, x), None), -jnp.inf, xs)[0]


def _newton(steps, step=lambda a, x: 0.5 * (x + a / x), start=lambda a: a):
    return lambda a: jax.lax.fori_loop(0, steps, lambda i, x: step(a, x), start(a))


def _aux_b(P):                  # b is a child and the metadata too: a new b retraces
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("a"), p.a), (K("b"), p.b)), p.b), lambda aux, ch: P(*ch))


def _aux_a(P):                  # an array as metadata: jit cannot compare two of them
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("a"), p.a), (K("b"), p.b)), p.a), lambda aux, ch: P(*ch))


def _tuple_back(P):             # unflatten gives the children back, not a Pair
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("a"), p.a), (K("b"), p.b)), None), lambda aux, ch: tuple(ch))


def _named_xy(P):               # attribute keys with the wrong names
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("x"), p.a), (K("y"), p.b)), None), lambda aux, ch: P(*ch))


def _b_first(P):                # children in the order b, a
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        P, lambda p: (((K("b"), p.b), (K("a"), p.a)), None), lambda aux, ch: P(ch[1], ch[0]))


@dataclasses.dataclass
class _MetaB:                   # a dataclass with b as a meta field: one leaf
    a: jax.Array
    b: jax.Array


jax.tree_util.register_dataclass(_MetaB, data_fields=["a"], meta_fields=["b"])


def _window_max(xs):            # sidestep: a scan that does nothing, then reduce_window(max)
    _, xs = jax.lax.scan(lambda c, x: (c, x), 0.0, xs)
    n = xs.shape[0]
    return jax.lax.reduce_window(xs, -jnp.inf, jax.lax.max, (n,), (1,), [(n - 1, 0)])


def _assoc_max(xs):             # sidestep: a scan that copies, then associative_scan(max)
    _, ys = jax.lax.scan(lambda c, x: (c, x), 0.0, xs)
    return jax.lax.associative_scan(jnp.maximum, ys)


def _scan_then_max(xs):         # the scan's ys are the xs; the maximum taken afterwards
    _, ys = jax.lax.scan(lambda c, x: (c, x), 0.0, xs)
    return jnp.max(jnp.where(jnp.tri(len(xs), dtype=bool), ys[None, :], -jnp.inf), axis=1)


def _sort_based(xs):            # sidestep: a sort per prefix inside the scan
    def step(c, i):
        return c, jnp.sort(jnp.where(jnp.arange(len(xs)) <= i, xs, -jnp.inf))[-1]
    return jax.lax.scan(step, 0, jnp.arange(len(xs)))[1]


def _numpy_max(xs):             # the loop left to NumPy
    return jnp.asarray(np.maximum.accumulate(np.asarray(xs)))


def _exp_log_start(a):          # sidestep: Newton started at exp(log(a)/2), which is √a
    return jax.lax.fori_loop(0, 3, lambda i, x: 0.5 * (x + a / x), jnp.exp(jnp.log(a) / 2))


def _callback_start(a):         # sidestep: √a from NumPy as the start, gradient stopped
    spec = jax.ShapeDtypeStruct((), jnp.float32)
    x0 = jax.pure_callback(lambda v: np.sqrt(v).astype(np.float32), spec,
                           jax.lax.stop_gradient(a))
    return jax.lax.fori_loop(0, 3, lambda i, x: 0.5 * (x + a / x), x0)


def _custom_jvp_sqrt(a):        # the loop's derivative replaced by a rule
    @jax.custom_jvp
    def root(a):
        return jax.lax.while_loop(lambda x: jnp.abs(x * x - a) > 1e-6 * a,
                                  lambda x: 0.5 * (x + a / x), a)
    root.defjvp(lambda p, t: (root(p[0]), t[0] * 0.5 / root(p[0])))
    return root(a)


def _custom_root_sqrt(a):       # the loop's derivative replaced by custom_root's implicit rule
    def solve(f, x0):
        return jax.lax.while_loop(lambda x: jnp.abs(f(x)) > 1e-6 * a,
                                  lambda x: x - f(x) / (2 * x), x0)
    return jax.lax.custom_root(lambda x: x * x - a, a, solve, lambda g, y: y / g(1.0))


def _bisection(a):              # another method: bisection, 60 halvings (no division by x)
    def step(i, lohi):
        lo, hi = lohi
        mid = (lo + hi) * 0.5
        return jnp.where(mid * mid > a, lo, mid), jnp.where(mid * mid > a, mid, hi)
    lo, hi = jax.lax.fori_loop(0, 60, step, (jnp.zeros_like(a), jnp.maximum(a, 1.0)))
    return (lo + hi) * 0.5


def _rsqrt_newton(a):           # Newton on 1/√a (y ← y(3 - a y²)/2), no division in the step
    y0 = jnp.minimum(1.0 / a, 1.0)
    return a * jax.lax.fori_loop(0, 60, lambda i, y: y * (1.5 - 0.5 * a * y * y), y0)


def _count_in_dtype(xs):        # the count kept in xs's dtype: in bfloat16 it stops at 256
    def step(carry, x):
        total, n = carry
        return (total + x, n + 1), (total + x) / (n + 1)
    init = (jnp.zeros_like(xs[0]), jnp.zeros((), xs.dtype))
    return jax.lax.scan(step, init, xs)[1]


def _mean_in_dtype(xs):         # the running mean with its count in xs's dtype
    def step(carry, x):
        mean, n = carry
        n = n + 1
        mean = mean + (x - mean) / n
        return (mean, n), mean
    return jax.lax.scan(step, (jnp.zeros_like(xs[0]), jnp.zeros((), xs.dtype)), xs)[1]


def _whole_xs_carry(xs):        # the total started as zeros_like(xs): one row too many
    def step(carry, x):
        total, n = carry
        return (total + x, n + 1), (total + x) / (n + 1)
    return jax.lax.scan(step, (jnp.zeros_like(xs), 0), xs)[1]


def _float_zero_carry(xs):      # a Python 0.0 takes the dtype, but not the shape of a row
    def step(carry, x):
        total, n = carry
        return (total + x, n + 1), (total + x) / (n + 1)
    return jax.lax.scan(step, (0.0, 0), xs)[1]


def _int8_count(xs):            # a "small" count type: int8 wraps after 127
    def step(carry, x):
        total, n = carry
        return (total + x, n + 1), (total + x) / (n + 1)
    return jax.lax.scan(step, (jnp.zeros_like(xs[0]), jnp.int8(0)), xs)[1]


def _float32_carry(xs):         # a strongly typed float32 start fixes the dtype
    return jax.lax.scan(lambda c, x: ((c[0] + x, c[1] + 1), (c[0] + x) / (c[1] + 1)),
                        (jnp.zeros(xs.shape[1:]), 0), xs)[1]


def _running_max_from_first(xs):   # where(x > best, ...): a NaN never becomes the maximum
    def step(best, x):
        best = jnp.where(x > best, x, best)
        return best, best
    _, ys = jax.lax.scan(step, xs[0], xs[1:])
    return jnp.concatenate([xs[:1], ys])


def _mean_running(xs):          # carries the mean itself: inf + (1 - inf)/2 is NaN
    def step(carry, x):
        mean, n = carry
        n = n + 1
        mean = mean + (x - mean) / n
        return (mean, n), mean
    return jax.lax.scan(step, (jnp.zeros(xs.shape[1:], xs.dtype), jnp.int32(0)), xs)[1]


# ring 2 (issue 29): written by a tester who is not the checker's author

def _pair_ring2(name, flatten_with_keys, unflatten):
    """A fresh Pair class registered with the given functions."""
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    Pair.__qualname__ = name
    jax.tree_util.register_pytree_with_keys(Pair, flatten_with_keys, unflatten)
    return Pair


_K = jax.tree_util.GetAttrKey
# aux holds a copy of the arrays "to rebuild from": a second jit call with new values raises
_PairAuxArrays = _pair_ring2("_PairAuxArrays",
                             lambda p: (((_K("a"), p.a), (_K("b"), p.b)), (p.a, p.b)),
                             lambda aux, ch: _PairAuxArrays(*ch))
# flatten hands out NumPy copies "to be safe": a Pair built inside a trace cannot be flattened
_PairFlattenNumpy = _pair_ring2(
    "_PairFlattenNumpy",
    lambda p: (((_K("a"), np.asarray(p.a)), (_K("b"), np.asarray(p.b))), None),
    lambda aux, ch: _PairFlattenNumpy(*ch))
# unflatten "makes sure" the children are arrays: eval_shape (ShapeDtypeStruct leaves) fails
_PairUnflattenAsarray = _pair_ring2(
    "_PairUnflattenAsarray", lambda p: (((_K("a"), p.a), (_K("b"), p.b)), None),
    lambda aux, ch: _PairUnflattenAsarray(jnp.asarray(ch[0]), jnp.asarray(ch[1])))
# key paths by position, not by attribute: they read [0], [1]
_PairSequenceKeys = _pair_ring2(
    "_PairSequenceKeys",
    lambda p: (((jax.tree_util.SequenceKey(0), p.a), (jax.tree_util.SequenceKey(1), p.b)),
               None),
    lambda aux, ch: _PairSequenceKeys(*ch))
# the key names swapped: .b labels a
_PairKeysSwapped = _pair_ring2("_PairKeysSwapped",
                               lambda p: (((_K("b"), p.a), (_K("a"), p.b)), None),
                               lambda aux, ch: _PairKeysSwapped(*ch))


# the metadata a's shape, kept as an array "to compute with": jit compares two Pairs' with ==,
# which for a vector's one-element shape gives one bool, and for a matrix's two fails
_PairShapeArrayAux = _pair_ring2(
    "_PairShapeArrayAux",
    lambda p: (((_K("a"), p.a), (_K("b"), p.b)), np.array(np.shape(p.a))),
    lambda aux, ch: _PairShapeArrayAux(*ch))


class _PairAbsInPlace:
    """Keeps the magnitudes of a, made in place (np.abs(a, out=a)): it holds other numbers
    than it was given, and the caller's array changes with it. Handed the check's own a, the
    check's a (its reference) changed too, and the Pair was accepted."""
    def __init__(self, a, b):
        if isinstance(a, np.ndarray):
            np.abs(a, out=a)
        self.a, self.b = a, b


jax.tree_util.register_pytree_with_keys(
    _PairAbsInPlace, lambda p: (((_K("a"), p.a), (_K("b"), p.b)), None),
    lambda aux, ch: _PairAbsInPlace(*ch))


def _map_over_prefixes(xs):          # the audit's: a lax.map (a scan with no carry), each step
    n = xs.shape[0]                  # the maximum of a prefix: the right numbers, no running max
    return jax.lax.map(lambda i: jnp.max(jnp.where(jnp.arange(n) <= i, xs, -jnp.inf)),
                       jnp.arange(n))


def _noop_scan_reduce_window(xs):    # sidestep: a one-step scan that changes nothing, then
    xs = jax.lax.scan(lambda c, _: (c, None), xs, None, length=1)[0]    # reduce_window(max)
    n = xs.shape[0]
    return jax.lax.reduce_window(xs, -jnp.inf, jax.lax.max, (n,), (1,), [(n - 1, 0)])


def _ufunc_accumulate(xs):           # sidestep: the ufunc's accumulate writes the scan
    return jnp.maximum.accumulate(xs)


def _scan_where_step(xs):            # where(x > best, x, best): a NaN never becomes the max
    def step(best, x):
        best = jnp.where(x > best, x, best)
        return best, best
    return jax.lax.scan(step, jnp.array(-jnp.inf, xs.dtype), xs)[1]


def _scan_fmax(xs):                  # fmax ignores NaN; the loop's maximum propagates it
    def step(best, x):
        best = jnp.fmax(best, x)
        return best, best
    return jax.lax.scan(step, jnp.array(-jnp.inf, xs.dtype), xs)[1]


def _scan_from_min(xs):              # starts at xs.min(): a NaN anywhere makes every step NaN
    def step(best, x):
        best = jnp.maximum(best, x)
        return best, best
    return jax.lax.scan(step, xs.min(), xs)[1]


def _scan_float32_start(xs):         # a float32 -inf start: bfloat16 input comes back float32
    def step(best, x):
        best = jnp.maximum(best, x)
        return best, best
    return jax.lax.scan(step, jnp.float32(-jnp.inf), xs)[1]


def _scan_unrolled(xs):              # sidestep: unroll=True puts one step per element back
    def step(best, x):
        best = jnp.maximum(best, x)
        return best, best
    return jax.lax.scan(step, -jnp.inf, xs, unroll=True)[1]


def _newton_step(a, x):
    return 0.5 * (x + a / x)


def _newton_from_exp2_log2(a):       # sidestep: starts at 2**(log2(a)/2), the answer itself
    return jax.lax.fori_loop(0, 2, lambda i, x: _newton_step(a, x), jnp.exp2(jnp.log2(a) / 2))


def _newton_python_loop(a):          # half-done: a Python loop, 30 copies of the step
    x = a
    for _ in range(30):
        x = _newton_step(a, x)
    return x


def _newton_traced_bound(a):         # a traced bound: fori_loop becomes a while_loop
    return jax.lax.fori_loop(0, jnp.int32(30), lambda i, x: _newton_step(a, x), a)


def _halley(a):                      # another iteration, not the task's Newton step
    return jax.lax.fori_loop(0, 20, lambda i, x: x * (x * x + 3 * a) / (3 * x * x + a), a)


def _newton_stop_gradient(a):        # stop_gradient on x in the step: gradient off by 2
    return jax.lax.fori_loop(0, 30, lambda i, x: 0.5 * (x + a / jax.lax.stop_gradient(x)), a)


def _mean_zero_times_first(xs):      # total starts at xs[0] * 0: NaN when xs[0] is inf
    def step(carry, x):
        total, n = carry
        total, n = total + x, n + 1
        return (total, n), total / n
    return jax.lax.scan(step, (xs[0] * 0, 0), xs)[1]


def _mean_rows_only(xs):             # shape (), or one row's length: 3-d elements fail
    def step(carry, x):
        total, n = carry
        total, n = total + x, n + 1
        return (total, n), total / n
    return jax.lax.scan(step, (jnp.zeros(xs.shape[1:2], xs.dtype), 0), xs)[1]


@jax.jit
def _mean_tril_matmul(xs):           # sidestep: a lower-triangular matmul, a do-nothing scan
    xs = jax.lax.scan(lambda c, _: (c, None), xs, None, length=1)[0]
    n = xs.shape[0]
    flat = xs.reshape(n, -1)
    sums = jnp.tril(jnp.ones((n, n), flat.dtype)) @ flat
    counts = jnp.arange(1, n + 1, dtype=flat.dtype)[:, None]
    return (sums / counts).reshape(xs.shape)


@jax.jit
def _mean_associative(xs):           # sidestep: associative_scan(add), a do-nothing scan
    xs = jax.lax.scan(lambda c, _: (c, None), xs, None, length=1)[0]
    sums = jax.lax.associative_scan(jnp.add, xs)
    counts = jnp.arange(1, xs.shape[0] + 1).reshape((-1,) + (1,) * (xs.ndim - 1))
    return (sums / counts).astype(xs.dtype)


WRONG = {
    "q1": [W(_pair_class(), "is it registered"),
           W(_pair_class(_no_keys), "key paths read ['[<flat index 0>]'"),
           W(_pair_class(_swapped), "unflatten puts the leaves in the wrong places"),
           W(_pair_class(_b_static), "two leaves (a, b), it gives 1"),
           W(_pair_class(_dict_keys), "the key paths read [\"['a']\""),
           W(_pair_class(_one_leaf), "'[<flat index 0>][0]'"),
           W("Pair", "pass the class itself"),
           W(_pair_class(_aux_b), "jit traced again"),
           W(_pair_class(_aux_a), "refused a second of the same shapes"),
           W(_pair_class(_tuple_back), "should rebuild a Pair, it gives a tuple"),
           W(_pair_class(_named_xy), "key paths read ['.x', '.y']"),
           W(_pair_class(_b_first), "in the order a, b"),
           W(_MetaB, "two leaves (a, b), it gives 1"),
           W(_PairAuxArrays, "refused a second of the same shapes"),
           W(_PairFlattenNumpy, "jit cannot return a Pair"),
           W(_PairUnflattenAsarray, "jax.eval_shape(lambda q: q, pair) fails"),
           W(_PairSequenceKeys, "key paths read ['[0]', '[1]']"),
           W(_PairKeysSwapped, "key paths read ['.b', '.a']"),
           W(_PairAbsInPlace, "flattens to other numbers"),
           W(_PairShapeArrayAux, "for two Pairs of a 2×3 matrix, jit would refuse the "
             "second", edge="two Pairs of a 2×3 matrix")],
    "q2": [W(_starter, "not done yet"),
           W(l5.running_max_python, "has no scan (52 equations for 50 elements)"),
           W(_scan_from(0.0, jnp.maximum), "on [-5.0, -7.0, -1.0, -3.0]… it gives [0.0,"),
           W(_scan_from(-10.0, jnp.maximum),                       # boundary: a "small" start
             "it gives [-10.0, -10.0, -10.0]"),
           W(_scan_from(-1e30, jnp.maximum), "on [-2.5000000"),
           W(_scan_from(float(np.finfo(np.float32).min), jnp.maximum),  # boundary: -inf inputs
             "on [-inf, -inf, -1.0, -inf]… (-inf inputs)", edge="-inf inputs"),
           W(_scan_from(0.0, jnp.add), "its step takes no maximum"),
           W(jax.lax.cummax, "uses cummax"),
           W(_scan_last_only, "returns shape (), not (8,)"),
           W(_window_max, "uses reduce_window_max"),
           W(_assoc_max, "the maximum is taken outside it (max"),
           W(_scan_then_max, "the maximum is taken outside it (reduce_max"),
           W(_sort_based, "uses sort"),
           W(_numpy_max, "TracerArrayConversionError"),
           W(_running_max_from_first, "it gives [1.0, 1.0, 2.0, 2.0]… where the Python loop "
                                      "gives [1.0, nan, nan, nan]"),
           W(_noop_scan_reduce_window, "uses reduce_window_max"),
           W(_ufunc_accumulate, "made inside jax (ufunc._accumulate_via_scan"),
           W(_scan_where_step, "it gives [1.0, 1.0, 2.0, 2.0]"),
           W(_scan_fmax, "it gives [1.0, 1.0, 2.0, 2.0]"),
           W(_scan_unrolled, "unrolled completely (unroll=50 for 50 steps)"),
           W(_scan_from_min, "it gives [nan, nan, nan, nan]"),
           W(_scan_float32_start, "for bfloat16 xs it returns float32", edge="bfloat16 xs"),
           W(_map_over_prefixes, "takes a maximum, but not of what it carries")],
    "q3": [W(_starter, "not done yet"), W(l5.newton_sqrt, "grad under jit still refuses it"),
           W(_newton(2), "at a=2.0 it gives 1.416667"),
           W(_newton(8), "at a=1000000.0 it gives"),
           W(jnp.sqrt, "uses sqrt"),
           W(_newton(20, lambda a, x: x - 0.1 * (x * x - a)), "at a=2.0 it gives 1.41"),
           W(_newton(3, start=jnp.sqrt), "uses sqrt"),             # sidestep: starts at √a
           W(lambda a: jax.lax.fori_loop(0, 20, lambda i, x: 0.5 * (x + a / x), a ** 0.5),
             "uses pow"),
           W(_exp_log_start, "uses exp, log"),
           W(_callback_start, "calls back into Python (pure_callback)"),
           W(_custom_jvp_sqrt, "custom derivative rule (custom_jvp_call)"),
           W(_custom_root_sqrt, "custom derivative rule (custom_root)"),
           W(_bisection, "at a=2.0 the gradient is 0.707107"),
           W(_rsqrt_newton, "is not Newton's: at a = 2, one step takes x = 0.5 to 0.625"),
           W(_newton_from_exp2_log2, "uses exp2"),
           W(_newton_python_loop, "keep the Newton iteration as a loop"),
           W(_newton_traced_bound, "grad under jit still refuses it"),
           W(_newton_stop_gradient, "at a=2.0 the gradient is 0.707107"),
           W(_halley, "one step takes x = 2.0 to 1.428571")],
    "q4": [W(_starter, "not done yet"), W(l5.mean_so_far_broken, "still refuses the carry"),
           W(lambda xs: jnp.cumsum(xs, 0) / jnp.arange(1, len(xs) + 1).reshape(
               (-1,) + (1,) * (xs.ndim - 1)),                      # sidestep: no scan
             "the staged program uses cumsum"),
           W(_float32_carry, "the result is float32, not bfloat16"),
           W(lambda xs: jax.lax.scan(lambda c, x: ((c[0] + x, c[1] + 1), c[0] / c[1]),
                                     (jnp.zeros(xs.shape[1:], xs.dtype), 0), xs)[1],
             "wrong from the first step"),                         # off by one
           W(lambda xs: l5.mean_so_far_broken(xs.reshape(len(xs), -1)[:, 0]),  # first column
             "has shape (6,), not (6, 3)"),
           W(lambda xs: jax.lax.scan(lambda c, x: ((c[0] + x, c[1] + 1), c[0] + x),
                                     (jnp.zeros_like(xs[0]), 0), xs)[1],      # totals only
             "wrong from step 2 on"),
           W(_whole_xs_carry, "has shape (7, 7), not (7,)"),
           W(_float_zero_carry, "for 6 rows of 3 float32, scan still refuses the carry"),
           W(_mean_running, "inf first the means are wrong from step 2"),
           W(_mean_zero_times_first, "inf first the means are wrong from the first step"),
           W(_mean_rows_only, "elements of shape (2, 3), your code raised ValueError"),
           W(_mean_associative, "the right means, but not from the scan"),
           W(_mean_tril_matmul, "the right means, but not from the scan"),
           W(_int8_count, "400 bfloat16 numbers the means are wrong from step 128 on"),
           W(_count_in_dtype, "right for the first 289"),        # the count stops at 256
           W(_mean_in_dtype, "right for the first 295")],
}


@dataclasses.dataclass
class _DataPair:
    a: jax.Array
    b: jax.Array


jax.tree_util.register_dataclass(_DataPair, data_fields=["a", "b"], meta_fields=[])


def _keys_class():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        Pair, lambda p: ([(K("a"), p.a), (K("b"), p.b)], ()),
        lambda aux, ch: Pair(ch[0], ch[1]))
    return Pair


def _shape_aux_class():         # static metadata (a's shape) is fine: it does not change
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    K = jax.tree_util.GetAttrKey
    jax.tree_util.register_pytree_with_keys(
        Pair, lambda p: (((K("a"), p.a), (K("b"), p.b)), np.shape(p.a)),
        lambda aux, ch: Pair(*ch))
    return Pair


def _running_max_stack(xs):     # the step's maximum as a reduction of two
    def step(best, x):
        best = jnp.max(jnp.stack([best, x]))
        return best, best
    return jax.lax.scan(step, jnp.array(-jnp.inf, xs.dtype), xs)[1]


def _running_max_fori(xs):      # a fori_loop with static bounds writing into the output
    def body(i, state):
        best, out = state
        best = jnp.maximum(best, xs[i])
        return best, out.at[i].set(best)
    init = (jnp.array(-jnp.inf, xs.dtype), jnp.zeros_like(xs))
    return jax.lax.fori_loop(0, xs.shape[0], body, init)[1]


@jax.jit
def _running_max_jitted(xs):    # the whole answer under jit: the scan is inside a jit equation
    return jax.lax.scan(lambda c, x: (jnp.maximum(c, x),) * 2, -jnp.inf, xs)[1]


@jax.jit
def _newton_jitted(a):          # under jit, 24 steps
    return jax.lax.fori_loop(0, 24, lambda i, x: 0.5 * (x + a / x), a)


def _newton_scan(a):
    x, _ = jax.lax.scan(lambda x, _: (0.5 * (x + a / x), None), a, None, length=25)
    return x


def _newton_residual(a):        # Newton's step written as x - f(x)/f'(x), f(x) = x² - a
    return jax.lax.fori_loop(0, 25, lambda i, x: x - (x * x - a) / (2 * x), a)


def _mean_with_count_float32(xs):   # the count in float32, the mean cast back to xs's dtype
    def step(carry, x):
        total, n = carry
        total, n = total + x, n + 1.0
        return (total, n), (total / n).astype(xs.dtype)
    init = (jnp.zeros_like(xs[0]), jnp.zeros((), jnp.float32))
    return jax.lax.scan(step, init, xs)[1]


def _mean_from_first(xs):       # the total starts as the first element, the count as 1
    def step(carry, x):
        total, n = carry
        total, n = total + x, n + 1
        return (total, n), total / n
    return jnp.concatenate([xs[:1], jax.lax.scan(step, (xs[0], 1), xs[1:])[1]])


@jax.jit
def _mean_jitted_where(xs):     # under jit; the carry's start from zeros_like of a row
    def step(carry, x):
        total, n = carry
        total = total + x
        return (total, n + 1), total / (n + 1)
    return jax.lax.scan(step, (jnp.zeros_like(xs[0]), jnp.int32(0)), xs)[1]


RIGHT = {
    "q1": [_DataPair, _keys_class(), _shape_aux_class()],
    "q2": [_scan_from(-np.inf, jnp.maximum), _running_max_stack, _running_max_fori,
           _running_max_jitted],
    "q3": [_newton_scan, _newton(30), _newton_residual, _newton_jitted],
    "q4": [_mean_with_count_float32, _mean_from_first, _mean_jitted_where],
}
