"""The course's phases, one per deck: (phase, the deck's title, what the phase does to the record,
in two short lines). Written by `python -m workshop fmt` from each deck's metadata.workshop
(phase, title, map): edit those, not this file. Drawn by workshop.phasemap."""

PHASES = [
    (1, 'Run it first', ['prints the record, lowers it,', 'compiles it: four stations']),
    (2, 'Tracing', ['writes it: tracers and bind;', 'cuts it in two (partial eval)']),
    (3, 'jit and the cache', ['keys caches on it; a miss', 'traces and compiles again']),
    (4, 'Transforms', ['grad and vmap rewrite it,', 'one rule per primitive']),
    (5, 'Structure', ['pytrees flatten data into it;', 'loops keep a record per body']),
    (6, 'Devices', ['lowers it to StableHLO, which', 'XLA splits over a mesh']),
]
