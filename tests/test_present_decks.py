"""Decks 02–06 in RISE, every slide measured at each size from their executed outputs (deck 01,
run live from the slideshow, and the server's own tests are in test_present.py): a file of its
own, with a server of its own, so scripts/test's two workers take one half each."""
from __future__ import annotations

import pytest
from test_present import chromium, executed_decks, presenting  # noqa: F401 (fixtures)
from test_present import test_deck_opens_in_rise_and_every_slide_fits as _fits

from workshop import notebooks as nbs


@pytest.mark.browser
@pytest.mark.parametrize("deck", nbs.decks()[1:], ids=lambda p: p.stem)
def test_deck_opens_in_rise_and_every_slide_fits(chromium, presenting, executed_decks, runs,  # noqa: F811
                                                  deck):
    _fits(chromium, presenting, executed_decks, runs, deck)
