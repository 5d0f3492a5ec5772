// The same walk as look_at_every_slide's, slide after slide inside the page (one call for a
// whole deck at one size instead of four round trips a slide): [[slide, problems], ...], or
// the slide number RISE showed where another was expected
async (a) => {
  const measure = __MEASURE__, fragments = __FRAGMENTS__, next = __NEXT__;
  const out = [];
  for (let i = a.first; i <= a.n; i++) {
    fragments();
    await null;   // (the counter is written again after Reveal's: rise_talk.js)
    const shown = document.querySelector('.reveal .slide-number').innerText.replace(/ /g, '');
    if (shown !== a.limits.labels[i - 1]) return {expected: a.limits.labels[i - 1], shown, out};
    out.push([i, measure(a.limits).problems]);
    if (i < a.n) next();
  }
  return {out};
}
