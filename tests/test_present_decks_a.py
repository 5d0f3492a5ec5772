"""Decks 02–06 in RISE, every slide measured from their executed outputs at 1280×720, 1366×768
and 1920×1080, under `-m thorough` (CI's second step, and --full). The quick run measures every
deck's talk path in print instead (test_handouts.py: the slides PDF lays each slide out in the
live slide's box, so a slide that would scroll on the projector overflows its page) and deck
01 live, from the slideshow, at 1280×720 (test_present_slides.py; its other two sizes under
thorough too), which is the proof that live and print agree; the server's own tests are in
test_present_server.py. Two files, this one and test_present_decks_b.py, each with a server of
its own, so that two workers end on one each."""
from __future__ import annotations

import pytest
from test_present_slides import look_at_deck

from workshop.tools import notebooks as nbs
from workshop.tools.present.driver import SIZES

HERE = ("02", "04")


def half(here: bool) -> list:
    """Decks 02–06: those of this file (here) or of test_present_decks_b.py."""
    return [d for d in nbs.decks()[1:] if (d.name[:2] in HERE) == here]


@pytest.mark.thorough
@pytest.mark.browser
@pytest.mark.parametrize("deck", half(True), ids=lambda p: p.stem)
def test_deck_opens_in_rise_and_every_slide_fits(chromium, presenting, executed_decks, runs,
                                                  deck):
    look_at_deck(chromium, presenting, executed_decks, runs, deck, SIZES[:1])


@pytest.mark.thorough
@pytest.mark.browser
@pytest.mark.parametrize("deck", half(True), ids=lambda p: p.stem)
def test_every_slide_fits_at_the_other_sizes(chromium, presenting, executed_decks, runs, deck):
    look_at_deck(chromium, presenting, executed_decks, runs, deck, SIZES[1:])
