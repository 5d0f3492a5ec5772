"""XLA_FLAGS that would kill a kernel in its setup cell, found before any kernel starts: the
build, present, doctor and the tests each refuse them in one line."""
from __future__ import annotations

import sys

from ..config import N_DEVICES


def xla_flags_problem(timeout: float = 120) -> str | None:
    """None, or one line on why the user's XLA_FLAGS stop JAX's backend from starting (XLA
    aborts the process on a flag it does not know, so a kernel would die in the setup cell)."""
    import os
    import subprocess
    flags = os.environ.get("XLA_FLAGS")
    if not flags:
        return None
    p = subprocess.run([sys.executable, "-c", "import jax; jax.devices()"], capture_output=True,
                       text=True, timeout=timeout, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    if p.returncode == 0:
        return None
    lines = [ln.strip() for ln in p.stderr.splitlines() if ln.strip()]
    why = next((ln for ln in lines if "XLA_FLAGS" in ln), lines[-1] if lines else "")
    why = why.split("] ", 1)[-1]   # drop XLA's log prefix (level, date, pid, source line)
    return (f"XLA_FLAGS={flags!r} stops JAX from starting ({why[:160]}): unset XLA_FLAGS "
            f"(the kit sets its {N_DEVICES} devices itself) or correct the flag")
