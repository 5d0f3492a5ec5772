"""The kit's one colour system: each colour has one meaning, the same in every picture, chart,
file map and source excerpt, and a picture that uses a meaning says it in its legend.

Orange was three things (a variable's name, "unknown until later" and "the batch axis"), the
collectives took eight colours that meant nothing, the sharding grids took rich's and the
charts matplotlib's. Change a meaning here, not in a picture: `tests/test_pictures.py` fails on
a colour written in another of the runtime's drawing modules (workshop/*.py) or the labs'
(workshop/labs/*.py: a verdict's ✓ and ✗), and on a picture that draws one not named here or
uses one for another meaning.
"""
from __future__ import annotations

# the program itself: boxes, edges, names and text
INK = "#1f3b57"
FILL = "#eef4fb"        # a box of the program: an equation, a leaf, a device, an axis
PAPER = "#ffffff"       # an end of the program (its inputs and outputs), a container, a halo
TEXT = "#222222"        # the detail under a box's name: a type, a value
MUTED = "#888888"       # what was not reached (a cache a repeat call never asks)
QUIET = "#666666"       # what frames the content: a header, a line number, a note of what was cut

# look here: the slide's point (the residuals that cross the cut, this deck on the phase map,
# the station a slide is about)
HERE = "#b5651d"
HERE_FILL = "#fff3e6"

# runs later: partial evaluation's unknown side, and the linear program grad runs backward
LATER = "#6a3d9a"
LATER_FILL = "#f1eaf7"

# the batch axis vmap carries
BATCH = "#00796b"
BATCH_FILL = "#e0f2ef"

# it worked, or it did not: a cache's hit and miss, a lab check's verdict (✓ and ✗)
HIT, HIT_FILL = "#2e7d32", "#e3f2e4"
MISS, MISS_FILL = "#c62828", "#fbe3e3"

# the lines a slide reads: a source excerpt's marked lines, a file map's read rows and their
# place on its strip
MARK = "#fff3b0"
MARK_INK = "#7a4b00"
MARK_STRIP = "#d9a400"
STRIP = "#c8ccd2"       # the rest of the file, on a file map's strip
STRIP_BG = "#f2f3f5"
CLASS = "#4a6a8a"       # a class on a file map: the word, and its place on the strip (lighter)
CLASS_STRIP = "#9db4d0"

# a device in a sharding grid: one light colour each (ink text reads on every one), so the eye
# finds a device's block, and the copies of it, at once; these colours mean a device and nothing
# else, and appear only in the sharding grids
DEVICES = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
           "#dbdb8d")

# charts draw their series in this order: the program's ink first, then the one to look at
CHART_CYCLE = [INK, HERE, LATER, BATCH, MISS]

NAMED = {k: v for k, v in dict(globals()).items() if k.isupper() and isinstance(v, str)}
NAMED.update({f"DEVICE_{i}": c for i, c in enumerate(DEVICES)})
