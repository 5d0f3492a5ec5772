"""Pictures on the talk path (issue 52): how many talk slides carry a picture or a chart, from
the decks' fresh-kernel runs (an SVG or PNG output of a visible code cell), and that each is
shown at 80 % of the slide's content width or more at 1280×720 (config.SLIDE_W; a picture
wider is scaled down to it). The count may only grow (PICTURES); a picture known to be
narrower is named in NARROW by its slide's title, and leaves the list once it is wide."""
from __future__ import annotations

import base64
import io
import re

import nbformat
import pytest

from workshop.config import SLIDE_W
from workshop.tools import notebooks as nbs
from workshop.tools import talk

DECKS = nbs.decks()
PICTURES = 76          # talk slides with a picture or chart: 13 before issue 52
WIDE = 0.8             # of the content width, at least
# pictures still narrower than WIDE, by deck and slide title (a jaxpr drawn top to bottom is
# as tall as the slide allows, so only as wide as its levels)
NARROW = {
    "01": {"The same jaxpr, as a graph"},
    "02": {"The cut, drawn on the jaxpr"},
}


def shown_width(output) -> float | None:
    """The px a picture output is shown at on a 1280×720 slide, or None for text."""
    data = output.get("data", {})
    if "image/svg+xml" in data:
        svg = "".join(data["image/svg+xml"])
        head = svg[svg.index("<svg"):].split(">", 1)[0]
        return min(SLIDE_W, float(re.search(r"\swidth=['\"]([\d.]+)", head).group(1)))
    if "image/png" in data:
        from PIL import Image
        png = Image.open(io.BytesIO(base64.b64decode("".join(data["image/png"]))))
        return min(SLIDE_W, png.width)
    return None


def slide_pictures(nb) -> list[tuple[str, float]]:
    """(slide title, shown width) of each talk slide's widest picture, slide by slide."""
    stop = talk.talk_stop(nb)
    starts = [i for i, c in enumerate(nb.cells[:stop]) if nbs.slide_type(c) in ("slide",
                                                                                 "subslide")]
    out = []
    for a, b in zip(starts, starts[1:] + [stop]):
        widths = [w for c in nb.cells[a:b] if talk.is_visible_code(c)
                  for o in c.get("outputs", []) if (w := shown_width(o)) is not None]
        if widths:
            out.append((nbs.heading(nb.cells[a]), max(widths)))
    return out


def test_talk_slides_carry_pictures_as_wide_as_the_slide(runs):
    found, narrow = {}, {}
    for deck in DECKS:
        executed = nbformat.reads(runs[(deck, None)][1], as_version=4)
        found[deck.name[:2]] = pics = slide_pictures(executed)
        narrow[deck.name[:2]] = {t for t, w in pics if w < WIDE * SLIDE_W}
    total = sum(map(len, found.values()))
    assert total >= PICTURES, f"{total} talk slides carry a picture, fewer than {PICTURES}"
    for deck, titles in narrow.items():
        known = NARROW.get(deck, set())
        assert titles <= known, f"{deck}: under {WIDE:.0%} of the width: {sorted(titles - known)}"
        assert known <= titles, f"{deck}: now wide, take off NARROW: {sorted(known - titles)}"


def test_a_narrow_picture_and_a_text_output_are_told_apart():
    def slide(title: str, svg_width: int | None):
        head = nbformat.v4.new_markdown_cell(f"### {title}")
        head.metadata = {"slideshow": {"slide_type": "slide"}}
        cell = nbformat.v4.new_code_cell("x")
        cell.metadata = {"slideshow": {"slide_type": "-"}}
        cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "1"})]
        if svg_width:
            cell.outputs.append(nbformat.v4.new_output("display_data", {"image/svg+xml": (
                f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 10 10' "
                f"width='{svg_width}'></svg>")}))
        return [head, cell]

    nb = nbformat.v4.new_notebook()
    nb.cells = slide("Wide", 2000) + slide("Text only", None) + slide("Narrow", 387)
    assert slide_pictures(nb) == [("Wide", SLIDE_W), ("Narrow", 387)]
    assert [t for t, w in slide_pictures(nb) if w < WIDE * SLIDE_W] == ["Narrow"]


@pytest.mark.parametrize("bad", ["<svg viewBox='0 0 1 1'></svg>"])
def test_a_picture_without_a_width_is_an_error(bad):
    with pytest.raises(AttributeError):
        shown_width({"data": {"image/svg+xml": bad}})
