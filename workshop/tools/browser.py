"""Find a real Chromium for PDFs and the browser test: env var, system packages, Playwright's."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

ENV = "WORKSHOP_BROWSER"
NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"]
# Headless, as root (CI), and quiet. Even with --disable-background-networking Chromium asks
# for update.googleapis.com, accounts.google.com and clients2.google.com (seen in its net log):
# the resolver rule answers every name but loopback "not found" inside the browser, so no DNS
# lookup leaves the machine (tests/test_build.py watches the net log for any).
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync", "--no-pings",
        "--disable-domain-reliability", "--font-render-hinting=none",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"]
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
INSTALL = ("install one: apt-get install -y chromium (Debian/Ubuntu), or set "
           "WORKSHOP_BROWSER=/path/to/chrome")


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
