"""The build: execute notebooks, print handouts, report (tooling: not imported by a kernel)."""
