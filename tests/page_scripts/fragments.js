// every fragment of the present slide shown, as the presenter would before moving on
// (Reveal marks the arrow that shows the next fragment "fragmented": down on a slide in a stack,
// right on one alone; right in the deck's last stack would show none, as the space bar does)
() => { for (let i = 0; i < 50 && document.querySelector(
    '.reveal section.present:not(.stack) .fragment:not(.visible)'); i++)
  (document.querySelector('.reveal .controls .navigate-down.enabled.fragmented') ||
   document.querySelector('.reveal .controls .navigate-right')).click(); }
