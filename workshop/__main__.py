import sys

from .tools.cli import main
from .tools.processes import quiet_exit_on_ctrl_c

code = main()
# The command is done: a Ctrl-C from now on, while Python shuts down (joining its threads),
# ends it quietly with the command's own status. Python's handler raised KeyboardInterrupt
# inside threading's shutdown and printed a traceback under the command's last line (probe
# 12: compose, 2 Ctrl-C's of 26)
quiet_exit_on_ctrl_c(code)
sys.exit(code)
