() => { for (let i = 0; i < 500; i++) {
  const back = document.querySelector('.reveal .controls .navigate-left.enabled, .reveal .controls .navigate-up.enabled');
  if (!back) break; back.click(); } }
