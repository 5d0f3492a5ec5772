// every fragment of the present slide shown, as the presenter would before moving on, one step
// of next_fragment.js at a time
() => { const step = __NEXT_FRAGMENT__;
  for (let i = 0; i < 50 && document.querySelector(
    '.reveal section.present:not(.stack) .fragment:not(.visible)'); i++) step(); }
