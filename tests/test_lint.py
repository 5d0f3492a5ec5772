"""ruff over the package, the tests and the notebooks' code (settings in pyproject.toml)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from workshop import notebooks as nbs


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).with_name("ruff")
    p = subprocess.run([str(ruff), "check", "--output-format", "concise", "workshop", "tests",
                        "decks", "exercises"], capture_output=True, text=True, cwd=nbs.ROOT,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
