// The present slide's next fragment shown, as the presenter's space bar would (Reveal marks the
// arrow that shows the next fragment "fragmented": down on a slide in a stack, right on one
// alone; right in the deck's last stack would show none, as the space bar does); called only
// while the slide has a fragment still hidden
() => (document.querySelector('.reveal .controls .navigate-down.enabled.fragmented') ||
       document.querySelector('.reveal .controls .navigate-right')).click()
