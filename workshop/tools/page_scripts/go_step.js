// Straight to slide a.slide (from 1 among all the deck's slides) with its first a.shown
// fragments shown, through Reveal's postMessage API (as a test's starting point; the keys are
// what is tested)
(a) => {
  const sec = [...document.querySelectorAll('.reveal .slides section:not(.stack)')][a.slide - 1];
  const top = sec.parentElement.classList.contains('stack') ? sec.parentElement : sec;
  const h = [...document.querySelectorAll('.reveal .slides > section')].indexOf(top);
  const v = top === sec ? 0 : [...top.children].indexOf(sec);
  window.postMessage(JSON.stringify({method: 'slide', args: [h, v, a.shown - 1]}), '*');
}
