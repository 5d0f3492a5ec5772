"""The caches under a jit call and the counters that watch them (deck 03, lab J2).

`CHAIN` names, in the order a call meets them, the in-process caches between a jitted call and
a PJRT executable on the pinned JAX; `probe` calls a jitted function and says which of them hit
and which missed; `compiles` counts XLA compilations through jax.monitoring; `logs` captures
what JAX logs (the cache-key ingredients, log_compiles, explain_cache_misses) for a slide.
"""
from __future__ import annotations

import functools
import logging
from contextlib import contextmanager
from dataclasses import dataclass, field

from .show import Shown, trim

# label, the object that holds it (module.attribute), what its key compares
CHAIN = [
    ("C++ fast path", "pjit._cpp_pjit_cache_explicit_attributes",
     "function and jit options, then the argument signature: static args, each argument's "
     "kind, dtype, shape, weak type, sharding and committedness, the pytree structure, and "
     "the jit config context"),
    ("_infer_params_cached", "pjit._infer_params_cached",
     "function, jit options, signature, abstract values, mesh"),
    ("trace_to_jaxpr", "partial_eval.trace_to_jaxpr",
     "function, abstract inputs, debug info, context"),
    ("_pjit_lower", "pjit._pjit_lower",
     "jaxpr, shardings, layouts, donation, mesh, name"),
    ("_cached_lowering_to_hlo", "pxla._cached_lowering_to_hlo",
     "jaxpr, shardings, devices, platforms"),
    ("_cached_compilation", "pxla._cached_compilation",
     "StableHLO module object, name, backend, device assignment, compiler options"),
]


def _python_caches() -> dict:
    from jax._src import pjit
    from jax._src.interpreters import partial_eval as pe
    from jax._src.interpreters import pxla
    return {"_infer_params_cached": pjit._infer_params_cached,
            "trace_to_jaxpr": pe.trace_to_jaxpr,
            "_pjit_lower": pjit._pjit_lower,
            "_cached_lowering_to_hlo": pxla._cached_lowering_to_hlo,
            "_cached_compilation": pxla._cached_compilation}


def holder(name: str):
    """The object CHAIN names, e.g. "pjit._cpp_pjit_cache_explicit_attributes"."""
    import importlib
    module, attr = name.split(".")
    where = "jax._src.interpreters." if module in ("partial_eval", "pxla") else "jax._src."
    return getattr(importlib.import_module(where + module), attr)


def _counts(f) -> dict[str, tuple[int, int]]:
    out = {"C++ fast path": (0, f._cache_size())}
    for name, cache in _python_caches().items():
        info = cache.cache_info()
        out[name] = (info.hits, info.misses)
    return out


def probe(f, *args, **kwargs) -> dict[str, str]:
    """Call the jitted `f`; for each cache of CHAIN: 'hit', 'miss' or '·' (not reached).

    The C++ cache counts its entries, not its hits: a new entry is a miss. A call that the
    C++ cache serves reaches no Python cache at all. Inner jits (jnp functions are jitted too)
    touch the Python caches as well: probe functions built from lax primitives."""
    import jax

    from .expect import ClaimFailed
    caches = _python_caches()
    for label, name, _ in CHAIN[1:]:   # each name CHAIN shows is the cache probed
        if holder(name) is not caches[label]:
            raise ClaimFailed(f"CHAIN names {name} for {label}, which is another object")
    cpp = holder(CHAIN[0][1])
    before, held = _counts(f), cpp.size()
    jax.block_until_ready(f(*args, **kwargs))
    after = _counts(f)
    if before["C++ fast path"][1] == 0 < after["C++ fast path"][1] and cpp.size() <= held:
        raise ClaimFailed(f"a first call's C++ entry did not land in {CHAIN[0][1]}")
    verdict = {}
    for label, *_ in CHAIN:
        (h0, m0), (h1, m1) = before[label], after[label]
        verdict[label] = "miss" if m1 > m0 else "hit" if h1 > h0 else "·"
    if verdict["C++ fast path"] == "·":
        verdict["C++ fast path"] = "hit"
    return verdict


def table(rows: dict[str, dict[str, str]]) -> Shown:
    """Scenarios down, caches across: ✓ hit, ✗ miss, · not reached."""
    sym = {"hit": "✓", "miss": "✗", "·": "·"}
    labels = [label for label, *_ in CHAIN]
    short = ["C++", "infer", "trace", "lower", "to_hlo", "compile"]
    w = max(map(len, rows)) + 1
    lines = [" " * w + "".join(f"{s:>8}" for s in short)]
    for scenario, verdict in rows.items():
        lines.append(f"{scenario:<{w}}" + "".join(f"{sym[verdict[k]]:>8}" for k in labels))
    return trim("\n".join(lines), max_lines=None, title="✓ hit · ✗ miss · · not reached")


@dataclass
class Compiles:
    """What `compiles()` saw: one entry per XLA compilation, the function's name."""
    names: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.names)


BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"


@contextmanager
def compiles():
    """`with compiles() as c: ...` then `c.count`, `c.names`: XLA compilations in the block,
    counted by a jax.monitoring listener on the backend-compile event (a persistent-cache
    hit goes through the same event: it replaces a compilation)."""
    from jax import monitoring
    seen = Compiles()

    def listener(event, secs, **kw):
        if event == BACKEND_COMPILE:
            seen.names.append(kw.get("fun_name", "?"))

    monitoring.register_event_duration_secs_listener(listener)
    try:
        yield seen
    finally:
        monitoring.unregister_event_duration_listener(listener)


@contextmanager
def logs(*names: str, level: int = logging.DEBUG):
    """`with logs("jax._src.cache_key") as lines: ...`: the records those loggers emit in the
    block, as text lines, kept off the cell's stderr."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.extend(record.getMessage().split("\n"))

    handler, saved = Keep(level), []
    for name in names:
        lg = logging.getLogger(name)
        saved.append((lg, lg.level, lg.propagate))
        lg.setLevel(level)
        lg.propagate = False
        lg.addHandler(handler)
    try:
        yield lines
    finally:
        for lg, lvl, prop in saved:
            lg.removeHandler(handler)
            lg.setLevel(lvl)
            lg.propagate = prop


@contextmanager
def persistent_cache(path, min_compile_secs: float = 0.0):
    """Turn JAX's persistent compilation cache on for the block, in `path`; afterwards the
    kernel's settings come back and the cache object is reset (nothing leaks into the next
    slide). CPU works; the minimum compile time is lowered so small programs are written."""
    import jax
    from jax._src import compilation_cache as cc
    names = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
             "jax_persistent_cache_min_entry_size_bytes")
    old = {n: getattr(jax.config, n) for n in names}
    jax.config.update(names[0], str(path))
    jax.config.update(names[1], float(min_compile_secs))
    jax.config.update(names[2], 0)
    cc.reset_cache()
    try:
        yield path
    finally:
        for n, v in old.items():
            jax.config.update(n, v)
        cc.reset_cache()


@dataclass
class CacheKey:
    key: str                 # what the persistent cache files the executable under
    ingredients: list[str]   # what cache_key.get hashed, in order (from its debug log)
    hit: bool                # whether the persistent cache already held it


def cache_key_of(fn, *args, xla_flags: str | None = None) -> CacheKey:
    """Compile jax.jit(fn)(*args) afresh (in-memory caches cleared) with a temporary persistent
    cache on, and read the key JAX computed from its own log. `xla_flags`: what XLA_FLAGS
    holds while the key is computed (the key reads the environment variable each time)."""
    import os
    import re

    import jax
    old = os.environ.get("XLA_FLAGS")
    try:
        if xla_flags is not None:
            os.environ["XLA_FLAGS"] = xla_flags
        with persistent_cache(_keys_dir()):
            jax.clear_caches()
            with logs("jax._src.compiler", "jax._src.cache_key") as lines:
                jax.block_until_ready(jax.jit(fn)(*args))
    finally:
        if old is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = old
    found = [m for line in lines if (m := re.search(r"(hit|MISS) for '[^']*' with key '([^']*)'",
                                                    line))]
    if not found:
        raise RuntimeError("JAX logged no persistent-cache key: " + " | ".join(lines[-3:]))
    ingredients = [m.group(1) for line in lines
                   if (m := re.match(r"get_cache_key hash of serialized (.*):", line))]
    return CacheKey(found[-1].group(2), ingredients, found[-1].group(1) == "hit")


@functools.cache
def _keys_dir() -> str:
    """One cache folder per process for cache_key_of, so a key seen before is a hit; it goes
    when the process (the kernel) ends."""
    import atexit
    import shutil
    import tempfile
    folder = tempfile.mkdtemp(prefix="workshop-keys-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
