"""A server extension `present` loads: RISE's notes window (T) shows each slide's notes once,
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
`workshop.tools.rehearse.page_plan`) as its `data-timing`, and `totalTime` (the talk path) through
Reveal's postMessage API (`configure`); the notes window then shows PACING, the time left to the
end of the present slide against the plan, blue ahead, green on track, red behind. A plan line
at the top of each slide's notes gives the slide's planned time, where the talk should be at its
end, and its section's minutes.

Rehearsal (`present --rehearse`): the script posts each slide change to this extension's
`/workshop/rehearsal` handler, which appends it, with the server's time, to the log the
environment names (WORKSHOP_REHEARSAL); `present` writes the report when it stops.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

RULE = ".speaker-controls-notes .lm-mod-hidden { display: none !important; }"
SCRIPT = """<script>/* workshop: the notes window shows each slide's rendered notes, once; pacing */
(function () {
  var queued = false;
  // PLAN: {total: s, timing: [s per slide], lines: [plan line per slide]} or null
  var PLAN = %s, REHEARSE = %s, configured = false, lastSent = null;
  var receiver = /receiver/i.test(window.location.search);
  function leaves() {
    return Array.prototype.slice.call(
      document.querySelectorAll('.reveal .slides section:not(.stack)'));
  }
  function mark() {
    queued = false;
    document.querySelectorAll('.reveal aside.notes').forEach(function (a) {
      if (a.querySelector(':scope > style.workshop-notes')) return;
      var s = document.createElement('style');
      s.className = 'workshop-notes';
      s.textContent = '%s';
      a.appendChild(s);
    });
    pace();
  }
  // reveal's own pacing: each slide's planned seconds as its data-timing, totalTime through
  // Reveal's postMessage API (configure is not on its blacklist); a plan line atop the notes
  function pace() {
    if (!PLAN) return;
    var slides = leaves();
    if (!slides.length) return;
    slides.forEach(function (sec, i) {
      var t = PLAN.timing[i];
      if (t !== undefined && sec.getAttribute('data-timing') !== String(t))
        sec.setAttribute('data-timing', String(t));
      // the line sits in the slide's first notes aside, and says this slide's plan (RISE
      // may build or move asides after the first pass: checked on every change)
      var a = sec.querySelector('aside.notes'), line = PLAN.lines[i];
      sec.querySelectorAll('.workshop-plan').forEach(function (p) {
        if (p.parentNode !== a || p.textContent !== line) p.remove();
      });
      if (a && line && !a.querySelector(':scope > .workshop-plan')) {
        var p = document.createElement('p');
        p.className = 'workshop-plan';
        p.style.cssText = 'font-size:0.8em;color:#555;margin:0 0 0.5em';
        p.textContent = line;
        a.insertBefore(p, a.firstChild);
      }
    });
    if (!configured) configure();
  }
  function configure() {
    if (!PLAN || receiver) return;
    configured = true;
    window.postMessage(JSON.stringify({method: 'configure',
                                       args: [{totalTime: PLAN.total}]}), '*');
  }
  document.addEventListener('ready', configure);   // again once Reveal listens
  new MutationObserver(function () {
    if (!queued) { queued = true; requestAnimationFrame(mark); }
  }).observe(document.documentElement, {childList: true, subtree: true});
  // present --rehearse: each slide change goes to the server, which keeps the time
  function sent() {
    if (!REHEARSE || receiver) return;
    var i = leaves().indexOf(
      document.querySelector('.reveal .slides section.present:not(.stack)'));
    if (i < 0 || i === lastSent) return;
    lastSent = i;
    var cfg = {};
    try { cfg = JSON.parse(document.getElementById('jupyter-config-data').textContent); }
    catch (x) {}
    fetch((cfg.baseUrl || '/') + 'workshop/rehearsal', {method: 'POST',
      headers: {'Content-Type': 'application/json',
                'Authorization': 'token ' + (cfg.token || '')},
      body: JSON.stringify({path: cfg.notebookPath || '', slide: i + 1})});
  }
  if (REHEARSE && !receiver) {
    document.addEventListener('slidechanged', function () { setTimeout(sent, 0); });
    var first = setInterval(function () {   // the first slide: when Reveal has shown it
      if (document.querySelector('.reveal .slides section.present:not(.stack)')) {
        clearInterval(first); sent();
      }
    }, 250);
  }
  // The notes window's slide previews are RISE pages too; one that loads at the first slide
  // asks this window, through the notes window, to go there (Reveal's setState): the
  // audience was sent back to slide 1 when T was pressed. The slides window leads; the notes
  // window follows it and never moves it.
  if (!receiver) {
    window.addEventListener('message', function (e) {
      if (e.source === window || typeof e.data !== 'string') return;
      var d;
      try { d = JSON.parse(e.data); } catch (x) { return; }
      if (d && d.method === 'setState') e.stopImmediatePropagation();
    });
  }
})();
</script>"""


def script(plan: dict | None, rehearse: bool) -> str:
    data = json.dumps(plan, ensure_ascii=False).replace("</", "<\\/")
    return SCRIPT % (data, "true" if rehearse else "false", RULE)


def page_plan_for(root: str | None, rel: str | None) -> dict | None:
    """The pacing plan of the notebook RISE is showing; None when it is not a deck."""
    if not rel:
        return None
    from . import notebooks as nbs
    from . import paths, rehearse
    nb = nbs.read(Path(root or paths.ROOT).expanduser() / rel.lstrip("/"))
    if "rise" not in nb.metadata:
        return None
    return rehearse.page_plan(nb)



def _jupyter_server_extension_points():
    return [{"module": "workshop.tools.speaker_notes"}]


def _load_jupyter_server_extension(serverapp) -> None:
    from jupyterlab_rise import app as rise
    render = rise.RiseHandler.render_template
    if getattr(render, "workshop_notes", False):
        return

    def render_template(self, name, **ns):
        page = render(self, name, **ns)
        if name != "index.html":
            return page
        rel = (ns.get("page_config") or {}).get("notebookPath")
        try:
            plan = page_plan_for(self.settings.get("server_root_dir"), rel)
        except Exception as e:   # never keep a deck from opening over its plan
            self.log.warning("workshop: no pacing plan for %s: %s", rel, e)
            plan = None
        return page.replace("</body>", script(plan, bool(os.environ.get(LOG_ENV)))
                            + "\n</body>", 1)

    render_template.workshop_notes = True
    rise.RiseHandler.render_template = render_template
    _stop_with_present(serverapp)
    from jupyter_server.utils import url_path_join
    serverapp.web_app.add_handlers(".*$", [(url_path_join(
        serverapp.web_app.settings["base_url"], "workshop/rehearsal"), _rehearsal_handler())])


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
        """POST {path, slide}: appended with the server's time to the rehearsal log."""

        @web.authenticated
        def post(self):
            log = os.environ.get(LOG_ENV)
            if not log:
                raise web.HTTPError(404, "not rehearsing (present --rehearse)")
            body = json.loads(self.request.body or b"{}")
            slide = body.get("slide")
            if not isinstance(slide, int):
                raise web.HTTPError(400, "slide: an integer")
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"t": time.time(), "slide": slide,
                                    "path": str(body.get("path", ""))}) + "\n")
            self.set_status(204)
            self.finish()

    return Rehearsal
