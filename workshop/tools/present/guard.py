"""What `present`'s JupyterLab must be before it listens: its own token, the XSRF check on.
Checked in the server's own process after every Jupyter config and extension has
had its say and before the socket opens, so no moment exists when another local user could
reach a server without them (a check over HTTP once the server answered came too late: a user
polling for new loopback ports got in first).

The token is `TokenOnly`'s, which present names on the command line (which outranks every
config file): it takes present's random token from the environment, and no config option sets
it (a config's `IdentityProvider.token` or `ServerApp.token` is the base class's option, not
this one's). So a config that turns the token off, or fixes its own, changes nothing.
What the command line cannot fix (a config's `ServerApp.tornado_settings` turning the XSRF
check off) makes the server exit before it listens, saying why in one line that present shows.
A config's port or base_url would leave present asking where the server is not: refused too
(Jupyter itself refuses a config's Unix socket beside present's port, and present says why).
So is a config that serves a folder of its own without a login (`ServerApp.extra_static_paths`
or an extension's static path: Jupyter's static files need none, and another local user read a
0600 file of root's through it, probe 17). (Loopback needs no check here: the command line sets
the address.)

The login cookie a browser gets once it came with the token is signed with a secret of this
server's alone, made at its start and kept in its memory: a config's `cookie_secret` (or a
`cookie_secret_file` another user could read) let another local user sign a cookie of their own
and use the server as the presenter (probe 17).
"""
from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

from jupyter_server.auth.identity import IdentityProvider
from traitlets import Unicode, default

TOKEN_ENV = "JUPYTER_TOKEN"
PORT_ENV = "JUPYTER_PORT"            # present's port: in the environment, not on `ps`'s line
REFUSED = 3                          # the server's exit status when it will not listen
MARK = "workshop-present-refused: "  # the log line, before the reason, present reads back


class TokenOnly(IdentityProvider):
    """present's identity provider: present's token, and no other way in (no password)."""

    token = Unicode()   # (not `config=True`: no config file sets it)

    @default("token")
    def _token_default(self):
        self.token_generated = False     # (so a deprecated ServerApp.token is ignored)
        return os.environ.get(TOKEN_ENV, "")


def problem(app) -> str | None:
    """Why the server `app` must not listen (one line for the presenter), or None."""
    token = os.environ.get(TOKEN_ENV, "")
    who, settings = app.identity_provider, app.web_app.settings
    if type(who) is not TokenOnly or not token or who.token != token:
        return ("a Jupyter config changes how present's server checks who asks "
                "(ServerApp.identity_provider_class or its token): present serves only with "
                "its own token; remove that setting (see `jupyter --paths`)")
    port = os.environ.get(PORT_ENV, "")
    if port and app.port != int(port):
        return (f"a Jupyter config sets the server's port (ServerApp.port = {app.port}): "
                "present picks its own; remove that setting (see `jupyter --paths`)")
    if Path(app.contents_manager.root_dir).resolve() != Path(app.root_dir).resolve():
        return (f"a Jupyter config serves another folder ({app.contents_manager.root_dir}, "
                "a ContentsManager's root_dir): present serves the kit's folder only; remove "
                "that setting (see `jupyter --paths`)")
    if app.allow_origin or app.allow_origin_pat or app.allow_credentials:
        return ("a Jupyter config lets other sites' pages call the server (ServerApp."
                "allow_origin, allow_origin_pat or allow_credentials): present serves only its "
                "own pages; remove that setting (see `jupyter --paths`)")
    if app.base_url != "/":
        return (f"a Jupyter config sets the server's base_url ({app.base_url!r}): present "
                "serves the slideshow at /; remove that setting (see `jupyter --paths`)")
    if settings.get("disable_check_xsrf") or not settings.get("xsrf_cookies"):
        return ("a Jupyter config file turns off the server's XSRF check (ServerApp."
                "tornado_settings: disable_check_xsrf or xsrf_cookies): present serves only "
                "with it; remove that setting (see `jupyter --paths`)")
    other = sorted(f for f in served_without_a_login(app) if not _public(f))
    if other:
        return (f"a Jupyter config serves a folder to anyone, without a login ({other[0]}: "
                "ServerApp.extra_static_paths or an extension's static path): present serves "
                "only Jupyter's own files so; remove that setting (see `jupyter --paths`)")
    return None


def served_without_a_login(app) -> set[str]:
    """The folders the server `app` serves files from to anyone: its static handlers'."""
    import tornado.web
    from jupyter_server.base.handlers import AuthenticatedFileHandler
    static = app.web_app.settings.get("static_path") or []
    found: set[str] = {static} if isinstance(static, str) else set(static)   # (a string: one)

    def walk(rules) -> None:
        for rule in rules:
            target = rule.target
            if hasattr(target, "rules"):
                walk(target.rules)
            elif isinstance(target, type) and issubclass(target, tornado.web.StaticFileHandler) \
                    and not issubclass(target, AuthenticatedFileHandler):
                path = (rule.target_kwargs or {}).get("path")
                found.update([path] if isinstance(path, str) else path or [])
    walk(app.web_app.wildcard_router.rules)
    walk(app.web_app.default_router.rules)
    return found


def _public(folder: str) -> bool:
    """A folder of Jupyter's own to serve without a login: in this environment, a lab
    extensions folder on Jupyter's data path (`jupyter --paths`), or present's folder of the
    slideshow's lab extensions. Not the data folders themselves: the user's holds the tokens
    of their other servers (runtime/) and the notebook-signing secret (probe 18)."""
    from jupyter_core.paths import jupyter_path
    mine = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--RiseApp.labextensions_path=")]
    real = Path(os.path.realpath(folder))
    return any(real == Path(os.path.realpath(p)) or Path(os.path.realpath(p)) in real.parents
               for p in (sys.prefix, *jupyter_path("labextensions"), *mine))


def install() -> None:
    """Make ServerApp check `problem` before it makes its HTTP server (it binds the port
    there: tornado's port search listens for a moment too); a problem: one MARK line and
    exit REFUSED, no socket opened."""
    from jupyter_server.serverapp import ServerApp
    listen = ServerApp.init_httpserver

    def init_httpserver(self) -> None:
        why = problem(self)
        if why:
            print(MARK + why, file=sys.stderr, flush=True)
            sys.exit(REFUSED)
        # the login cookie's signature: this server's own secret, whatever a config set
        self.web_app.settings["cookie_secret"] = secrets.token_bytes(32)
        listen(self)

    ServerApp.init_httpserver = init_httpserver


def refusal(log_text: str) -> str | None:
    """The reason a server that exited REFUSED gave in its log."""
    said = [line.split(MARK, 1)[1] for line in log_text.splitlines() if MARK in line]
    return said[-1].strip() if said else None
