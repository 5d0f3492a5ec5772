"""`workshop new deck NN "Title"`: a new deck that the structure tests accept as it is written,
so an author starts from a green build and replaces the placeholder slides one by one.

It writes `decks/NN-slug.ipynb` (title slide, setup cell, four sections with a slide, a live
cell, a hidden check and speaker notes each, the key points) and the deck's `NN-slug.css` that
jupyterlab-rise asks for; it never overwrites a file, and prints what is left to do by hand
(deck 01's map slide, which names every phase, and a lab for the deck if it names a new one).
It then writes what the kit derives from the decks' metadata (`derived`: the phases the map
draws, the README's table, the guide's timings), as `python -m workshop fmt` does.
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from .. import errors, paths, talk
from .. import notebooks as nbs

RISE = {"center": False, "controls": True, "height": 720, "margin": 0, "minScale": 0.2,
        "progress": True, "scroll": True, "slideNumber": "c/t", "theme": "white",
        "transition": "none", "width": 1280}

# each placeholder section shows one real thing and checks it, the shape every section keeps
SECTION_CODE = [
    ("A jaxpr", "import jax, jax.numpy as jnp\nfrom workshop import show_jaxpr\n\n"
     "jaxpr = jax.make_jaxpr(jnp.sin)(1.0)\nshow_jaxpr(jaxpr)",
     'assert [e.primitive.name for e in jaxpr.eqns] == ["sin"]'),
    ("Its StableHLO", "import jax, jax.numpy as jnp\nfrom workshop import show_stablehlo\n\n"
     "lowered = jax.jit(jnp.cos).lower(1.0)\nshow_stablehlo(lowered)",
     'assert "stablehlo.cosine" in lowered.as_text()'),
    ("JAX's own source", 'from workshop import show_source\n\n'
     'show_source("jax._src.core.Primitive.bind", max_lines=8)',
     "from jax._src import core\nassert callable(core.Primitive.bind)"),
    ("An error, shown", "import jax, jax.numpy as jnp\nfrom workshop import refuses\n\n"
     "with refuses(jax.errors.TracerBoolConversionError):\n"
     "    jax.jit(lambda x: 1 if x > 0 else 0)(1.0)", None),
]


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _cell(kind: str, source: str, slide: str, tags: tuple[str, ...] = ()):
    import nbformat
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    cell = make(source, metadata={"slideshow": {"slide_type": slide}})
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def deck(phase: int, title: str, lab: str, minutes: int = 45):
    """The notebook of a new deck (not written)."""
    import nbformat
    objectives = [f"Say what an attendee can do after section {i}, in words they can check "
                  "against their own kernel" for i in (1, 2, 3)]
    key_points = [f"The one thing to remember from section {i}" for i in (1, 2, 3)]
    import html

    from .compose import as_markdown
    cells = [
        _cell("markdown", f"# {as_markdown(title)}\n\n**JAX Core, From the Inside** · phase "
              f"{phase} · "
              f"{minutes} minutes\n\n" + "\n".join(f"- {o}" for o in objectives), "slide"),
        _cell("code", "import workshop; workshop.setup()", "-", ("setup",)),
        _cell("markdown", "**The sentence that says what this deck is for.**\n\n→ Run the setup "
              "cell first: eight fake CPU devices, and one line with the JAX version.", "notes"),
    ]
    for name, code, check in SECTION_CODE:
        cells += [_cell("markdown", f"## {name}\n\nOne sentence the slide claims.", "slide"),
                  _cell("code", code, "-")]
        if check:
            cells.append(_cell("code", check, "skip", ("check",)))
        # (each its own words: two slides whose notes say the same thing fail tests/test_notes)
        cells.append(_cell("markdown", f"**The one sentence to say on “{name}”.**\n\n→ Where "
                           f"to point on “{name}”.\n\n**Q:** The likely question on “{name}”? "
                           "A: Its answer.", "notes"))
    cells += [_cell("markdown", "## Key points\n\n" + "\n".join(f"- {k}" for k in key_points)
                    + f"\n\nNext: lab {lab}.", "slide"),
              _cell("markdown", "**The recap in one breath, then the lab.**", "notes")]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                       "name": "python3"},
        "language_info": {"name": "python"},
        "rise": dict(RISE, footer=f"<span class='workshop-footer'>JAX Core, From the Inside · "
                                  f"{phase:02d} {html.escape(title)}</span>"),
        # the phase map's card: what this phase does to the record, two lines of ≤ 29 characters
        "workshop": {"title": title, "map": ["what the phase does to", "the record, in two lines"],
                     "phase": phase, "minutes": minutes, "lab": lab,
                     "objectives": objectives, "key_points": key_points,
                     # where to skip when behind, which appendix section to add when ahead
                     # (present/pacing.py): by title, so move them with the slides you write
                     "pacing": {"cut": [{"from": SECTION_CODE[-1][0], "to": "Key points"}],
                                "expand": []}},
    }
    return nb


def new_deck(phase: int, title: str, lab: str, minutes: int = 45) -> list[str]:
    """Write the deck and its stylesheet; return what the author still does by hand."""
    if not 1 <= phase <= 99:
        raise errors.KitError(f"new deck: phase {phase}: pick a number from 1 to 99")
    if not title.strip() or not re.fullmatch(r"[A-Z]\d+", lab):
        raise errors.KitError("new deck: give a title and a lab id such as J5 (a letter, digits)")
    if any(unicodedata.category(ch) == "Cc" for ch in title):   # (probe 17: a README row in
        raise errors.KitError("new deck: the title has a line break or another control "   # two)
                              "character: a title is one line of text")
    title = title.strip()
    taken = [p for p in nbs.decks() if p.name.startswith(f"{phase:02d}-")]
    if taken:
        raise errors.KitError(f"new deck: phase {phase:02d} is taken by {paths.short(taken[0])} "
                              "(nothing written)")
    name = f"{phase:02d}-{slug(title)}"
    path, css = paths.DECKS / f"{name}.ipynb", paths.DECKS / f"{name}.css"
    for p in (path, css):
        if p.exists():
            raise errors.KitError(f"new deck: {paths.short(p)} exists (nothing written)")
    css.write_text(f"/* {name}: jupyterlab-rise asks for a stylesheet named after the deck; "
                   "the styles of every deck are\n   in rise.css beside it. This file is here "
                   "so that the request finds one (no 404). */\n", encoding="utf-8")
    nb = deck(phase, title, lab, minutes)
    talk.with_plan(nb)    # the presenter's plan in the title slide's notes, as fmt writes it
    path.write_text(nbs.normalised(nb), encoding="utf-8")
    todo = [f"wrote {paths.short(path)} and {paths.short(css)}"]
    from ...phasemap import count_word
    from . import derived
    todo.append("wrote " + (", ".join(derived.write()) or "nothing else") + " (from the decks' "
                "metadata, as python -m workshop fmt does)")
    if not any(p.name.startswith(lab + "-") for p in nbs.lab_sources()):
        todo.append(f"lab {lab} does not exist yet: write it (docs/maintaining.md, 'Adding a "
                    "lab'); until then the README's table says it is not written")
    n = len(nbs.decks())
    todo.append(f"deck 01's slide \"{count_word(n - 1).capitalize()} phases, one record\" "
                "names every phase: make it say "
                f"{count_word(n)}, name the new one in its notes and its check's list")
    todo.append("then: scripts/build (it runs what changed: this deck, decks 01 and 02, which "
                "draw the phase map, and the schedule), scripts/test, and commit what "
                "docs/maintaining.md's 'What a deck and its lab touch' lists")
    return todo


# --------------------------------------------------------------------------- a new lab

TEMPLATES = Path(__file__).with_name("templates")   # Python files ruff reads; never imported


def template(name: str, **fill: str) -> str:
    """A file of templates/ with each placeholder (LAB_ID, mylab, ...) filled in."""
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    return re.sub(r"\b(" + "|".join(map(re.escape, fill)) + r")\b",
                  lambda m: fill[m.group(1)], text)




def lab(lab_id: str, title: str, deck: str, minutes: int = 30):
    """The notebook of a new lab's single source (not written)."""
    import nbformat
    md = lambda s: _cell("markdown", s, "-")
    code = lambda s, tags=(): _cell("code", s, "-", tags)
    mod = lab_id.lower()
    cells = [
        md(f"# Lab {lab_id} · {title}\n\nOne paragraph: what the attendee does and why. Three "
           f"tasks, about {minutes} minutes. Each has `qN.check(...)`, `qN.hint()` and "
           "`qN.solution()`.\n\nRun the setup cell first (after a kernel restart too)."),
        code("import workshop; workshop.setup()", ("setup",)),
        code(f"import jax, jax.numpy as jnp\nfrom workshop.labs.{mod} import q1, q2, q3, cube"),
        md("## Task 1 · The slope of cube\n\nWrite `slope(x)`: the derivative of `cube` at `x`, "
           "computed by JAX, not by hand."),
        code("def slope(x):\n    ### BEGIN SOLUTION\n    return jax.grad(cube)(x)\n"
             "    ### END SOLUTION"),
        code("q1.check(slope)"),
        code(VERDICT.format("q1.check(slope)"), ("check",)),
        md("## Task 2 · Every point at once\n\nWrite `slopes(xs)`: the slope at each point of "
           "a vector, in one batched program."),
        code("def slopes(xs):\n    ### BEGIN SOLUTION\n    return jax.vmap(jax.grad(cube))(xs)\n"
             "    ### END SOLUTION"),
        code("q2.check(slopes)"),
        code(VERDICT.format("q2.check(slopes)"), ("check",)),
        md("## Task 3 · Predict the gradient's size\n\nHow many equations does the jaxpr of "
           "`jax.grad(cube)` have at `1.0`? Predict, then check, then print it."),
        code("prediction = None   # a whole number\n### BEGIN SOLUTION\nprediction = "
             "len(jax.make_jaxpr(jax.grad(cube))(1.0).eqns)\n### END SOLUTION"),
        code("q3.check(prediction)"),
        code(VERDICT.format("q3.check(prediction)"), ("check",)),
        md("## Done\n\nBack to the deck's key points."),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                       "name": "python3"},
        "language_info": {"name": "python"},
        "workshop": {"title": title, "lab": lab_id, "minutes": minutes, "deck": deck,
                     "phase": int(deck[:2]) if deck[:2].isdigit() else 0},
    }
    return nb


# the hidden cell after a task's check: it asserts the verdict just printed, not a second
# check (tests/test_lab_solutions.py holds every lab to it)
VERDICT = "assert _.ok, _   # noqa: F821 (IPython's _, the verdict {} printed above)"


def new_lab(lab_id: str, title: str, deck: str, minutes: int = 30) -> list[str]:
    """Write the lab's source, its checks module, its wrong answers and its debrief, then its
    attendee copy; return what the author still does by hand."""
    from . import labgen
    if not re.fullmatch(r"[A-Z]\d+", lab_id) or not title.strip():
        raise errors.KitError("new lab: give an id such as J5 (a capital letter, digits) "
                              "and a title")
    decks = [p.stem for p in nbs.decks()]
    if deck not in decks:
        raise errors.KitError(f"new lab: --deck {deck!r} is not a deck: {', '.join(decks)}")
    if any(p.name.startswith(lab_id + "-") for p in nbs.lab_sources()):
        raise errors.KitError(f"new lab: {lab_id} exists (nothing written)")
    name = f"{lab_id}-{slug(title)}"
    mod = lab_id.lower()
    files = {paths.SOLUTIONS / f"{name}.ipynb": nbs.normalised(lab(lab_id, title, deck, minutes)),
             paths.ROOT / "workshop" / "labs" / f"{mod}.py":
                 template("lab_checks.py", LAB_ID=lab_id, LAB_TITLE=title, LAB_NAME=name),
             paths.ROOT / "tests" / "wrong_answers" / f"{mod}.py":
                 template("lab_wrong_answers.py", LAB_ID=lab_id, mylab=mod),
             # the presenter's debrief: the example's five common mistakes, what to say
             paths.SOLUTIONS / f"{name}.debrief.md":
                 template("lab_debrief.md", LAB_ID=lab_id, LAB_NAME=name)}
    taken = [paths.short(p) for p in files if p.exists()]
    if taken:
        raise errors.KitError(f"new lab: {', '.join(taken)} exists (nothing written)")
    for p, text in files.items():
        p.write_text(text, encoding="utf-8")
    labgen.generate()
    from . import derived
    derived.write()   # the README's table names the lab, and its minutes
    return [f"wrote {', '.join(paths.short(p) for p in files)} and the attendee copy "
            f"exercises/{name}.ipynb, and the README's table",
            "replace the example tasks (cube's slope) with yours, each with its wrong answers, "
            f"and name the five most common in exercises/solutions/{name}.debrief.md with what "
            "to say after the lab; python -m workshop labs after every edit of the source",
            f"then: scripts/build {lab_id} and .venv/bin/pytest -q tests/test_labs.py"]
