// Every PDF (builder/printer.py): anything that would run off its page, after
// fit_slides.js: a slide's element outside its slide, or an A4 page's content wider than
// the printable width.
(kind) => {
  const bad = [];
  if (kind === 'slides') {
    // an element inside a box that clips it (a file map's row ends in …) is cut on purpose:
    // the clipping box is measured itself
    const clipped = (el, s) => { for (let a = el.parentElement; a && a !== s; a = a.parentElement) {
      const st = getComputedStyle(a);
      if (st.overflowX !== 'visible' || st.overflowY !== 'visible') return true; } return false; };
    document.querySelectorAll('.slide').forEach((s, i) => {
      const box = s.getBoundingClientRect();
      s.querySelectorAll('.inner *').forEach(el => {
        if (clipped(el, s)) return;
        const r = el.getBoundingClientRect();
        if (r.width && (r.right > box.right + 1 || r.bottom > box.bottom + 1 ||
                        r.left < box.left - 1 || r.top < box.top - 1))
          bad.push(`slide ${i + 1}: ${el.tagName} “${el.textContent.trim().slice(0, 40)}”`);
      });
    });
  } else if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    document.querySelectorAll('body *').forEach(el => {
      const wide = el.getBoundingClientRect().right > window.innerWidth + 1
                   || el.scrollWidth > el.clientWidth + 1;
      if (wide && el.clientWidth && bad.length < 5)
        bad.push(`${el.tagName} “${el.textContent.trim().slice(0, 40)}”`);
    });
    if (!bad.length) bad.push(`content ${document.documentElement.scrollWidth}px wide`);
  }
  return bad;
}
