// The present slide's code cells, each as [its prompt, the first line of its code]: a press
// that ran another cell of the slide changed that cell's prompt (a cell whose code is hidden has
// neither: '' and '')
() => [...document.querySelectorAll('.reveal section.present:not(.stack) .jp-CodeCell')].map(
  (c) => [(c.querySelector('.jp-InputArea-prompt') || {textContent: ''}).textContent.trim(),
          (c.querySelector('.cm-line') || {textContent: ''}).textContent])
