"""`python -m workshop release`: the kit as it is now, named, so that a presenter can check out
the kit they rehearsed (`git checkout v2026.12.12`). It makes an annotated git tag `vVERSION`
(the version in pyproject.toml), whose message is that version's CHANGELOG entry, on the commit
checked out, and refuses, in one line, naming what to do:

- a checkout with anything uncommitted (changed, staged or untracked files that git does not
  ignore): the tag would name a kit nobody can check out;
- a version without its CHANGELOG entry (the first one, `## VERSION · YYYY-MM-DD`);
- a version already tagged;
- anything stale that the build or `fmt` derive from the notebooks: a handout (a deck's or a
  lab's PDF, the schedule), an attendee copy of a lab, the phases, the README's table, the
  guide's timings, a notebook not normalised.

It never pushes: `git push origin vVERSION` publishes the tag.
"""
from __future__ import annotations

import re
import subprocess
import tomllib

from . import errors, paths
from . import notebooks as nbs


def _git(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    try:
        p = subprocess.run(["git", *args], cwd=paths.ROOT, capture_output=True, text=True,
                           timeout=60)
    except FileNotFoundError:
        raise errors.KitError("git is not installed: a release is a git tag") from None
    if check and p.returncode:
        raise errors.KitError(f"git {args[0]}: {p.stderr.strip().splitlines()[-1:]}")
    return p


def version() -> str:
    return tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"]["version"]


def changelog_entry(v: str) -> str:
    """The first CHANGELOG entry, which must be `v`'s: its heading and text."""
    log = (paths.ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## (\S+) · (\d{4}-\d{2}-\d{2})$", log, re.M)
    if not first or first.group(1) != v:
        raise errors.KitError(f"CHANGELOG.md's first entry is not {v} (pyproject.toml's "
                              f"version): add “## {v} · YYYY-MM-DD” with what changed")
    return log[first.start():].split("\n## ", 1)[0].strip() + "\n"


def uncommitted() -> list[str]:
    """What `git status` shows: changed, staged and untracked files git does not ignore."""
    if _git("rev-parse", "--is-inside-work-tree", check=False).returncode:
        raise errors.KitError(f"{paths.ROOT} is not a git checkout: a release is a git tag")
    out = _git("status", "--porcelain", "--untracked-files=all").stdout
    return [line[3:] for line in out.splitlines() if line.strip()]


def stale() -> list[str]:
    """Everything the build or fmt would write differently now."""
    from .authoring import fmt, labgen, schedule
    from .builder import handouts, presenter
    out = fmt.normalise([], check=True)   # each deck's plan too, and the derived tables
    out += labgen.generate(check=True)
    out += [paths.short(t) for p in nbs.all_notebooks() if not handouts.current(p)
            for t in handouts.targets(p)]
    out += [paths.short(presenter.targets([p])[0]) for p in nbs.all_notebooks()
            if not presenter.current(p)]
    if not schedule.current(schedule.markdown()):
        out.append(paths.short(schedule.PDF))
    return out


def main() -> int:
    v = version()
    tag = f"v{v}"
    dirty = uncommitted()
    if dirty:
        more = f" and {len(dirty) - 3} more" if len(dirty) > 3 else ""
        raise errors.KitError(f"uncommitted: {', '.join(dirty[:3])}{more}: commit them (or "
                              "stash them) first, so the tag names a kit anyone can check out")
    entry = changelog_entry(v)
    if _git("rev-parse", "-q", "--verify", f"refs/tags/{tag}", check=False).returncode == 0:
        raise errors.KitError(f"{tag} exists: move the version in pyproject.toml and add its "
                              "CHANGELOG entry for a new release")
    old = stale()
    if old:
        more = f" and {len(old) - 3} more" if len(old) > 3 else ""
        raise errors.KitError(f"stale: {', '.join(old[:3])}{more}: run scripts/build (and "
                              "python -m workshop fmt, labs), commit, then release")
    # (verbatim: git's default clean-up would drop the entry's "## " and "### " lines)
    _git("tag", "-a", "--cleanup=verbatim", tag, "-m", f"JAX Core, From the Inside {v}\n\n{entry}")
    commit = _git("rev-parse", "--short", f"{tag}^{{commit}}").stdout.strip()
    print(f"release: tagged {tag} on {commit}; a presenter gets this kit with "
          f"`git checkout {tag}` (publish it: git push origin {tag})")
    return 0
