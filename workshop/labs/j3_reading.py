"""Lab J3: what its checks read from an answer's program. The rule in its staged program (a
custom_vjp, autodiff run inside it, what bwd returns), the checkpoints in its jaxpr and the
residuals they keep, and XLA's analyses of its compiled gradient (which of XLA's figures a
wrong number is). The tasks and their checks are in j3.py."""
from __future__ import annotations

import hashlib
import re

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import core

from . import Wrong, all_eqns

# ----------------------------------------------------------------- the custom rule

def _prims(fn, *args) -> list[str]:
    return [e.primitive.name for e in all_eqns(jax.make_jaxpr(fn)(*args))]


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


def _bwd_gives_a_tuple(fn, x, what: str) -> None:
    """Trace grad(fn) once. A bwd that does not return one cotangent per input is refused by
    JAX inside JAX, after bwd returned (so no frame of the attendee's code is on the
    traceback): say what it returned, in the attendee's terms."""
    try:
        jax.make_jaxpr(jax.grad(lambda x: jnp.sum(fn(x))))(x)
    except ValueError as e:   # one entry per input, but not of the input's type
        found = re.search(r"Custom VJP bwd rule .* produced an output of type (\S+) "
                          r"corresponding to an input of type ([^\s,]+)", str(e))
        if not found:
            raise
        raise Wrong(f"your bwd returns a {found.group(1)} cotangent for x, a "
                    f"{found.group(2)}: JAX refuses it. The cotangent of an input has the "
                    "input's shape and dtype", 2) from None
    except TypeError as e:
        if "Custom VJP bwd rule must produce" not in str(e):
            raise
        found = re.search(r"got bwd output structure (.*) for primal", str(e))
        got = found.group(1) if found else "something else"
        got = "a bare array" if got == "PyTreeDef(*)" else f"the structure {got}"
        raise Wrong(f"your bwd returns {got}, not a tuple with one entry per input of "
                    f"{what} (it has one, x): JAX refuses it", 2) from None


# ----------------------------------------------------------------- compiled, XLA's figures

# Compiling is the slow part of tasks 3 and 4 (about a second a program here, more on a busy
# machine). The checks keep compiled programs by what they are: the StableHLO text of the
# lowered program, the constants passed to it, and JAX's config (flags that change how XLA
# compiles without changing the text). Two answers that lower to the same program share one
# executable; an answer whose code, helper or global changed lowers to another text and is
# compiled afresh. No verdict is kept: every check traces the answer again and decides from
# what it gets now.
_COMPILED: dict = {}
_COMPILED_MAX = 64


def _digest(a) -> tuple:
    a = np.asarray(a)
    return a.shape, str(a.dtype), hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()


def _compiled(fn, *args):
    """jax.jit(fn).lower(*args).compile(), shared by every call that lowers to the same
    program under the same config."""
    lowered = jax.jit(fn).lower(*args)
    consts = getattr(getattr(lowered, "_lowering", None), "const_args", None) or ()
    key = (lowered.as_text(), tuple(_digest(c) for c in consts),
           tuple(sorted((k, repr(v)) for k, v in jax.config.values.items())))
    exe = _COMPILED.get(key)
    if exe is None:
        while len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.pop(next(iter(_COMPILED)))
        exe = _COMPILED[key] = lowered.compile()
    return exe


def _flops(exe) -> float:
    """XLA's count of floating-point operations in a compiled program: on CPU in JAX 0.12,
    Compiled.cost_analysis() is a dict with a 'flops' entry."""
    return float(exe.cost_analysis()["flops"])


def _temp(exe) -> int:
    return int(exe.memory_analysis().temp_size_in_bytes)


# ----------------------------------------------------------------- the checkpoints (task 3)

def _remats(jaxpr):
    return [e for e in all_eqns(jaxpr) if e.primitive.name == "remat2"]


def _count_dots(jaxpr, inside=False) -> tuple[int, int]:
    """(matrix products outside every checkpoint, all matrix products) of a jaxpr, each one
    counted once where it is written (a scan body's once, not once per step)."""
    out = total = 0
    for e in jaxpr.eqns:
        if e.primitive.name == "dot_general":
            total += 1
            out += not inside
        for v in e.params.values():
            for sub in (v if isinstance(v, (tuple, list)) else [v]):
                if isinstance(sub, core.Jaxpr):
                    o, t = _count_dots(sub, inside or e.primitive.name == "remat2")
                    out, total = out + o, total + t
    return out, total


_LOOPS = {"scan", "while"}


def _wraps_a_loop(remat) -> bool:
    return any(e.primitive.name in _LOOPS for e in all_eqns(remat.params["jaxpr"]))


def _without_policies(jaxpr):
    """The same jaxpr with every checkpoint's policy removed: what nothing_saveable saves."""
    eqns = []
    for e in jaxpr.eqns:
        params = {}
        for k, v in e.params.items():
            if isinstance(v, core.Jaxpr):
                v = _without_policies(v)
            elif isinstance(v, tuple) and any(isinstance(s, core.Jaxpr) for s in v):
                v = tuple(_without_policies(s) if isinstance(s, core.Jaxpr) else s for s in v)
            params[k] = v
        if e.primitive.name == "remat2":
            params["policy"] = None
        eqns.append(e.replace(params=params))
    return jaxpr.replace(eqns=eqns)


def _residuals(fn, *args) -> list[tuple]:
    """The arrays the backward pass of fn keeps from its forward pass (shape and dtype of
    each), as jax.ad_checkpoint.print_saved_residuals lists them."""
    from jax._src.ad_checkpoint import saved_residuals
    return sorted((tuple(a.shape), str(a.dtype)) for a, _ in saved_residuals(fn, *args))


def _plain_residuals(jaxpr, params, x) -> list[tuple]:
    """What the backward pass of a loss's jaxpr keeps with its checkpoints' policies removed."""
    stripped = _without_policies(jaxpr)
    return _residuals(
        lambda p, x, j=stripped: core.jaxpr_as_fun(j)(*jax.tree.leaves((p, x)))[0],
        params, x)


def _nbytes(residuals) -> int:
    return sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in residuals)


# ----------------------------------------------------------------- a wrong measure

def _same(a, b) -> bool:
    return abs(a - b) <= 1e-6 * max(abs(b), 1.0)


_MEMORY_FIELDS = ("peak_memory_in_bytes", "total_allocation_bytes", "argument_size_in_bytes",
                  "output_size_in_bytes", "alias_size_in_bytes",
                  "generated_code_size_in_bytes", "peak_unpadded_heap_bytes")


def _explain_temp(name, got, loss, params, x, exe) -> str:
    want = _temp(exe)
    if got == _temp(_compiled(loss, params, x)) != want:
        return (f"{name}: your temp_bytes, {got}, is the temp size of the loss's own "
                "executable, jax.jit(loss): measure its gradient's")
    stats = exe.memory_analysis()
    for field in _MEMORY_FIELDS:
        value = getattr(stats, field, None)
        if isinstance(value, int) and value and value == got:
            return (f"{name}: your temp_bytes, {got}, is the compiled gradient's "
                    f"memory_analysis().{field}: the temporaries are a field of their own")
    return (f"{name}: your temp_bytes is {got}, but the memory analysis of the compiled "
            f"gradient, jax.jit(jax.grad(loss)).lower(params, x).compile(), gives {want} "
            "bytes of temporaries")


def _explain_flops(name, got, loss, params, x, exe) -> str:
    want = _flops(exe)
    lowered = jax.jit(jax.grad(loss)).lower(params, x).cost_analysis()
    if lowered and _same(got, float(lowered["flops"])):
        return (f"{name}: your flops, {got:.6g}, are the lowered program's count, before XLA "
                "optimizes it: read the cost analysis of the compiled executable, the one "
                "you time")
    for key, value in exe.cost_analysis().items():
        if key != "flops" and value and _same(got, float(value)):
            return (f"{name}: your flops, {got:.6g}, are the cost analysis's {key!r} entry, "
                    "not its count of floating-point operations")
    if _same(got, _flops(_compiled(loss, params, x))):
        return (f"{name}: your flops, {got:.6g}, are the count of the loss's own executable, "
                "jax.jit(loss): measure its gradient's")
    return (f"{name}: your flops are {got:.6g}, but XLA's cost analysis of the compiled "
            f"gradient counts {want:.6g}")
