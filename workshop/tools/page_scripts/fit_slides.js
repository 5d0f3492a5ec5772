// The slides PDF (builder/printer.py): a slide's content smaller than its page grown to fill
// it (fill.js, __FILL__ below, as the projector grows it: rise_fill.js), and one larger scaled
// down to fit, so a long output is shrunk, never cut. What was shrunk is returned for the
// build report only: nothing on the page says so.
() => {
  const fill = __FILL__;
  const notes = [];
  document.querySelectorAll('.slide').forEach((s, i) => {
    const inner = s.querySelector('.inner');
    if (fill(inner, 1216, 644, __LIMIT__) > 1) return;   // grown: it fits
    const h = inner.scrollHeight, w = inner.scrollWidth;
    const k = Math.min(1, 644 / h, 1216 / w);   // the live slide's box: 672 px less its padding
    if (k < 1) {
      // zoom, not transform: Chromium lays a zoomed box out the same way on screen and in
      // print (a transformed one came out taller in the PDF and was clipped)
      inner.style.zoom = k;
      inner.style.width = `${1216 / k}px`;
      notes.push([i + 1, k]);
    }
  });
  return notes;
}
