() => { const down = document.querySelector('.reveal .controls .navigate-down.enabled');
  (down || document.querySelector('.reveal .controls .navigate-right')).click(); }
