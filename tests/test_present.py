"""End to end: the present command's server, every deck in RISE in a real headless Chromium,
the setup cell and one code cell run from the slideshow, nothing fetched from off the machine."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from urllib.parse import urlparse

import pytest

from workshop import browser, notebooks as nbs
from workshop.present import call, free_port, session_for

SHOTS = nbs.ROOT / "build" / "screenshots"


@pytest.fixture(scope="module")
def chromium():
    exe = browser.find()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail(f"no browser for the RISE test: {browser.INSTALL}")
        pytest.skip(f"no browser: {browser.INSTALL}")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=browser.ARGS)
        yield b
        b.close()


def start_present(deck: str, port: int):
    p = subprocess.Popen([sys.executable, "-m", "workshop", "present", deck, "--no-browser",
                          "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, cwd=nbs.ROOT)
    seen, url = [], None
    end = time.monotonic() + 120
    while time.monotonic() < end and url is None:
        line = p.stdout.readline()
        if not line and p.poll() is not None:
            break
        seen.append(line)
        m = re.search(r"http://\S+", line)
        url = m.group(0) if m else None
    if url is None:
        p.kill()
        pytest.fail("present printed no URL:\n" + "".join(seen))
    return p, url


def stop_present(p) -> int:
    if p.poll() is None:
        p.send_signal(signal.SIGINT)       # what Ctrl-C sends
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


def port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def run_cell(page, cell, expect: str | None, timeout=90_000) -> str:
    cell.query_selector(".cm-content").click(force=True)
    page.keyboard.press("Control+Enter")   # runs without moving to the next slide
    out = cell.wait_for_selector(".jp-OutputArea-output", timeout=timeout)
    if expect:
        page.wait_for_function("([el, t]) => el.innerText.includes(t)", arg=[out, expect],
                               timeout=timeout)
    page.keyboard.press("Escape")
    return out.inner_text()


@pytest.fixture(scope="module")
def presenting():
    """One `present 01` server for every deck (a server start is the slow part): deck 01 at the
    URL it printed, the others at the same server's RISE address for their path."""
    port = free_port()
    proc, url = start_present("01", port)
    state = {"proc": proc, "url": url, "port": port, "offsite": []}
    yield state
    stop_present(proc)


def open_deck(url: str, deck) -> tuple[str, str | None]:
    """The RISE address of `deck` on the server behind `url`, and the session started for it
    the way present starts one (None for the deck present itself opened)."""
    rel = deck.relative_to(nbs.ROOT).as_posix()
    if f"/rise/{rel}?" in url:
        return url, None
    u = urlparse(url)
    base, token = f"{u.scheme}://{u.netloc}", u.query.split("token=")[1]
    session = session_for(base, token, rel)["id"]
    return re.sub(r"/rise/[^?]+", f"/rise/{rel}", url), session


def close_session(url: str, session: str | None) -> None:
    """Shut the deck's kernel down once its test is over: six JAX kernels at once is load."""
    if session:
        u = urlparse(url)
        call(f"{u.scheme}://{u.netloc}", u.query.split("token=")[1],
             f"/api/sessions/{session}", method="DELETE")


@pytest.mark.parametrize("deck", nbs.decks(), ids=lambda p: p.stem)
def test_deck_opens_in_rise_and_runs_from_the_slideshow(chromium, presenting, deck):
    nb = nbs.read(deck)
    n_slides = sum(nbs.slide_type(c) in ("slide", "subslide") for c in nb.cells)
    url = presenting["url"]
    assert urlparse(url).hostname == "127.0.0.1" and "token=" in url
    assert "/rise/decks/01-" in url, "present 01 opens deck 01"
    offsite = presenting["offsite"]
    page = chromium.new_page(viewport={"width": 1280, "height": 720})

    def guard(route):
        host = urlparse(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in browser.LOOPBACK:
            route.continue_()
        else:
            offsite.append(route.request.url)
            route.abort()
    page.route("**/*", guard)
    deck_url, session = open_deck(url, deck)
    page.goto(deck_url)
    page.wait_for_selector(".reveal .slides section.present", timeout=90_000)
    leaves = page.evaluate(
        "() => document.querySelectorAll('.reveal .slides section:not(.stack)').length")
    assert leaves == n_slides
    assert page.inner_text(".reveal .slide-number").replace(" ", "") == f"1/{n_slides}"
    assert nb.metadata.workshop.title in page.inner_text("#rise-footer")

    setup = page.query_selector(".reveal section.present .jp-CodeCell")
    assert "8 CPU devices" in run_cell(page, setup, "8 CPU devices")
    page.click(".reveal .controls .navigate-right")   # the first section
    page.wait_for_timeout(800)
    cell = page.query_selector(".reveal section.present .jp-CodeCell")
    text = run_cell(page, cell, None)
    pictures = cell.query_selector_all(".jp-OutputArea-output img, .jp-OutputArea-output svg")
    assert text.strip() or pictures, "the cell's output is empty"
    assert "Error" not in text and "Traceback" not in text, text
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{deck.stem}.png"))
    page.close()
    close_session(url, session)
    assert offsite == [], f"the slideshow asked for addresses off this machine: {offsite}"


def test_presenting_never_autosaves_the_committed_deck(presenting):
    # JupyterLab autosaves a notebook two minutes after a cell runs: the server present starts
    # has autosave off (its own settings folder), so the deck's outputs are never written
    u = urlparse(presenting["url"])
    got = call(f"{u.scheme}://{u.netloc}", u.query.split("token=")[1],
               "/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
    assert got["settings"]["autosave"] is False, got["settings"]
    for deck in nbs.decks():
        assert deck.read_text(encoding="utf-8") == nbs.normalised(nbs.read(deck)), deck.name


def test_ctrl_c_stops_the_server_cleanly(presenting):
    # runs after the decks (pytest keeps the file's order): the server that served them all
    assert stop_present(presenting["proc"]) == 0, "Ctrl-C should stop the server cleanly"
    assert not port_open(presenting["port"]), "the server is still listening after Ctrl-C"


def test_present_lists_decks_and_refuses_a_wrong_name():
    run = lambda *a: subprocess.run([sys.executable, "-m", "workshop", "present", *a],
                                    capture_output=True, text=True, cwd=nbs.ROOT, timeout=60)
    listing = run()
    assert listing.returncode == 0 and "01-run-it-first" in listing.stdout
    wrong = run("99")
    assert wrong.returncode == 2 and "'99' is not a deck of the kit" in wrong.stderr
    assert "01-run-it-first" in wrong.stderr


def _kernel_processes(kernel_id: str) -> list[int]:
    pids = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if f"kernel-{kernel_id}".encode() in f.read():
                    pids.append(int(d))
        except (OSError, ValueError):
            continue
    return pids


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_kill_or_a_closed_terminal_stops_the_server_and_its_kernel(sig):
    port = free_port()
    proc, url = start_present("01", port)
    u = urlparse(url)
    kernels = call(f"{u.scheme}://{u.netloc}", u.query.split("token=")[1], "/api/kernels")
    assert len(kernels) == 1 and _kernel_processes(kernels[0]["id"])
    proc.send_signal(sig)
    proc.wait(30)
    assert not port_open(port), f"the server still listens after {sig.name}"
    end = time.monotonic() + 10
    while _kernel_processes(kernels[0]["id"]) and time.monotonic() < end:
        time.sleep(0.2)
    assert _kernel_processes(kernels[0]["id"]) == [], f"the kernel outlived {sig.name}"


def test_a_port_out_of_range_is_one_line():
    p = subprocess.run([sys.executable, "-m", "workshop", "present", "01", "--no-browser",
                        "--port", "70000"], capture_output=True, text=True, cwd=nbs.ROOT,
                       timeout=60)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0
    assert "--port 70000: pick a port from 1024 to 65535" in p.stderr


def test_the_browser_is_opened_without_the_token_on_its_command_line(presenting, tmp_path):
    import stat
    from workshop.present import Server
    server = Server.__new__(Server)             # only its log path is needed here
    server.log = tmp_path / "1234.log"
    url = presenting["url"]
    uri = server.opener(url)
    token = urlparse(url).query.split("token=")[1]
    assert uri.startswith("file://") and token not in uri
    page = tmp_path / "1234.open.html"
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    assert f"url={url}" in page.read_text().replace("&amp;", "&")
