// Reveal lays the slide out again on the window's resize event; the headless window's resize
// (Playwright's viewport) may come before the new size is laid out, so ask again until it fits.
([w, h]) => {
  const ok = Math.abs(document.querySelector('.reveal .slides').getBoundingClientRect().width
                      - 1280 * Math.min(w / 1280, h / 720)) < 2;
  if (!ok) window.dispatchEvent(new Event('resize'));
  return ok;
}
