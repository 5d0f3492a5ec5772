"""`python -m workshop release`: a version a presenter can name and check out, an annotated tag
made only from a clean, current checkout, in a scratch copy of the kit (a repository of its
own, the kit's files committed)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import GIT_WHO as WHO


@pytest.fixture(scope="module")
def clone(kit_copy):
    return kit_copy


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True,
                          timeout=60, env={**os.environ, **WHO}).stdout


def release(root) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workshop", "release"], cwd=root, text=True,
                          capture_output=True, timeout=300,
                          env={**os.environ, **WHO, "PYTHONPATH": str(root)})


def bump(root, version: str, entry: bool = True) -> None:
    """A new version in pyproject.toml and (with `entry`) its CHANGELOG entry, committed."""
    toml = root / "pyproject.toml"
    toml.write_text(re.sub(r'^version = "[^"]+"', f'version = "{version}"', toml.read_text(),
                           count=1, flags=re.M))
    if entry:
        log = root / "CHANGELOG.md"
        head, rest = log.read_text().split("\n## ", 1)
        log.write_text(f"{head}\n## {version} · 2099-01-01\n\nA scratch release.\n\n"
                       "### Presenters\n- Nothing changed.\n\n### Readers\n- Nothing changed."
                       "\n\n### Attendees\n- Nothing changed.\n\n## " + rest)
    git(root, "commit", "-qam", f"version {version}")


def refused(p, says: str) -> None:
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    err = p.stderr.strip()
    assert err.count("\n") == 0 and err.startswith("workshop release: ") and says in err, err


# the release command's proofs (a scratch kit, committed, then tagged): the maintainer's own
# tool, under -m thorough as CI runs it
@pytest.mark.thorough
def test_a_release_is_an_annotated_tag_made_only_from_a_clean_current_checkout(clone):
    bump(clone, "2099.1.1")
    (clone / "notes.txt").write_text("a presenter's scribble")   # untracked, not ignored
    refused(release(clone), "uncommitted: notes.txt")
    (clone / "notes.txt").unlink()

    p = release(clone)
    assert p.returncode == 0, p.stderr
    assert "tagged v2099.1.1 on " in p.stdout and "git checkout v2099.1.1" in p.stdout
    assert git(clone, "cat-file", "-t", "v2099.1.1").strip() == "tag"   # annotated
    assert git(clone, "rev-parse", "v2099.1.1^{commit}") == git(clone, "rev-parse", "HEAD")
    message = git(clone, "tag", "-l", "--format=%(contents)", "v2099.1.1")
    assert message.startswith("JAX Core, From the Inside 2099.1.1\n")
    assert "## 2099.1.1 · 2099-01-01" in message and "### Attendees" in message

    refused(release(clone), "v2099.1.1 exists")

    bump(clone, "2099.1.2", entry=False)
    refused(release(clone), "CHANGELOG.md's first entry is not 2099.1.2")


@pytest.mark.thorough
def test_a_release_refuses_a_stale_handout_and_tags_nothing(clone):
    bump(clone, "2099.2.1")
    deck = clone / "decks" / "01-run-it-first.ipynb"
    deck.write_text(deck.read_text().replace("# Run it first\\n", "# Run it first!\\n", 1))
    git(clone, "commit", "-qam", "a deck changed, its handouts not rebuilt")
    # (its attendee copy too: fmt writes it, and the maintainer did not run fmt either)
    refused(release(clone), "stale: attendee/decks/01-run-it-first.ipynb, "
                            "handouts/01-run-it-first.slides.pdf, "
                            "handouts/01-run-it-first.pdf and 1 more: run scripts/build")
    tags = git(clone, "tag", "-l", "v2099.2.*")
    assert tags == ""
