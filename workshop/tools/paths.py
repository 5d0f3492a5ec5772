"""Where the kit's files are, how the tools name them to the user, and the one way the tools
write a file (whole or not at all)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import KitError

ROOT = Path(__file__).resolve().parents[2]
DECKS = ROOT / "decks"
EXERCISES = ROOT / "exercises"
SOLUTIONS = EXERCISES / "solutions"
# the decks as an attendee reads along in their own Jupyter: generated from DECKS by fmt
ATTENDEE_DECKS = ROOT / "attendee" / "decks"
LOCK = ROOT / "environment" / "requirements.lock"   # what .venv and every handout are made from
BUILD = ROOT / "build"                               # every tool's own output, never committed


def short(path: Path) -> str:
    """A path as the user reads it: relative to the kit when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def write_atomic(path: Path, data: bytes | str, mode: int | None = None,
                 replace: bool = True) -> None:
    """Write all of `data` to `path` or nothing: the old file stays until the new one is
    complete. The temporary file has a name of its own (two writers at once each replace the
    file with a whole version of theirs, never a torn mix); a failed write (disk full, no
    permission) leaves no .tmp behind and is one line, a KitError. A link at `path` is
    replaced, never written through. `mode`: the file's (default: as open() makes one).
    `replace=False`: a file that appeared at `path` meanwhile stays, and FileExistsError."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise _unwritable(path, e) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK if mode is None else mode)   # (mkstemp makes 0600)
        if replace:
            os.replace(tmp, path)
        else:   # whole or nothing, and only where nothing is
            os.link(tmp, path)
            os.unlink(tmp)
    except FileExistsError:
        Path(tmp).unlink(missing_ok=True)
        raise
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise _unwritable(path, e) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _unwritable(path: Path, e: OSError) -> KitError:
    return KitError(f"cannot write {short(path)}: {e.strerror or e}"
                    f"{' (the old file is kept)' if path.exists() else ''}")


def _read_umask() -> int:
    mask = os.umask(0o022)   # read once, at import (setting it is process-wide)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


PAGE_SCRIPTS = Path(__file__).with_name("page_scripts")   # JavaScript the tools run in pages


def page_script(name: str, folder: Path = PAGE_SCRIPTS) -> str:
    """A script of page_scripts/ (or of `folder`: the tests' own), without the // comment
    lines that head it (they are for its reader; Playwright's evaluate wants the bare
    function)."""
    lines = (folder / name).read_text(encoding="utf-8").split("\n")
    while lines and lines[0].startswith("//"):
        lines.pop(0)
    return "\n".join(lines).rstrip("\n")


def fill_script(name: str) -> str:
    """A page script that grows a slide's content to fill it (`__FILL__`: fill.js's function,
    `__LIMIT__`: its largest factor, config.FILL_LIMIT): the slides PDF's and RISE's."""
    from ..config import FILL_LIMIT
    return (page_script(name).replace("__FILL__", page_script("fill.js"))
            .replace("__LIMIT__", repr(FILL_LIMIT)))
