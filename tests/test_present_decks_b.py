"""The other half of decks 02–06 in RISE (see test_present_decks_a.py)."""
from __future__ import annotations

import pytest
from test_present_decks_a import half
from test_present_slides import look_at_deck

from workshop.tools import notebooks as nbs
from workshop.tools.present.driver import SIZES


@pytest.mark.thorough
@pytest.mark.browser
@pytest.mark.parametrize("deck", half(False), ids=lambda p: p.stem)
def test_deck_opens_in_rise_and_every_slide_fits(chromium, presenting, executed_decks, runs,
                                                  deck):
    look_at_deck(chromium, presenting, executed_decks, runs, deck, SIZES[:1])


@pytest.mark.thorough
@pytest.mark.browser
@pytest.mark.parametrize("deck", half(False), ids=lambda p: p.stem)
def test_every_slide_fits_at_the_other_sizes(chromium, presenting, executed_decks, runs, deck):
    look_at_deck(chromium, presenting, executed_decks, runs, deck, SIZES[1:])


def test_every_deck_is_looked_at_in_one_file_or_the_other():
    from test_present_decks_a import half as a
    shown = [d.stem for d in nbs.decks()[:1] + a(True) + half(False)]
    assert sorted(shown) == [d.stem for d in nbs.decks()]
