"""A lab's debrief, for the presenter and the helpers: its five most common wrong answers, each
with what the lab's check says to it, what to say after the lab, and the lab's measured minutes.
Printed into the presenter's pack (`presenter.py`), never into the attendee's sheet.

The words are the author's, in a Markdown file beside the lab's source,
`exercises/solutions/ID-name.debrief.md`:

    ## Common mistakes

    - q1 `count_clear_listeners`: cleans up with clear_event_listeners, which ...
    - q3 “compiled 8 times”: the buggy loop handed in as it is.

    ## What to say

    Paragraphs.

Each mistake names one of the lab's own wrong answers (`tests/wrong_answers/<id>.py`, which
the tests hold the checks to): by its name there (a function's, or the module's name for a
value), as a value written out (`7`), or, in quotes, by the words its check must say when only
one answer of that task says them. What the check says to it is never copied: the build runs
the check on that very answer (`said`), in a fresh Python, as an attendee's kernel would after
its setup cell.

Not the lab's metadata: the attendee copy is made from the lab's source with its metadata, so
the debrief would travel into every attendee's notebook; and it is prose, edited as prose.
`exercises/solutions/` is the presenter's side of the labs (the hub copies only the attendee
copies).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import errors, paths

MISTAKES = 5
WRONG_ANSWERS = paths.ROOT / "tests" / "wrong_answers"
_ITEM = re.compile(r"^- (q\d+) (?:`([^`]+)`|“([^”]+)”): (.+)$")


@dataclass
class Mistake:
    task: str          # "q1"
    name: str          # the wrong answer's name in tests/wrong_answers/<id>.py, or ""
    says: str          # or the words its check must say (one answer of the task says them)
    what: str          # what the attendee did, in the author's words


@dataclass
class Debrief:
    source: Path       # the .debrief.md
    mistakes: list[Mistake]
    say: str           # what to say after the lab (Markdown)


def source_of(lab: Path) -> Path:
    return Path(lab).with_suffix(".debrief.md")


def answers_file(lab: Path) -> Path:
    return WRONG_ANSWERS / f"{Path(lab).stem.split('-')[0].lower()}.py"


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## +(.+?)\s*$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def read(lab: Path) -> Debrief:
    """The lab's debrief source, parsed; one clear line when it is missing or malformed."""
    src = source_of(lab)
    where = paths.short(src)
    if not src.is_file():
        raise errors.KitError(f"{where} is missing: every lab has a debrief (docs/maintaining.md,"
                              " 'Adding a lab')")
    parts = _sections(src.read_text(encoding="utf-8"))
    for need in ("Common mistakes", "What to say"):
        if not parts.get(need):
            raise errors.KitError(f"{where}: no “## {need}” section, or it is empty")
    # a list item may wrap: its continuation lines are indented
    items = re.split(r"\n(?=- )", re.sub(r"\n[ \t]+", " ", parts["Common mistakes"]))
    mistakes = []
    for item in items:
        m = _ITEM.match(item.strip())
        if not m:
            raise errors.KitError(f"{where}: “{item.strip()[:60]}” is not “- qN `name`: what "
                                  "they did” or “- qN “what the check says”: what they did”")
        mistakes.append(Mistake(m[1], m[2] or "", m[3] or "", m[4].strip()))
    if len(mistakes) != MISTAKES:
        raise errors.KitError(f"{where}: {len(mistakes)} common mistakes; give the "
                              f"{MISTAKES} most common")
    return Debrief(src, mistakes, parts["What to say"])


def find(answers, mistake: Mistake):
    """The wrong answer (a tests/wrong_answers W) a mistake names, from the lab's answers
    module; a str saying why when it names none, or more than one."""
    wrong = getattr(answers, "WRONG", {}).get(mistake.task)
    if wrong is None:
        return f"{mistake.task} is not a task of the lab's wrong answers"
    if mistake.name:
        value = getattr(answers, mistake.name, None)
        got = [w for w in wrong if (value is not None and w.answer is value)
               or getattr(w.answer, "__name__", None) == mistake.name]
        literal = _literal(mistake.name)
        if not got and literal is not None:   # a value written out: `7`, `["mul", "add"]`
            got = [w for w in wrong if type(w.answer) is type(literal) and w.answer == literal]
    else:
        got = [w for w in wrong if w.says == mistake.says]
    what = f"`{mistake.name}`" if mistake.name else f"“{mistake.says}”"
    if len(got) != 1:
        return (f"{mistake.task} {what}: " + ("no wrong answer of that task" if not got else
                f"{len(got)} wrong answers of that task; name one by its name"))
    return got[0]


def _literal(text: str):
    import ast
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _collect(lab_id: str, mistakes: list[dict], out: str) -> None:
    """(In the fresh Python `said` starts.) Each mistake's answer through its task's check."""
    import importlib

    import workshop
    workshop.setup(quiet=True)
    checks = importlib.import_module(f"workshop.labs.{lab_id.lower()}")
    answers = importlib.import_module(f"wrong_answers.{lab_id.lower()}")
    got = []
    for m in mistakes:
        w = find(answers, Mistake(**m))
        if isinstance(w, str):
            got.append({"error": w})
            continue
        v = getattr(checks, m["task"]).check(w.answer)
        got.append({"ok": bool(v.ok), "message": v.message, "hint": v.hint,
                    "title": getattr(checks, m["task"]).title})
    Path(out).write_text(json.dumps(got), encoding="utf-8")


def said(lab: Path, debrief: Debrief) -> list[dict]:
    """What the lab's checks say to each mistake's answer: {ok, message, hint, title} each,
    run now in a fresh Python (the tests' folder on its path, for the wrong answers)."""
    lab_id = Path(lab).stem.split("-")[0]
    with tempfile.TemporaryDirectory(prefix="workshop-debrief-") as tmp:
        out = Path(tmp) / "said.json"
        code = ("import json, sys; from workshop.tools.builder.debrief import _collect; "
                "_collect(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3])")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(paths.ROOT), str(WRONG_ANSWERS.parent), os.environ.get("PYTHONPATH", "")])}
        p = subprocess.run([sys.executable, "-c", code, lab_id,
                            json.dumps([vars(m) for m in debrief.mistakes]), str(out)],
                           cwd=paths.ROOT, env=env, capture_output=True, text=True, timeout=600)
        if p.returncode or not out.is_file():
            last = (p.stderr.strip().splitlines() or ["no reason given"])[-1]
            raise errors.KitError(f"{paths.short(debrief.source)}: running the checks on its "
                                  f"wrong answers failed: {last[:200]}")
        got = json.loads(out.read_text(encoding="utf-8"))
    for m, g in zip(debrief.mistakes, got):
        if "error" in g:
            raise errors.KitError(f"{paths.short(debrief.source)}: {g['error']}")
        if g["ok"]:
            raise errors.KitError(f"{paths.short(debrief.source)}: {m.task} "
                                  f"`{m.name or m.says}` now passes its check: not a mistake")
    return got
