"""`workshop compose`: a talk from sections of several decks, that opens with the sections'
objectives, closes with their own key points, and lists every reference to a slide, section or
name the talk does not have.

The main case is the one the presenting review composed (`../shared/audit/presenting.md` §2):
deck 03's "What a jit boundary is" and "Which calls miss", and deck 04's first section. Which
objective and key point belong to which section is read from the decks' metadata by index (the
decks list them in section order), not copied here."""
from __future__ import annotations

import copy
import html
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from workshop.tools import notebooks as nbs
from workshop.tools import paths, talk
from workshop.tools.authoring import compose, talkframe, talkrefs

CUSTOM = "04:custom_derivatives.py: a user rule"   # a section that names nothing outside itself
DRY_RUN = ['03:What a jit boundary is', '03:Which calls miss', '04:jit(grad(vmap']
# the seven references to things outside that talk the review found, as the notes say them
# (the counters one as the review read it and as the notes now name a section, by its title)
SEVEN = [r"The map said", r"the counters section|section “The counters”", r"lab J2",
         r"We have the six caches", r"Phase 4 of 6", r"deck 03's caches", r"\(appendix\)"]


def _deck(key: str):
    path = nbs.select([key], among=nbs.decks())[0]
    return path, nbs.read(path)


def _compose(out, *specs, title="Why did my jit recompile?", extra=(), cwd=paths.ROOT):
    return subprocess.run([sys.executable, "-m", "workshop", "compose", str(out), "--title",
                           title, *extra, *specs], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def _flagged(stdout: str) -> list[str]:
    """The lines compose lists as pointing outside the talk."""
    return [ln for ln in stdout.splitlines() if ln.startswith("  slide ")]


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("talk") / "jit.ipynb"
    p = _compose(out, *DRY_RUN)
    assert p.returncode == 0, p.stderr
    return out, nbs.read(out), p.stdout


def test_the_title_slide_shows_the_sections_objectives(dry_run):
    _, nb, stdout = dry_run
    (_, d3), (_, d4) = _deck("03"), _deck("04")
    want = [d3.metadata.workshop.objectives[0], d3.metadata.workshop.objectives[2],
            d4.metadata.workshop.objectives[0]]
    title = nb.cells[0].source
    assert [ln[2:] for ln in title.splitlines() if ln.startswith("- ")] == want
    assert nb.metadata.workshop.objectives == want
    # not the sections' first bold sentences, which read as mid-talk narration
    lead = talkframe.lead(d3, next(s for s in nbs.sections(d3) if s.title.startswith("Which")))
    assert lead.startswith("Now the misses") and lead not in title
    assert title.startswith("# Why did my jit recompile?")
    assert f"{nb.metadata.workshop.minutes} minutes" in title
    assert nb.metadata.workshop.minutes == math.ceil(talk.talk_minutes(nb))
    assert f"talk-time estimate {talk.talk_minutes(nb):.1f} minutes" in stdout
    for o in want:
        assert o in stdout       # compose says what each section got


def test_the_closing_slide_is_the_sections_own_key_points(dry_run):
    _, nb, _ = dry_run
    (_, d3), (_, d4) = _deck("03"), _deck("04")
    want = [d3.metadata.workshop.key_points[0], d3.metadata.workshop.key_points[2],
            d4.metadata.workshop.key_points[0]]
    *_, slide, notes = nb.cells
    assert slide.source.startswith("## Key points")
    assert [ln[2:] for ln in slide.source.splitlines() if ln.startswith("- ")] == want
    assert "whole story" not in slide.source
    # notes to say: a bold sentence first, then each point with the part it closes
    assert nbs.slide_type(notes) == "notes" and notes.source.startswith("**Three things")
    said = talk.reader_notes(notes.source)
    for sec, point in zip(["What a jit boundary is", "Which calls miss, and how far",
                           "jit(grad(vmap(f))): order changes the answer"], want):
        assert f"{sec}: {point}" in said
    assert "03 (jit and the cache) and 04 (Transforms)" in notes.source


def test_the_composed_deck_has_title_setup_sections_and_closing(dry_run):
    out, nb, _ = dry_run
    assert talk.problems(nb) == [] and nbs.audience_problems(nb) == []
    setup = nb.cells[nbs.setup_index(nb)]
    assert "setup" in nbs.tags(setup) and "workshop.setup()" in setup.source
    assert talk.plan_cell_index(nb) is not None
    picks = compose.parse(DRY_RUN)
    assert [s.title for s in nbs.sections(nb)] == [p.section.title for p in picks] + ["Key points"]
    for p, sec in zip(picks, nbs.sections(nb)):
        copied = [c.source for c in nb.cells[sec.start:sec.stop]]
        assert copied == [c.source for c in p.nb.cells[p.section.start:p.section.stop]]
    ids = [c["id"] for c in nb.cells]
    deck_ids = {c.get("id") for p in picks for c in p.nb.cells}
    assert len(set(ids)) == len(ids) and not set(ids) & deck_ids
    assert (out.parent / "rise.css").is_file() and out.with_suffix(".css").is_file()


def test_every_decks_objectives_go_to_sections_of_their_own_in_order():
    # a deck lists its objectives in the order of its sections: matched by what the sections
    # say, they land there, each on its own section
    for path in nbs.decks():
        nb = nbs.read(path)
        secs = [s for s in talk.talk_sections(nb) if s.title != "Key points"]
        frames = talkframe.frames(nb, secs)
        got = [o for s in secs for o in frames[s.start].objectives
               if frames[s.start].own_objective]
        assert got == list(nb.metadata.workshop.objectives), path.stem
        points = [k for s in secs for k in frames[s.start].key_points]
        assert sorted(points) == sorted(nb.metadata.workshop.key_points), path.stem


def test_the_flagger_finds_every_reference_of_the_dry_run(dry_run):
    _, nb, stdout = dry_run
    flagged = _flagged(stdout)
    text = "\n".join(c.source for c in nb.cells)
    for words in SEVEN:
        assert re.search(words, text), f"the decks no longer say {words!r}: review SEVEN"
        assert any(re.search(words, ln) for ln in flagged), (words, stdout)
    # the names only the omitted section "The caches under a jit call" introduced (table,
    # probe and CHAIN no longer: "Misses that do not retrace", the section's opening slide and
    # "Who hits, who misses" import them themselves, now that they draw the cache chain)
    names = {"_pjit_lower": "Misses that do not retrace"}
    for name, slide in names.items():
        assert any(f"“{slide}" in ln and f"uses {name}," in ln and
                   "“The caches under a jit call” introduces" in ln for ln in flagged), name
    # "go to the next slide" stays inside its section: not a reference outside the talk
    assert not any("that slide is not there" in ln for ln in flagged), stdout
    assert f"compose: {len(flagged)} cells point outside the talk" in stdout


def test_a_talk_that_needs_no_flags_gets_none(tmp_path):
    # custom_derivatives.py names no deck, lab, slide or section, and uses only its own names
    p = _compose(tmp_path / "t.ipynb", CUSTOM, title="Custom rules")
    assert p.returncode == 0, p.stderr
    assert _flagged(p.stdout) == [] and "no cell points outside the talk" in p.stdout
    # a talk outside the kit's folder is not sent to present, which serves only that folder
    assert "scripts/present" not in p.stdout and "present serves only the kit's folder" in p.stdout


def _refs(picks):
    c = compose.compose("T", picks)
    decks = {p.deck: p.nb for p in picks}
    return talkrefs.references(c.nb, picks, c.origin, talkrefs.shared_names(decks))


def test_a_whole_deck_in_order_is_flagged_only_for_what_it_names():
    # every slide, section and name a deck's sections lean on is there: only the decks, labs,
    # phases and the appendix they name are outside the talk
    for path in nbs.decks():
        nb = nbs.read(path)
        picks = [compose.Pick(path, nb, s, "") for s in talk.talk_sections(nb)
                 if s.title != "Key points"]
        for line in _refs(picks):
            for part in line.split(" | "):
                assert part.endswith(("(names a deck, lab or phase)",
                                      "(the talk has no appendix)",
                                      "(it leans on another deck)")), (path.stem, part)


def _fake_deck():
    """A deck of three sections, each two slides or one, whose notes point across the cuts."""
    _, real = _deck("01")
    nb = nbformat.v4.new_notebook()
    nb.metadata = copy.deepcopy(real.metadata)
    nb.metadata.workshop.objectives, nb.metadata.workshop.key_points = [], []

    def md(text, kind):
        c = nbformat.v4.new_markdown_cell(text)
        c.metadata = {"slideshow": {"slide_type": kind}}
        return c

    def code(text):
        c = nbformat.v4.new_code_cell(text)
        c.metadata = {"slideshow": {"slide_type": "-"}}
        return c
    setup = code("import workshop; workshop.setup()")
    setup.metadata["tags"] = ["setup"]
    nb.cells = [
        md("# Fake", "slide"), setup,
        md("## Alpha", "slide"), code("from workshop.jitcache import probe\nrows = probe"),
        md("**Alpha.** The next slide goes on.", "notes"),
        md("### Alpha two", "subslide"), md("**More.** On the next slide, beta.", "notes"),
        md("## Beta", "slide"), code("from workshop.jitcache import probe\nprint(rows, probe)"),
        md("**Beta.** Two slides on is gamma. We have alpha's rows.", "notes"),
        md("### Beta two", "subslide"), md("**Beta two.** The previous slide said so.", "notes"),
        md("## Gamma", "slide"),
        md("**Gamma.** The alpha section said it first.\n\nFrom beta to gamma.", "notes"),
        md("## Key points", "slide")]
    return Path("decks/99-fake.ipynb"), nb


def test_references_across_a_cut_by_position_name_and_code():
    path, nb = _fake_deck()
    a, b, g = [compose.Pick(path, nb, s, "") for s in nbs.sections(nb)[:3]]
    assert _refs([a, b, g]) == []           # the whole deck: every reference holds
    first, last = _refs([a, g])               # beta cut
    assert "“Alpha two”" in first and "On the next slide" in first
    assert "that slide is not there" in first
    assert "“Gamma”" in last and "From beta to" in last and "“Beta”, not before it" in last
    assert "“Alpha” is not in the talk" not in last     # the alpha section is there
    lines = _refs([b, g])                     # alpha cut
    assert any("uses probe, rows, which “Alpha” introduces" in ln for ln in lines), lines
    assert any("We have alpha's" in ln and "not before it here" in ln for ln in lines), lines
    assert any("The alpha section" in ln and "“Alpha” is not in the talk" in ln
               for ln in lines), lines
    assert not any("that slide is not there" in ln for ln in lines), lines   # both hold
    lines = _refs([b])                        # gamma cut too: two slides on is not gamma
    assert any("Two slides on" in ln and "that slide is not there" in ln for ln in lines)


def test_the_thesis_slide_is_deck_01s_quote(tmp_path):
    _, d1 = _deck("01")
    first = talk.talk_sections(d1)[0]
    quote = [ln for ln in d1.cells[first.start].source.splitlines() if ln.startswith(">")]
    assert quote, "deck 01's first section has no quoted thesis"
    out = tmp_path / "t.ipynb"
    p = _compose(out, CUSTOM, title="Custom rules", extra=["--thesis"])
    assert p.returncode == 0, p.stderr
    nb = nbs.read(out)
    secs = nbs.sections(nb)
    assert [s.title for s in secs][:2] == [first.title, "custom_derivatives.py: a user rule as "
                                           "a primitive"]
    slide, notes = nb.cells[secs[0].start:secs[0].start + 2]
    assert slide.source == f"## {first.title}\n\n" + "\n".join(quote)
    assert notes.source.startswith(f"**{talkframe.lead(d1, first)}**")
    p = _compose(tmp_path / "u.ipynb", f"01:{first.title}", extra=["--thesis"])
    assert p.returncode == 2 and "is in the talk already" in p.stderr
    assert p.stderr.strip().count("\n") == 0


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "t.ipynb"
    for specs, says in [
        (["99:x"], "'99' is not a deck of the kit"),
        (["01:No such section-x"], "is not a section of 01-"),
        (["01:One trick", "1:One"], "is named twice"),
        (["01"], "name a section as DECK:TITLE"),
        (["01:Key points"], "own closing or divider")]:
        p = _compose(out, *specs)
        assert p.returncode == 2 and p.stdout == "", (specs, p.stdout)
        assert p.stderr.strip().count("\n") == 0 and says in p.stderr, (specs, p.stderr)
        assert not out.exists()


def _one_line(p, says):
    assert p.returncode == 2 and p.stdout == "", p.stdout
    assert p.stderr.strip().count("\n") == 0 and says in p.stderr, p.stderr


def _tree(folder: Path) -> dict:
    """What compose could have written or changed there: its notebooks and stylesheets."""
    return {p: p.read_bytes() for pattern in ("*.ipynb", "*.css") for p in folder.rglob(pattern)
            if p.is_file()}


def test_an_output_that_cannot_be_a_talk_is_one_line(tmp_path):
    # the folders the kit's tools read or rewrite, directly or through a link (reliability C14;
    # fmt removes any notebook of attendee/decks/ that is not a deck's copy)
    (tmp_path / "into-decks").symlink_to(paths.DECKS)
    for out, says, folder in [
            ("decks/99-mytalk.ipynb", "decks/ holds the kit's own decks", paths.DECKS),
            (tmp_path / "into-decks" / "99-mytalk.ipynb", "decks/ holds", paths.DECKS),
            ("attendee/decks/t.ipynb", "attendee/ holds what fmt writes", paths.ATTENDEE_DECKS),
            ("exercises/t.ipynb", "exercises/ holds the labs", paths.EXERCISES),
            # probe 3: the package, the tests, the handouts and git's folder were written to
            ("workshop/t.ipynb", "workshop/ is the kit's package", paths.ROOT / "workshop"),
            ("tests/t.ipynb", "tests/ holds the kit's tests", paths.ROOT / "tests"),
            ("handouts/t.ipynb", "handouts/ holds", paths.ROOT / "handouts"),
            (".git/t.ipynb", ".git/ is git's own", paths.ROOT / ".git"),
            ("scripts/t.ipynb", "scripts/ holds", paths.ROOT / "scripts"),
            ("environment/t.ipynb", "environment/ holds", paths.ROOT / "environment")]:
        before = _tree(folder)
        p = _compose(out, CUSTOM)
        after = _tree(folder)
        for made in after.keys() - before.keys():   # a failure leaves the kit as it was
            made.unlink()
        assert after == before, out
        _one_line(p, says)
    (tmp_path / "nowhere").symlink_to(tmp_path / "gone")
    _one_line(_compose(tmp_path / "nowhere" / "t.ipynb", CUSTOM), "is a link to nothing")
    # a write that fails after the stylesheets (the notebook's temporary name is too long for
    # the file system, its own and the stylesheets' are not): what this run made goes again
    _one_line(_compose(tmp_path / "new" / ("x" * 244 + ".ipynb"), CUSTOM), "cannot write")
    assert not (tmp_path / "new").exists()
    # a talk named rise: its own NAME.css is the folder's rise.css (probe 2 was told "cannot
    # write rise.css: File exists", of a file compose itself had just written)
    _one_line(_compose(tmp_path / "r" / "rise.ipynb", CUSTOM), "a talk cannot be named rise")
    assert not (tmp_path / "r").exists()
    (tmp_path / "dir.ipynb").mkdir()
    _one_line(_compose(tmp_path / "dir.ipynb", CUSTOM, extra=["--force"]), "is a folder")
    (tmp_path / "afile").write_text("mine")
    _one_line(_compose(tmp_path / "afile" / "t.ipynb", CUSTOM), "is a file, not a folder")
    # a name present would refuse (RISE writes the path into its page): compose wrote it, and
    # told the presenter to present it (probe 17)
    for name in ("new\nline.ipynb", "it's.ipynb", "a<b>.ipynb"):
        _one_line(_compose(tmp_path / "m" / name, CUSTOM), "goes into the slideshow page as "
                  "markup, and present refuses it")
    assert not (tmp_path / "m").exists()
    assert (tmp_path / "afile").read_text() == "mine"
    # a folder no one may write in, root included: /proc takes no new files
    _one_line(_compose("/proc/talk.ipynb", CUSTOM), "cannot write")
    if os.geteuid() != 0:                     # a folder without write permission
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        _one_line(_compose(locked / "t.ipynb", CUSTOM), "cannot write")
        assert list(locked.iterdir()) == []


def test_the_title_is_text_in_the_html_and_markdown(tmp_path):
    out = tmp_path / "t.ipynb"
    title = 'Ünïcode “talk” <img src=x onerror=alert(1)> & "q" </span>'
    p = _compose(out, CUSTOM, title=title)
    assert p.returncode == 0, p.stderr
    nb = nbs.read(out)
    footer = nb.metadata.rise.footer
    assert "<img" not in footer and "&lt;img src=x onerror=alert(1)&gt; &amp;" in footer
    assert footer.count("</span>") == 1
    assert "<img" not in nb.cells[0].source and "&lt;img" in nb.cells[0].source
    assert nb.metadata.workshop.title == title


def _as_rendered(markdown: str) -> tuple[str, str]:
    """The HTML the handouts' Markdown renderer makes of `markdown`, and its text."""
    from workshop.tools.builder import render
    out = render.markdown(markdown)
    return out, html.unescape(re.sub(r"<[^>]+>", "", out)).strip()


def test_the_title_reads_as_typed_where_markdown_renders_it(tmp_path):
    # not only tags: emphasis, a link, code, a heading's closing #s are the user's text (TeX
    # too, here; the slideshow's MathJax typesets it, as in any cell)
    out = tmp_path / "t.ipynb"
    title = r"a_b *em* [x](javascript:alert(1)) `c` $x^2$ ~~s~~ C# ## \ & <b>"
    p = _compose(out, CUSTOM, title=title)
    assert p.returncode == 0, p.stderr
    nb = nbs.read(out)
    shown, text = _as_rendered(nb.cells[0].source.splitlines()[0])
    assert text == title, shown
    assert not re.search(r"<(em|a|code|b|del|strong)\b", shown), shown
    notes, text = _as_rendered(nb.cells[2].source.split("\n\n")[0])    # the title's notes
    assert text.startswith(title + ": ") and "<b>" not in notes, notes
    # a title is one line: a line break would start a slide heading of its own
    _one_line(_compose(tmp_path / "u.ipynb", CUSTOM, title="One\n## Two"), "one line of text")
    assert not (tmp_path / "u.ipynb").exists()


@pytest.mark.browser
def test_the_title_runs_no_script_and_shows_as_typed_in_the_slideshow(chromium, presenting,
                                                                       tmp_path):
    # reliability C12: the footer's <img onerror> ran when the slideshow opened
    from workshop.tools.present.driver import slideshow
    title = 'T <img src=x onerror="window.ran = 1"> & *em* [x](y) </span>'
    p = _compose(tmp_path / "t.ipynb", CUSTOM, title=title)
    assert p.returncode == 0, p.stderr
    folder = Path(tempfile.mkdtemp(prefix="compose-", dir=paths.BUILD))   # present serves the kit
    try:
        with slideshow(chromium, presenting["url"], nbs.read(tmp_path / "t.ipynb"),
                       folder / "t.ipynb") as page:
            page.wait_for_timeout(1000)     # an image's error comes after its request
            assert page.evaluate("() => window.ran") is None
            assert page.locator("img[src='x']").count() == 0
            footer = page.locator(".workshop-footer").first.text_content()
            assert footer == f"JAX Core, From the Inside · {title}"
            h1 = page.locator(".reveal section.present h1").first.text_content()
            assert h1.rstrip("¶") == title, h1
    finally:
        shutil.rmtree(folder)


def test_the_stylesheets_already_beside_the_talk_are_kept(tmp_path):
    # reliability C13: compose replaced both, --force or not, without a word
    (tmp_path / "rise.css").write_text("/* presenter's own rise.css */\n")
    (tmp_path / "talk2.css").write_text("/* my talk2 css */\n")
    for extra in ((), ("--force",)):
        p = _compose(tmp_path / "talk2.ipynb", CUSTOM, extra=extra)
        assert p.returncode == 0, p.stderr
        assert (tmp_path / "rise.css").read_text() == "/* presenter's own rise.css */\n"
        assert (tmp_path / "talk2.css").read_text() == "/* my talk2 css */\n"
        assert "kept the rise.css already there" in p.stdout
        assert "kept the talk2.css already there" in p.stdout
        # only what --force allowed is replaced, and compose says so
        assert ("replaced the talk2.ipynb that was there" in p.stdout) == bool(extra), p.stdout
    talk = (tmp_path / "talk2.ipynb").read_bytes()
    _one_line(_compose(tmp_path / "talk2.ipynb", CUSTOM), "exists (pass --force")
    assert (tmp_path / "talk2.ipynb").read_bytes() == talk
    # a folder without them gets the kit's, and a notebook anyone may read, as the umask says
    p = _compose(tmp_path / "new" / "t.ipynb", CUSTOM)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "new" / "rise.css").read_bytes() == (paths.DECKS / "rise.css").read_bytes()
    assert (tmp_path / "new" / "t.css").is_file() and "kept" not in p.stdout
    mask = os.umask(0)
    os.umask(mask)
    for name in ("t.ipynb", "t.css", "rise.css"):
        assert (tmp_path / "new" / name).stat().st_mode & 0o777 == 0o666 & ~mask, name


def test_a_stylesheet_that_is_not_a_file_is_one_line_and_nothing_is_written(tmp_path):
    # found before writing: once, a folder named rise.css failed after the talk was written,
    # and a link to nothing was written through, wherever it pointed
    (tmp_path / "a" / "rise.css").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "t.css").mkdir()
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "rise.css").symlink_to(tmp_path / "elsewhere.css")
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "d" / "rise.css")   # (probe 2: called "a link to nothing")
    for folder, says in [("a", "rise.css is a folder"), ("b", "t.css is a folder"),
                         ("c", "rise.css is a link to nothing"),
                         ("d", "rise.css is not a file (a pipe")]:
        before = sorted((tmp_path / folder).iterdir())
        _one_line(_compose(tmp_path / folder / "t.ipynb", CUSTOM), says)
        assert sorted((tmp_path / folder).iterdir()) == before, folder
    assert not (tmp_path / "elsewhere.css").exists()


def test_the_advice_names_what_present_accepts(tmp_path):
    # the scripts start in the kit's folder: the paths compose prints are read from there, and
    # present serves that folder only, where Jupyter shows no hidden folder (reliability C16)
    scratch = Path(tempfile.mkdtemp(prefix="compose-", dir=paths.BUILD))
    try:
        p = _compose(f"{scratch.name}/t.ipynb", CUSTOM, cwd=paths.BUILD)
        assert p.returncode == 0, p.stderr
        said = re.search(r"present it with scripts/present (\S+)$", p.stdout.strip())
        assert said and (paths.ROOT / said[1]).resolve() == scratch / "t.ipynb", p.stdout
        assert f"scripts/build {said[1]};" in p.stdout
        p = _compose(scratch / ".hidden" / "t.ipynb", CUSTOM)
        assert p.returncode == 0, p.stderr
        assert "scripts/present" not in p.stdout and "no hidden folder (.hidden)" in p.stdout
        # a path with a space is quoted: pasted into a shell, it is one argument (probe 2)
        p = _compose(scratch / "my talks" / "t ü.ipynb", CUSTOM)
        assert p.returncode == 0, p.stderr
        said = shlex.split(p.stdout.strip().split("present it with ")[1])
        assert said[0] == "scripts/present" and len(said) == 2, p.stdout
        assert (paths.ROOT / said[1]).resolve() == scratch / "my talks" / "t ü.ipynb"
    finally:
        shutil.rmtree(scratch)


@pytest.mark.slow
def test_the_composed_deck_runs(dry_run):
    # what `scripts/build OUT.ipynb` does, without printing: every cell in a fresh kernel
    out, _, _ = dry_run
    from workshop.tools.builder import execute
    [(result, text)] = execute.run_many([(out, None)])
    assert result.ok, str(result.failure)
    ran = nbformat.reads(text, as_version=4)
    assert any(o.get("output_type") for c in ran.cells if c.cell_type == "code"
               for o in c.get("outputs", [])), json.dumps(ran.cells[1].get("outputs"))[:200]


def test_a_talk_written_meanwhile_is_not_replaced_without_force(tmp_path, monkeypatch):
    # probe 3: two composes of one talk at once both said "wrote" and one talk was lost; the
    # talk is now put in place only where nothing is (a link, not a rename), so the second of
    # two is refused in one line and the first's talk stays
    from workshop.tools import errors
    from workshop.tools.authoring import compose as cp
    out = tmp_path / "t.ipynb"
    real = cp._stylesheets

    def meanwhile(path):   # another compose writes the talk after this one's checks
        made = real(path)
        out.write_text("theirs")
        return made
    monkeypatch.setattr(cp, "_stylesheets", meanwhile)
    with pytest.raises(errors.KitError, match="exists: another compose wrote it meanwhile"):
        cp.main(str(out), "T", ["01:One trick"])
    assert out.read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.ipynb"]
