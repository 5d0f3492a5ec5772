"""Changed materials pushed to attendees who already started, without losing their edits
(nbgitpuller's idea): in each attendee's ~/workshop, a file they never changed (it is one of the
versions the hub gave out) is replaced by the new one; a file they edited stays as it is, and
the new version goes beside it as NAME-updated.ipynb; a file they lack is added; where theirs
is no plain file (a link, a folder, a pipe) or its folder cannot be used, theirs is left as it
is and the new one is not given (the report names it). Run as the
attendee (`python -m workshop.tools.hub.update MATERIALS`, the versions given on stdin), never
as root in a folder the attendee controls, as the hub's first copy is.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

BESIDE = "-updated"   # NAME.ipynb edited: the new version as NAME-updated.ipynb


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files(materials: Path) -> list[str]:
    """The materials' files, as paths relative to the folder."""
    return sorted(str(p.relative_to(materials)) for p in materials.rglob("*") if p.is_file())


def merge(materials: Path, workshop: Path, given: dict[str, list[str]]) -> dict[str, list]:
    """Each of the materials into `workshop`; what happened to each file, by outcome."""
    done: dict[str, list] = {"added": [], "replaced": [], "kept": [], "current": [], "left": []}
    for rel in files(materials):
        try:
            done[_merge_one(materials / rel, workshop / rel, given.get(rel, []))].append(rel)
        except OSError:   # a folder of theirs made unusable (a link, no permission): theirs
            done["left"].append(rel)
    return done


def _merge_one(new: Path, mine: Path, given: list[str]) -> str:
    if mine.is_symlink() or (mine.exists() and not mine.is_file()):
        # the attendee's own doing (a link, a folder, a pipe): not followed, not replaced, and
        # no new version beside it ("kept" said there was one: probe 12's U2c)
        return "left"
    if not mine.exists():
        _place(new, mine)
        return "added"
    if digest(mine) == digest(new):
        return "current"
    if digest(mine) in given:   # a version the hub gave out, unedited
        _place(new, mine)
        return "replaced"
    _place(new, mine.with_name(mine.stem + BESIDE + mine.suffix))   # edited: theirs stays
    return "kept"


def _place(source: Path, target: Path) -> None:
    """`source` at `target`, whole or not at all (a copy beside it, then renamed over)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".update-")
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as f:
            shutil.copyfileobj(f, out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main() -> int:
    materials = Path(sys.argv[1])
    given = json.load(sys.stdin)
    done = merge(materials, Path.home() / "workshop", given)
    print(json.dumps({k: len(v) for k, v in done.items()}
                     | {"edited": done["kept"], "not_files": done["left"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
