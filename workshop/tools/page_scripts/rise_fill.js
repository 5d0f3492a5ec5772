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
    fill(sec, 1216, 644, __LIMIT__);
  }
  // a picture that loads after its output was added changes the slide's size, not its nodes
  document.addEventListener('load', function (e) {
    if (e.target && e.target.tagName === 'IMG') { last = null; grow(); }
  }, true);
  new MutationObserver(grow).observe(document.documentElement, {childList: true,
    subtree: true, attributes: true, attributeFilter: ['class']});
})();
