"""JAX Core, From the Inside: the names the decks and labs import.

    import workshop; workshop.setup()          # first cell: eight fake CPU devices, banner
    from workshop import show_source, refuses  # JAX's own source; an expected error

Each name is imported from its module when it is first used (a module `__getattr__`): the
kit's tools (`python -m workshop …`, and the modules of `present`'s server) never use the
runtime, and importing all of it (numpy, the pictures) took 0.2 to 0.4 s of every command.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

# each name of the runtime, and the module it is defined in
_FROM = {
    "dataflow": ("show_ad_flow", "show_graph", "show_residuals"),
    "devices": ("N_DEVICES", "PINNED_JAX", "SetupError", "setup"),
    "diagrams": ("show_batching", "show_bodies", "show_cache_chain", "show_call_stages",
                 "show_collectives", "show_eager_compiles", "show_placement", "show_sharding",
                 "show_tree"),
    "expect": ("ClaimFailed", "refuses"),
    "filemap": ("file_map",),
    "pictures": ("Picture", "show_stations", "show_trace_chain"),
    "show": ("Shown", "show_cost", "show_hlo", "show_jaxpr", "show_source", "show_stablehlo",
             "trim"),
}
_MODULE = {name: module for module, names in _FROM.items() for name in names}

if TYPE_CHECKING:   # what an editor or a type checker reads
    from .dataflow import show_ad_flow, show_graph, show_residuals
    from .devices import N_DEVICES, PINNED_JAX, SetupError, setup
    from .diagrams import (
        show_batching,
        show_bodies,
        show_cache_chain,
        show_call_stages,
        show_collectives,
        show_eager_compiles,
        show_placement,
        show_sharding,
        show_tree,
    )
    from .expect import ClaimFailed, refuses
    from .filemap import file_map
    from .pictures import Picture, show_stations, show_trace_chain
    from .show import Shown, show_cost, show_hlo, show_jaxpr, show_source, show_stablehlo, trim

__all__ = ["setup", "SetupError", "PINNED_JAX", "N_DEVICES", "show_source", "show_jaxpr",
           "show_stablehlo", "show_hlo", "show_cost", "trim", "Shown", "refuses",
           "ClaimFailed", "show_stations", "show_graph", "show_collectives", "show_tree",
           "Picture", "file_map", "show_cache_chain", "show_ad_flow", "show_batching",
           "show_sharding", "show_bodies", "show_residuals", "show_call_stages", "show_placement",
           "show_eager_compiles", "show_trace_chain"]


def __getattr__(name: str):
    module = _MODULE.get(name)
    if module is None:
        raise AttributeError(f"module 'workshop' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value   # found once; later uses do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
