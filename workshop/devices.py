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
    """Raised by `setup` when JAX's backend already runs with other devices.

    JAX fixes its devices when its backend starts: once anything has touched a device, `setup`
    can no longer change how many CPU devices there are, nor make the CPU the platform. The
    way out is a fresh kernel that runs the setup cell first. IPython and Jupyter show this
    error as its one red line, without a traceback.

    Args:
        message: what the backend started with, what was asked for, and what to do.

    Example:
        >>> workshop.setup(quiet=True)      # the backend starts with 8 CPU devices
        >>> try:
        ...     workshop.setup(4, quiet=True)
        ... except SetupError as e:  # doctest: +NORMALIZE_WHITESPACE
        ...     print(e)
        ...     print(len(e._render_traceback_()), "line in IPython")
        JAX's backend already started with 8 cpu device(s), not 4 CPU devices: restart the
        kernel and run this setup cell first.
        1 line in IPython
    """

    def _render_traceback_(self):  # IPython's hook: no traceback, just the message
        return [f"\x1b[31m{type(self).__name__}: {self}\x1b[0m"]


def _backend_started() -> bool:
    from jax._src import xla_bridge
    return xla_bridge.backends_are_initialized()


def setup(n_devices: int = N_DEVICES, *, quiet: bool = False) -> None:
    """Configure `n_devices` fake CPU devices and CPU as the platform; print one banner line.

    The first code cell of every deck and lab calls it. If JAX's backend has not started yet,
    it sets `jax_platforms` to "cpu" and `jax_num_cpu_devices` to `n_devices`; then it starts
    the backend (`jax.devices()`), checks what it got, and sets matplotlib's defaults for a
    projector. Safe to run twice (a rerun of the setup cell): a backend that already runs with
    `n_devices` CPU devices is kept as it is. The banner names the JAX version, the devices and
    the Python version, and warns when the JAX is not `PINNED_JAX`.

    Args:
        n_devices: how many fake CPU devices JAX gets. Defaults to `N_DEVICES` (8: the 2×4
            mesh of the sharding phase, on any laptop).
        quiet: if True, print no banner. Defaults to False.

    Returns:
        None. JAX is configured as a side effect: `jax.devices()` then lists `n_devices` CPU
        devices.

    Raises:
        SetupError: the backend already started with another number of devices, or on
            another platform; its one line says to restart the kernel and run setup first.

    Example:
        >>> import jax
        >>> setup()                          # doctest: +ELLIPSIS
        JAX 0.12.0.1 · 8 CPU devices · Python 3...
        >>> setup(quiet=True)                # a rerun: nothing printed, nothing changed
        >>> len(jax.devices()), jax.devices()[0].platform
        (8, 'cpu')
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
