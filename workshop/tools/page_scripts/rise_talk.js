// Put into jupyterlab-rise's page by present/extension.py: what the room sees of the talk's
// length, and who is giving it.
//   - The slide counter and the progress bar count the talk path only (PLAN.talk slides, the
//     appendix after them, present/rehearse.plan): "28 / 29" at Key points, not "28 / 57",
//     and a full bar at the end of the talk; an appendix slide reads "A3 / 28" (its place in
//     the appendix, the divider first). Reveal writes both at each slide or fragment change
//     (and at each sync): they are written again right after (a mutation observer, before the
//     frame is drawn).
//   - Reveal's progress bar jumped to the slide under a click (the bottom 12 px of the window:
//     a click meant for the slide went from 1/57 to 30/57): it takes no clicks now.
//   - The title slide shows the presenter, the event and the date under its heading, from
//     `present --presenter/--event/--date` or presenting.toml (BYLINE: the parts given, none
//     by default: then nothing is added).
/* workshop: the talk's counter, progress bar and byline */
(function () {
  // PLAN and BYLINE: the page's (see rise_page.js)
  var TALK = PLAN && typeof PLAN.talk === 'number' ? PLAN.talk : null;
  var style = document.createElement('style');
  style.textContent = '.reveal .progress { pointer-events: none; }' +
    ' .reveal .workshop-byline { font-size: 0.75em; color: #444; margin: 0.2em 0 0.8em; }';
  (document.head || document.documentElement).appendChild(style);
  function leaves() {
    return Array.prototype.slice.call(
      document.querySelectorAll('.reveal .slides section:not(.stack)'));
  }
  // [slide's index from 0, slides, fragments shown / fragments] of the present slide
  function where() {
    var all = leaves(), sec = document.querySelector('.reveal .slides section.present:not(.stack)');
    var frags = sec ? sec.querySelectorAll('.fragment').length : 0;
    return [all.indexOf(sec), all.length,
            frags ? sec.querySelectorAll('.fragment.visible').length / frags : 0];
  }
  function count() {
    var el = document.querySelector('.reveal .slide-number'), at = where(), i = at[0], n = at[1];
    if (!el || i < 0 || TALK === null || TALK >= n) return;   // no appendix: Reveal's count
    var a = el.querySelector('.slide-number-a'), b = el.querySelector('.slide-number-b');
    var want = i < TALK ? [String(i + 1), String(TALK)] : ['A' + (i - TALK + 1), String(n - TALK)];
    if (a && a.textContent !== want[0]) a.textContent = want[0];
    if (b && b.textContent !== want[1]) b.textContent = want[1];
  }
  function progress() {
    var bar = document.querySelector('.reveal .progress span'), at = where(), i = at[0];
    if (!bar || i < 0 || TALK === null || TALK >= at[1]) return;
    // (Reveal's own measure, over the talk: a slide's fragments fill 0.9 of its share)
    var p = i >= TALK ? 1 : TALK < 2 ? 0 : Math.min(1, (i + 0.9 * at[2]) / (TALK - 1));
    var now = /scaleX\(([\d.e-]+)\)/.exec(bar.style.transform);
    if (!now || Math.abs(+now[1] - p) > 1e-4) bar.style.transform = 'scaleX(' + p + ')';
  }
  function byline() {
    if (!BYLINE || !BYLINE.length) return;
    var first = leaves()[0], h = first && first.querySelector('h1');
    if (!h || (h.nextElementSibling && h.nextElementSibling.classList.contains('workshop-byline')))
      return;
    var p = document.createElement('p');
    p.className = 'workshop-byline';
    p.textContent = BYLINE.join(' · ');
    h.insertAdjacentElement('afterend', p);
  }
  var watched = [], queued = false;
  function update() {
    count(); progress();
    // the counter and the bar, once Reveal has made them: rewritten whenever Reveal writes them
    ['.reveal .slide-number', '.reveal .progress'].forEach(function (q) {
      var el = document.querySelector(q);
      if (!el || watched.indexOf(el) >= 0) return;
      watched.push(el);
      new MutationObserver(function () { count(); progress(); }).observe(el, {
        childList: true, subtree: true, characterData: true, attributes: true});
    });
  }
  // the slides and the title (RISE builds and moves them after the page loads; a cell that is
  // rendered again loses what was added into it)
  new MutationObserver(function () {
    if (queued) return;
    queued = true;
    requestAnimationFrame(function () { queued = false; update(); byline(); });
  }).observe(document.documentElement, {childList: true, subtree: true});
  ['slidechanged', 'fragmentshown', 'fragmenthidden', 'ready'].forEach(function (ev) {
    document.addEventListener(ev, update);
  });
})();
