"""`workshop new deck NN "Title"`: a new deck that the structure tests accept as it is written,
so an author starts from a green build and replaces the placeholder slides one by one.

It writes `decks/NN-slug.ipynb` (title slide, setup cell, four sections with a slide, a live
cell, a hidden check and speaker notes each, the key points) and the deck's `NN-slug.css` that
jupyterlab-rise asks for; it never overwrites a file, and prints what is left to do by hand
(the README row the tests expect, and a lab for the deck if it names a new one).
"""
from __future__ import annotations

import re

from . import notebooks as nbs

RISE = {"center": False, "controls": True, "height": 720, "margin": 0, "minScale": 0.2,
        "progress": True, "scroll": True, "slideNumber": "c/t", "theme": "white",
        "transition": "none", "width": 1280}

# each placeholder section shows one real thing and checks it, the shape every section keeps
SECTION_CODE = [
    ("A jaxpr", "import jax, jax.numpy as jnp\n\njaxpr = jax.make_jaxpr(jnp.sin)(1.0)\njaxpr",
     'assert [e.primitive.name for e in jaxpr.eqns] == ["sin"]'),
    ("Its StableHLO", "import jax, jax.numpy as jnp\nfrom workshop import show_stablehlo\n\n"
     "lowered = jax.jit(jnp.cos).lower(1.0)\nshow_stablehlo(lowered)",
     'assert "stablehlo.cosine" in lowered.as_text()'),
    ("JAX's own source", 'from workshop import show_source\n\n'
     'show_source("jax._src.core.Primitive.bind")',
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
    objectives = [f"Say what an attendee can do after section {i}" for i in (1, 2, 3)]
    key_points = [f"The one thing to remember from section {i}" for i in (1, 2, 3)]
    cells = [
        _cell("markdown", f"# {title}\n\n**JAX Core, From the Inside** · phase {phase} · "
              f"{minutes} minutes\n\n" + "\n".join(f"- {o}" for o in objectives), "slide"),
        _cell("code", "import workshop; workshop.setup()", "-", ("setup",)),
        _cell("markdown", "Run the setup cell first: eight fake CPU devices, and one line with "
              "the JAX version. Then say what this deck is for.", "notes"),
    ]
    for name, code, check in SECTION_CODE:
        cells += [_cell("markdown", f"## {name}\n\nOne sentence the slide claims.", "slide"),
                  _cell("code", code, "-")]
        if check:
            cells.append(_cell("code", check, "skip", ("check",)))
        cells.append(_cell("markdown", "What to say, what to point at, the likely question.",
                           "notes"))
    cells += [_cell("markdown", "## Key points\n\n" + "\n".join(f"- {k}" for k in key_points)
                    + f"\n\nNext: lab {lab}.", "slide"),
              _cell("markdown", "The recap in one breath, then the lab.", "notes")]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                       "name": "python3"},
        "language_info": {"name": "python"},
        "rise": dict(RISE, footer=f"<span class='workshop-footer'>JAX Core, From the Inside · "
                                  f"{phase:02d} {title}</span>"),
        "workshop": {"title": title, "phase": phase, "minutes": minutes, "lab": lab,
                     "objectives": objectives, "key_points": key_points},
    }
    return nb


def new_deck(phase: int, title: str, lab: str, minutes: int = 45) -> list[str]:
    """Write the deck and its stylesheet; return what the author still does by hand."""
    if not 1 <= phase <= 99:
        raise nbs.KitError(f"new deck: phase {phase}: pick a number from 1 to 99")
    if not title.strip() or not re.fullmatch(r"[A-Z]\d+", lab):
        raise nbs.KitError("new deck: give a title and a lab id such as J5 (a letter, digits)")
    taken = [p for p in nbs.decks() if p.name.startswith(f"{phase:02d}-")]
    if taken:
        raise nbs.KitError(f"new deck: phase {phase:02d} is taken by {nbs.short(taken[0])} "
                           "(nothing written)")
    name = f"{phase:02d}-{slug(title)}"
    path, css = nbs.DECKS / f"{name}.ipynb", nbs.DECKS / f"{name}.css"
    for p in (path, css):
        if p.exists():
            raise nbs.KitError(f"new deck: {nbs.short(p)} exists (nothing written)")
    css.write_text(f"/* {name}: jupyterlab-rise asks for a stylesheet named after the deck; "
                   "the styles of every deck are\n   in rise.css beside it. This file is here "
                   "so that the request finds one (no 404). */\n", encoding="utf-8")
    path.write_text(nbs.normalised(deck(phase, title, lab, minutes)), encoding="utf-8")
    todo = [f"wrote {nbs.short(path)} and {nbs.short(css)}"]
    labs = [p for p in nbs.lab_sources() if p.name.startswith(lab + "-")]
    if labs:
        lw = nbs.read(labs[0]).metadata.workshop
        todo.append(f"add this row to the README's table: | {phase} | [{title}](decks/"
                    f"{path.name}) | {minutes} | [{lab} {lw.title}](exercises/{labs[0].name}) "
                    f"| {lw.minutes} |")
    else:
        todo.append(f"lab {lab} does not exist yet: write it (docs/maintaining.md, 'Adding a "
                    "lab'), then add the deck's row to the README's table (the tests print it)")
    todo.append(f"then: scripts/build {phase:02d}, and commit the deck, its css, the README "
                "and its handouts")
    return todo
