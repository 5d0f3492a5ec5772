// Put into jupyterlab-rise's page by present/extension.py: the notes window (T), Reveal's
// speaker view, once it is open. Reveal's notes plugin opens it with window.open (an
// about:blank page of this origin, into which it writes the speaker view); this script keeps
// the handle, so that:
//   - its keys step the slides (page_scripts/rise_keys.js listens for 'workshop-notes-window');
//   - it says, under PACING, what to cut when the talk runs late and what to bring in when it
//     runs early (the plan's cut and expand points, present/rehearse.page_plan).
// Where the content comes from: the slides window posts each slide's notes (its notes aside,
// with the plan line atop) to the speaker view, which shows them; the elapsed time lives in
// the speaker view's own timer (started when it opened; a click on TIME resets it), which it
// writes into `.speaker-controls-time .timer` each second: read from there, so the advice
// agrees with the clock the presenter sees.
/* workshop: the notes window's keys and its cut/expand advice */
(function () {
  if (/receiver/i.test(window.location.search)) return;
  // PLAN (the page's: see rise_page.js): its cut [{from, to, saves, text}], expand [{at, adds,
  // text}] and threshold (s) say what to cut or add once the talk is that far off the plan
  var NAME = 'reveal.js - Notes', open = window.open;
  window.open = function (url, name) {
    var w = open.apply(window, arguments);
    // (after the plugin has written the speaker view into it: writing replaces the page and
    // drops what was attached to it before)
    if (w && name === NAME) setTimeout(function () { attach(w); }, 0);
    return w;
  };
  function attach(w) {
    if (w.workshopAttached) return;
    w.workshopAttached = true;
    document.dispatchEvent(new CustomEvent('workshop-notes-window', {detail: w}));
    if (!PLAN || !PLAN.threshold || !(PLAN.cut || PLAN.expand)) return;
    var every = setInterval(function () {   // (twice a second: at most half a second behind
      if (w.closed) { clearInterval(every); return; }   // the timer, which ticks each second)
      advise(w);
    }, 500);
  }
  function seconds(text) {   // "01:02:03" (the timer): 3723
    var n = (text.match(/\d+/g) || []).map(Number);
    return n.length === 3 ? n[0] * 3600 + n[1] * 60 + n[2] : null;
  }
  function mmss(s) {
    s = Math.round(s);
    return Math.floor(s / 60) + ':' + ('0' + s % 60).slice(-2);
  }
  function present() {
    var leaves = Array.prototype.slice.call(
      document.querySelectorAll('.reveal .slides section:not(.stack)'));
    return leaves.indexOf(document.querySelector('.reveal .slides section.present:not(.stack)'));
  }
  // what to say at slide i, `elapsed` s into the talk: [class, text] or null. Behind: the
  // time is past the slide's planned end by more than the threshold; ahead: before its
  // planned start by more. (Reveal's PACING shows the same two ends, "time to finish the
  // present slide".) The appendix is off the plan: nothing to say there.
  function advice(i, elapsed) {
    var talk = typeof PLAN.talk === 'number' ? PLAN.talk : PLAN.timing.length;
    if (i < 0 || i >= talk || elapsed === null) return null;
    var start = 0;
    for (var k = 0; k < i; k++) start += PLAN.timing[k] || 0;
    var end = start + (PLAN.timing[i] || 0), t = PLAN.threshold;
    if (elapsed - end > t) {
      var cut = (PLAN.cut || []).filter(function (c) { return c.from >= i; })[0];
      return ['behind', 'Behind the plan by ' + mmss(elapsed - end) + '. ' +
              (cut ? 'Cut: ' + cut.text : 'No cut point left on the talk path.')];
    }
    if (start - elapsed > t && (PLAN.expand || []).length)
      return ['ahead', 'Ahead of the plan by ' + mmss(start - elapsed) + '. To add: ' +
              PLAN.expand.map(function (x) { return x.text; }).join('; ')];
    return null;
  }
  function advise(w) {
    var doc = w.document, timer = doc.querySelector('.speaker-controls-time .timer');
    var notes = doc.querySelector('#speaker-controls .speaker-controls-notes');
    if (!timer || !notes) return;
    var box = doc.getElementById('workshop-advice');
    if (!box) {
      box = doc.createElement('div');
      box.id = 'workshop-advice';
      var css = doc.createElement('style');
      css.textContent = '#workshop-advice { margin: 0.6em 0; padding: 0.4em 0.6em; ' +
        'font-size: 1.05em; border-left: 6px solid; } #workshop-advice.behind { ' +
        'border-color: red; color: #a00; } #workshop-advice.ahead { border-color: blue; ' +
        'color: #00a; } #workshop-advice:empty { display: none; }';
      doc.head.appendChild(css);
      notes.parentNode.insertBefore(box, notes);
    }
    var said = advice(present(), seconds(timer.textContent));
    var cls = said ? said[0] : '', text = said ? said[1] : '';
    if (box.className !== cls) box.className = cls;
    if (box.textContent !== text) box.textContent = text;
  }
})();
