"""The kit's tooling: what a maintainer or presenter runs (`python -m workshop …`): the build,
present, drift, doctor, scaffolding, the labs' generator. Never imported by an attendee's
kernel: the decks and labs import the runtime one level up (`workshop`, `workshop.labs`), which
never imports this package (tests/test_meta.py holds the direction)."""
