// One slide as the audience sees it: the 1280×720 slide inside the window (letterboxed, never
// cropped), the present slide's content inside the slide or reachable by its scroll, no line cut
// at the right, and type sizes in the slide's own px (Reveal scales them with the slide).
(limits) => {
  // One slide as the audience sees it: the 1280×720 slide inside the window, the present
  // slide's content inside the slide or reachable by its scroll, and type sizes (in the
  // slide's own px, which Reveal scales with the slide).
  const W = innerWidth, H = innerHeight, out = [];
  const slides = document.querySelector('.reveal .slides');
  const sr = slides.getBoundingClientRect();
  const scale = sr.width / 1280;
  if (sr.left < -1 || sr.top < -1 || sr.right > W + 1 || sr.bottom > H + 1)
    out.push(`the slide (${Math.round(sr.left)},${Math.round(sr.top)} ${Math.round(sr.width)}×${Math.round(sr.height)}) is cropped by the ${W}×${H} window`);
  if (Math.abs(sr.height / 720 - scale) > 0.01) out.push(`the slide is not 16:9 (${sr.width}×${sr.height})`);
  const fill = Math.max(sr.width / W, sr.height / H);
  if (fill < 0.97) out.push(`the slide fills only ${Math.round(fill * 100)}% of the window`);
  const sec = document.querySelector('.reveal .slides section.present:not(.stack)');
  const r = sec.getBoundingClientRect();
  if (r.left < sr.left - 1 || r.right > sr.right + 1 || r.top < sr.top - 1 || r.bottom > sr.bottom + 1)
    out.push('the slide box runs outside the slide');
  const cs = getComputedStyle(sec);
  if (sec.scrollHeight > sec.clientHeight + 2 && !['auto', 'scroll'].includes(cs.overflowY))
    out.push(`content ${sec.scrollHeight - sec.clientHeight}px below the edge and no scroll`);
  // a talk-path slide shows its point without the wheel (the appendix may scroll)
  const num = [...document.querySelectorAll('.reveal .slides section:not(.stack)')].indexOf(sec) + 1;
  if ((limits.talk || []).includes(num) && sec.scrollHeight > sec.clientHeight + 2)
    out.push(`a talk-path slide needs the wheel: ${sec.scrollHeight - sec.clientHeight}px below the edge`);
  if (sec.scrollWidth > sec.clientWidth + 2)
    out.push(`content ${sec.scrollWidth - sec.clientWidth}px past the right edge`);
  const visible = (el) => { const b = el.getBoundingClientRect();
    return b.width > 0 && b.height > 0 && getComputedStyle(el).visibility !== 'hidden' &&
      !el.closest('.reveal-skip, aside.notes, .fragment:not(.visible)'); };
  // anything wider than the slide box: a cell, a picture, an output line
  for (const el of sec.querySelectorAll('.jp-Cell, img, svg, pre, table, .cm-scroller, .workshop-shown')) {
    if (!visible(el)) continue;
    const b = el.getBoundingClientRect();
    const what = el.className && el.className.baseVal === undefined ? (el.tagName.toLowerCase() + '.' + String(el.className).split(' ')[0]) : el.tagName.toLowerCase();
    if (b.right > r.right + 1 || b.left < r.left - 1) out.push(`${what} runs ${Math.round((b.right - r.right) / scale)}px past the slide's edge`);
    if (el.scrollWidth > el.clientWidth + 2 && getComputedStyle(el).overflowX !== 'visible')
      out.push(`${what} is cut at the right (${el.scrollWidth - el.clientWidth}px hidden in a sideways scroll): "${el.innerText.split('\n').find(l => l.length > 0).slice(0, 50)}"`);
  }
  // type: every element that holds text itself
  const small = {};
  const walker = document.createTreeWalker(sec, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement;
    if (!visible(el) || el.closest('.jp-InputPrompt, .jp-OutputPrompt')) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    let kind = null, min = 0;
    if (el.closest('.jp-CodeCell .jp-InputArea')) { kind = 'code'; min = limits.code; }
    else if (el.closest('.jp-OutputArea-output')) { kind = 'output'; min = limits.code; }
    else if (el.closest('.jp-RenderedMarkdown')) { kind = 'text'; min = limits.text; }
    else continue;
    if (px < min - 0.05) { const k = `${kind} ${px}px`; small[k] = small[k] || n.textContent.trim().slice(0, 40); }
  }
  for (const [k, t] of Object.entries(small)) out.push(`${k} type: "${t}"`);
  // a file map's rows: one face and one size throughout (the word class was twice the size)
  for (const map of sec.querySelectorAll('.workshop-filemap')) {
    // the map is the slide's picture: the call that built it is not shown once it has run
    const call = map.closest('.jp-CodeCell').querySelector('.jp-Cell-inputWrapper');
    if (call && call.getBoundingClientRect().height > 0)
      out.push(`a file map under its call: "${call.innerText.split('\n')[0].slice(0, 40)}"`);
    const px = parseFloat(getComputedStyle(map).fontSize), face = getComputedStyle(map).fontFamily;
    for (const el of map.querySelectorAll('div[title] *')) {   // (a row has its role as title)
      const cs = getComputedStyle(el);
      if (visible(el) && (Math.abs(parseFloat(cs.fontSize) - px) > 0.5 || cs.fontFamily !== face
                          || cs.fontStyle !== 'normal'))
        out.push(`file map row "${el.innerText.slice(0, 30)}" in ${cs.fontSize} ${cs.fontStyle} ${cs.fontFamily.slice(0, 20)}`);
    }
  }
  // code in a title: the title's own size and colour, no box behind it
  for (const c of sec.querySelectorAll(':is(h1, h2, h3) code')) {
    if (!visible(c)) continue;
    const h = c.closest('h1, h2, h3'), cs = getComputedStyle(c);
    const k = parseFloat(cs.fontSize) / parseFloat(getComputedStyle(h).fontSize);
    if (k > 1.01 || k < 0.85 || !/rgba\(0, 0, 0, 0\)|transparent/.test(cs.backgroundColor))
      out.push(`code in the title "${h.innerText.slice(0, 40)}" is styled apart (${Math.round(k * 100)}%, ${cs.backgroundColor})`);
  }
  // content that fills the slide (fill.js grows what is smaller): on a talk slide, its cells
  // reach limits.fill of the slide's height, but on a title (h1) or a divider (a heading and a
  // line at most, nothing else); limits.thin names the talk slides known to stay short (lines
  // too wide to grow further): one that fills after all must leave the list
  if ((limits.talk || []).includes(num) && limits.fill) {
    // (a fragment's cell is in its div; one just shown is still "hidden" for its fade's first
    // instant, so it is told by its class, not its style)
    const cells = [...sec.querySelectorAll('.jp-Cell')].filter((c) =>
      c.getBoundingClientRect().height > 0 && !c.closest('.reveal-skip, aside.notes, .fragment:not(.visible)'));
    const low = Math.max(0, ...cells.map((c) => c.getBoundingClientRect().bottom));
    const share = (low - sr.top) / scale / 720, pct = Math.round(share * 100);
    const head = sec.querySelector('h1, h2, h3');
    const title = head ? head.innerText.trim() : '';
    const rest = head ? [...head.parentElement.children].filter((e) => e !== head) : [];
    const divider = cells.length === 1 && head && rest.map((e) => e.innerText).join(' ').length < 100;
    const listed = (limits.thin || []).includes(title);
    if (!sec.querySelector('h1') && !divider && !listed && share < limits.fill)
      out.push(`its content ends at ${pct}% of the slide's height (under ${Math.round(limits.fill * 100)}%): "${title}"`);
    if (listed && share >= limits.fill + 0.05)   // (a margin: the sizes round apart)
      out.push(`"${title}" is listed as short, but its content reaches ${pct}% of the slide: take it off the list`);
  }
  return {problems: out, scale: Math.round(scale * 1000) / 1000, h: sec.scrollHeight, ch: sec.clientHeight};
}
