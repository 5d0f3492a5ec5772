"""Speaker notes a presenter can glance at, and that agree with the kit they describe.

On the talk path (title to the `## Appendix` divider) each slide's notes open with one bold
sentence to say, then at most GLANCE words: everything else the notes window shows counts (the
`→` directions and the `**Q:** … A: …` answers are in the same pane, and a pane that scrolls is
not glanced at); what does not fit goes to a `reading` cell (printed in the reading handout,
never shown on stage) or to the appendix. No two slides say the same thing, and every slide
that shows something says where to point. What the notes say about the kit itself is held to
its source here: a lab's minutes and tasks to the lab's metadata, a reference to another slide
to that slide's title, a count of phases to the decks. The colours a note names are held to
what the slide draws in tests/test_notebooks.py (it needs the decks' runs).
"""
from __future__ import annotations

import colorsys
import copy
import itertools
import re

import nbformat
import pytest

from workshop import palette
from workshop.tools import notebooks as nbs
from workshop.tools import talk
from workshop.tools.builder import render

DECKS = nbs.decks()
GLANCE = 120            # words after the bold sentence, on a talk slide
REPEAT_RUNS = 4         # two notes sharing this many 6-word runs say the same thing
WORD = re.compile(r"[\w’'-]+")
BOLD = re.compile(r"\s*\*\*[^*\s][^*]*\*\*")


def slide_spans(nb, stop: int | None = None) -> list[tuple[int, int]]:
    """(first, one past last) cell of each slide or sub-slide before `stop`."""
    stop = len(nb.cells) if stop is None else stop
    starts = [i for i, c in enumerate(nb.cells[:stop])
              if nbs.slide_type(c) in ("slide", "subslide")]
    return list(zip(starts, starts[1:] + [stop]))


def talk_spans(nb) -> list[tuple[int, int]]:
    return slide_spans(nb, talk.talk_stop(nb))


def notes_of(nb, span) -> list:
    """The notes cells the notes window shows for the slide (the plan is generated, not read)."""
    return [c for c in nb.cells[span[0]:span[1]]
            if nbs.slide_type(c) == "notes" and talk.PRESENTER not in nbs.tags(c)]


def glance_words(cells) -> int:
    """Words of a slide's notes after its bold opening sentence: the body, the → directions and
    the Q: answers, all in the pane a presenter glances at."""
    text = "\n\n".join(c.source for c in cells)
    m = BOLD.match(text)
    return len(WORD.findall(text[m.end():] if m else text))


def shows_something(nb, span) -> bool:
    """A visible code cell (its output is on the slide) or a picture in the slide's markdown."""
    return any(talk.is_visible_code(c) or c.cell_type == "markdown"
               and nbs.slide_type(c) not in ("notes", "skip")
               and re.search(r"!\[|<img|<svg", c.source) for c in nb.cells[span[0]:span[1]])


def directs(cells) -> bool:
    return any(p.lstrip().startswith(talk.STAGE) for c in cells
               for p in re.split(r"\n\s*\n", c.source))


def runs6(text: str) -> set[tuple[str, ...]]:
    w = WORD.findall(text.lower())
    return {tuple(w[i:i + 6]) for i in range(len(w) - 5)}


def repeats(nb) -> list[str]:
    """Pairs of talk slides whose notes share REPEAT_RUNS or more 6-word runs."""
    runs = [(nbs.title_at(nb, a), runs6(" ".join(c.source for c in notes_of(nb, (a, b)))))
            for a, b in talk_spans(nb)]
    return [f"“{x}” and “{y}” share {len(rx & ry)} six-word runs"
            for (x, rx), (y, ry) in itertools.combinations(runs, 2)
            if len(rx & ry) >= REPEAT_RUNS]


def glance_problems(nb) -> list[str]:
    out = []
    for span in talk_spans(nb):
        cells, title = notes_of(nb, span), nbs.title_at(nb, span[0])
        bold = [bool(BOLD.match(c.source)) for c in cells]
        if bold[:1] != [True] or any(bold[1:]):
            out.append(f"“{title}”: one bold sentence to say, at the top of its first notes cell"
                       f" (bold openers: {bold})")
        words = glance_words(cells)
        if words > GLANCE:
            out.append(f"“{title}”: {words} words after the bold sentence (at most {GLANCE}: "
                       "move the rest to a `reading` cell or the appendix)")
        if shows_something(nb, span) and not directs(cells):
            out.append(f"“{title}” shows something and its notes say nowhere to point (→ …)")
    return out


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_each_talk_slide_has_one_bold_sentence_a_glance_of_notes_and_a_direction(deck):
    problems = glance_problems(nbs.read(deck))
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_no_two_talk_slides_say_the_same_thing(deck):
    assert repeats(nbs.read(deck)) == []


def _slide_with_code(nb) -> tuple[int, int]:
    return next(s for s in talk_spans(nb) if shows_something(nb, s) and len(notes_of(nb, s)) == 1)


def test_the_glance_rules_fail_on_a_planted_mistake():
    nb = nbs.read(DECKS[0])
    assert glance_problems(nb) == [] and repeats(nb) == []
    a, b = _slide_with_code(nb)
    note = notes_of(nb, (a, b))[0]
    keep = note.source
    note.source = keep + "\n\n" + "word " * (GLANCE + 1)               # too long
    assert any("words after the bold sentence" in p for p in glance_problems(nb))
    note.source = "\n\n".join(p for p in re.split(r"\n\s*\n", keep)   # no direction
                              if not p.startswith(talk.STAGE))
    assert any("nowhere to point" in p for p in glance_problems(nb))
    note.source = "Say this." + keep                                 # no bold opener
    assert any("one bold sentence" in p for p in glance_problems(nb))
    note.source = keep
    second = copy.deepcopy(note)                                     # a second bold opener
    nb.cells.insert(b, second)
    assert any("one bold sentence" in p for p in glance_problems(nb))
    second.source = keep.split("\n\n")[0]                            # a copy, a slide later
    nb.cells.remove(second)
    c, d = next(s for s in talk_spans(nb) if s[0] > b)
    notes_of(nb, (c, d))[0].source += "\n\n" + BOLD.sub("", keep, count=1)
    assert any("share" in p for p in repeats(nb))


# ------------------------------------------------------------------ what the notes say of the kit

NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
NUMBERS.update({"fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
                "sixty": 60, "twenty-five": 25, "thirty-five": 35, "forty-five": 45})


def number(word: str) -> int | None:
    word = word.lower()
    return int(word) if word.isdigit() else NUMBERS.get(word)


def labs() -> dict[str, nbformat.NotebookNode]:
    return {p.name.split("-")[0]: nbs.read(p) for p in nbs.lab_sources()}


def lab_problems(nb, known: dict) -> list[str]:
    """A notes paragraph naming a lab (by its ID, else “the lab”: the deck's own) and a number
    of minutes or tasks states the lab's metadata and its tasks."""
    out = []
    for c in nb.cells:
        if c.cell_type != "markdown" or talk.PRESENTER in nbs.tags(c):
            continue
        for para in re.split(r"\n\s*\n", c.source):
            ids = re.findall(r"\blabs? ([JL]\d+)\b", para, re.I)
            if not ids and not re.search(r"\bthe lab\b", para, re.I):
                continue
            lab_id = ids[0] if ids else nb.metadata.workshop.lab
            lab = known.get(lab_id)
            if lab is None:
                out.append(f"names lab {lab_id}, which is not a lab of the kit: “{para[:60]}”")
                continue
            tasks = sum("### BEGIN SOLUTION" in x.source for x in lab.cells)
            for said, what, real in (
                    (re.findall(r"\b([\w-]+) minutes\b", para), "minutes",
                     lab.metadata.workshop.minutes),
                    (re.findall(r"\b([\w-]+) tasks\b", para), "tasks", tasks)):
                for n in said:
                    if number(n) is not None and number(n) != real:
                        out.append(f"says lab {lab_id} is {n} {what}; it is {real}: “{para[:70]}”")
    return out


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_the_notes_give_each_labs_minutes_and_tasks_as_the_lab_has_them(deck):
    # (a closing note need not give them: a deck `new deck` writes says only "then the lab")
    assert lab_problems(nbs.read(deck), labs()) == []


def test_a_lab_minutes_mismatch_fails():
    nb, known = nbs.read(DECKS[2]), labs()
    assert lab_problems(nb, known) == []
    w = nb.metadata.workshop
    known[w.lab].metadata.workshop.minutes += 5
    assert any(f"lab {w.lab} is" in p for p in lab_problems(nb, known))
    nb2 = nbs.read(DECKS[0])
    key = talk.talk_sections(nb2)[-1]
    note = next(c for c in nb2.cells[key.start:key.stop] if nbs.slide_type(c) == "notes"
                and "tasks" in c.source)
    note.source = re.sub(r"\b\w+ tasks\b", "nine tasks", note.source)
    assert any("nine tasks" in p for p in lab_problems(nb2, labs()))


# A note refers to another slide by its title, as `slide “Title”` (or `section “Title”`; a
# title may be cut short with …), never by its distance ("two slides on" went stale when a
# slide was added), and to other decks and labs that exist.
RELATIVE = re.compile(
    r"\b(?:(?:next|previous|following|coming|last)\s+(?:\w+\s+)?(?:slides?|sections?)"
    r"|(?:one|two|three|four|five|six|a\s+few|several|\d+)\s+slides?\s+"
    r"(?:on|ago|back|later|earlier|before|after|ahead)"
    r"|slides?\s+(?:on|ago|back|later|earlier|before|after|ahead)\b"
    r"|(?:the\s+)?(?:slide|section)\s+(?:above|below|before|after)\b)", re.I)
NAMED = re.compile(r"\b(slide|section)s?\s+“([^”]+)”", re.I)
NAMED_LIST = re.compile(r"\b(slide|section)s?\s+((?:“[^”]+”(?:,\s*|\s+and\s+)?)+)", re.I)


def named(text: str) -> list[tuple[str, str]]:
    """(kind, title) for each title a note names: slide “A”, slides “A…” and “B”."""
    return [(m.group(1).lower(), t) for m in NAMED_LIST.finditer(text)
            for t in re.findall(r"“([^”]+)”", m.group(2))]


def titles(nb, stop: int | None = None) -> tuple[set[str], set[str]]:
    """The plain titles of the slides and of the sections before `stop`."""
    stop = len(nb.cells) if stop is None else stop
    slides = {nbs.plain(nbs.heading(nb.cells[a]) or "") for a, _ in slide_spans(nb, stop)}
    return slides, {nbs.plain(s.title) for s in nbs.sections(nb) if s.start < stop}


def names(title: str, said: str) -> bool:
    return said == title or said.endswith("…") and title.startswith(said[:-1].rstrip())


def reference_problems(nb, decks: int, known_labs: set[str]) -> list[str]:
    out, stop = [], talk.talk_stop(nb)
    every, on_talk = titles(nb), titles(nb, stop)
    for i, c in enumerate(nb.cells):
        if c.cell_type != "markdown" or talk.PRESENTER in nbs.tags(c):
            continue
        where = f"cell {i} (“{nbs.title_at(nb, i)}”)"
        for m in RELATIVE.finditer(c.source):
            out.append(f"{where}: “{m.group(0)}”: name the slide (slide “Title”), not where it is")
        for kind, said in named(c.source):
            k = 0 if kind == "slide" else 1
            if "\n" in said:    # the composed talk's flagger reads a title on one line
                out.append(f"{where}: {kind} “{said}”: keep a title on one line")
            said = " ".join(said.split())
            if not any(names(t, said) for t in every[k]):
                out.append(f"{where}: {kind} “{said}” is not a {kind} of this deck")
            elif i < stop and nbs.slide_type(c) == "notes" and \
                    not any(names(t, said) for t in on_talk[k]) and "appendix" not in c.source:
                out.append(f"{where}: {kind} “{said}” is in the appendix: say so")
        for n in re.findall(r"\bdecks? 0?(\d+)\b", c.source, re.I):
            if not 1 <= int(n) <= decks:
                out.append(f"{where}: deck {n} is not a deck of the kit")
        for lab in re.findall(r"\blabs? ([JL]\d+)\b", c.source, re.I):
            if lab not in known_labs:
                out.append(f"{where}: lab {lab} is not a lab of the kit")
    return out


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_a_reference_to_a_slide_names_one_that_is_there(deck):
    problems = reference_problems(nbs.read(deck), len(DECKS), set(labs()))
    assert problems == [], "\n".join(problems)


def test_a_stale_reference_fails():
    nb = nbs.read(DECKS[2])
    ok = reference_problems(nb, len(DECKS), set(labs()))
    assert ok == []
    note = next(c for c in nb.cells if nbs.slide_type(c) == "notes"
                and NAMED.search(c.source))
    kind, said = NAMED.search(note.source).groups()
    note.source = note.source.replace(f"“{said}”", f"“{said.rstrip('…')} (renamed)”")
    assert any("is not a" in p for p in reference_problems(nb, len(DECKS), set(labs())))
    note.source += "\n\nThe listener, two slides on, counts them."
    assert any("two slides on" in p for p in reference_problems(nb, len(DECKS), set(labs())))
    note.source += " Slides “What runs on every call” and “Gone” show it,\nslide “A\nsplit title”."
    got = reference_problems(nb, len(DECKS), set(labs()))
    assert any("slide “Gone”" in p for p in got) and any("one line" in p for p in got)
    note.source += " Lab J9 and deck 09 say so."
    got = reference_problems(nb, len(DECKS), set(labs()))
    assert any("lab J9" in p for p in got) and any("deck 9" in p for p in got)


def count_problems(nb, decks: int) -> list[str]:
    """What a note says of how many phases (decks) there are: the number of decks."""
    out = []
    for i, c in enumerate(nb.cells):
        if nbs.slide_type(c) != "notes":
            continue
        said = re.findall(r"\bphase \w+ of (\w+)\b", c.source, re.I) + \
            re.findall(r"\b(\w+) phases\b", c.source, re.I)
        out += [f"cell {i}: {n} phases; the kit has {decks} decks" for n in said
                if number(n) is not None and number(n) != decks]
        out += [f"cell {i}: phase {n}, but this deck is phase {nb.metadata.workshop.phase}"
                for n in re.findall(r"\bphase (\w+) of\b", c.source, re.I)
                if number(n) != nb.metadata.workshop.phase]
    return out


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.stem)
def test_a_count_of_phases_in_the_notes_is_the_number_of_decks(deck):
    assert count_problems(nbs.read(deck), len(DECKS)) == []


def test_a_count_of_phases_that_a_new_deck_made_false_fails():
    nb = nbs.read(DECKS[0])
    assert count_problems(nb, len(DECKS)) == []
    assert count_problems(nb, len(DECKS) + 1) != []       # a seventh deck: "six phases" is false


# ------------------------------------------------------------------------------ colour names

COLOURS = ("red", "orange", "yellow", "green", "teal", "blue", "purple", "grey", "gray",
           "brown", "pink", "violet")
COLOUR = re.compile(rf"\b({'|'.join(COLOURS)})\b", re.I)


def hue_word(hex_colour: str) -> str:
    """The word a room would use for a colour: grey when it has little colour, else its hue."""
    r, g, b = (int(hex_colour[k:k + 2], 16) / 255 for k in (1, 3, 5))
    h, s, v = colorsys.rgb_to_hsv(r, g, b)
    if s < 0.2 or v < 0.15:
        return "grey"
    for upto, word in ((15, "red"), (45, "orange"), (70, "yellow"), (165, "green"),
                       (195, "teal"), (255, "blue"), (290, "purple"), (335, "pink")):
        if h * 360 < upto:
            return word
    return "red"


def named_colours(text: str) -> set[str]:
    """The colours a note names, as hue words."""
    said = {m.lower() for m in COLOUR.findall(text)}
    return {"grey" if w == "gray" else "purple" if w == "violet" else w for w in said}


HEX = re.compile(r"#([0-9a-fA-F]{6})\b")


def drawn_colours(cells) -> set[str]:
    """The colours the outputs of the visible code cells draw: those an SVG or HTML output
    names, and those that fill 30 or more pixels of a PNG (a chart)."""
    import base64
    import io

    from PIL import Image
    out = set()
    for c in cells:
        if not talk.is_visible_code(c):
            continue
        for o in c.get("outputs", []):
            data = o.get("data", {})
            for kind in ("image/svg+xml", "text/html"):
                text = data.get(kind, "")
                out |= {"#" + h.lower() for h in HEX.findall("".join(text))}
            if "image/png" in data:
                png = Image.open(io.BytesIO(base64.b64decode(data["image/png"]))).convert("RGB")
                out |= {"#%02x%02x%02x" % rgb for n, rgb in png.getcolors(1 << 24) if n >= 30}
    return out


def colour_problems(executed) -> list[str]:
    """Each slide of an executed deck whose notes name a colour it does not draw."""
    out = []
    for span in slide_spans(executed):
        said = named_colours(" ".join(c.source for c in notes_of(executed, span)))
        seen = {hue_word(h) for h in drawn_colours(executed.cells[span[0]:span[1]])}
        if said - seen:
            out.append(f"“{nbs.title_at(executed, span[0])}”: the notes say "
                       f"{', '.join(sorted(said - seen))}; the slide draws "
                       f"{', '.join(sorted(seen)) or 'no colour'}")
    return out


def test_a_colour_the_slide_does_not_draw_fails():
    # deck 04's chart drew its mean line in the palette's second series colour (orange, "look
    # here") while its note said "the red line"
    cell = nbformat.v4.new_code_cell("ax.axhline(g_mean, color='C1')")
    cell.metadata = {"slideshow": {"slide_type": "-"}}
    cell.outputs = [nbformat.v4.new_output("display_data", {"image/svg+xml": (
        f"<svg><rect fill='{palette.INK}'/><line stroke='{palette.CHART_CYCLE[1]}'/></svg>")})]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("### Seen"), cell,
                nbformat.v4.new_markdown_cell("**The mean.**\n\nThe red line is the mean.")]
    nb.cells[0].metadata = {"slideshow": {"slide_type": "subslide"}}
    nb.cells[2].metadata = {"slideshow": {"slide_type": "notes"}}
    assert colour_problems(nb) == ["“Seen”: the notes say red; the slide draws blue, orange"]
    nb.cells[2].source = nb.cells[2].source.replace("red", "orange")
    assert colour_problems(nb) == []


def test_the_palette_has_a_word_for_each_meaning():
    # what a note may call each colour: orange is "look here", red a miss, green a hit, purple
    # what runs later, teal the batch axis, grey what frames
    assert (hue_word(palette.HERE), hue_word(palette.MISS), hue_word(palette.HIT),
            hue_word(palette.LATER), hue_word(palette.BATCH), hue_word(palette.INK),
            hue_word(palette.QUIET)) == ("orange", "red", "green", "purple", "teal", "blue",
                                         "grey")
    assert named_colours("the red line, the Gray marker") == {"red", "grey"}


def test_a_reading_cell_is_printed_with_its_slides_notes_and_never_shown():
    nb = nbs.read(DECKS[0])
    a, b = _slide_with_code(nb)
    cell = nbformat.v4.new_markdown_cell("The depth a reader wants.\n\n→ Not for readers.")
    cell.metadata = {"slideshow": {"slide_type": "skip"}, "tags": [talk.READING]}
    before = talk.talk_minutes(nb)
    nb.cells.insert(b, cell)
    slide = next(s for s in render.slides(nb, reader=True)
                 if s.title == nbs.heading(nb.cells[a]))
    assert slide.notes[-1] == "The depth a reader wants."        # in its slide's notes box
    assert "depth a reader" not in render.slides_html(nb, "T")   # not on the slides
    assert not any("depth a reader" in n for s in render.slides(nb) for n in s.notes)
    assert talk.talk_minutes(nb) == before                       # not spoken
    cell.metadata.slideshow.slide_type = "-"                     # shown: refused
    assert any("reading cell" in p for p in nbs.audience_problems(nb))


def test_a_deck_that_new_deck_writes_keeps_the_notes_rules():
    # the guide promises that a new deck passes the tests before its author writes a word
    from workshop.tools.authoring import scaffold
    nb = scaffold.deck(len(DECKS) + 1, "Shapes", nbs.read(DECKS[0]).metadata.workshop.lab)
    assert glance_problems(nb) == [] and repeats(nb) == []
    assert reference_problems(nb, len(DECKS) + 1, set(labs())) == []
