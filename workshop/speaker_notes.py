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
"""
from __future__ import annotations

RULE = ".speaker-controls-notes .lm-mod-hidden { display: none !important; }"
SCRIPT = """<script>/* workshop: the notes window shows each slide's rendered notes, once */
(function () {
  var queued = false;
  function mark() {
    queued = false;
    document.querySelectorAll('.reveal aside.notes').forEach(function (a) {
      if (a.querySelector(':scope > style.workshop-notes')) return;
      var s = document.createElement('style');
      s.className = 'workshop-notes';
      s.textContent = '%s';
      a.appendChild(s);
    });
  }
  new MutationObserver(function () {
    if (!queued) { queued = true; requestAnimationFrame(mark); }
  }).observe(document.documentElement, {childList: true, subtree: true});
  // The notes window's slide previews are RISE pages too; one that loads at the first slide
  // asks this window, through the notes window, to go there (Reveal's setState): the
  // audience was sent back to slide 1 when T was pressed. The slides window leads; the notes
  // window follows it and never moves it.
  if (!/receiver/i.test(window.location.search)) {
    window.addEventListener('message', function (e) {
      if (e.source === window || typeof e.data !== 'string') return;
      var d;
      try { d = JSON.parse(e.data); } catch (x) { return; }
      if (d && d.method === 'setState') e.stopImmediatePropagation();
    });
  }
})();
</script>""" % RULE


def _jupyter_server_extension_points():
    return [{"module": "workshop.speaker_notes"}]


def _load_jupyter_server_extension(serverapp) -> None:
    from jupyterlab_rise import app as rise
    render = rise.RiseHandler.render_template
    if getattr(render, "workshop_notes", False):
        return

    def render_template(self, name, **ns):
        page = render(self, name, **ns)
        return page.replace("</body>", SCRIPT + "\n</body>", 1) if name == "index.html" else page

    render_template.workshop_notes = True
    rise.RiseHandler.render_template = render_template
