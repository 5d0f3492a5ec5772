"""`python -I -S workshop/held.py PROGRAM ARGS…`: runs PROGRAM (the kit's command, `.venv/bin/python
-m workshop …`) with Ctrl-C held, not lost. The scripts start this with Ctrl-C ignored (bash's
`trap '' INT`), as Python's own start would print a KeyboardInterrupt traceback from wherever
it was (probe 14); here it is blocked instead and set back to its default, and the exec keeps
both: a Ctrl-C while the command's Python starts waits, and workshop/__main__.py, once it
answers Ctrl-C in one line, lets it through. Ignored all the way, a Ctrl-C in those 0.4 s
was lost, and present started the server the presenter had stopped (probe 17). Run by its
path, isolated and without site: it imports nothing but what Python starts with."""
import os
import signal
import sys

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])
