// The same, backwards from the last slide to the first (the middle size's walk starts where the
// first size's ended, instead of clicking back through the deck first): up inside a stack, else
// left, each click until the number changes (a click first hides the slide's last fragment)
async (a) => {
  const measure = __MEASURE__, fragments = __FRAGMENTS__;
  const num = () => document.querySelector('.reveal .slide-number').innerText.replace(/ /g, '');
  const back = () => (document.querySelector('.reveal .controls .navigate-up.enabled') ||
                      document.querySelector('.reveal .controls .navigate-left.enabled')).click();
  const out = [];
  for (let i = a.n; i >= 1; i--) {
    fragments();
    await null;   // (the counter is written again after Reveal's: rise_talk.js)
    const shown = num();
    if (shown !== a.limits.labels[i - 1]) return {expected: a.limits.labels[i - 1], shown, out};
    out.push([i, measure(a.limits).problems]);
    for (let k = 0; i > 1 && k < 100 && num() === shown; k++) back();
  }
  return {out};
}
