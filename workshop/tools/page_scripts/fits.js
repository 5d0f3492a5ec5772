// Reveal lays the slide out again on the window's resize event; the headless window's resize
// (Playwright's viewport) may come before the new size is laid out, so ask again until it fits:
// the new scale, and the slide inside the window (under load, once, the scale was new and the
// position still the old size's: the slide sat 70 px off the window's left edge).
([w, h]) => {
  const r = document.querySelector('.reveal .slides').getBoundingClientRect();
  const ok = Math.abs(r.width - 1280 * Math.min(w / 1280, h / 720)) < 2
    && r.left >= -1 && r.top >= -1 && r.right <= innerWidth + 1 && r.bottom <= innerHeight + 1;
  if (!ok) window.dispatchEvent(new Event('resize'));
  return ok;
}
