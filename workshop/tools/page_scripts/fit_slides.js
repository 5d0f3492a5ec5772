// The slides PDF (builder/printer.py): scale a slide's content down to fit its page, so a
// long output is shrunk, never cut. What was shrunk is returned for the build report only:
// nothing on the page says so.
() => {
  const notes = [];
  document.querySelectorAll('.slide').forEach((s, i) => {
    const inner = s.querySelector('.inner');
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
