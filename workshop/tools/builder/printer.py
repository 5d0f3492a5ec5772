"""The one headless Chromium a build prints with: offline (every request off this machine is
refused), with the DejaVu fonts and no others, so the same HTML prints the same bytes."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

from .. import browser, paths
from . import render


class NoBrowser(Exception):
    pass


class Overflow(Exception):
    """Something would run off a printed page."""


def launch_error(text: str) -> str:
    """Playwright's launch failure in one line: the browser's own last complaint on stderr
    (`[pid=N][err] ...`), else the exit Playwright saw, else its first line."""
    import re
    err = [m.group(1).strip() for m in re.finditer(r"\[pid=\d+\]\[err\] (.+)", text)]
    exit_ = re.search(r"<process did exit: (exitCode=\S+ signal=\S+)>", text)
    first = text.strip().splitlines()[0] if text.strip() else "no reason given"
    why = err[-1] if err else exit_.group(1) if exit_ else first
    return why[:160]


FONTS = paths.BUILD / "fonts"
FONT_INSTALL = "apt-get install -y fonts-dejavu-core (Debian/Ubuntu)"


def pinned_fonts() -> dict[str, str]:
    """The environment that makes Chromium see the DejaVu fonts and the RISE theme's Source
    Sans Pro (the slides' words, theme_face) and nothing else: a machine
    with Noto (or any other family) installed prints the same glyphs, so the same bytes."""
    try:
        out = subprocess.run(["fc-list", "-f", "%{file}\n", "DejaVu Sans"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    dirs = sorted({str(Path(f).parent) for f in out.splitlines() if f.strip()})
    if not dirs:
        raise NoBrowser(f"the handouts are printed in DejaVu Sans and DejaVu Sans Mono, which "
                        f"this machine lacks: {FONT_INSTALL}")
    dirs.append(str(theme_face()))
    aliases = "".join(f"<alias><family>{generic}</family><prefer><family>{face}</family>"
                      "</prefer></alias>" for generic, face in
                      [("sans-serif", "DejaVu Sans"), ("serif", "DejaVu Serif"),
                       ("monospace", "DejaVu Sans Mono")])
    conf = ("<?xml version='1.0'?><!DOCTYPE fontconfig SYSTEM 'fonts.dtd'><fontconfig>"
            + "".join(f"<dir>{d}</dir>" for d in dirs)
            + f"<cachedir>{FONTS / 'cache'}</cachedir>{aliases}</fontconfig>\n")
    FONTS.mkdir(parents=True, exist_ok=True)
    (FONTS / "fonts.conf").write_text(conf)
    return {"FONTCONFIG_FILE": str(FONTS / "fonts.conf")}


# the slides' face: the RISE theme's Source Sans Pro, in the files jupyterlab-rise ships (the
# lock pins it), so that a slide's words take the same room in print as on the projector
FACES = ("SourceSansPro-Regular", "SourceSansPro-It", "SourceSansPro-Semibold",
         "SourceSansPro-SemiboldIt")


def theme_face() -> Path:
    """A folder holding only the four Source Sans Pro files of the installed jupyterlab-rise
    (told apart by the PostScript name fontconfig reads in each: its file names are hashes)."""
    import jupyterlab_rise
    folder = FONTS / "source-sans-pro"
    folder.mkdir(parents=True, exist_ok=True)
    found = {}
    for ttf in sorted((Path(jupyterlab_rise.__file__).parent / "static").glob("*.ttf")):
        try:
            name = subprocess.run(["fc-scan", "--format", "%{postscriptname}", str(ttf)],
                                  capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            name = ""
        if name in FACES:
            found[name] = ttf.read_bytes()
    missing = [f for f in FACES if f not in found]
    if missing:
        raise NoBrowser(f"jupyterlab-rise ships no {', '.join(missing)}: the slides are printed "
                        f"in its theme's face (run scripts/setup)")
    for face, data in found.items():
        out = folder / f"{face}.ttf"
        if not out.exists() or out.read_bytes() != data:
            out.write_bytes(data)
    return folder


def _remove(folder: str) -> None:
    """`folder` removed, once the browser that got the same Ctrl-C has stopped writing in it
    (it removes its own files as it ends: a removal at the same time found the folder not
    empty and left it, now and then)."""
    for _ in range(30):
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.exists(folder):
            return
        time.sleep(0.1)


class Printer:
    """One headless Chromium for a whole build; refuses every request off this machine."""

    def __init__(self, extra_args: tuple[str, ...] = ()):
        exe = browser.find()
        if exe is None:
            raise NoBrowser(f"no Chromium or Chrome to print the handouts: {browser.INSTALL}")
        fonts = pinned_fonts()
        from playwright.sync_api import Error, sync_playwright
        # Chromium's TMPDIR is a folder of this printer's own, removed at close however the
        # build ends: a Ctrl-C reaches the browser too, which then dies without removing its
        # singleton socket's folder (org.chromium.Chromium.*), and left it in /tmp
        self._tmp = tempfile.mkdtemp(prefix="workshop-print-")
        # and Playwright's driver's, where it makes the browser's profile folder
        # (playwright_chromiumdev_profile-*, 147 files): a Ctrl-C ends the driver before it
        # removes it, and CI found it left in /tmp
        before = os.environ.get("TMPDIR")
        os.environ["TMPDIR"] = self._tmp
        try:
            self._pw = sync_playwright().start()
        except BaseException:   # (a Ctrl-C while the driver starts: probe 7 found it left)
            _remove(self._tmp)
            raise
        finally:
            if before is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = before
        try:
            self._browser = self._pw.chromium.launch(executable_path=exe, headless=True,
                                                       args=browser.ARGS + list(extra_args),
                                                       env={**os.environ, **fonts,
                                                            "TMPDIR": self._tmp},
                                                       timeout=60_000)
        except BaseException as e:   # (a Ctrl-C while it starts, too)
            self._pw.stop()
            _remove(self._tmp)
            if not isinstance(e, Error):
                raise
            raise NoBrowser(f"the browser {exe} did not start ({launch_error(str(e))}): "
                            f"{browser.INSTALL}") from None
        self.offsite: list[str] = []

    def close(self) -> None:
        try:
            self._browser.close()
            self._pw.stop()
        finally:   # (after a Ctrl-C the browser and Playwright's driver may be gone already)
            _remove(self._tmp)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _guard(self, route):
        url = route.request.url
        local = urlparse(url).hostname in browser.LOOPBACK
        if local or url.startswith(("data:", "about:", "blob:")):
            route.continue_()
        else:
            self.offsite.append(url)
            route.abort()

    def pdf(self, html: str, kind: str, footer: str = "") -> tuple[bytes, list]:
        """Print `html`; kind is 'slides' (16:9, a page a slide) or 'a4'."""
        size = ({"width": 1280, "height": 720} if kind == "slides"
                else {"width": render.A4_CONTENT_PX, "height": 1000})
        page = self._browser.new_page(viewport=size)
        try:
            page.route("**/*", self._guard)
            page.set_content(html, wait_until="load")
            scaled = page.evaluate(render.FIT_JS) if kind == "slides" else []
            bad = page.evaluate(render.OVERFLOW_JS, kind)
            if bad:
                raise Overflow("would run off the page: " + "; ".join(bad[:3]))
            if kind == "slides":
                data = page.pdf(width="1280px", height="720px", print_background=True,
                                prefer_css_page_size=True, tagged=True)
            else:
                data = page.pdf(format="A4", print_background=True, outline=True, tagged=True,
                                display_header_footer=True, header_template="<span></span>",
                                footer_template=_footer(footer),
                                margin={"top": "16mm", "bottom": "18mm",
                                        "left": "16mm", "right": "16mm"})
            return data, scaled
        finally:
            page.close()


def _footer(text: str) -> str:
    import html as h
    return ("<div style='font-size:8px;width:100%;margin:0 16mm;display:flex;"
            "justify-content:space-between;color:#555;font-family:sans-serif'>"
            f"<span>{h.escape(text)}</span><span><span class='pageNumber'></span> / "
            "<span class='totalPages'></span></span></div>")


