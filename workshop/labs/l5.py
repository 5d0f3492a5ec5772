"""Lab L5 "Carry types and custom pytrees": the checks.
The tasks are in exercises/L5-carry-types-and-custom-pytrees.ipynb. What the checks read from
an answer's staged program (its first scan, run; where a loop was made) is in l5_reading.py."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util as tu
from jax._src import core

from . import (
    CALLBACKS,
    Edge,
    Task,
    Wrong,
    all_eqns,
    as_array,
    as_now,
    close,
    first_line,
    raised_in_attendee_code,
)
from .l5_reading import _first_scan, _made_by_jax, _one_step, _outside_scans, _scan_outputs

LAB = "L5"


# ----------------------------------------------------------------- task 1: a custom pytree

def _check_pair(Pair) -> str:
    if not isinstance(Pair, type):
        raise Wrong("pass the class itself: q1.check(Pair)")
    a, b = np.array([1.0, -2.0, 0.5], np.float32), np.float32(3.0)
    p = Pair(a.copy(), b)   # (its own copy: what the class writes into it leaves the check's a)
    _flattens_and_back(Pair, p, a, b)
    _jit_and_eval_shape_give_it_back(Pair, p, a, b)
    _one_trace_for_two(Pair, (a, b), (np.array([4.0, 0.5, -1.0], np.float32), np.float32(-2.0)))
    for e in EDGES["q1"]:
        _same_metadata(Pair, *e.value, e.name)
    g = jax.grad(lambda q: jnp.sum(q.a * q.b))(p)
    if not isinstance(g, Pair) or not (close(g.a, np.full(3, b)) and close(g.b, a.sum())):
        raise Wrong("grad with respect to a Pair should be a Pair of the two gradients")
    batch = Pair(np.ones((4, 3), np.float32), np.arange(4, dtype=np.float32))
    out = jax.vmap(lambda q: q.a * q.b)(batch)
    if not close(out, np.ones((4, 3)) * np.arange(4)[:, None]):
        raise Wrong("vmap over a batch of Pairs gives the wrong result")
    paths = [tu.keystr(k) for k, _ in tu.tree_flatten_with_path(p)[0]]
    if paths != [".a", ".b"]:
        raise Wrong(f"the key paths read {paths}; they should name the attributes "
                    "('.a', '.b')")
    return ("jit (taking two Pairs of the same shapes with one trace, and returning one), "
            "eval_shape, grad and vmap see a Pair, and its key paths read .a and .b")


def _flattens_and_back(Pair, p, a, b) -> None:
    """Wrong unless p flattens to its leaves a, b in that order and unflattens to p."""
    leaves, treedef = tu.tree_flatten(p)
    if len(leaves) != 2:
        raise Wrong(f"a Pair should flatten to its two leaves (a, b), it gives {len(leaves)}: "
                    "is it registered?")
    if not (close(leaves[0], a) and close(leaves[1], b)):
        if close(leaves[0], b) and close(leaves[1], a):
            raise Wrong("the leaves should come out in the order a, b")
        raise Wrong(f"a Pair made of a = {a.tolist()} and b = {float(b)} flattens to other "
                    f"numbers ({[np.asarray(x).tolist() for x in leaves]}): a Pair keeps "
                    "the arrays it is given as they are, and flatten hands them on")
    back = tu.tree_unflatten(treedef, leaves)
    if not isinstance(back, Pair):
        raise Wrong(f"unflatten should rebuild a Pair, it gives a {type(back).__name__}")
    if not (close(back.a, a) and close(back.b, b)):
        raise Wrong("flatten then unflatten does not give the Pair back: unflatten puts the "
                    "leaves in the wrong places")


def _jit_and_eval_shape_give_it_back(Pair, p, a, b) -> None:
    """Wrong unless jit and eval_shape return a Pair: a Pair made inside a trace holds
    tracers; eval_shape rebuilds one from ShapeDtypeStructs."""
    try:
        same = jax.jit(lambda q: q)(p)
    except Exception as e:
        raise Wrong(f"jit cannot return a Pair: jax.jit(lambda q: q)(pair) fails "
                    f"({type(e).__name__}: {str(e).splitlines()[0][:100]}). Inside jit, "
                    "flatten gets tracers, not arrays: hand the children on as they are"
                    ) from None
    if not (isinstance(same, Pair) and close(same.a, a) and close(same.b, b)):
        raise Wrong("jax.jit(lambda q: q)(pair) does not give the Pair back")
    try:
        shapes = jax.eval_shape(lambda q: q, p)
    except Exception as e:
        raise Wrong(f"jax.eval_shape(lambda q: q, pair) fails ({type(e).__name__}: "
                    f"{str(e).splitlines()[0][:100]}): eval_shape rebuilds a Pair from "
                    "ShapeDtypeStructs, not arrays; unflatten must take whatever leaves it "
                    "is given") from None
    if not (isinstance(shapes, Pair) and np.shape(shapes.a) == (3,)):
        raise Wrong("jax.eval_shape(lambda q: q, pair) does not give a Pair of shapes back")


def _one_trace_for_two(Pair, first, second) -> None:
    """Wrong unless jit, called on two Pairs of the same shapes and dtypes (each made of a
    copy of its (a, b)), traces once and gives the right numbers: else the pytree's metadata
    (the aux data flatten returns) holds a value."""
    traces = []

    def prod(q):
        traces.append(1)
        return q.a * q.b

    f = jax.jit(prod)
    (a, b), (a2, b2) = first, second
    try:
        got = f(Pair(a.copy(), b))
        again = f(Pair(a2.copy(), b2))
    except TypeError as e:
        raise Wrong(f"jit refused a Pair ({str(e).splitlines()[0][:80]})") from None
    except ValueError as e:
        if "metadata" not in str(e):
            raise
        raise Wrong("jit took one Pair but refused a second of the same shapes: comparing "
                    "the two Pairs' metadata (the aux data your flatten returns) failed. "
                    "jit compares aux data with == and hashes it: it must not hold arrays"
                    ) from None
    if len(traces) > 1:
        raise Wrong("jit traced again for a second Pair of the same shapes and dtypes: the "
                    "metadata your flatten returns (its aux data) holds values, and jit "
                    "keys its cache on metadata, so every new value recompiles. Arrays are "
                    "children")
    if not (close(got, a * b) and close(again, a2 * b2)):
        raise Wrong("jit of q.a * q.b gives the wrong numbers: does unflatten put a and b back "
                    "in their places?")


def _same_metadata(Pair, first, second, edge: str) -> None:
    """Wrong unless two Pairs of the same shapes and dtypes (a row of the table) have the same
    tree structure, metadata included: what jit compares (==) to reuse its trace for the
    second, here without compiling anything."""
    (a, b), (a2, b2) = first, second
    try:
        same = tu.tree_structure(Pair(a.copy(), b)) == tu.tree_structure(Pair(a2.copy(), b2))
    except ValueError as e:
        if "metadata" not in str(e):
            raise
        raise Wrong(f"for {edge}, jit would refuse the second: comparing the two Pairs' "
                    "metadata (the aux data your flatten returns), as jit does to reuse its "
                    "trace, failed. jit compares aux data with == and hashes it: it must not "
                    "hold arrays") from None
    if not same:
        raise Wrong(f"for {edge}, the two Pairs' metadata (the aux data your flatten returns) "
                    "differ, so jit would trace again for the second: the metadata holds "
                    "values. Arrays are children")


q1 = Task(LAB, 1, "A custom pytree", _check_pair, [
    "Register the class so that flatten returns its children (a, b) and unflatten rebuilds "
    "a Pair; use a form that gives key paths.",
    "tu.register_pytree_with_keys(Pair, flatten_with_keys, unflatten): flatten_with_keys "
    "returns ((key, child) pairs, aux). Which of tu's key classes names an attribute? (A "
    "dataclass with tu.register_dataclass works too.)",
])


# ----------------------------------------------------------------- task 2: a loop as a scan

def running_max_python(xs):
    """The Python loop task 2 starts from."""
    out, best = [], -jnp.inf
    for x in xs:
        best = jnp.maximum(best, x)
        out.append(best)
    return jnp.stack(out)


_RM_CASES = [np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], np.float32),
             np.array([-5.0, -7.0, -1.0, -3.0], np.float32),
             np.linspace(2.0, -2.0, 50, dtype=np.float32),
             np.array([-2.5e38, -3e38, -1e30], np.float32),       # below any "small" start
             np.array([-42.0], np.float32),                        # one element
             np.random.default_rng(5).normal(size=17).astype(np.float32) * 1e4 - 3e4,
             np.array([1.0, np.nan, 2.0, 0.5], np.float32),      # the loop's maximum keeps NaN
             np.array([np.nan, -1.0, 3.0], np.float32)]
# The inputs task 2's words call for that ordinary inputs leave untried: a row each, with its
# reason (tests/wrong_answers/l5.py holds for each a wrong answer that only it rejects)
EDGES = {
    # task 1's row: the (a, b) of two Pairs of the same shapes that jit is called on
    "q1": (Edge("two Pairs of a 2×3 matrix", "the check uses values the attendee did not "
                "choose, and a matrix is one: metadata that holds an array (a's shape as an "
                "array, say) compares as equal under jit's == while the array holds one "
                "number, and fails when it holds two",
                ((np.arange(6.0, dtype=np.float32).reshape(2, 3), np.float32(0.5)),
                 (np.ones((2, 3), np.float32), np.float32(-1.0)))),),
    "q2": (Edge("-inf inputs", "the loop starts its maximum at -inf, so any input works: even "
                "-inf itself, below the most negative float32 a scan might start from",
                np.array([-np.inf, -np.inf, -1.0, -np.inf], np.float32)),
           Edge("bfloat16 xs", "the Python loop's running maximum of bfloat16 numbers is "
                "bfloat16: a start of float32 -inf would promote every step",
                np.array([1.0, 3.0, -2.0, 7.5, 2.0], jnp.bfloat16))),
}


# primitives that compute a running or windowed result for the whole array at once
_WHOLE_ARRAY = {"cummax", "cummin", "cumsum", "cumprod", "cumlogsumexp", "reduce_window",
                "reduce_window_max", "reduce_window_min", "reduce_window_sum", "sort"}
# primitives that take a maximum (select_n: a jnp.where choosing the larger)
_MAXIMUM = {"max", "reduce_max", "argmax", "select_n"}
_MAX_ONLY = _MAXIMUM - {"select_n"}


def _check_scan(running_max) -> str:
    running_max = as_now(running_max)    # as it is now: a helper redefined since is seen
    outside = _one_scan_that_takes_the_maximum(running_max)
    f = jax.jit(running_max)
    for xs, edge in [(c, "") for c in _RM_CASES] + [(e.value, e.name) for e in EDGES["q2"]]:
        _running_maximum_of(f, xs, edge)
    n = len(outside)
    return (f"one scan, whose step takes the maximum of its carry and x; outside its body "
            f"the staged program has {n} equation{'s' if n != 1 else ''} for 50 elements, "
            "where the Python loop stages 52")


def _one_scan_that_takes_the_maximum(running_max) -> list[str]:
    """The equations of the staged program outside its scans, once that program is a scan
    the answer wrote, not unrolled, whose step takes the maximum; else Wrong."""
    jaxpr = jax.make_jaxpr(running_max)(jnp.asarray(_RM_CASES[2])).jaxpr
    names = [e.primitive.name for e in all_eqns(jaxpr)]
    every = set(names)
    if every & _WHOLE_ARRAY:
        raise Wrong(f"the staged program uses {', '.join(sorted(every & _WHOLE_ARRAY))}, "
                    "which works on the whole array at once: write the loop yourself, as a "
                    "scan whose step does the work")
    if "scan" not in every:
        raise Wrong(f"the staged program has no scan ({len(names)} equations for 50 "
                    "elements): the loop was unrolled or replaced")
    scans = [e for e in all_eqns(jaxpr) if e.primitive.name == "scan"]
    _written_as_a_loop(scans)
    outside = [e.primitive.name for e in _outside_scans(jaxpr)]
    if set(outside) & _MAX_ONLY:
        raise Wrong(f"there is a scan, but the maximum is taken outside it "
                    f"({', '.join(sorted(set(outside) & _MAX_ONLY))} around the scan): the "
                    "scan's step should do the work")
    if not any({e.primitive.name for e in all_eqns(s.params["jaxpr"].jaxpr)} & _MAXIMUM
               for s in scans):
        raise Wrong("there is a scan, but its step takes no maximum: where is the running "
                    "maximum computed?")
    if not any(_maximum_of_the_carry(s) for s in scans):
        raise Wrong("there is a scan whose step takes a maximum, but not of what it carries: "
                    "each step starts again from the inputs (lax.map is a scan that carries "
                    "nothing). The running maximum is the carry: the step takes the maximum "
                    "of it and x")
    if len(outside) > 12:
        raise Wrong(f"there is a scan, but {len(outside)} equations around it for 50 "
                    "elements: part of the loop is still unrolled")
    return outside


def _maximum_of_the_carry(scan) -> bool:
    """Whether the scan's step takes a maximum (in its own equations or in one nested in them)
    of a value that follows from its carry, not of its xs and constants alone."""
    body = scan.params["jaxpr"]
    nc, ncar, _ = (len(part) for part in scan.params["ft_in"].unpack())  # (l5_reading's way)
    follows = set(body.invars[nc:nc + ncar])
    for e in body.eqns:
        if any(v in follows for v in e.invars if not isinstance(v, core.Literal)):
            if {x.primitive.name for x in all_eqns(_one(e))} & _MAXIMUM:
                return True
            follows.update(e.outvars)
    return False


def _one(eqn):
    """A stand-in jaxpr of the single equation `eqn`, for all_eqns to walk into it."""
    return type("One", (), {"eqns": [eqn]})()


def _written_as_a_loop(scans) -> None:
    """Wrong if a scan was made inside jax (jnp's accumulate) or is unrolled completely."""
    made = {_made_by_jax(e) for e in scans} - {None}
    if made:
        raise Wrong(f"the scan in the staged program was made inside jax "
                    f"({', '.join(sorted(made))}), not by your code: write the scan yourself")
    unrolled = [e for e in scans if e.params["length"] > 1
                and e.params["unroll"] >= e.params["length"]]
    if unrolled:
        raise Wrong(f"the scan is unrolled completely (unroll={unrolled[0].params['unroll']} "
                    f"for {unrolled[0].params['length']} steps): compiled, that is one step "
                    "per element again, as the Python loop")


def _running_maximum_of(f, xs, edge: str = "") -> None:
    """Wrong unless f(xs) is the Python loop's running maximum, in the dtype of xs."""
    out = f(xs)
    got = as_array(out, f"running_max of {len(xs)} elements")
    want = np.maximum.accumulate(xs.astype(np.float32))     # NaN stays, as in the loop
    if got.shape != want.shape:
        raise Wrong(f"for {len(xs)} elements it returns shape {got.shape}, not "
                    f"{want.shape}: one running maximum per element")
    if not np.allclose(got.astype(np.float32), want, rtol=1e-5, atol=1e-5,
                       equal_nan=True):
        shown = np.asarray(xs, np.float32)[:6].tolist()
        raise Wrong(f"on {shown}…" + (f" ({edge})" if edge else "")
                    + f" it gives {got.astype(np.float32)[:6].tolist()}… where "
                    f"the Python loop gives {want[:6].tolist()}…")
    if jnp.result_type(out) != xs.dtype:
        raise Wrong(f"for {xs.dtype} xs it returns {jnp.result_type(out)}: the Python "
                    f"loop's running maximum of {xs.dtype} numbers is {xs.dtype}")


q2 = Task(LAB, 2, "A Python loop as a scan", _check_scan, [
    "jax.lax.scan(step, init, xs): step(carry, x) returns (new carry, y); the ys are stacked.",
    "The carry is the best so far; what should it start at so that any input works, even "
    "-inf or the most negative float32?",
], takes="running_max")


# ----------------------------------------------------------------- task 3: differentiable loop

def newton_sqrt(a):
    """The iteration task 3 starts from: converges, but reverse mode refuses it."""
    return jax.lax.while_loop(lambda x: jnp.abs(x * x - a) > 1e-6 * a,
                              lambda x: 0.5 * (x + a / x), a)


# what Newton's method for √a does not need: roots, powers, transcendental functions, bit
# tricks; a start computed with them (exp(log(a)/2) is √a) makes the loop decoration
_NOT_NEWTON = {"sqrt", "rsqrt", "cbrt", "pow", "exp", "exp2", "log", "log1p", "expm1",
               "logistic", "tanh", "sinh", "cosh", "asinh", "acosh", "atanh", "sin", "cos",
               "tan", "asin", "acos", "atan", "atan2", "erf", "erfc", "erf_inv", "lgamma",
               "digamma", "bitcast_convert_type"}
_CUSTOM_RULES = {"custom_jvp_call", "custom_vjp_call", "custom_lin"}


def _custom_rules(jaxpr) -> set:
    """The custom derivative rules a staged program carries, by name. lax.custom_root has no
    primitive of its own: it stages call_hi_primitive carrying a CustomRoot (solves.py)."""
    found = set()
    for e in all_eqns(jaxpr):
        if e.primitive.name in _CUSTOM_RULES:
            found.add(e.primitive.name)
        elif type(e.params.get("_prim")).__name__ == "CustomRoot":
            found.add("custom_root")
    return found


def _check_diff(fn) -> str:
    fn = as_now(fn)    # as it is now: a helper or rule redefined since is seen
    value, grad = jax.jit(fn), jax.jit(jax.grad(fn))
    for a in (2.0, 9.0, 0.25, 150.0, 0.01, 2500.0, 1.0, 1e6, 1e-4):
        val = as_array(value(jnp.float32(a)), f"at a={a}, the result")
        if val.shape != ():
            raise Wrong(f"at a={a} it returns shape {val.shape}, not a scalar")
        if not close(val, np.sqrt(a), tol=1e-4):
            raise Wrong(f"at a={a} it gives {float(val):.6f}, not √a = {np.sqrt(a):.6f}: "
                        "enough iterations?")
        try:
            g = grad(jnp.float32(a))
        except ValueError as e:
            first = str(e).splitlines()[0].split(". ")[0][:160]
            raise Wrong(f"grad under jit still refuses it: {first}") from None
        if not close(g, 0.5 / np.sqrt(a), tol=1e-3):
            raise Wrong(f"at a={a} the gradient is {float(g):.6f}, not 1/(2√a) = "
                        f"{0.5 / np.sqrt(a):.6f}")
    jaxpr = jax.make_jaxpr(fn)(jnp.float32(2.0)).jaxpr
    every = {e.primitive.name for e in all_eqns(jaxpr)}
    if every & CALLBACKS:
        raise Wrong(f"the staged program calls back into Python "
                    f"({', '.join(sorted(every & CALLBACKS))}): keep the whole iteration in "
                    "JAX")
    if custom := _custom_rules(jaxpr):
        raise Wrong(f"the staged program has a custom derivative rule "
                    f"({', '.join(sorted(custom))}): the task asks reverse "
                    "mode to differentiate the loop itself")
    if every & _NOT_NEWTON:
        raise Wrong(f"the staged program uses {', '.join(sorted(every & _NOT_NEWTON))}: "
                    "Newton's method for √a needs only +, × and ÷. Keep Newton's step "
                    "x → (x + a/x)/2 from x = a, in a loop")
    if "while" in every or "scan" not in every:
        raise Wrong("the numbers are right, but keep the Newton iteration as a loop with a "
                    "fixed number of steps (a scan in the staged program, no while)")
    # run the loop's first step at a = 2: one number it carries must go x → (x + 2/x)/2
    found = _first_scan(fn, jnp.float32(2.0))
    if found is None:
        raise Wrong("the check cannot find your loop's scan at the top of the staged program "
                    "(or inside a jit): keep the loop there")
    steps = [(np.asarray(x0, np.float64), np.asarray(x1, np.float64))
             for x0, x1 in _one_step(*found) if jnp.issubdtype(jnp.result_type(x0), jnp.floating)]
    with np.errstate(divide="ignore", invalid="ignore"):
        newton = [np.allclose(x1, 0.5 * (x0 + 2.0 / x0), rtol=1e-5) for x0, x1 in steps]
    if not any(newton):
        if not steps:
            raise Wrong("the loop carries no floating-point number: where is x?")
        x0, x1 = steps[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            want = 0.5 * (x0 + 2.0 / x0)
        raise Wrong(f"the loop's step is not Newton's: at a = 2, one step takes x = "
                    f"{np.round(x0, 6).tolist()} to {np.round(x1, 6).tolist()}, where Newton's "
                    f"step x → (x + a/x)/2 gives {np.round(want, 6).tolist()}")
    return ("Newton's step in a bounded loop (a scan), with no root or transcendental "
            "anywhere: right values and gradients from a = 0.0001 to a = 1e6, and reverse "
            "mode differentiates it")


q3 = Task(LAB, 3, "Make a while_loop differentiable", _check_diff, [
    "Reverse mode needs a known number of iterations: keep the Newton step, bound the loop.",
    "jax.lax.fori_loop with static (Python int) bounds is a scan underneath; how many "
    "steps does Newton need from x = a when a is a million, or 0.0001?",
], takes="newton_sqrt_differentiable")


# ----------------------------------------------------------------- task 4: a carry type

def mean_so_far_broken(xs):
    """The scan task 4 starts from: the mean of xs[:i+1] for every i. scan refuses it."""
    def step(carry, x):
        total, n = carry
        total, n = total + x, n + 1
        return (total, n), total / n
    return jax.lax.scan(step, (0, 0), xs)[1]


def _mean_ref(xs):
    xs = np.asarray(xs, np.float64)
    return np.cumsum(xs, axis=0) / np.arange(1, len(xs) + 1).reshape((-1,) + (1,) * (xs.ndim - 1))


def _long_bfloat16(n=400):
    """n small integers from 128 on, as bfloat16: every running total is an integer within
    ±256, exact in bfloat16 whatever the order, so a carry kept in bfloat16 adds them up
    right; but a count kept in bfloat16 stops at 256 (256 + 1 rounds back to 256)."""
    steps = np.random.default_rng(9).integers(-3, 4, size=n)
    steps[0] = 128
    assert np.abs(np.cumsum(steps)).max() <= 256
    return np.asarray(steps, jnp.bfloat16)


def _mean_cases():
    """The inputs, as NumPy arrays (jit takes them as they are; nothing to put on a device)."""
    rng = np.random.default_rng(9)
    return [("7 float32 numbers", rng.normal(size=7).astype(np.float32)),
            ("400 bfloat16 numbers", _long_bfloat16()),
            ("6 rows of 3 float32", rng.normal(size=(6, 3)).astype(np.float32)),
            ("4 float16 rows of 2", rng.normal(size=(4, 2)).astype(np.float16)),
            ("3 float32 numbers, inf first", np.array([np.inf, 1.0, 2.0], np.float32)),
            ("5 float32 elements of shape (2, 3)",
             rng.normal(size=(5, 2, 3)).astype(np.float32))]


_MEAN_CASES = _mean_cases()


def _carry_error(e: Exception) -> str:
    """scan's refusal: its first line and the one that names the carry component."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return " ".join(lines[:2])[:300]


def _check_carry(mean_so_far) -> str:
    mean_so_far = as_now(mean_so_far)    # as it is now: a helper redefined since is seen
    cases = _MEAN_CASES
    _a_scan_that_takes_its_carry(mean_so_far, *cases[0])
    f = jax.jit(mean_so_far)
    for text, xs in cases:
        _running_means(text, xs, _means_of(f, text, xs))
    _means_from_the_scan(mean_so_far, *cases[0])
    return ("the carry starts with the type the body gives back: the right means, from the "
            "scan, in the dtype of xs, for float32, 400 bfloat16 numbers, float16 and inf, "
            "vectors, rows and elements of shape (2, 3)")


def _a_scan_that_takes_its_carry(mean_so_far, text, xs) -> None:
    """Wrong unless the staged program is a scan (no cumsum) that scan accepts."""
    try:
        every = {e.primitive.name for e in all_eqns(jax.make_jaxpr(mean_so_far)(xs))}
    except TypeError as e:
        if "carry" not in str(e):
            raise
        raise Wrong(f"for {text}, scan refuses the carry: {_carry_error(e)}"
                    ) from None
    if "scan" not in every or "cumsum" in every:
        raise Wrong("the staged program " + ("uses cumsum" if "cumsum" in every
                                             else "has no scan")
                    + ": keep the loop, a scan, and fix its carry")


def _means_of(f, text, xs):
    """f(xs), with scan's refusal of the carry and what the attendee's code raises told in
    their terms."""
    try:
        return f(xs)
    except TypeError as e:
        if "carry" in str(e):
            raise Wrong(f"for {text}, scan still refuses the carry: "
                        f"{_carry_error(e)}") from None
        raise
    except Exception as e:
        if not raised_in_attendee_code(e):
            raise
        raise Wrong(f"for {text}, your code raised {type(e).__name__}: {first_line(e)}"
                    ) from None


def _running_means(text, xs, got) -> None:
    """Wrong unless got holds the mean of xs[:i+1] for every i, in the shape and dtype of
    xs, within what xs's dtype keeps."""
    got_arr = as_array(got, f"for {text}, the result")
    if got_arr.shape != xs.shape:
        raise Wrong(f"for {text} the result has shape {got_arr.shape}, not {xs.shape}: one "
                    "mean per step, of the same shape as an element")
    if jnp.result_type(got) != xs.dtype:
        raise Wrong(f"for {text} the result is {jnp.result_type(got)}, not {xs.dtype}: "
                    "the carry should take its type from xs, not fix one")
    # float16 keeps 11 bits, bfloat16 8: a running mean carried in bfloat16 drifts by a
    # few percent over 400 steps; a count that stopped at 256 is off by up to 56%
    rtol, atol = (1e-5, 1e-5) if xs.dtype == jnp.float32 else (
        (0.1, 2e-2) if xs.dtype == jnp.bfloat16 else (2e-2, 2e-2))
    got64 = got_arr.astype(np.float64).reshape(len(xs), -1)
    want = _mean_ref(np.asarray(xs.astype(jnp.float32))).reshape(len(xs), -1)
    ok = np.isclose(got64, want, rtol=rtol, atol=atol).all(axis=1)
    if not ok.all():
        i = int(np.argmin(ok))
        where = f"from step {i + 1} on" if i else "from the first step"
        why = (": bfloat16 holds every whole number only up to 256"
               if xs.dtype == jnp.bfloat16 and i >= 256 else "")
        raise Wrong(f"for {text} the means are wrong {where}"
                    + (f" (right for the first {i})" if i else "")
                    + f": at step {i + 1} it gives {got64[i].tolist()[:3]} where the mean "
                    f"is {want[i].round(4).tolist()[:3]}{why}")


def _means_from_the_scan(mean_so_far, text, xs) -> None:
    """Wrong unless the means come out of the scan: some output of it (its steps' ys, or its
    final carry) holds the running means or totals, of every step from the second on."""
    found = _first_scan(mean_so_far, xs)
    means = _mean_ref(np.asarray(xs))
    totals = np.cumsum(np.asarray(xs, np.float64), axis=0)
    if found is None:
        raise Wrong("the check cannot find your scan at the top of the staged program (or "
                    "inside a jit): keep the loop there")
    outs = [np.asarray(o, np.float64) for o in _scan_outputs(*found)]
    if not any(o.ndim >= 1 and len(xs) - 1 <= len(o) <= len(xs) and o.shape[1:] == xs.shape[1:]
               and (np.allclose(o, means[-len(o):], rtol=1e-5, atol=1e-5)
                    or np.allclose(o, totals[-len(o):], rtol=1e-5, atol=1e-5))
               for o in outs):
        raise Wrong(f"the right means, but not from the scan: for {text}, nothing the scan "
                    "gives out is a running total or mean. Keep the loop doing the work, fix "
                    "its carry")


q4 = Task(LAB, 4, "Fix a carry type", _check_carry, [
    "Run mean_so_far_broken and read the error: scan compares the carry's type going in "
    "with the type coming out of the body, field by field (shape and dtype; a weakly typed "
    "start may first be promoted to the body's dtype).",
    "scan lets a weakly typed Python 0 take the dtype the body gives back, but never a new "
    "shape; and a strongly typed start (jnp.zeros(()) is float32) fixes the dtype of all "
    "that follows. Start total as what it will become: one element of xs.",
    "The shape of it: an init built from xs (its dtype, xs.shape[1:]) for the total; "
    "the count may stay a Python int.",
], takes="mean_so_far")
