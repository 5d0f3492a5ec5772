// Whether a click into `cell` now stays (true) or RISE will take it back. jupyterlab-rise 0.42
// makes a cell active 450 ms after every slide change or fragment step (auto_select, its
// autoSelectHook): the first code cell of the newest fragment shown or, with none shown, of the
// slide's cells above its first fragment (skip and notes cells do not count; RISE never picks
// the notebook's cell 0). A click into another cell before then is undone, and Ctrl-Enter runs
// RISE's cell instead. So true when `cell` is RISE's choice or RISE has none, else once RISE's
// cell has been seen active since the last change and 500 ms have passed since it. The first
// call starts listening for the changes (not having seen the last, it counts from now).
(cell) => {
  if (window.__riseChangedAt === undefined) {
    for (const t of ['ready', 'slidechanged', 'fragmentshown', 'fragmenthidden'])
      document.querySelector('.reveal').addEventListener(
        t, () => { window.__riseChangedAt = performance.now(); });
    window.__riseChangedAt = performance.now();
  }
  const slide = cell.closest('section');
  const shown = slide.querySelectorAll('div.fragment.visible');
  const pool = shown.length ? [...shown[shown.length - 1].querySelectorAll('.jp-CodeCell')]
    : [...slide.querySelectorAll('.jp-CodeCell')].filter((c) => !c.closest('div.fragment'));
  const chosen = pool.find((c) => !c.classList.contains('reveal-skip') && !c.closest('aside.notes'));
  if (!chosen || chosen === cell) return true;
  if (chosen.classList.contains('jp-mod-active')) window.__riseSeenAt = performance.now();
  return window.__riseSeenAt > window.__riseChangedAt &&
    performance.now() - window.__riseChangedAt >= 500;
}
