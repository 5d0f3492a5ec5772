// A slide's content that is smaller than the slide, scaled up to fill it (as Quarto's
// auto-stretch does), live (rise_fill.js) and in the slides PDF (fit_slides.js): a slide whose
// code and output took the top third left the room's back rows reading 20 px type above an
// empty 400 px. The title keeps its size (one place and one size on every slide); everything
// under it is zoomed by one factor, the largest at most `limit` at which the content still
// ends within `H` px of the box's top and no line of code or output is wider than `W` px
// (text reflows; code and outputs never wrap). Content that already fills the box is left as
// it is. Sizes are the slide's own px (Reveal scales the whole slide after). Returns the
// factor (1: left as it was).
(box, W, H, limit) => {
  const heading = (el) => el.matches('h1, h2, h3');
  const parts = [];
  for (const cell of box.children) {
    if (cell.matches('aside, style, script, .foot, .slide-credit')) continue;
    if (!cell.getClientRects().length) continue;          // a hidden cell (display: none)
    const md = cell.matches('.md') ? cell : cell.querySelector('.jp-RenderedMarkdown');
    if (md && [...md.children].some(heading)) parts.push(...[...md.children].filter(
      (e) => !heading(e) && !e.matches('style, script')));
    else parts.push(cell);
  }
  const zoom = (k) => parts.forEach((p) => { p.style.zoom = k === 1 ? '' : String(k); });
  zoom(1);
  const shown = box.getBoundingClientRect();
  const unit = shown.width / box.offsetWidth || 1;     // screen px per slide px
  const top = shown.top + parseFloat(getComputedStyle(box).paddingTop) * unit;
  const left = shown.left + parseFloat(getComputedStyle(box).paddingLeft) * unit;
  // where the content ends: each part's box and the margin under it (a list's 12 px, grown)
  const bottom = () => Math.max(0, ...parts.map((p) => p.getBoundingClientRect().bottom +
    parseFloat(getComputedStyle(p).marginBottom) * (+p.style.zoom || 1) * unit)) - top;
  if (!parts.length || bottom() / unit > H) return 1;
  // the widest line: each code listing, output and table at its natural width, unwrapped (a
  // picture is shown at most as wide as the slide: it grows with the rest up to that width)
  let wide = 0;
  for (const el of box.querySelectorAll('pre, .cm-line, table')) {
    if (!parts.some((p) => p.contains(el)) || !el.getClientRects().length) continue;
    const keep = [el.style.whiteSpace, el.style.width];
    if (el.matches('pre, .cm-line')) { el.style.whiteSpace = 'pre'; el.style.width = 'max-content'; }
    const b = el.getBoundingClientRect();
    wide = Math.max(wide, (b.right - left) / unit);
    [el.style.whiteSpace, el.style.width] = keep;
  }
  // (and a box that scrolls, RISE's slide, does not scroll: what lies under the last part)
  // and no line wider than its block once grown (the widths measured above are the plan; a
  // zoomed line can come out a few px wider than its share, so each block is looked at), nor
  // a file map's row wider than its column (a row is shortened to fit it at its own size)
  const blocks = [...box.querySelectorAll(
    'pre, .cm-scroller, table, .workshop-filemap div[title]')].filter(
    (el) => parts.some((p) => p.contains(el)) && el.getClientRects().length);
  const over = () => blocks.some((el) => el.scrollWidth > el.clientWidth +
    (el.matches('div[title]') ? 0 : 1) ||                 // (a row's cut letter shows: 0 px)
    el.getBoundingClientRect().right > left + W * unit + 1);
  const fits = (k) => { zoom(k); return bottom() / unit <= H && !over() &&
    !(getComputedStyle(box).overflowY !== 'visible' && box.scrollHeight > box.clientHeight + 1); };
  let lo = 1, hi = Math.min(limit, wide > 0 ? W / wide : limit);
  if (hi <= 1.01) { zoom(1); return 1; }
  if (fits(hi)) return hi;
  for (let i = 0; i < 7; i++) {           // to within 1% of the largest factor that fits
    const mid = (lo + hi) / 2;
    if (fits(mid)) lo = mid; else hi = mid;
  }
  zoom(lo);
  return lo;
}
