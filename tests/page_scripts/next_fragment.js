// The present slide's next fragment shown, as the presenter's space bar would (the arrow
// Reveal marks "fragmented": down on a slide in a stack, right on one alone); only called
// while the slide has a fragment still hidden, so it never moves to the next slide
() => (document.querySelector('.reveal .controls .navigate-down.enabled.fragmented') ||
       document.querySelector('.reveal .controls .navigate-right')).click()
