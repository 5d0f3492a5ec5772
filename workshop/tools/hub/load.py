"""Simulated attendees for `python -m workshop hub`, through the hub's real pages and APIs:
the login form, the hub's REST API (a token, a server), the attendee's Jupyter server (a
kernel) and the kernel's websocket (cells). Used by tests/test_hub.py (2 attendees) and by the
capacity benchmark `scripts/hub-load N`, which starts a hub on loopback, has N attendees log
in at once, start their servers and run a lab's solution, and reports the figures the README's
sizing table is made from.
"""
from __future__ import annotations

import json
import re
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .. import errors, paths
from .. import notebooks as nbs

SOLUTION = paths.SOLUTIONS / "J1-trace-read-raw.ipynb"
LAB = f"exercises/{SOLUTION.name}"   # its attendee copy, in the attendee's ~/workshop


class LoginRefused(Exception):
    """The hub's login page said no; the message is the page's."""


@dataclass
class Attendee:
    base: str      # http://127.0.0.1:PORT
    name: str      # what they type
    code: str
    user: str = ""
    token: str = ""
    kernel: str = ""
    figures: dict = field(default_factory=dict)

    def __post_init__(self):
        import requests
        self.http = requests.Session()

    def login(self) -> None:
        page = self.http.get(f"{self.base}/hub/login", timeout=30)
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
        r = self.http.post(f"{self.base}/hub/login", allow_redirects=False, timeout=60,
                           data={"username": self.name, "password": self.code,
                                 "_xsrf": xsrf.group(1) if xsrf else ""})
        if r.status_code != 302:
            said = re.search(r'login_error[^>]*>\s*([^<]+)', r.text)
            raise LoginRefused(said.group(1).strip() if said else f"HTTP {r.status_code}")
        self.user = self.http.get(f"{self.base}/hub/api/user", timeout=30,
                                  headers=self._xsrf()).json()["name"]
        r = self.http.post(f"{self.base}/hub/api/users/{self.user}/tokens", timeout=30,
                           headers=self._xsrf(), json={"note": "hubload", "expires_in": 7200})
        r.raise_for_status()
        self.token = r.json()["token"]

    def _xsrf(self) -> dict:
        xsrf = [c.value for c in self.http.cookies if c.name == "_xsrf"]   # (one per path)
        return {"X-XSRFToken": xsrf[-1] if xsrf else ""}

    def api(self, method: str, path: str, token: str | None = None, **kw):
        import requests
        return requests.request(method, self.base + path, timeout=120, headers={
            "Authorization": f"token {token or self.token}"}, **kw)

    def start_server(self, timeout: float = 600) -> float:
        """Asks for the attendee's server, as their browser's page does: told to wait (the
        hub's queue: 429 with Retry-After), asks again after that many seconds; a start that
        failed, asked again as the attendee would. Figures: `answered_s` (the first answer:
        the queue's wait, or the start's progress), `server_start_s` (ready), from the first
        ask."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            r = self.api("POST", f"/hub/api/users/{self.user}/server")
            self.figures.setdefault("answered_s", time.monotonic() - t0)
            if r.status_code == 429 and "Retry-After" in r.headers:
                self.figures.setdefault("queued_s", time.monotonic() - t0)
                self.figures["told"] = r.json().get("message", "")
                time.sleep(int(r.headers["Retry-After"]))
                continue
            if r.status_code not in (201, 202, 400):   # 400: already running or starting
                raise RuntimeError(f"{self.user}: the hub would not start a server: "
                                   f"{r.status_code} {r.text[:200]}")
            if self._ready(t0, timeout):
                self.figures["server_start_s"] = time.monotonic() - t0
                return self.figures["server_start_s"]
            self.figures["failed_starts"] = self.figures.get("failed_starts", 0) + 1
        raise RuntimeError(f"{self.user}: the server did not start within {timeout:.0f} s")

    def _ready(self, t0: float, timeout: float) -> bool:
        """Whether the server started: False as soon as the start failed."""
        while time.monotonic() - t0 < timeout:
            server = self.api("GET", f"/hub/api/users/{self.user}").json().get(
                "servers", {}).get("")
            if server and server.get("ready"):
                return True
            if not server or not server.get("pending"):
                return False
            time.sleep(0.5)
        return False

    def start_kernel(self, notebook: str = LAB, fresh: bool = False) -> str:
        """The kernel of a notebook in the attendee's copy, as opening it in JupyterLab
        starts one (a session: the kernel runs in the notebook's folder); `fresh`: the
        notebook's session shut down first, so a new kernel (one the server restarted after it
        died mid-cell stays "busy" to the server, which then skips the check that a new
        connection hears the kernel's output: a cell's output can be lost, jupyter_server)."""
        if fresh:
            for s in self.api("GET", f"/user/{self.user}/api/sessions").json():
                if s.get("path") == notebook:
                    self.api("DELETE", f"/user/{self.user}/api/sessions/{s['id']}")
        r = self.api("POST", f"/user/{self.user}/api/sessions", json={
            "path": notebook, "name": Path(notebook).name, "type": "notebook",
            "kernel": {"name": "python3"}})
        r.raise_for_status()
        self.kernel = r.json()["kernel"]["id"]
        return self.kernel

    def run(self, code: str, timeout: float = 300) -> dict:
        """One cell in the attendee's kernel over its websocket: {'status', 'out', 'error',
        'seconds'}."""
        import websocket
        url = (self.base.replace("http", "ws", 1)
               + f"/user/{self.user}/api/kernels/{self.kernel}/channels")
        for attempt in range(3):   # JupyterLab connects again too, when a busy server was slow
            try:
                ws = websocket.create_connection(url, timeout=timeout,
                                                 header=[f"Authorization: token {self.token}"])
                break
            except websocket.WebSocketBadStatusException as e:
                if attempt == 2 or e.status_code != 599:
                    raise
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "username": self.user, "session": uuid.uuid4().hex,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False,
                        "stop_on_error": True}}))
        t0, out, error, status, idle = time.monotonic(), [], None, None, False
        try:
            while status is None or not idle:
                # (the server's pings, returned here, end a wait past `timeout`: taken inside
                # recv(), each restarted the socket's timeout, and a lost reply waited forever)
                if time.monotonic() - t0 > timeout:
                    raise TimeoutError(f"{self.user}'s kernel: no reply to the cell in "
                                       f"{timeout:.0f} s")
                opcode, frame = ws.recv_data_frame(True)
                if opcode != websocket.ABNF.OPCODE_TEXT:
                    continue
                msg = json.loads(frame.data)
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind == "stream":
                    out.append(content["text"])
                elif kind in ("execute_result", "display_data"):
                    out.append(content["data"].get("text/plain", ""))
                elif kind == "error":
                    error = f"{content['ename']}: {content['evalue']}"
                elif kind == "execute_reply":
                    status = content["status"]
                elif kind == "status" and content["execution_state"] == "idle":
                    idle = True
        finally:
            ws.close()
        return {"status": status, "out": "".join(out), "error": error,
                "seconds": time.monotonic() - t0}

    def kernel_pid(self) -> int:
        return int(self.run("import os; print(os.getpid())")["out"])


def solution_cells(path: Path = SOLUTION) -> list[str]:
    return ["".join(c.source) for c in nbs.read(path).cells if c.cell_type == "code"]


def solution(lab: str) -> Path:
    found = sorted(paths.SOLUTIONS.glob(f"{lab.upper()}-*.ipynb"))
    if not found:
        known = ", ".join(p.name.split("-")[0] for p in sorted(paths.SOLUTIONS.glob("*.ipynb")))
        raise errors.KitError(f"--lab {lab}: no such lab (the labs: {known})")
    return found[0]


def run_lab(a: Attendee, cells: list[str], name: str = SOLUTION.name) -> list[float]:
    """Every cell of the lab's solution, in order; each cell's seconds. A cell that fails
    stops the lab with its error."""
    took = []
    for i, code in enumerate(cells, 1):
        got = a.run(code)
        if got["status"] != "ok":
            said = got["out"].strip().splitlines()[-1:] or [""]
            raise RuntimeError(f"{a.user}: cell {i} of {name} failed: {got['error']} "
                               f"{said[0][:300]}".rstrip())
        took.append(got["seconds"])
    return took


def rss_mib(pid: int) -> float:
    import psutil
    return psutil.Process(pid).memory_info().rss / 2**20


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load_home() -> Path:
    """The benchmark's own hub environment, beside the presenter's (HUB_HOME-load): a
    benchmark run beside a live hub never remakes the environment that hub's attendees run."""
    from . import local as hub
    return hub.HUB_HOME.with_name(hub.HUB_HOME.name + "-load")


def load_names(n: int) -> list[str]:
    """N attendees' names no attendee of a live hub has: a run's own random stem (an attendee
    could have typed load0), none a system user already."""
    import secrets

    from . import local as hub
    while True:
        names = [f"load{secrets.token_hex(3)}x{i}" for i in range(n)]
        if not any(_user_exists(hub.PREFIX + name) for name in names):
            return names


def _user_exists(user: str) -> bool:
    import pwd
    try:
        pwd.getpwnam(user)
        return True
    except KeyError:
        return False


def bench(n: int, lab: str = "J1", timeout: float = 900) -> dict:
    """N attendees at once on a hub on loopback; their figures."""
    from . import local as hub
    if not 1 <= n <= 40:
        raise errors.KitError(f"{n} attendees: from 1 to 40 (a benchmark on this machine, "
                              "bounded in count and time)")
    source = solution(lab)
    state = Path(tempfile.mkdtemp(prefix="workshop-hub-load-"))
    try:
        port = hub.free_port()
        room = hub.Room(n, min(hub.STARTS_AT_ONCE, n + 1),   # (homes of the least size: a
                        disk_gib=0.25)                     # simulated attendee writes little)
        started, code = hub.start("127.0.0.1", port, room, None, state=state, home=load_home())
    except BaseException:
        shutil.rmtree(state, ignore_errors=True)
        raise
    cells = solution_cells(source)
    people = [Attendee(f"http://127.0.0.1:{port}", name, code) for name in load_names(n)]
    failures: list[str] = []
    t0 = time.monotonic()
    try:
        threads = [threading.Thread(target=attend, args=(a, source, cells, failures),
                                    daemon=True) for a in people]
        for t in threads:
            t.start()
        for t in threads:
            t.join(max(1, timeout - (time.monotonic() - t0)))
        wall = time.monotonic() - t0
    finally:
        started.stop()
        hub.remove_attendees(state, quiet=True)
        shutil.rmtree(state, ignore_errors=True)   # (its codes too: root's, but in /tmp)
    fig = summary(people, source, cells, failures)
    return fig | {"wall_s": wall, "starts_at_once": room.starts,
                  "caps": hub.caps_line(started.caps, room)}


def attend(a: Attendee, source: Path, cells: list[str], failures: list[str]) -> None:
    """One simulated attendee: log in, start a server (queued or not), run the lab."""
    import psutil
    try:
        a.login()
        a.start_server()
        a.start_kernel(f"exercises/{source.name}")
        a.figures["python"] = a.run("import sys; print(sys.executable)")["out"].strip()
        setup = a.run(cells[0])
        a.figures["setup_cell_s"] = setup["seconds"]
        pid = a.kernel_pid()
        a.figures["kernel_mib_after_setup"] = rss_mib(pid)
        a.figures["cells_s"] = run_lab(a, cells[1:], source.name)
        a.figures["kernel_mib_after_lab"] = rss_mib(pid)
        a.figures["server_mib"] = rss_mib(psutil.Process(pid).parent().pid)
    except Exception as e:
        failures.append(f"{a.name}: {e}")


def summary(people: list[Attendee], source: Path, cells: list[str],
            failures: list[str]) -> dict:
    """The figures of those who finished; the queue's of everyone."""
    import psutil
    done = [a.figures for a in people if "kernel_mib_after_lab" in a.figures]
    if not done:
        raise errors.KitError("no attendee finished: " + "; ".join(failures[:3]))
    starts = [f["server_start_s"] for f in done]
    cells_s = [s for f in done for s in f["cells_s"]]
    queued = [a.figures for a in people if "queued_s" in a.figures]
    # an attendee's first answer: the queue's "wait" or the start's progress (what their page
    # shows), after logging in
    answered = [a.figures.get("answered_s", float("inf")) for a in people]
    return {
        "attendees": len(people), "lab": source.stem, "cells": len(cells),
        "finished": len(done), "failures": failures, "names": [a.user for a in people],
        "pythons": sorted({f["python"] for f in done}),
        "cpus": psutil.cpu_count(), "mem_gib": psutil.virtual_memory().total / 2**30,
        "server_start_p50_s": statistics.median(starts), "server_start_p95_s": pct(starts, .95),
        "server_start_max_s": max(starts),
        "queued": len(queued), "queue_said": sorted({f["told"] for f in queued}),
        "first_answer_max_s": max(answered),
        "failed_starts": sum(a.figures.get("failed_starts", 0) for a in people),
        "kernel_mib_after_setup": statistics.mean(f["kernel_mib_after_setup"] for f in done),
        "kernel_mib_after_lab": statistics.mean(f["kernel_mib_after_lab"] for f in done),
        "server_mib": statistics.mean(f["server_mib"] for f in done),
        "cell_p50_s": statistics.median(cells_s), "cell_p95_s": pct(cells_s, .95),
        "lab_s_mean": statistics.mean(sum(f["cells_s"]) for f in done),
    }


def report(fig: dict) -> str:
    lines = [
        f"{fig['finished']} of {fig['attendees']} attendees ran {fig['lab']}'s "
        f"{fig['cells']} cells on {fig['cpus']} cores and "
        f"{fig['mem_gib']:.0f} GiB, in {fig['wall_s']:.0f} s; {fig['caps']}",
        f"server start: p50 {fig['server_start_p50_s']:.1f} s, p95 "
        f"{fig['server_start_p95_s']:.1f} s, the last {fig['server_start_max_s']:.1f} s "
        f"({fig['starts_at_once']} starting at once; the queue's wait included)",
        f"queue: {fig['queued']} of {fig['attendees']} told to wait"
        + (f" ({'; '.join(fig['queue_said'])})" if fig["queued"] else "")
        + f"; every attendee's first answer (the queue or the start's progress) within "
        f"{fig['first_answer_max_s']:.1f} s; {fig['failed_starts']} start(s) failed and "
        "asked again",
        f"kernel memory (RSS): {fig['kernel_mib_after_setup']:.0f} MiB after the setup cell, "
        f"{fig['kernel_mib_after_lab']:.0f} MiB after the lab; the Jupyter server "
        f"{fig['server_mib']:.0f} MiB",
        f"cell latency: p50 {fig['cell_p50_s']:.2f} s, p95 {fig['cell_p95_s']:.2f} s; the "
        f"whole lab {fig['lab_s_mean']:.0f} s on average",
    ]
    lines += [f"failed: {f}" for f in fig["failures"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="hub-load", description=__doc__.split("\n\n")[0])
    ap.add_argument("attendees", type=int, help="how many log in at once (1 to 40)")
    ap.add_argument("--lab", default="J1", help="whose solution they run (default J1)")
    ap.add_argument("--json", action="store_true", help="the figures as JSON")
    args = ap.parse_args(argv)
    try:
        fig = bench(args.attendees, args.lab)
    except errors.KitError as e:
        print(f"hub-load: {e}", file=sys.stderr)
        return 2
    print(json.dumps(fig, indent=1) if args.json else report(fig))
    return 1 if fig["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
