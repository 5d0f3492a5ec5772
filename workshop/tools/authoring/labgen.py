"""Attendee copies, generated from their single source: the labs' (exercises/ from
exercises/solutions/, by `python -m workshop labs`) and the decks' (attendee/decks/ from decks/,
by `python -m workshop fmt`, with what else the kit derives from the decks).

nbgrader's markers: the lines between `### BEGIN SOLUTION` and `### END SOLUTION` become
`raise NotImplementedError()` at the marker's indentation; cells tagged `check` (the solution's
own assertions) are left out. Outputs and execution counts are never committed.

The solution code itself is written into the package (`workshop/labs/solutions.json`), so that
`qN.solution()` works from any install of it, a non-editable `pip install .` included.
"""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from .. import errors, paths
from .. import notebooks as nbs

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def clear_solutions(source: str, where: str = "") -> str:
    out, inside = [], False
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise errors.KitError(f"{where}: {BEGIN} inside another solution block")
            inside = True
            indent = re.match(r"\s*", line).group(0)
            out.append(f"{indent}raise NotImplementedError()")
        elif stripped == END:
            if not inside:
                raise errors.KitError(f"{where}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise errors.KitError(f"{where}: {BEGIN} without {END}")
    return "\n".join(out)


def attendee_copy(src: Path, nb=None):
    """The attendee copy of the lab source `src` (`nb`, when already read)."""
    nb = nb if nb is not None else nbs.read(src)
    out = copy.deepcopy(nb)
    out.cells = []
    for i, cell in enumerate(nb.cells):
        if "check" in nbs.tags(cell):
            continue
        cell = copy.deepcopy(cell)
        if cell.cell_type == "code":
            cell.source = clear_solutions(cell.source, f"{paths.short(src)} cell {i}")
        out.cells.append(cell)
    out.metadata.setdefault("workshop", {})["generated_from"] = paths.short(src)
    return out


# ------------------------------------------------------------------------------ the decks

def deck_target(src: Path) -> Path:
    return paths.ATTENDEE_DECKS / src.name


def deck_copy(src: Path, nb=None):
    """The copy of the deck `src` an attendee reads along with in their own Jupyter (`nb`, when
    already read): the slides' text, pictures and code and the reading cells, in order; no
    check cell, no speaker notes (their stage directions and the plan's table with them), no
    slideshow settings (RISE's; each cell keeps its slide type, so that its sections are the
    deck's; a chart's code, hidden on the slide, shown). A note after the title says what it
    is and where the explanations are.
    A check cell binds no name a later cell reads (tests/test_attendee_decks.py), so every cell
    left runs as it does in the deck."""
    nb = nb if nb is not None else nbs.read(src)
    out = copy.deepcopy(nb)
    out.cells = []
    for cell in nb.cells:
        if "check" in nbs.tags(cell) or nbs.slide_type(cell) == "notes":
            continue
        out.cells.append(copy.deepcopy(cell))
        if nbs.code_hidden(cell):   # a chart's code, off the slide, is for reading here
            out.cells[-1].metadata["jupyter"].pop("source_hidden")
            if not out.cells[-1].metadata["jupyter"]:
                del out.cells[-1].metadata["jupyter"]
        if len(out.cells) == 1:
            out.cells.append(_deck_note(src))
    w = nb.metadata.get("workshop", {})
    out.metadata = {k: v for k, v in nb.metadata.items() if k in ("kernelspec", "language_info")}
    out.metadata["workshop"] = {"title": w.get("title", ""), "generated_from": paths.short(src)}
    return out


def _deck_note(src: Path):
    import nbformat
    cell = nbformat.v4.new_markdown_cell(
        f"*The attendee's copy of the deck `decks/{src.name}`, to read along in your own "
        "Jupyter: the slides' text and code, without the presenter's notes. Run the setup cell "
        "(the first code cell) first; then any section runs on its own. What the presenter "
        f"says is in the reading handout, `handouts/{src.stem}.pdf` in the kit.*")
    cell.id = "attendee-copy"
    cell.metadata["slideshow"] = {"slide_type": "-"}
    return cell


def deck_copies() -> dict[Path, str]:
    """{attendee copy: its text} for every deck."""
    return {deck_target(p): nbs.normalised(deck_copy(p)) for p in nbs.decks()}


def stray_deck_copies() -> list[Path]:
    """Copies in attendee/decks/ whose deck is gone (renamed or removed)."""
    wanted = {deck_target(p) for p in nbs.decks()}
    return sorted(p for p in paths.ATTENDEE_DECKS.glob("*.ipynb") if p not in wanted)


SOLUTIONS_JSON = paths.ROOT / "workshop" / "labs" / "solutions.json"


def solution_blocks(src: Path) -> list[str]:
    """Each solution cell of a lab source, in order, without the markers: what
    `qN.solution()` prints for task N."""
    return ["\n".join(line for line in c.source.split("\n")
                      if line.strip() not in (BEGIN, END)).strip("\n")
            for c in nbs.read(src).cells if c.cell_type == "code" and BEGIN in c.source]


def solutions_text() -> str:
    data = {src.stem.split("-")[0]: solution_blocks(src) for src in nbs.lab_sources()}
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def _tree(source: str):
    """A cell's syntax tree, IPython's magics and shell lines made Python first; None when it
    still does not parse."""
    import ast

    from IPython.core.inputtransformer2 import TransformerManager
    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except SyntaxError:
        return None


def _words(source: str) -> set[str]:
    """Every name-like word of a cell's magic and shell lines (what they run is a string to
    Python: the cautious answer is that they make and read every word)."""
    import re
    cell_magic = source.lstrip().startswith("%%")   # (its whole body is the magic's string)
    return {w for line in source.splitlines()
            if cell_magic or line.lstrip().startswith(("%", "!"))
            for w in re.findall(r"[A-Za-z_]\w*", line)}


def _names_made(source: str) -> set[str] | None:
    """The names a cell leaves in the kernel: what its top level defines, assigns or imports,
    and what its functions declare `global` or a comprehension's `:=` binds (a name local to a
    function, lambda or comprehension is gone after the cell). None when it does not parse."""
    import ast
    tree = _tree(source)
    if tree is None:
        return None
    functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    comprehensions = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    out = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, functions):
                if not isinstance(child, ast.Lambda):
                    out.add(child.name)
                out.update(n for g in ast.walk(child) if isinstance(g, ast.Global)
                           for n in g.names)
                continue
            if isinstance(child, comprehensions):
                out.update(w.target.id for w in ast.walk(child)
                           if isinstance(w, ast.NamedExpr))
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                out.add(child.id)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).split(".")[0] for a in child.names)
            visit(child)
    visit(tree)
    return out | _words(source)


def _names_near(source: str) -> set[str]:
    """The names a cell reads or makes (one an answer leaves that the cell makes again may be
    the answer's); every word of it when it does not parse (the cautious answer: fewer outputs
    given)."""
    import ast
    import re
    tree = _tree(source)
    if tree is None:
        return set(re.findall(r"[A-Za-z_]\w*", source))
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return read | _names_made(source)


def with_given_outputs(sheet, executed):
    """The attendee sheet with the outputs a task gives the attendee to read (a function's
    source, a refusal), taken from the executed solution: the cells before the first task (the
    lab's own material: the code its tasks ask to read) and, in each task, the cells between
    its heading and its first answer cell, unless they read or make a name an answer leaves in
    the kernel (their output could give the answer away). Everything else stays without
    outputs."""
    import re
    solution = [c for c in executed.cells if "check" not in nbs.tags(c)]
    if len(solution) != len(sheet.cells):
        raise errors.KitError("the attendee copy does not match its solution: run "
                              "python -m workshop labs")
    made = [(_names_made(c.source), c) for c in solution if BEGIN in c.source]
    bad = next((c for names, c in made if names is None), None)
    if bad is not None:   # (its names unknown, any output could give it away)
        raise errors.KitError(f"an answer cell does not parse: {bad.source.splitlines()[0]!r}")
    answers = set().union(*(names for names, _ in made))
    out = copy.deepcopy(sheet)
    giving = True   # before the first task: the lab's material, to read
    for mine, ran in zip(out.cells, solution):
        if mine.cell_type == "markdown" and re.match(r"#+ Task \d", mine.source):
            giving = True
        elif BEGIN in ran.source or re.search(r"^q\d\.check\(", ran.source, re.M):
            giving = False
        elif giving and mine.cell_type == "code" and ran.get("outputs"):
            if not _names_near(mine.source) & answers and not any(o.get("output_type") == "error"
                                              for o in ran.outputs):
                mine.outputs = copy.deepcopy(ran.outputs)
    return out


def target(src: Path) -> Path:
    return paths.EXERCISES / src.name


def generate(check: bool = False) -> list[str]:
    """Write (or with check=True, compare) every attendee copy; returns the stale ones."""
    stale = []
    for src in nbs.lab_sources():
        text = nbs.normalised(attendee_copy(src))
        dst = target(src)
        if not dst.exists() or dst.read_text(encoding="utf-8") != text:
            stale.append(paths.short(dst))
            if not check:
                _write(dst, text)
    text = solutions_text()
    if not SOLUTIONS_JSON.exists() or SOLUTIONS_JSON.read_text(encoding="utf-8") != text:
        stale.append(paths.short(SOLUTIONS_JSON))
        if not check:
            _write(SOLUTIONS_JSON, text)
    return stale


def _write(dst: Path, text: str) -> None:
    paths.write_atomic(dst, text)
