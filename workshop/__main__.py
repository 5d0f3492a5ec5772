import atexit
import os
import signal
import sys

# Registered first, so run last of Python's exit work: from there on a Ctrl-C is ignored.
# Python then puts back the default handler of each signal that has a handler of Python's,
# and a Ctrl-C in its last moments ended the command by SIGINT after its work and its one line
# (exit -2 where it said 0; CI's rehearsal, a third Ctrl-C as present stopped)
atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)

# A Ctrl-C while Python still imports the command (its first ~50 ms) is one line, not
# Python's traceback from inside an import (probe 13); the command's own handling (a line
# naming the command, its clean-up) starts with the command. The scripts start Python with
# Ctrl-C held (workshop/held.py: before this line there is Python's own start, probe 14): this
# takes it over, and one pressed meanwhile (probe 17: it was lost) comes through now
signal.signal(signal.SIGINT, lambda signum, frame: (
    os.write(2, b"workshop: interrupted\n"), os._exit(130)))
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

from .tools.cli import main  # noqa: E402
from .tools.processes import quiet_exit_on_ctrl_c  # noqa: E402

code = main(take_ctrl_c=True)   # (Python's KeyboardInterrupt from where the command's own
                                # handling starts: probe 17's traceback came from argparse)
# The command is done: a Ctrl-C from now on, while Python shuts down (joining its threads),
# ends it quietly with the command's own status. Python's handler raised KeyboardInterrupt
# inside threading's shutdown and printed a traceback under the command's last line (probe
# 12: compose, 2 Ctrl-C's of 26)
quiet_exit_on_ctrl_c(code)
sys.exit(code)
