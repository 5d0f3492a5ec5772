"""JupyterHub's configuration for `python -m workshop hub` (hub.py starts JupyterHub with
`-f` this file, and the WORKSHOP_HUB_* variables; the codes are read from files in the hub's
state folder, never passed). Runs inside JupyterHub, which gives `c`."""
import logging
import os
import sys
from pathlib import Path

from workshop.labs import room
from workshop.tools.hub import course
from workshop.tools.hub.local import PRESENTER, SITE_PATH, libdir
from workshop.tools.hub.login import ANNOUNCEMENT
from workshop.tools.hub.proxy import ShortLines

c = get_config()  # noqa: F821 (JupyterHub's loader defines it)
# each request's line in root's hub.log cut short (a URL of 16 KiB was logged whole: probe 16)
logging.getLogger("tornado.access").addFilter(ShortLines())
state = Path(os.environ["WORKSHOP_HUB_STATE"])
venv = Path(os.environ["WORKSHOP_HUB_VENV"])
hub_port, api_port = map(int, os.environ["WORKSHOP_HUB_INTERNAL_PORTS"].split(","))
site = os.environ["WORKSHOP_HUB_SITE_COPY"]   # the course site's copy, or "" (not built)

# HTTPS when the presenter gave a certificate (the proxy speaks it; the hub behind it, on
# loopback, plain HTTP)
https = bool(os.environ["WORKSHOP_HUB_SSL_CERT"])
c.JupyterHub.bind_url = (f"{'https' if https else 'http'}://"
                         f"{os.environ['WORKSHOP_HUB_IP'] or '0.0.0.0'}:"
                         f"{os.environ['WORKSHOP_HUB_PORT']}/")
if https:
    c.JupyterHub.ssl_cert = os.environ["WORKSHOP_HUB_SSL_CERT"]
    c.JupyterHub.ssl_key = os.environ["WORKSHOP_HUB_SSL_KEY"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = hub_port
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{api_port}"
# the proxy from PyPI (configurable-http-proxy, Python), not npm's, with room for a room's
# requests at once (hub/proxy.py)
c.ConfigurableHTTPProxy.command = [sys.executable, "-m", "workshop.tools.hub.proxy"]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
c.JupyterHub.pid_file = str(state / "hub.pid")
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "cookie_secret")
c.JupyterHub.active_server_limit = int(os.environ["WORKSHOP_HUB_ATTENDEES"]) + 1
# a room that arrives at once queues: past this many servers starting, an attendee gets the
# queue's page (templates/error.html), which asks again by itself after 10 to 20 s, instead of
# every start slowing down until some time out
c.JupyterHub.concurrent_spawn_limit = int(os.environ["WORKSHOP_HUB_STARTS_AT_ONCE"])
# (JupyterHub 6.1's spawn_throttle_retry_range is not configurable, its default 30 to 60 s: the
# hub's own settings take it)
c.JupyterHub.tornado_settings = {"spawn_throttle_retry_range": (10, 20)}
c.JupyterHub.template_paths = [str(Path(__file__).with_name("templates"))]

c.JupyterHub.authenticator_class = "workshop.tools.hub.auth.WorkshopAuthenticator"
c.WorkshopAuthenticator.user_password = (state / "attendee-code").read_text().strip()
c.WorkshopAuthenticator.admin_password = (state / "presenter-code").read_text().strip()
c.WorkshopAuthenticator.admin_users = {PRESENTER}
c.WorkshopAuthenticator.allow_all = True
c.WorkshopAuthenticator.attendees = int(os.environ["WORKSHOP_HUB_ATTENDEES"])
c.WorkshopAuthenticator.attendee_log = str(state / "attendees")
login = ANNOUNCEMENT   # what the chart's login page says too
# the room view (--room-view): the attendee is told before logging in what the presenter sees
view = os.environ["WORKSHOP_HUB_ROOM_VIEW"] == "1"
if view:
    login += ("<br>On this hub the presenter sees, for each lab task, whether your latest "
              "check passed (pass or fail only, never your code).")
# the course site, linked where an attendee looks: the login page, and the hub's home page
# (JupyterLab's File, Hub Control Panel)
read = (f"The course site, to read without logging in: <a id='workshop-course' "
        f"href='/{SITE_PATH}'>/{SITE_PATH}</a>")
c.JupyterHub.template_vars = ({"announcement_login": f"{login}<br>{read}",
                               "announcement_home": read} if site else
                              {"announcement_login": login})

# LocalProcessSpawner, each attendee's server in a cgroup capped at these (hub/limits.py)
c.JupyterHub.spawner_class = "workshop.tools.hub.spawner.CappedSpawner"
c.Spawner.mem_limit = int(os.environ["WORKSHOP_HUB_MEMORY_CAP"])
c.Spawner.cpu_limit = float(os.environ["WORKSHOP_HUB_CPU_CAP"])
# the attendee's own copy of the decks (attendee/decks/) and exercises/ in ~/workshop, made as
# the attendee (never as root, in a folder the attendee controls), each file once: what they
# changed stays theirs
# The server reads Jupyter's config and extensions from the hub's environment only, never
# from the attendee's home: a config of their own (~/.jupyter, ~/.local) served a page of their
# choosing, with its script, on the hub's origin, where it acts as whoever opens it, the
# presenter included (probe 7: an admin token minted). What is theirs stays in their home:
# the runtime files, JupyterLab's settings and workspaces, and the notebooks' trust database
# (data, never code: opening a notebook writes it, a 500 where the attendee could not). The
# runtime folder is hub/become.py's choice: elsewhere, this time, where they broke theirs.
c.Spawner.cmd = ["/bin/sh", "-c", 'mkdir -p "$HOME/workshop" && '
                 'cp -Rn "$WORKSHOP_HUB_MATERIALS/." "$HOME/workshop/"; '
                 'export JUPYTER_RUNTIME_DIR='
                 '"${JUPYTER_RUNTIME_DIR:-$HOME/.local/share/jupyter/runtime}" '
                 'JUPYTERLAB_SETTINGS_DIR="$HOME/.jupyter/lab/user-settings" '
                 'JUPYTERLAB_WORKSPACES_DIR="$HOME/.jupyter/lab/workspaces"; '
                 'exec jupyterhub-singleuser '
                 '--NotebookNotary.data_dir="$HOME/.local/share/jupyter" "$@"',
                 "jupyterhub-singleuser"]
# (the server's output, and its kernels', into a file in the attendee's home, not root's
# hub.log: an attendee's cell wrote 50 MB there in 1.7 s, lines made to read as the hub's own,
# probe 13. An attendee's server that will not start: see ~ws-NAME/.jupyter-server.log. It is
# opened by hub/become.py, as the attendee: a FIFO there held each start 300 s, probe 20)
# the kernels' sockets are files beside their connection files, in the attendee's home
# (ZeroMQ's ipc), not ports on 127.0.0.1: any local user found a kernel's ports by its owner in
# /proc/net/tcp, and its output port needs no key: another attendee read each cell and its
# output as it ran (probe 10)
c.Spawner.args = ["--ServerApp.jpserver_extensions=jupyter_lsp=False",
                  "--KernelManager.transport=ipc"]
c.Spawner.notebook_dir = "~/workshop"
c.Spawner.default_url = "/lab/tree/exercises"
c.Spawner.environment = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
                         "WORKSHOP_HUB_MATERIALS": str(venv / "materials"),
                         "JUPYTER_CONFIG_DIR": str(venv / "etc" / "jupyter"),
                         "JUPYTER_DATA_DIR": str(venv / "share" / "jupyter"),
                         "PYTHONNOUSERSITE": "1"}   # (~/.local: its config, data, modules)
if view:   # the kernels inherit it: each check records pass or fail (labs/room.py)
    c.Spawner.environment[room.ENV] = "1"
if libdir(venv):   # the interpreter is hub.py's copy; its RUNPATH names a folder they cannot read
    c.Spawner.environment["LD_LIBRARY_PATH"] = libdir(venv)
# a busy 2-core machine: hub-load 30 beside other work saw starts of 75 to 85 s, and gave up on
# some at 90 (the attendee watches the start's progress page meanwhile)
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300

c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                f"--timeout={int(os.environ['WORKSHOP_HUB_IDLE_MINUTES']) * 60}"],
}]
if site:   # served as files by the hub's own process (hub/course.py says why not a service)
    c.JupyterHub.extra_handlers = course.handlers(site, f"/{SITE_PATH}")
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
