"""`python -m workshop fmt`: the kit's notebooks in Jupyter's own form (no outputs, normalised
JSON, each deck's plan on its title slide), and what the kit derives from their metadata
(`derived`: the phases module, the README's table, the guide's timings). `--check` writes
nothing and fails on anything stale (the pre-commit hook)."""
from __future__ import annotations

from .. import notebooks as nbs
from .. import paths, talk
from . import derived


def normalise(names: list[str], check: bool = False) -> list[str]:
    """The notebooks named (all if none) and the derived files that are not as fmt writes them,
    written (with `check`, only named)."""
    dirty = []
    for p in nbs.select(names):
        nb = nbs.read(p)
        talk.with_plan(nb)   # a deck's plan (title slide's notes) follows its sections
        text = nbs.normalised(nb)
        if p.read_text(encoding="utf-8") != text:
            dirty.append(paths.short(p))
            if not check:
                paths.write_atomic(p, text)
    return dirty + derived.write(check=check)   # (after the notebooks: it reads them)


def main(names: list[str], check: bool = False) -> int:
    dirty = normalise(names, check)
    if check and dirty:
        print(f"fmt: stale: {', '.join(dirty)}; run python -m workshop fmt")
        return 1
    print("fmt: " + ("wrote " + ", ".join(dirty) if dirty else
                     "all notebooks normalised, and what they say of the kit current"))
    return 0
