"""Cut and expand points (each deck's metadata.workshop.pacing): every title resolves, a cut ends
after it starts and breaks no slide after it, minutes come from the talk-time estimate, and the
page script's plan carries them; the checks fail on each planted mistake."""
from __future__ import annotations

import copy

import pytest

from workshop.config import PACING_THRESHOLD
from workshop.tools import notebooks as nbs
from workshop.tools import talk
from workshop.tools.authoring import scaffold
from workshop.tools.present import pacing, rehearse

DECKS = nbs.decks()


def _with(nb, cut=(), expand=()):
    out = copy.deepcopy(nb)
    out.metadata.workshop["pacing"] = {"cut": [dict(zip(("from", "to"), c)) for c in cut],
                                       "expand": [{"section": s} for s in expand]}
    return out


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_every_deck_names_cuts_and_expansions_that_resolve(deck):
    nb = nbs.read(deck)
    slides = rehearse.plan(nb)
    assert pacing.problems(nb, slides) == []
    cuts, adds, _ = pacing.resolve(nb, slides)
    assert cuts, f"{deck.stem}: no cut for a presenter who is behind"
    if talk.appendix_sections(nb)[1:]:
        assert adds, f"{deck.stem}: no appendix section for a room that is ahead"
    assert len(cuts) == len(pacing.declared(nb)["cut"])
    assert len(adds) == len(pacing.declared(nb)["expand"])


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_the_page_plan_carries_them_in_the_plans_own_seconds(deck):
    nb = nbs.read(deck)
    slides, page = rehearse.plan(nb), rehearse.page_plan(nb)
    assert page["threshold"] == PACING_THRESHOLD
    for c in page["cut"]:
        assert 0 < c["from"] < c["to"] < len(page["timing"])
        assert not slides[c["to"]].appendix
        saves = sum(s.seconds for s in slides[c["from"]:c["to"]])
        assert c["saves"] == round(saves) and f"(saves {pacing.minutes(saves)} min)" in c["text"]
        assert nbs.plain(slides[c["from"]].title) in c["text"]
    for e in page["expand"]:
        sec = slides[e["at"]].section
        assert slides[e["at"]].appendix and slides[e["at"] - 1].section != sec
        adds = sum(s.seconds for s in slides if s.section == sec)
        assert e["adds"] == round(adds)
        assert f"appendix “{nbs.plain(sec)}” (+{pacing.minutes(adds)} min)" in e["text"]


DECK = nbs.read(nbs.select(["01"])[0])
TITLES = [s.title for s in rehearse.plan(DECK)]


@pytest.mark.parametrize("cut, expand, says", [
    ([("Station 3: the estimate", "Station 4: the call")], [], "no talk-path slide has that title"),
    ([("Station 4: the call", "Station 3: XLA's estimate of the cost")], [],
     "`to` must come after `from`"),
    ([("Station 4: the call", "Station 4: the call")], [], "`to` must come after `from`"),
    ([("One trick", "Where JAX refuses a late device count")], [], "no talk-path slide"),
    ([("Reading a jaxpr", "The same jaxpr, as a graph")], [], "skips what the rest of its "
     "section reads: jaxpr"),
    ([("Key points", "Read next")], [], "never cut"),
    ([], ["Reading a jaxpr"], "no appendix section has that title"),
    ([], ["Appendix"], "no appendix section has that title"),
])
def test_a_planted_mistake_is_named(cut, expand, says):
    nb = _with(DECK, cut, expand)
    bad = pacing.problems(nb, rehearse.plan(nb))
    assert any(says in b for b in bad), bad


def test_a_title_matches_without_its_markdown_marks_and_the_page_leaves_out_what_is_wrong():
    nb = _with(DECK, [("Station 1: .trace() → a jaxpr", "Station 2: `.lower()` → StableHLO"),
                      ("no such slide", "Key points")], ["no such section"])
    assert "Station 1: `.trace()` → a jaxpr" in TITLES
    page = rehearse.page_plan(nb)
    assert [(c["from"], c["to"]) for c in page["cut"]] == [(4, 5)] and page["expand"] == []


def test_a_deck_without_pacing_has_an_empty_plan_of_it():
    nb = copy.deepcopy(DECK)
    del nb.metadata.workshop["pacing"]
    page = rehearse.page_plan(nb)
    assert page["cut"] == page["expand"] == [] and pacing.problems(nb, rehearse.plan(nb)) == []


def test_a_new_deck_is_written_with_pacing_that_resolves():
    nb = scaffold.deck(7, "Shapes and sizes", "X9", 30)
    slides = rehearse.plan(nb)
    assert pacing.problems(nb, slides) == []
    assert pacing.resolve(nb, slides)[0], "the new deck names no cut for its author to move"
