"""What brings `present`'s first slide sooner (issue 49 part 8), each shown doing its job, and
the benchmark that measures it (workshop/tools/present/bench.py). Its figure is in the guide,
not asserted here: a timed test fails on a busy machine, not on a slow kit."""
from __future__ import annotations

import http.server
import json
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

import workshop
from workshop.tools import paths
from workshop.tools.present import bench
from workshop.tools.present.extension import NOT_IN_SLIDESHOW_PLUGINS, SETTINGS_LATER
from workshop.tools.present.server import NOT_IN_SERVER, Server, free_port

# the modules of the runtime's names (workshop/__init__.py): the tools import none of them
RUNTIME = sorted(workshop._FROM)


def test_the_tools_import_none_of_the_runtime():
    # `python -m workshop …` and present's server import the package's tools; the package's
    # __init__ (the attendees' names) imports a module only when a name of it is used
    code = ("import sys, workshop.tools.cli, workshop.tools.present.extension, "
            "workshop.tools.present.server; print(sorted(m for m in sys.modules if m == 'numpy'"
            f" or m in {['workshop.' + m for m in RUNTIME]!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=paths.ROOT, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
    # and each name of the runtime is there when asked for, by import or by attribute
    code = ("import workshop; from workshop import *; import workshop.show as s; "
            "assert all(getattr(workshop, n) is globals()[n] for n in workshop.__all__); "
            "assert workshop.show_source is s.show_source and 'setup' in dir(workshop); "
            "print(type(workshop.__dict__.get('setup')).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=paths.ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "function", out.stdout + out.stderr


@pytest.mark.slow
def test_the_slideshow_server_looks_for_no_node_and_loads_no_unused_extension(tmp_path,
                                                                              monkeypatch):
    # a `node` first on the PATH that leaves a mark when run: JupyterLab's import ran
    # `node yarn.js config` (0.8 s of each start); present's server runs no Node.js
    marks = tmp_path / "node-ran"
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name in ("node", "nodejs", "npm"):
        (bin_ / name).write_text(f'#!/bin/sh\necho "$0 $*" >> {marks}\necho "{{}}"\n')
        (bin_ / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    server = Server(free_port(), log=tmp_path / "server.log")
    try:
        server.wait_ready(timeout=120)
    finally:
        server.stop()
    log = (tmp_path / "server.log").read_text()
    assert not marks.exists(), marks.read_text()
    # the slideshow's three, and not one of NOT_IN_SERVER, installed beside them
    loaded = re.findall(r"(\S+) \| extension was successfully loaded", log)
    assert sorted(loaded) == ["jupyterlab", "jupyterlab_rise",
                              "workshop.tools.present.extension"], log
    assert all(f"{name} | extension was successfully linked" not in log
               for name in NOT_IN_SERVER), log


class _Deck(http.server.BaseHTTPRequestHandler):
    def do_GET(self):   # every address (the opener's /api question included)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<p>served here</p>")

    def log_message(self, *args):
        pass


def test_the_browser_opened_before_the_server_waits_for_it_then_shows_the_deck(chromium,
                                                                               tmp_path):
    # present opens the browser as the server starts: the page it opens goes to the deck
    # once present says the server is its own and ready (release), not before: not when
    # something answers on the port (a browser sent there at once shows its own error page,
    # and a program that took the port first would get the token)
    port = free_port()
    url = f"http://127.0.0.1:{port}/rise/decks/x.ipynb?token={secrets.token_urlsafe(8)}"
    server = Server.__new__(Server)   # only its log path is needed here
    server.log = tmp_path / f"{port}.log"
    page = chromium.new_page()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Deck)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        page.goto(server.opener())
        time.sleep(1.5)   # a server answers, but present has not released the page
        assert page.url.startswith("file://") and "starting" in page.inner_text("body")
        assert "token" not in server.log.with_suffix(".open.html").read_text()
        server.release(url)
        page.wait_for_function("() => document.body.innerText.includes('served here')",
                               timeout=15_000)
        assert page.url == url
    finally:
        page.close()
        httpd.shutdown()
        httpd.server_close()


def test_the_rise_page_hides_the_notebook_until_slides_and_loads_three_settings_later(
        chromium, presenting):
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(presenting["url"])
        title = bench.title_of(paths.DECKS / "01-run-it-first.ipynb")
        drawn = page.wait_for_function(bench.DRAWN_JS, arg=title, polling=100,
                                       timeout=120_000).json_value()
        assert drawn > 1e12   # the time it was seen drawn, in ms since the epoch
        assert page.evaluate(bench.DRAWN_JS, "no such title") is False
        # until RISE marks the body, JupyterLab builds the cells undrawn (no layout per cell)
        shown = page.evaluate("""() => {
          const nb = document.querySelector('.jp-Notebook'), b = document.body.classList;
          const on = getComputedStyle(nb).display;
          b.remove('rise-enabled'); const off = getComputedStyle(nb).display;
          b.add('rise-enabled'); return [on, off]; }""")
        assert shown[0] != "none" and shown[1] == "none", shown
        config = json.loads(page.inner_text("#jupyter-config-data"))
        assert set(SETTINGS_LATER) <= set(config.get("deferredExtensions", [])), config
        assert set(NOT_IN_SLIDESHOW_PLUGINS) <= set(config.get("disabledExtensions", [])), config
    finally:
        page.close()
    # each left-out plugin is one RISE's page would start: a name JupyterLab dropped or renamed
    # would leave out nothing
    import jupyterlab_rise
    bundles = " ".join(js.read_text(encoding="utf-8", errors="replace") for js in
                       (Path(jupyterlab_rise.__file__).parent / "static").glob("*.js"))
    assert [p for p in NOT_IN_SLIDESHOW_PLUGINS if f'id:"{p}"' not in bundles] == []
    # each is a JupyterLab plugin whose settings need a transform (the settings registry waited
    # for them): a name JupyterLab dropped or renamed would defer nothing
    schemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    for plugin in SETTINGS_LATER:
        package, name = plugin.split(":")
        schema = json.loads((schemas / package / f"{name}.json").read_text())
        assert schema.get("jupyter.lab.transform") is True, plugin


@pytest.mark.thorough   # the maintainer's benchmark (a whole present start, 15 s of CPU)
def test_the_benchmark_times_a_run_and_leaves_nothing_running():
    mark = secrets.token_hex(8)   # in the environment of everything the bench starts
    env = {**os.environ, "WORKSHOP_BENCH_TEST": mark}
    p = subprocess.run([sys.executable, "-m", "workshop.tools.present.bench", "01", "--runs",
                        "1"], capture_output=True, text=True, cwd=paths.ROOT, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    run = re.search(r"run 1: +([\d.]+) s to the first slide .*RISE page ([\d.]+) s", p.stdout)
    assert run and 0 < float(run.group(2)) < float(run.group(1)), p.stdout
    assert re.search(r"median [\d.]+ s .*load average \(1 min\) [\d.]+", p.stdout), p.stdout
    time.sleep(1)
    left = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            if proc.environ().get("WORKSHOP_BENCH_TEST") == mark:
                left.append(proc)
        except psutil.Error:
            continue
    if left:   # (ended here, so that a failure leaves nothing behind either)
        from workshop.tools.processes import end_processes
        names = [p.info["cmdline"] for p in left]
        end_processes(left)
        pytest.fail(f"the bench left these running: {names}")
    bad = subprocess.run([sys.executable, "-m", "workshop.tools.present.bench", "01", "--runs",
                          "0"], capture_output=True, text=True, cwd=paths.ROOT, timeout=60)
    assert bad.returncode == 2 and bad.stderr == "bench-present: --runs: at least 1\n"
