// Put into jupyterlab-rise's page by present/extension.py: the present slide's content, when
// smaller than the slide, grown to fill it (fill.js, __FILL__ below; the slides PDF grows it
// the same way: fit_slides.js). Again whenever the slide or its content changes (another
// slide, a cell's output, a fragment), at once, before the page is drawn or measured: the
// observer's callback runs before the next task, where a frame's callback would come after a
// test's measure. A slide whose content is as it was is not measured again.
(function () {
  var fill = __FILL__, last = null;
  function grow() {
    var sec = document.querySelector('.reveal .slides section.present:not(.stack)');
    if (!sec || !document.body || !document.body.classList.contains('rise-enabled')) return;
    var seen = sec.querySelectorAll('*').length + ':' + sec.textContent.length + ':' +
      sec.querySelectorAll('.fragment.visible').length;
    if (last && last[0] === sec && last[1] === seen) return;
    last = [sec, seen];
    // 560 px, not the box's 644: a slide grown at one window size comes out up to a tenth
    // taller at another (its editors lay their lines out again: 04/37 by 43 px at 1920×1080,
    // 02/5 by 19 px with 40 to spare), so it is grown to 78% of the slide, no wheel
    fill(sec, 1216, 560, __LIMIT__);
    // and again when a cell of it grows on its own past the slide (the editor laying its
    // lines out after the slide was grown: deck 04's second slide then needed the wheel,
    // 10 px), after the observer's own turn
    if (sized) {   // (its first report, of the sizes as observed now, is not a change)
      sized.disconnect();
      fresh = true;
      Array.prototype.forEach.call(sec.children, function (c) { sized.observe(c); });
    }
  }
  var fresh = false, sized = window.ResizeObserver ? new ResizeObserver(function () {
    if (fresh) { fresh = false; return; }
    setTimeout(function () {   // only when it now runs past the slide: the editor answers a
      var sec = last && last[0];   // zoom by laying out again, and would be grown forever
      if (sec && sec.scrollHeight > sec.clientHeight + 1) again();
    }, 0);
  }) : null;
  // a picture that loads after its output was added, or the theme's face once it has loaded
  // (the words take other room than in the fallback's), changes the slide's size, not its
  // nodes: a deck 04 slide grown in the fallback face needed the wheel
  function again() { last = null; grow(); }
  document.addEventListener('load', function (e) {
    if (e.target && e.target.tagName === 'IMG') again();
  }, true);
  if (document.fonts) {
    document.fonts.addEventListener('loadingdone', again);
    document.fonts.ready.then(again);
  }
  new MutationObserver(grow).observe(document.documentElement, {childList: true,
    subtree: true, attributes: true, attributeFilter: ['class']});
})();
