"""Eight fake CPU devices, configured before any backend starts, and the one-line banner.

The first code cell of every deck and lab calls `setup()`. JAX reads the CPU device count when
its backend starts (`jax_num_cpu_devices` refuses to change afterwards), so this must run before
anything touches a device.
"""
from __future__ import annotations

import sys

from .config import N_DEVICES

PINNED_JAX = "0.12.0.1"   # tests/test_env.py checks this against environment/requirements.lock


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
    from .pictures import projector_charts
    projector_charts()   # the charts' style is the pictures' (pictures.py)
    if not quiet:
        print(banner(jax.__version__, len(devices), platform))


def banner(version: str, n: int, platform: str) -> str:
    line = f"JAX {version} · {n} {platform.upper()} devices · Python {sys.version.split()[0]}"
    if version != PINNED_JAX:
        line += f"  ⚠ the kit is pinned to JAX {PINNED_JAX}: outputs may differ from the slides"
    return line
