"""`present`: the deck in RISE on a local JupyterLab, its server extension and the rehearsal."""

import re

# what RISE writes into the slideshow page's HTML as it is, from a deck's path: present refuses a
# deck's path with one, and compose a talk's
MARKUP_IN_PATH = re.compile(r"[\"'<>&`\x00-\x1f\x7f]")
