// Put into jupyterlab-rise's page by present/extension.py (read its docstring): the notes
// window shows each slide's rendered notes once, follows the slides, and paces the talk.
// PLAN and REHEARSE are the page's (extension.py's script() declares them around the page's
// scripts); the notes rule (extension.RULE) is filled in below.
/* workshop: the notes window shows each slide's rendered notes, once; pacing */
(function () {
  var queued = false;
  // PLAN: {total: s, timing: [s per slide], lines: [plan line per slide], talk: the talk
  // path's slides (the appendix's follow), cut, expand, threshold: rise_notes_window.js}, or
  // null (a notebook that is not a deck); REHEARSE: present --rehearse
  var configured = false, lastSent = null;
  var receiver = /receiver/i.test(window.location.search);
  function leaves() {
    return Array.prototype.slice.call(
      document.querySelectorAll('.reveal .slides section:not(.stack)'));
  }
  function mark() {
    queued = false;
    document.querySelectorAll('.reveal aside.notes').forEach(function (a) {
      if (a.querySelector(':scope > style.workshop-notes')) return;
      var s = document.createElement('style');
      s.className = 'workshop-notes';
      s.textContent = '__RULE__';
      a.appendChild(s);
    });
    pace();
  }
  // reveal's own pacing: each slide's planned seconds as its data-timing, totalTime through
  // Reveal's postMessage API (configure is not on its blacklist); a plan line atop the notes
  function pace() {
    if (!PLAN) return;
    var slides = leaves();
    if (!slides.length) return;
    slides.forEach(function (sec, i) {
      var t = PLAN.timing[i];
      if (t !== undefined && sec.getAttribute('data-timing') !== String(t))
        sec.setAttribute('data-timing', String(t));
      // the line sits in the slide's first notes aside, and says this slide's plan (RISE
      // may build or move asides after the first pass: checked on every change)
      var a = sec.querySelector('aside.notes'), line = PLAN.lines[i];
      sec.querySelectorAll('.workshop-plan').forEach(function (p) {
        if (p.parentNode !== a || p.textContent !== line) p.remove();
      });
      if (a && line && !a.querySelector(':scope > .workshop-plan')) {
        var p = document.createElement('p');
        p.className = 'workshop-plan';
        p.style.cssText = 'font-size:0.8em;color:#555;margin:0 0 0.5em';
        p.textContent = line;
        a.insertBefore(p, a.firstChild);
      }
    });
    if (!configured) configure();
  }
  function configure() {
    if (!PLAN || receiver) return;
    configured = true;
    window.postMessage(JSON.stringify({method: 'configure',
                                       args: [{totalTime: PLAN.total}]}), '*');
  }
  document.addEventListener('ready', configure);   // again once Reveal listens
  new MutationObserver(function () {
    if (!queued) { queued = true; requestAnimationFrame(mark); }
  }).observe(document.documentElement, {childList: true, subtree: true});
  // The notes window's two previews are RISE pages too (receivers): no help button on them,
  // and the upcoming slide's title below the notes window's "Upcoming" label, not under it.
  // The current slide's pane shows the slide as the projector does: at the top of the pane
  // (its pane is taller than 16:9, and Reveal centred the slide in it, the title 190 px down)
  // and with the outputs the slideshow's cells have made (a fresh page of its own, it had
  // none: no chart, no map), copied from the slides window (mirror, below).
  if (receiver) {
    var upcoming = false, current = false;
    try {
      upcoming = !!(window.frameElement && window.frameElement.closest('#upcoming-slide'));
      current = !!(window.frameElement && window.frameElement.closest('#current-slide'));
    } catch (x) {}
    var preview = document.createElement('style');
    preview.textContent = '#help-b { display: none !important; }' + (upcoming ?
      ' html body.rise-enabled .reveal .slides > section > section,' +
      ' html body.rise-enabled .reveal .slides > section:not(.stack)' +
      ' { padding-top: 104px !important; }' : '') + (current ?
      ' html body.rise-enabled .jp-NotebookPanel.reveal { height: min(100vh, 56.25vw)' +
      ' !important; }' : '');
    (document.head || document.documentElement).appendChild(preview);
    if (current) setInterval(mirror, 500);
    // The notes window names the slide in the preview's address (#/h/v, the present slide),
    // which RISE does not read, and sends the state again only at the next slide change: the
    // upcoming pane showed the deck's first slide until then. Now a preview shows nothing
    // until it is on its slide: once Reveal is ready here, it goes to the slide its address
    // names (the upcoming one: the one after it), and shows itself a moment after the last
    // move it was told (or after 10 s whatever happened: never a blank pane for good).
    var root = document.documentElement;
    root.classList.add('workshop-waiting');
    preview.textContent += ' html.workshop-waiting .reveal .slides { visibility: hidden; }';
    setTimeout(function () { root.classList.remove('workshop-waiting'); }, 10000);
    var shown = null, ready = false;
    document.addEventListener('ready', function () {
      ready = true;
      var at = /^#\/(\d+)(?:\/(\d+))?/.exec(location.hash) || [null, '0', '0'];
      window.postMessage(JSON.stringify({method: 'slide', args: [+at[1], +(at[2] || 0)]}), '*');
      if (upcoming) window.postMessage(JSON.stringify({method: 'next'}), '*');
    });
    window.addEventListener('message', function (e) {
      var d;
      try { d = typeof e.data === 'string' ? JSON.parse(e.data) : null; } catch (x) { return; }
      if (!ready || !d || ['setState', 'slide', 'next'].indexOf(d.method) < 0) return;
      clearTimeout(shown);
      shown = setTimeout(function () { root.classList.remove('workshop-waiting'); }, 150);
    });
  }
  // The current pane's code cells show what the slides window's show: each output area of the
  // present slide copied from the same cell there (the notes window's opener), when it changed
  function mirror() {
    var main;
    try { main = window.parent.opener; if (!main || main.closed || !main.document) return; }
    catch (x) { return; }
    var sec = document.querySelector('.reveal .slides section.present:not(.stack)');
    if (!sec) return;
    var mine = Array.prototype.slice.call(document.querySelectorAll('.reveal .jp-Notebook-cell'));
    var theirs = main.document.querySelectorAll('.reveal .jp-Notebook-cell');
    sec.querySelectorAll('.jp-CodeCell').forEach(function (cell) {
      var twin = theirs[mine.indexOf(cell)], to = cell.querySelector('.jp-OutputArea');
      var from = twin && twin.querySelector('.jp-OutputArea');
      if (!from || !to) return;
      var html = from.innerHTML;
      if (to.workshopMirrored === html) return;
      to.innerHTML = html;
      to.workshopMirrored = html;
      cell.classList.toggle('jp-mod-noOutputs', !from.querySelector('.jp-OutputArea-output'));
    });
  }
  // RISE turns Reveal's history on: each slide or fragment change is written into the
  // address, and Reveal answers every hashchange event by going to the address's slide. When
  // changes come faster than the page handles them (the tests' walks do), one event a change
  // was queued, and each went again to where the deck already was: after 68 changes in deck
  // 04, 2.5 s of page busy with nothing to show for it. An event whose address is no longer
  // the page's is dropped before Reveal sees it (a capture listener runs first at the
  // window), so Reveal reads the address once, when it is the latest. (The hashes are
  // compared, not the whole addresses: an event without one, or an address whose path
  // changed since, still reaches Reveal.)
  window.addEventListener('hashchange', function (e) {
    if (typeof e.newURL === 'string' && new URL(e.newURL).hash !== window.location.hash)
      e.stopImmediatePropagation();
  }, true);
  // A window that changes size (a projector plugged in, F11): Reveal lays the slide out on the
  // window's resize event, before JupyterLab has given the slideshow's panel its new size, so
  // the slide kept the previous window's scale, cropped or small (measured in a real window).
  // Once the size has settled, Reveal lays it out again (its postMessage API: layout).
  var settle = [];
  function relayout() {
    window.postMessage(JSON.stringify({method: 'layout', args: []}), '*');
  }
  window.addEventListener('resize', function () {
    settle.forEach(clearTimeout);
    settle = [setTimeout(relayout, 100), setTimeout(relayout, 500)];
  });
  // present --rehearse: each slide change goes to the server, which keeps the time, and so
  // does a kernel restart from the slideshow (page_scripts/rise_plugin.js)
  function present() {
    return leaves().indexOf(document.querySelector('.reveal .slides section.present:not(.stack)'));
  }
  function post(body) {
    var cfg = {};
    try { cfg = JSON.parse(document.getElementById('jupyter-config-data').textContent); }
    catch (x) {}
    body.path = cfg.notebookPath || '';
    fetch((cfg.baseUrl || '/') + 'workshop/rehearsal', {method: 'POST',
      headers: {'Content-Type': 'application/json',
                'Authorization': 'token ' + (cfg.token || '')},
      body: JSON.stringify(body)});
  }
  function sent() {
    if (!REHEARSE || receiver) return;
    var i = present();
    if (i < 0 || i === lastSent) return;
    lastSent = i;
    post({slide: i + 1});
  }
  if (REHEARSE && !receiver) {
    document.addEventListener('workshop-restarted', function () {
      post({slide: present() + 1, event: 'restart'});
    });
    document.addEventListener('slidechanged', function () { setTimeout(sent, 0); });
    var first = setInterval(function () {   // the first slide: when Reveal has shown it
      if (document.querySelector('.reveal .slides section.present:not(.stack)')) {
        clearInterval(first); sent();
      }
    }, 250);
  }
  // The notes window's slide previews are RISE pages too; one that loads at the first slide
  // asks this window, through the notes window, to go there (Reveal's setState): the
  // audience was sent back to slide 1 when T was pressed. The slides window leads; the notes
  // window follows it and never moves it.
  if (!receiver) {
    window.addEventListener('message', function (e) {
      if (e.source === window || typeof e.data !== 'string') return;
      var d;
      try { d = JSON.parse(e.data); } catch (x) { return; }
      if (d && d.method === 'setState') e.stopImmediatePropagation();
    });
  }
})();
