// A JupyterLab plugin for jupyterlab-rise's page: restart the kernel from the slideshow and run
// the setup cell again. present/extension.py serves this file and lists it among the page's
// federated extensions, the way JupyterLab loads a prebuilt extension (this file is that
// extension's whole container: no build step, no shared module it needs). A plugin, not a
// page script, because only a plugin is given the application: its commands (JupyterLab's own
// restart, with its confirm dialog, and its run-cell) and the notebook on show.
//
// 0 0 (page_scripts/rise_keys.js) or the ↻ button left of the slide number: JupyterLab asks
// "Restart Kernel?"; on Restart the kernel restarts, RISE goes to the title slide, its setup
// cell (the one tagged `setup`) runs, and the slideshow comes back to the slide it was on.
// Every name the talk defined is gone: the guide says to run the present section's cells
// again. A 'workshop-restarted' event on the document tells rise_page.js (present
// --rehearse's log records it). And T (rise_keys.js): RISE's notes window, whatever has the
// focus (RISE's own binding asked for the notebook's), and Ctrl-Enter off the notebook: the
// active cell runs (JupyterLab's run-cell).
/* workshop: restart from the slideshow; T */
(function () {
  var COMMAND = 'workshop:restart-and-run-setup';
  var LABEL = 'Restart the kernel and run the setup cell (0 0)';
  function setupCell(nb) {
    for (var i = 0; i < nb.widgets.length; i++) {
      var tags = nb.widgets[i].model.getMetadata('tags') || [];
      if (tags.indexOf('setup') >= 0) return i;
    }
    return -1;
  }
  // where the slideshow is, as Reveal's slide(h, v, f) takes it
  function place() {
    var sec = document.querySelector('.reveal .slides section.present:not(.stack)');
    if (!sec) return null;
    var top = sec.parentElement.classList.contains('stack') ? sec.parentElement : sec;
    var h = Array.prototype.indexOf.call(document.querySelectorAll('.reveal .slides > section'),
                                         top);
    var v = top === sec ? 0 : Array.prototype.indexOf.call(top.children, sec);
    return [h, v, sec.querySelectorAll('.fragment.visible').length - 1];
  }
  var busy = false;
  async function restart(app) {
    var panel = app.shell.currentWidget;
    if (busy || !panel || !panel.content || !panel.sessionContext) return false;
    busy = true;
    try {
      var at = place();
      if (!await app.commands.execute('notebook:restart-kernel')) return false;   // Cancel
      var nb = panel.content, back = nb.activeCellIndex, setup = setupCell(nb);
      document.dispatchEvent(new CustomEvent('workshop-restarted'));
      if (setup < 0) return true;
      nb.deselectAll();
      nb.activeCellIndex = setup;   // (RISE shows the slide of the active cell: the title)
      await app.commands.execute('notebook:run-cell');   // (resolves once it has run)
      nb.activeCellIndex = back;
      if (at) window.postMessage(JSON.stringify({method: 'slide', args: at}), '*');
      return true;
    } finally {
      busy = false;
    }
  }
  // a small ↻ in the slide's bottom band, left of the slide number (sized with it: see
  // decks/rise.css), faint until the mouse is on it
  var CSS = 'body.rise-enabled #workshop-restart-b { position: fixed; z-index: 30;' +
    ' right: min(15.625vw, 27.778vh); bottom: min(0.625vw, 1.1111vh);' +
    ' font-size: min(1.5625vw, 2.7778vh); line-height: 1; padding: 0 0.2em; border: 0;' +
    ' background: transparent; color: #999; opacity: 0.5; cursor: pointer; }' +
    ' body.rise-enabled #workshop-restart-b:hover { opacity: 1; color: #333; }';
  function button(app) {
    if (!document.querySelector('body.rise-enabled .reveal')) return false;
    if (document.getElementById('workshop-restart-b')) return true;
    var style = document.createElement('style');
    style.textContent = CSS;
    document.head.appendChild(style);
    var b = document.createElement('button');
    b.id = 'workshop-restart-b';
    b.title = LABEL;
    b.setAttribute('aria-label', LABEL);
    b.textContent = '↻';
    b.addEventListener('click', function (e) {
      e.preventDefault();
      b.blur();
      app.commands.execute(COMMAND);
    });
    document.body.appendChild(b);
    return true;
  }
  var plugin = {
    id: 'workshop-present:restart',
    autoStart: true,
    activate: function (app) {
      if (/receiver/i.test(window.location.search)) return;   // the notes window's previews
      app.commands.addCommand(COMMAND, {label: LABEL, execute: function () {
        return restart(app);
      }});
      document.addEventListener('workshop-restart', function () {
        app.commands.execute(COMMAND);
      });
      document.addEventListener('workshop-notes', function () {   // T (rise_keys.js)
        app.commands.execute('RISE:notes-open');
      });
      document.addEventListener('workshop-run', function () {   // Ctrl-Enter (rise_keys.js)
        app.commands.execute('notebook:run-cell');
      });
      var tries = 0, wait = setInterval(function () {   // (RISE adds its buttons once shown)
        if (button(app) || ++tries > 600) clearInterval(wait);
      }, 100);
    }
  };
  // the container JupyterLab's loader asks for the extension's module
  (window._JUPYTERLAB = window._JUPYTERLAB || {})['__NAME__'] = {
    init: function () {},
    get: function () {
      return Promise.resolve(function () { return {__esModule: true, default: [plugin]}; });
    }
  };
})();
