"""Lab L5: what its checks read from an answer's staged program. Its first scan, run on the
check's inputs (the scan's outputs, the carry of its first step), the jax function that wrote
a loop the answer did not, and the equations outside every scan. The tasks and their checks
are in l5.py."""
from __future__ import annotations

import jax

from . import all_eqns


def _first_scan(fn, *args):
    """Run the staged program of fn(*args) on args, equation by equation, up to its first
    scan (at the top level or inside a jit): that scan's equation and its input values; None
    if no scan is reached that way."""
    from jax._src import core
    closed = jax.make_jaxpr(fn)(*args)

    def run(jaxpr, consts, values):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, values))
        for e in jaxpr.eqns:
            ins = [v.val if isinstance(v, core.Literal) else env[v] for v in e.invars]
            if e.primitive.name == "scan":
                return e, ins
            sub = e.params.get("jaxpr")
            if isinstance(sub, core.Jaxpr) and any(
                    x.primitive.name == "scan" for x in all_eqns(sub.jaxpr)):
                return run(sub.jaxpr, sub.consts, ins)
            with e.ctx.manager:
                outs = e.primitive.bind(*ins, **e.primitive.get_bind_params(e.params))
            env.update(zip(e.outvars, outs if e.primitive.multiple_results else [outs]))
        return None
    return run(closed.jaxpr, closed.consts, list(args))


def _scan_outputs(eqn, ins) -> list:
    """All the outputs of a scan equation (final carry, then the stacked ys), run on ins."""
    with eqn.ctx.manager:
        return list(eqn.primitive.bind(*ins, **eqn.primitive.get_bind_params(eqn.params)))


def _one_step(eqn, ins) -> list:
    """(carry in, carry out) of a scan equation's first step, run on ins."""
    from jax._src import core
    nc, ncar, _ = (len(part) for part in eqn.params["ft_in"].unpack())
    body = eqn.params["jaxpr"]
    carry = ins[nc:nc + ncar]
    first = [x[-1] if eqn.params["reverse"] else x[0] for x in ins[nc + ncar:]]
    out = core.eval_jaxpr(body, body.consts, *ins[:nc], *carry, *first)
    return list(zip(carry, out[:ncar]))


def _made_by_jax(eqn) -> str | None:
    """The jax function that wrote this loop equation for the attendee (jnp.maximum.accumulate
    writes a scan), from where the equation was made; None if the attendee's code did."""
    import os
    tb = getattr(eqn.source_info, "traceback", None)
    if tb is None:
        return None
    here = os.path.dirname(jax.__file__) + os.sep
    frames = [(f.file_name, f.function_name) for f in tb.frames]
    inside = False
    for name, function in frames:                 # innermost first
        loops = os.path.join("_src", "lax", "control_flow") in name
        plumbing = os.path.basename(name) in ("traceback_util.py", "api.py", "pjit.py",
                                              "linear_util.py")
        if loops:
            inside = True
            continue
        if inside and not plumbing:
            return (f"{function} in jax/{os.path.relpath(name, here)}"
                    if name.startswith(here) else None)
    return None


def _outside_scans(jaxpr):
    """The equations of a jaxpr and of its nested jaxprs, but not those inside a scan."""
    from jax._src import core
    for e in jaxpr.eqns:
        yield e
        if e.primitive.name != "scan":
            for sub in core.jaxprs_in_params(e.params):
                yield from _outside_scans(sub)
