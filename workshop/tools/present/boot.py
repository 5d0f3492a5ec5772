"""The Python of `present`'s JupyterLab: `python -m workshop.tools.present.boot ARGS` is
`jupyter lab ARGS` less two things that slowed every start of a slideshow's server and that it
never uses:

- rfc3987-syntax, which jsonschema imports (see notebooks.SKIPPED_IMPORTS);
- Node.js. JupyterLab's import asks yarn for the npm registry it would build extensions from
  (`node yarn.js config --json`, at `jupyterlab.labapp`'s import, for the app's version): 0.8 s
  of each start where Node.js is installed, half a second of it the CPU's (measured). Here
  JupyterLab is told there is no Node.js, as on a machine without it, and takes npm's default
  registry. A slideshow builds nothing; nothing else in the server looks for Node.js, and the
  kernels are Pythons of their own.

It adds one thing: `guard`'s check, before the server listens, that it has present's token and
XSRF check whatever a Jupyter config says.
"""
from __future__ import annotations

import sys

from .. import notebooks  # noqa: F401  (its import skips rfc3987-syntax)

NOT_HERE = ("node", "nodejs", "npm")


def main() -> int:
    import jupyterlab_server.process as process
    found = process.which

    def which(command: str, env=None) -> str:
        if command in NOT_HERE:
            raise ValueError(f"{command}: not looked for by a slideshow's server")
        return found(command, env)

    process.which = which   # (before jupyterlab.commands takes its own name for it)
    from . import guard
    guard.install()
    from jupyterlab.labapp import main as lab
    return lab()


if __name__ == "__main__":
    sys.exit(main())
