// Where the slideshow is, as the keys move it: [the present slide's number from 1 among all
// the deck's slides, its fragments shown, the slide counter's text (spaces aside), the
// progress bar's fill from 0 to 1]
() => {
  const all = [...document.querySelectorAll('.reveal .slides section:not(.stack)')];
  const sec = document.querySelector('.reveal .slides section.present:not(.stack)');
  const bar = document.querySelector('.reveal .progress span');
  const fill = /scaleX\(([\d.e-]+)\)/.exec(bar ? bar.style.transform : '');
  return [all.indexOf(sec) + 1, sec ? sec.querySelectorAll('.fragment.visible').length : 0,
          document.querySelector('.reveal .slide-number').innerText.replace(/\s/g, ''),
          fill ? +fill[1] : null];
}
