"""Eight fake CPU devices, configured before any backend starts, and the one-line banner.

The first code cell of every deck and lab calls `setup()`. JAX reads the CPU device count when
its backend starts (`jax_num_cpu_devices` refuses to change afterwards), so this must run before
anything touches a device.
"""
from __future__ import annotations

import sys

PINNED_JAX = "0.12.0.1"   # tests/test_env.py checks this against environment/requirements.lock
N_DEVICES = 8


class SetupError(RuntimeError):
    """Raised when the devices cannot be configured; IPython shows only its one line."""

    def _render_traceback_(self):  # IPython's hook: no traceback, just the message
        return [f"\x1b[31m{type(self).__name__}: {self}\x1b[0m"]


def _backend_started() -> bool:
    from jax._src import xla_bridge
    return xla_bridge.backends_are_initialized()


def setup(n_devices: int = N_DEVICES, *, quiet: bool = False) -> None:
    """Configure `n_devices` fake CPU devices and CPU as the platform; print one banner line.

    Safe to run twice (a rerun of the setup cell). If the backend already started with another
    device count, raises SetupError with one line saying to restart the kernel.
    """
    import jax

    if not _backend_started():
        jax.config.update("jax_platforms", "cpu")
        jax.config.update("jax_num_cpu_devices", n_devices)
    devices = jax.devices()
    platform = devices[0].platform
    if len(devices) != n_devices or platform != "cpu":
        raise SetupError(
            f"JAX's backend already started with {len(devices)} {platform} device(s), not "
            f"{n_devices} CPU devices: restart the kernel and run this setup cell first.")
    projector_charts()
    if not quiet:
        print(banner(jax.__version__, len(devices), platform))


# matplotlib's defaults, sized for a projector: at 120 dpi a point is 1.67 px, so every text of
# a chart is 18 px or more where the slide shows the image at its own size (1280×720)
CHART_RC = {"figure.dpi": 120, "font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12,
            "xtick.labelsize": 11, "ytick.labelsize": 11, "legend.fontsize": 11,
            "lines.linewidth": 2.5, "axes.grid": True, "grid.alpha": 0.3,
            "axes.spines.top": False, "axes.spines.right": False}


def projector_charts() -> None:
    """Charts drawn after the setup cell read from the back of the room (matplotlib only; the
    kit declares it, but a kernel without it just skips this)."""
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.rcParams.update(CHART_RC)


def banner(version: str, n: int, platform: str) -> str:
    line = f"JAX {version} · {n} {platform.upper()} devices · Python {sys.version.split()[0]}"
    if version != PINNED_JAX:
        line += f"  ⚠ the kit is pinned to JAX {PINNED_JAX}: outputs may differ from the slides"
    return line


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
