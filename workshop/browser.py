"""Find a real Chromium for PDFs and the browser test: env var, system packages, Playwright's."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

ENV = "WORKSHOP_BROWSER"
NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"]
# Headless, as root (CI), and quiet: no background calls to Google's services, which this
# machine's closed network refuses many at a time.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync",
        "--font-render-hinting=none"]
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
INSTALL = "install one: apt-get install -y chromium (Debian/Ubuntu), or set WORKSHOP_BROWSER=/path/to/chrome"


def find() -> str | None:
    named = os.environ.get(ENV)
    if named:
        path = shutil.which(named) or (named if Path(named).is_file() else None)
        return path
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache/ms-playwright"))
    for exe in sorted(cache.glob("chromium-*/chrome-linux*/chrome"), reverse=True):
        return str(exe)
    return None
