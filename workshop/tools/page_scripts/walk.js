// The same walk as look_at_every_slide's, slide after slide inside the page (one call for a
// whole deck at one size instead of four round trips a slide): [[slide, problems], ...], or
// the slide number RISE showed where another was expected
(a) => {
  const measure = __MEASURE__, fragments = __FRAGMENTS__, next = __NEXT__;
  const out = [];
  for (let i = a.first; i <= a.n; i++) {
    fragments();
    const shown = document.querySelector('.reveal .slide-number').innerText.replace(/ /g, '');
    if (shown !== `${i}/${a.n}`) return {expected: i, shown, out};
    out.push([i, measure(a.limits).problems]);
    if (i < a.n) next();
  }
  return {out};
}
