"""Decks 02–06 in RISE, every slide measured at each size from their executed outputs (deck 01,
run live from the slideshow, is in test_present_slides.py; the server's own tests in
test_present_server.py). Two files, this one and test_present_decks_b.py, each with a server of
its own, so that scripts/test's two workers end on one each: by their measured times (02 27 s
and 04 28 s here; 03 22 s, 05 14 s and 06 18 s there)."""
from __future__ import annotations

import pytest
from test_present_slides import test_deck_opens_in_rise_and_every_slide_fits as _fits

from workshop.tools import notebooks as nbs

HERE = ("02", "04")


def half(here: bool) -> list:
    """Decks 02–06: those of this file (here) or of test_present_decks_b.py."""
    return [d for d in nbs.decks()[1:] if (d.name[:2] in HERE) == here]


@pytest.mark.browser
@pytest.mark.parametrize("deck", half(True), ids=lambda p: p.stem)
def test_deck_opens_in_rise_and_every_slide_fits(chromium, presenting, executed_decks, runs,
                                                  deck):
    _fits(chromium, presenting, executed_decks, runs, deck)
