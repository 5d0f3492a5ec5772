"""The Jupyter server extension `present` loads. It puts the kit's page script
(page_scripts/rise_page.js) into jupyterlab-rise's page, serves the rehearsal log and stops
the server with `present`. The script: RISE's notes window (T) shows each slide's notes once,
rendered.

jupyterlab-rise puts each notes cell's whole widget in the slide's `<aside class="notes">`, its
hidden Markdown editor included, and Reveal's notes window copies the aside's HTML into a page
of its own, without JupyterLab's styles: every note appeared twice, first as raw source line by
line. A small script on the RISE page puts one rule into every notes aside, scoped to the notes
window's own container (`.speaker-controls-notes`), so it hides what JupyterLab hides (the
editor, `lm-mod-hidden`) there and matches nothing on the slides.

The same script keeps the notes window from moving the slides: its slide previews are whole
RISE pages that load at the first slide and reported that move back, so pressing T sent the
audience to slide 1 (measured). The slides window leads; the notes window follows.

Pacing: jupyterlab-rise forwards only 11 config keys to Reveal, so the script turns reveal.js's
own pacing on itself: each slide's planned seconds (its share of the kit's talk-time estimate,
`present.rehearse.page_plan`) as its `data-timing`, and `totalTime` (the talk path) through
Reveal's postMessage API (`configure`); the notes window then shows PACING, the time left to the
end of the present slide against the plan, blue ahead, green on track, red behind. A plan line
at the top of each slide's notes gives the slide's planned time, where the talk should be at its
end, and its section's minutes.

MathJax: JupyterLab typesets TeX with MathJax 3, which sets itself up on a page's first
typeset (every rendered Markdown cell asks, math or none: it loads its code and builds its font
tables), 1.1 s of deck 04's 5.9 s to open in Chromium here, measured. The kit's decks write
math in Unicode (the notebook rules), so the slideshow page of a notebook with no TeX
(`uses_tex`) leaves JupyterLab's MathJax plugin out: it opens about a second sooner, and a `$`
is shown as written. A notebook with TeX keeps it. (Decided when the page loads: TeX typed into
a cell during the talk is typeset after a reload.)

Rehearsal (`present --rehearse`): the script posts each slide change to this extension's
`/workshop/rehearsal` handler, which appends it, with the server's time, to the log the
environment names (WORKSHOP_REHEARSAL); `present` writes the report when it stops.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from ..paths import fill_script, page_script

RULE = ".speaker-controls-notes .lm-mod-hidden { display: none !important; }"
# The notebook is not drawn until RISE makes it slides (RISE marks the body rise-enabled, then
# starts Reveal). JupyterLab adds the cells one at a time, and each cell's editor reads the
# page's selection, which lays out the whole page drawn so far again: deck 03's 213 cells cost
# 0.7 s of the page's 2.4 s on the main thread in Chromium's trace (style and layout), 0.05 s
# undrawn. The first slide is the same, pixel for pixel.
# Settings the page loads when their plugins ask, not all at its start. JupyterLab's settings
# registry loads every plugin's settings before its plugins start, and waits up to a second
# (four looks, 250 ms apart) for these three to register the transform their settings need;
# they register it as they start, which is after: the page sat idle 1 s before the deck was
# fetched (measured). Listed as deferred (a word only the settings registry reads on this page:
# RISE's application starts every plugin), each loads its settings when it starts instead.
SETTINGS_LATER = ("@jupyterlab/shortcuts-extension:shortcuts",
                  "@jupyterlab/docmanager-extension:plugin",
                  "@jupyterlab/application-extension:context-menu")
# JupyterLab plugins the slideshow has no use for, left out of RISE's page: each starts with the
# page and works on every cell of a deck before the first slide is drawn (the table of contents
# reads every heading, the language-server bridge and the completer attach to every editor,
# search indexes the notebook), or serves a panel or status item RISE never shows. None
# provides what another plugin of the page needs: a console error would say so (the RISE
# tests fail on any).
NOT_IN_SLIDESHOW_PLUGINS = tuple(f"@jupyterlab/notebook-extension:{name}" for name in (
    "toc", "language-server", "completer", "search", "metadata-editor", "active-cell-tool",
    "tools", "log-output", "cursor-position", "code-console", "cloned-outputs")) + (
    "@jupyterlab/codemirror-extension:line-col-status",
    "@jupyterlab/apputils-extension:announcements")
UNTIL_SHOWN = "<style>body:not(.rise-enabled) .jp-Notebook { display: none !important; }</style>"
# the page's scripts, in this order (each says what it does), inside one function that declares
# what they share: PLAN (alone on its line), REHEARSE and BYLINE
SCRIPTS = ("rise_page.js", "rise_keys.js", "rise_talk.js", "rise_notes_window.js",
           "rise_fill.js")
# the JupyterLab plugin (page_scripts/rise_plugin.js): its name among the page's federated
# extensions, and where this extension serves it
PLUGIN = "workshop-present"
PLUGIN_URL = "workshop/rise-plugin.js"
BYLINE_ENV = "WORKSHOP_BYLINE"   # the title slide's presenter, event and date (a JSON list)


def _js(value) -> str:
    """`value` as JavaScript inside a <script> element: every < as \\u003c, so nothing in it
    is markup to the HTML parser (a `</` ended the element; a `<!--<script>` in a byline kept
    the kit's page script from running, and a rehearsal then recorded nothing: probe 17)."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def script(plan: dict | None, rehearse: bool, byline: list[str] | None = None) -> str:
    """The page scripts for one RISE page, in one <script> element."""
    shared = (f"var PLAN = {_js(plan)};\n"
              f"var REHEARSE = {_js(bool(rehearse))}, BYLINE = {_js(byline or [])};")
    js = "\n".join(fill_script(name).replace("__RULE__", RULE) for name in SCRIPTS)
    return f"<script>(function () {{\n{shared}\n{js}\n}})();</script>"


# The title slide's byline, set for the whole kit in one file (git-ignored: it is the
# presenter's, not the kit's), or for one run by present's --presenter/--event/--date
PRESENTING = "presenting.toml"
BYLINE_KEYS = ("presenter", "event", "date")


def byline_for(given: dict[str, str | None], file: Path | None = None) -> list[str]:
    """The title slide's byline: the presenter, the event and the date, each from `given`
    (present's flags; None: not given) or else from presenting.toml at the kit's root; []
    when none is set (the slide shows nothing). A file that is not TOML, or that holds another
    key or a value that is not one line of text, raises KitError (one line)."""
    import stat
    import tomllib

    from .. import paths
    from ..errors import KitError
    file = file or paths.ROOT / PRESENTING
    saved: dict = {}
    if os.path.lexists(file):
        try:   # (a folder there was a traceback; a FIFO, a wait without a word: probe 17)
            if not stat.S_ISREG(file.stat().st_mode):
                raise KitError(f"{paths.short(file)} is not a file: make it one (the byline's "
                               "presenter, event and date, in TOML) or remove it")
            saved = tomllib.loads(file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise KitError(f"{paths.short(file)} is not TOML ({e})") from None
        except OSError as e:
            raise KitError(f"cannot read {paths.short(file)}: {e.strerror or e}") from None
        other = sorted(set(saved) - set(BYLINE_KEYS))
        if other:
            raise KitError(f"{paths.short(file)}: unknown key {other[0]!r} (it may set "
                           f"{', '.join(BYLINE_KEYS)})")
    out = []
    for key in BYLINE_KEYS:
        value = given.get(key)
        where = f"--{key}"
        if value is None:
            value, where = saved.get(key, ""), f"{paths.short(file)}'s {key}"
        if not isinstance(value, str) or "\n" in value.strip():
            raise KitError(f"{where}: one line of text, not {value!r}")
        if value.strip():
            out.append(" ".join(value.split()))
    return out


def byline() -> list[str]:
    """What `present` was told to show on the title slide (BYLINE_ENV), [] when nothing."""
    try:
        got = json.loads(os.environ.get(BYLINE_ENV) or "[]")
    except json.JSONDecodeError:
        return []
    return [str(x) for x in got if str(x).strip()] if isinstance(got, list) else []


def federated_entry(config: dict) -> dict:
    """The plugin as one of the page's federated extensions. JupyterLab's loader fetches
    `fullLabextensionsUrl`/name/load (joined as paths): `load` leads from there to this
    extension's handler."""
    import posixpath

    from jupyter_server.utils import url_path_join
    base = url_path_join(config.get("fullLabextensionsUrl") or "/lab/extensions", PLUGIN)
    target = url_path_join(config.get("baseUrl") or "/", PLUGIN_URL)
    return {"name": PLUGIN, "load": posixpath.relpath(target, base), "extension": "./extension"}


def shown(root: str | None, rel: str | None):
    """The notebook RISE is showing (None for a page with no notebook path)."""
    if not rel:
        return None
    from .. import notebooks as nbs
    from .. import paths
    return nbs.read(Path(root or paths.ROOT).expanduser() / rel.lstrip("/"))


def page_plan_for(nb) -> dict | None:
    """The pacing plan of the notebook RISE is showing; None when it is not a deck."""
    if nb is None or "rise" not in nb.metadata:
        return None
    from . import rehearse
    return rehearse.page_plan(nb)


MATHJAX = "@jupyterlab/mathjax-extension"
# Math in what JupyterLab typesets: its Markdown renderer hands MathJax $…$, $$…$$, \\(…\\),
# \\[…\\] and \begin{…}…\end{…} (a single \( is Markdown's escaped parenthesis, counted all
# the same); MathJax also finds \begin {…}; an HTML entity for $ is a $ by the time MathJax
# reads the page. Any $ at all counts: a notebook in doubt keeps MathJax.
TEX = re.compile(r"\$|\\\(|\\\[|\\begin\s*\{|(?i:&#0*36;|&#x0*24;|&dollar;)")
# the other outputs JupyterLab typesets (any text/latex counts; an SVG is drawn as an <img>: no
# text to typeset)
TYPESET = ("text/markdown", "text/html")
# code that names what makes such an output as it runs (IPython's Latex, Math, Markdown, HTML,
# %%markdown, %%html, display_markdown, a _repr_html_ or _repr_latex_, sympy); a code cell's own
# $ (a regex, a shell variable) is not looked at: it is code, not output
MAKES_TEX = re.compile(r"(?i:latex|markdown|html)|\bMath\b|sympy")


def uses_tex(nb) -> bool:
    """Whether the slideshow of `nb` may need MathJax: TeX in a Markdown cell or in a saved
    output JupyterLab typesets, a text/latex output, or code that names an output it would
    typeset. TeX that code makes without naming it (a table of prices in HTML) is shown as
    written."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and TEX.search(cell.source):
            return True
        if cell.cell_type == "code" and MAKES_TEX.search(cell.source):
            return True
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/latex" in data or any(
                    TEX.search("".join(v) if isinstance(v, list) else str(v))
                    for k, v in data.items() if k in TYPESET):
                return True
    return False


def _jupyter_server_extension_points():
    return [{"module": "workshop.tools.present.extension"}]


def _load_jupyter_server_extension(serverapp) -> None:
    from jupyterlab_rise import app as rise
    render = rise.RiseHandler.render_template
    if getattr(render, "workshop_notes", False):
        return

    def render_template(self, name, **ns):
        if name != "index.html":
            return render(self, name, **ns)
        config = dict(ns.get("page_config") or {})
        rel = config.get("notebookPath")
        try:
            nb = shown(self.settings.get("server_root_dir"), rel)
        except Exception as e:   # never keep a deck from opening over what it says
            self.log.warning("workshop: cannot read %s: %s", rel, e)
            nb = None
        try:
            plan = page_plan_for(nb)
        except Exception as e:
            self.log.warning("workshop: no pacing plan for %s: %s", rel, e)
            plan = None
        try:   # (a notebook unread, or one this cannot make out: MathJax stays)
            tex = nb is None or uses_tex(nb)
        except Exception as e:
            self.log.warning("workshop: MathJax kept for %s: %s", rel, e)
            tex = True
        config["disabledExtensions"] = [*config.get("disabledExtensions", []),
                                        *NOT_IN_SLIDESHOW_PLUGINS, *([] if tex else [MATHJAX])]
        config["deferredExtensions"] = [*config.get("deferredExtensions", []), *SETTINGS_LATER]
        config["federated_extensions"] = [*config.get("federated_extensions", []),
                                          federated_entry(config)]
        ns["page_config"] = config
        page = render(self, name, **ns).replace("</head>", UNTIL_SHOWN + "\n</head>", 1)
        return page.replace("</body>", script(plan, bool(os.environ.get(LOG_ENV)), byline())
                            + "\n</body>", 1)

    render_template.workshop_notes = True
    rise.RiseHandler.render_template = render_template
    _stop_with_present(serverapp)
    from jupyter_server.utils import url_path_join
    base = serverapp.web_app.settings["base_url"]
    serverapp.web_app.add_handlers(".*$", [
        (url_path_join(base, "workshop/rehearsal"), _rehearsal_handler()),
        (url_path_join(base, PLUGIN_URL), _plugin_handler())])


LOG_ENV = "WORKSHOP_REHEARSAL"
PRESENT_ENV = "WORKSHOP_PRESENT_PID"


def _stop_with_present(serverapp) -> None:
    """A server `present` started stops when `present` is gone, however it went (a kill -9
    runs none of its clean-up): each second it looks at its parent, and when that is no longer
    present's process it stops as on SIGTERM, kernels and all."""
    import signal

    from tornado.ioloop import PeriodicCallback
    pid = os.environ.get(PRESENT_ENV)
    if not pid:
        return

    def look():
        if os.getppid() != int(pid):
            serverapp.log.warning("workshop: present (pid %s) is gone: stopping", pid)
            os.kill(os.getpid(), signal.SIGTERM)
    PeriodicCallback(look, 1000).start()


def _rehearsal_handler():
    from jupyter_server.base.handlers import APIHandler
    from tornado import web

    class Rehearsal(APIHandler):
        """POST {path, slide[, event: "restart"]}: appended with the server's time to the
        rehearsal log (a slide shown, or the kernel restarted from the slideshow there)."""

        @web.authenticated
        def post(self):
            log = os.environ.get(LOG_ENV)
            if not log:
                raise web.HTTPError(404, "not rehearsing (present --rehearse)")
            body = json.loads(self.request.body or b"{}")
            slide, event = body.get("slide"), body.get("event")
            if not isinstance(slide, int):
                raise web.HTTPError(400, "slide: an integer")
            if event not in (None, "restart"):
                raise web.HTTPError(400, "event: none, or restart")
            line = {"t": time.time(), "slide": slide, "path": str(body.get("path", ""))}
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({**line, "event": event} if event else line) + "\n")
            self.set_status(204)
            self.finish()

    return Rehearsal


def _plugin_handler():
    from tornado import web

    class Plugin(web.RequestHandler):
        """GET: page_scripts/rise_plugin.js, the restart's JupyterLab plugin. Not behind the
        token, as JupyterLab's own extensions are not: it is the kit's code, nothing of the
        presenter's."""

        def get(self):
            self.set_header("Content-Type", "text/javascript; charset=utf-8")
            self.set_header("Cache-Control", "no-store")
            self.finish(page_script("rise_plugin.js").replace("__NAME__", PLUGIN))

    return Plugin
