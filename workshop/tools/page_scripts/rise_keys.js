// Put into jupyterlab-rise's page by present/extension.py: whichever key the presenter (or a
// clicker) presses, the slideshow steps one slide at a time, a fragment being a step.
//
// Why a script: ↓ and ↑ never moved in RISE. jupyterlab-rise gives Reveal a keyboard table
// with ↓ ↑ (and B, N, P, Home, End…) set to nothing, so that JupyterLab keeps them; and while
// the notebook has the focus (a click on the slide, Esc after a cell) JupyterLab's command
// mode takes ↓ ↑ itself (the active cell moves) and B inserts a cell into the deck. → and ←,
// in Reveal's default navigation, jump a whole section (a stack of sub-slides) at a time. A
// deck's metadata cannot change any of this (RISE passes 11 settings on, not the keyboard or
// the navigation mode), so this listener, on the window in the capture phase (before
// JupyterLab's and Reveal's own), gives every key one meaning, for every deck:
//   → ↓ Space PageDown: the next step (a fragment, the next slide of the stack, the next
//   section), Reveal's `next`;  ← ↑ Shift-Space PageUp: the step back, `prev`;
//   Home, End: the first slide, the deck's last (RISE's own Home and End worked only while
//   the notebook had the focus);
//   B and . (a clicker's "blank screen" button): the screen black and back (`togglePause`);
//   0 0 (JupyterLab's own restart keys): restart the kernel and run the setup cell again, after
//   a confirm (page_scripts/rise_plugin.js does it);
//   T: the notes window, whatever has the focus (RISE's own T needed the notebook focused);
//   Ctrl-Enter with the focus outside the notebook (on the slide, after a slide change): run
//   the active cell, RISE's choice (JupyterLab's own Ctrl-Enter needs the notebook focused, a
//   click into a cell, and a chart's cell, its code hidden, has nothing to click into).
// Reveal's navigation mode is set to "linear" too, so the on-screen arrows and a swipe step
// the same way. Keys typed into a cell (its editor has the focus), keys with Ctrl, Alt or
// Cmd, and keys while a JupyterLab dialog is open are left alone; in the overview (W) the
// arrows move in the grid; while the screen is black only B and . bring it back.
// The notes window (T) forwards its keys here (page_scripts/rise_notes_window.js), so a
// clicker works whichever of the two windows has the focus.
/* workshop: keys */
(function () {
  if (/receiver/i.test(window.location.search)) return;   // the notes window's previews
  var FORWARD = {ArrowRight: 1, ArrowDown: 1, PageDown: 1};
  var BACK = {ArrowLeft: 1, ArrowUp: 1, PageUp: 1};
  var GRID = {ArrowLeft: 'left', ArrowRight: 'right', ArrowUp: 'up', ArrowDown: 'down'};
  var BLANK = {b: 1, B: 1, '.': 1};
  var RESTART_CHORD_MS = 1000, zeroAt = 0;
  var JUMP = {Home: [0, 0], End: [Number.MAX_VALUE, Number.MAX_VALUE]};
  function reveal(method, args) {   // Reveal's postMessage API (RISE keeps Reveal private)
    window.postMessage(JSON.stringify({method: method, args: args || []}), '*');
  }
  function typing(t) {
    return !!t && (t.isContentEditable || /^(input|textarea|select)$/i.test(t.tagName || ''));
  }
  function meaning(e, deck) {
    var k = e.key;
    if (BLANK[k] && !e.shiftKey) return 'togglePause';
    if (deck.classList.contains('paused'))   // nothing moves behind the black screen
      return (FORWARD[k] || BACK[k] || k === ' ') ? 'nothing' : null;
    if (deck.classList.contains('overview')) return e.shiftKey ? null : GRID[k] || null;
    if (k === ' ') return e.shiftKey ? 'prev' : 'next';
    if (e.shiftKey) return null;   // (Shift-← →: Reveal's first and last slide)
    return FORWARD[k] ? 'next' : BACK[k] ? 'prev' : JUMP[k] ? 'slide' : null;
  }
  function onKey(e) {
    if (e.key === 'Enter' && e.ctrlKey && !e.shiftKey && !e.altKey && !e.metaKey &&
        !e.defaultPrevented && !(e.target.closest && e.target.closest('.jp-Notebook')) &&
        !document.querySelector('.jp-Dialog') && document.querySelector('.reveal')) {
      e.preventDefault(); e.stopImmediatePropagation();
      document.dispatchEvent(new CustomEvent('workshop-run'));   // (the plugin runs it)
      return;
    }
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    if (document.querySelector('.jp-Dialog')) return;   // its buttons have the keys
    var deck = document.querySelector('.reveal');
    if (!deck) return;
    if ((e.key === 't' || e.key === 'T') && !e.shiftKey) {   // (the plugin runs RISE's T)
      e.preventDefault(); e.stopImmediatePropagation();
      document.dispatchEvent(new CustomEvent('workshop-notes'));
      return;
    }
    if (e.key === '0' && !e.shiftKey) {
      var now = Date.now();
      if (now - zeroAt > RESTART_CHORD_MS) { zeroAt = now; return; }
      zeroAt = 0;
      e.preventDefault(); e.stopImmediatePropagation();
      document.dispatchEvent(new CustomEvent('workshop-restart'));
      return;
    }
    var m = meaning(e, deck);
    if (!m) return;
    e.preventDefault(); e.stopImmediatePropagation();
    if (m !== 'nothing') reveal(m, m === 'slide' ? JUMP[e.key] : []);
  }
  window.addEventListener('keydown', onKey, true);
  // the notes window, once it is open: its keys step these slides (it only follows them)
  document.addEventListener('workshop-notes-window', function (e) {
    e.detail.addEventListener('keydown', onKey, true);
  });
  // While a JupyterLab dialog is open (the restart's confirm), Reveal, whose listener comes
  // after this one on the document, gets no key: an arrow or Space that moves between the
  // dialog's buttons no longer moves the slides behind it.
  document.addEventListener('keydown', function (e) {
    if (document.querySelector('.jp-Dialog')) e.stopImmediatePropagation();
  });
  document.addEventListener('ready', function () {
    window.postMessage(JSON.stringify({method: 'configure',
                                       args: [{navigationMode: 'linear'}]}), '*');
  });
  // Reveal enters a section's stack at the sub-slide it last left there (data-previous-indexv):
  // after a jump back (Home, the overview, a cut) the next step from the slide before a section
  // landed in that section's middle (deck 01: slide 9 to 16). Every stack starts at its top
  // (Reveal reads data-start-indexv first); a step back still lands on its last sub-slide
  function fromTheTop() {
    document.querySelectorAll('.reveal .slides > section.stack:not([data-start-indexv])')
      .forEach(function (s) { s.setAttribute('data-start-indexv', '0'); });
  }
  document.addEventListener('ready', fromTheTop);
  document.addEventListener('slidechanged', fromTheTop);
})();
