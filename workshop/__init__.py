"""JAX Core, From the Inside: the names the decks and labs import.

    import workshop; workshop.setup()          # first cell: eight fake CPU devices, banner
    from workshop import show_source, refuses  # JAX's own source; an expected error
"""
from .dataflow import show_ad_flow, show_graph
from .devices import N_DEVICES, PINNED_JAX, SetupError, setup
from .diagrams import show_batching, show_cache_chain, show_collectives, show_tree
from .expect import ClaimFailed, refuses
from .filemap import file_map
from .pictures import Picture, show_stations
from .show import Shown, show_cost, show_hlo, show_jaxpr, show_source, show_stablehlo, trim

__all__ = ["setup", "SetupError", "PINNED_JAX", "N_DEVICES", "show_source", "show_jaxpr",
           "show_stablehlo", "show_hlo", "show_cost", "trim", "Shown", "refuses",
           "ClaimFailed", "show_stations", "show_graph", "show_collectives", "show_tree",
           "Picture", "file_map", "show_cache_chain", "show_ad_flow", "show_batching"]
