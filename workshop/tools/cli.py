"""`python -m workshop COMMAND`: the logic behind scripts/ (which only make .venv first)."""
from __future__ import annotations

import argparse
import errno
import sys
from pathlib import Path

from . import errors, paths

# what an OSError means when the kit cannot write where it must: one line, not a traceback
UNWRITABLE = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT}


def cmd_build(args) -> int:
    """Execute every deck and lab solution (fresh kernels, two at a time), export handouts."""
    from .builder import pipeline
    return pipeline.build(args.notebooks, force=args.force, pdf=not args.no_pdf,
                          site=args.site)


def cmd_labs(args) -> int:
    from .authoring import labgen
    stale = labgen.generate(check=args.check)
    if args.check and stale:
        print(f"labs: stale attendee copies: {', '.join(stale)}; run python -m workshop labs")
        return 1
    print(f"labs: {'regenerated ' + ', '.join(stale) if stale else 'attendee copies current'}")
    return 0


def cmd_fmt(args) -> int:
    """Normalise the kit's notebooks and write what they say of the kit (or check)."""
    from .authoring import fmt
    return fmt.main(args.notebooks, check=args.check)


def cmd_doctor(args) -> int:
    from . import doctor
    return doctor.main()


def cmd_drift(args) -> int:
    from pathlib import Path

    from . import drift
    return drift.main(args.version, args.python, args.notebooks,
                      Path(args.report) if args.report else drift.DRIFT)


def cmd_present(args) -> int:
    from .present import server as present
    return present.main(args.deck, port=args.port, open_browser=not args.no_browser,
                        rehearse=args.rehearse, byline={"presenter": args.presenter,
                                                        "event": args.event, "date": args.date},
                        report=args.report)


def cmd_hub(args) -> int:
    from .hub import local as hub
    if args.room or args.names:
        from .hub import room as view
        hub.check_machine()
        return view.main(names=args.names)
    starts = min(hub.STARTS_AT_ONCE, args.attendees + 1) if args.starts is None else args.starts
    room = hub.Room(args.attendees, starts, args.memory_cap, args.cpu_cap, args.ssl_cert or "",
                    args.ssl_key or "", args.room_view, args.disk_cap)
    return hub.main(args.ip, args.port, room, Path(args.code_file) if args.code_file else None,
                    args.remove_attendees, args.update_materials)


def cmd_kubernetes(args) -> int:
    from .hub import kubernetes
    return kubernetes.main()


def cmd_schedule(args) -> int:
    from .authoring import schedule
    return schedule.main(args.start, args.session, write_files=args.write)


def cmd_compose(args) -> int:
    from .authoring import compose
    return compose.main(args.out, args.title, args.sections, force=args.force,
                        thesis=args.thesis)


def cmd_release(args) -> int:
    from . import release
    return release.main()


def cmd_new(args) -> int:
    from .authoring import scaffold
    if args.what == "deck":
        lines = scaffold.new_deck(args.phase, args.title, args.lab, args.minutes)
    else:
        lines = scaffold.new_lab(args.id, args.title, args.deck, args.minutes)
    for line in lines:
        print(f"new {args.what}: {line}")
    return 0


def _build_commands(sub) -> None:
    """build, labs, fmt, release: what makes and checks the kit's files."""
    b = sub.add_parser("build", help="execute every deck and lab solution; write the report")
    b.add_argument("notebooks", nargs="*", help="01, 1, J1, a name or a path; none means all")
    b.add_argument("--force", action="store_true",
                   help="run even what is current (a PDF whose inputs are unchanged keeps its "
                        "bytes)")
    b.add_argument("--no-pdf", action="store_true", help="only execute (no browser needed)")
    b.add_argument("--site", action="store_true",
                   help="then the course as a web site, build/site/, from the executed notebooks")
    b.set_defaults(fn=cmd_build)
    la = sub.add_parser("labs", help="generate the attendee copies of the labs")
    la.add_argument("--check", action="store_true", help="fail if a committed copy is stale")
    la.set_defaults(fn=cmd_labs)
    f = sub.add_parser("fmt", help="strip outputs, normalise notebook JSON; write the phases, the "
                                  "README's table and the guide's timings from the metadata")
    f.add_argument("notebooks", nargs="*")
    f.add_argument("--check", action="store_true")
    f.set_defaults(fn=cmd_fmt)
    rl = sub.add_parser("release", help="tag this commit vVERSION (pyproject.toml's), its "
                                        "CHANGELOG entry the message; refuses uncommitted or "
                                        "stale work")
    rl.set_defaults(fn=cmd_release)


def _check_commands(sub) -> None:
    """doctor, drift: whether this machine, or another JAX, runs the kit."""
    d = sub.add_parser("doctor", help="check this machine for presenting and following along")
    d.set_defaults(fn=cmd_doctor)
    dr = sub.add_parser("drift", help="run every notebook on another JAX; name each slide "
                                      "and cell whose claim broke")
    dr.add_argument("version", nargs="?", help="a JAX release, e.g. 0.10.2 (a side "
                                                "environment in build/drift/, reused)")
    dr.add_argument("--python", help="run in this interpreter instead (it has JAX already)")
    dr.add_argument("--only", dest="notebooks", action="append", default=[],
                    metavar="NOTEBOOK", help="only this notebook (01, J1, a path); repeatable")
    dr.add_argument("--report", metavar="DIR", help="write the report here (default build/drift)")
    dr.set_defaults(fn=cmd_drift)


def _present_commands(sub) -> None:
    """present: a deck in RISE."""
    pr = sub.add_parser("present", help="open a deck in RISE (JupyterLab on 127.0.0.1)")
    pr.add_argument("deck", nargs="?", help="03, 3 or a name; none lists the decks")
    pr.add_argument("--port", type=int, help="a loopback port (default: a free one)")
    pr.add_argument("--no-browser", action="store_true", help="print the URL only")
    pr.add_argument("--rehearse", action="store_true",
                    help="record when each slide is shown; on Ctrl-C write "
                         "build/rehearsal/DECK-TIME.md (planned against actual minutes)")
    pr.add_argument("--report", metavar="LOG",
                    help="only write the report of a rehearsal from its kept log, "
                         "build/rehearsal/DECK-TIME.log (where present was killed before it "
                         "wrote it)")
    for key, example in (("presenter", "Ada Lovelace"), ("event", "PyData Berlin"),
                         ("date", "12 June 2026")):
        pr.add_argument(f"--{key}", metavar="TEXT",
                        help=f'the title slide shows it under the heading (e.g. "{example}"; '
                             f"default: presenting.toml's {key}, else nothing)")
    pr.set_defaults(fn=cmd_present)


def _hub_command(sub) -> None:
    """hub: the classroom hub on this machine."""
    hb = sub.add_parser("hub", help="the workshop on a JupyterHub on this machine, for "
                                    "attendees without a working laptop (as root)")
    hb.add_argument("--port", type=int, default=8000, help="where attendees connect "
                                                           "(default 8000)")
    hb.add_argument("--ip", default="0.0.0.0", help="the address to listen on (default: all, "
                                                    "so the room can reach it)")
    hb.add_argument("--attendees", type=int, default=30, metavar="N",
                    help="the most attendees it admits, each a server of their own (default 30)")
    hb.add_argument("--starts-at-once", type=int, metavar="N", dest="starts",
                    help="servers started at once; more attendees arriving together queue, "
                         "on a page that asks again by itself (default: 2 per core)")
    hb.add_argument("--memory-cap", type=float, default=1.0, metavar="GIB",
                    help="each attendee's memory, kernels and server together; past it the "
                         "kernel allocating is ended, no other attendee's (default 1)")
    hb.add_argument("--cpu-cap", type=float, default=1.0, metavar="CORES",
                    help="each attendee's share of the cores at most (default 1)")
    hb.add_argument("--disk-cap", type=float, default=1.0, metavar="GIB",
                    help="each attendee's home, a file system of its own; their /tmp is "
                         "their own, under the memory cap (default 1; 0: not capped)")
    hb.add_argument("--code-file", metavar="FILE",
                    help="read the attendees' code from FILE (mode 600); default: one made "
                         "once and kept in /var/lib/jax-core-workshop-hub/")
    hb.add_argument("--ssl-cert", metavar="PEM", help="HTTPS with this certificate (the "
                    "README says how to make one for a room without a domain)")
    hb.add_argument("--ssl-key", metavar="PEM", help="the certificate's key (mode 600)")
    hb.add_argument("--update-materials", action="store_true",
                    help="while the hub runs: push the kit's changed decks and labs to every "
                         "attendee; a file they edited stays, the new one beside it")
    hb.add_argument("--room-view", action="store_true",
                    help="let each attendee's lab checks record pass or fail per task (never "
                         "their answers) for --room; the login page tells them")
    hb.add_argument("--room", action="store_true",
                    help="while the hub runs: per lab task, how many attendees' latest check "
                         "passed (a hub started with --room-view)")
    hb.add_argument("--names", action="store_true",
                    help="with --room: who passed each task, and who has not yet")
    hb.add_argument("--remove-attendees", action="store_true",
                    help="after the workshop: delete the attendees' users and their files")
    hb.set_defaults(fn=cmd_hub)
    sub.add_parser("kubernetes", help="write deploy/kubernetes/values.yaml's copy of the hub's "
                   "login from workshop/tools/hub/login.py (after changing the login)"
                   ).set_defaults(fn=cmd_kubernetes)


def _authoring_commands(sub) -> None:
    """schedule, compose, new: what a maintainer or speaker writes with."""
    sc = sub.add_parser("schedule", help="the two-day workshop: decks, labs, breaks")
    sc.add_argument("--start", default="09:00", help="the day's start, HH:MM (default 09:00)")
    sc.add_argument("--session", default="120", metavar="MIN",
                    help="the most minutes of teaching between breaks (default 120)")
    sc.add_argument("--write", action="store_true",
                    help="write docs/schedule.md and print handouts/schedule.pdf")
    sc.set_defaults(fn=cmd_schedule)
    co = sub.add_parser("compose", help="a talk made of sections of several decks")
    co.add_argument("out", help="the notebook to write, e.g. talks/jit-talk.ipynb")
    co.add_argument("--title", required=True)
    co.add_argument("sections", nargs="+", metavar="DECK:SECTION",
                    help='e.g. 01:"The four stations of a jitted call" (a unique prefix '
                         "of the title will do)")
    co.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    co.add_argument("--thesis", action="store_true",
                    help="open with the course's thesis slide (deck 01's quote)")
    co.set_defaults(fn=cmd_compose)
    nw = sub.add_parser("new", help="start a new deck or lab that the tests accept")
    what = nw.add_subparsers(dest="what", required=True)
    nd = what.add_parser("deck", help="decks/NN-title.ipynb and its stylesheet")
    nd.add_argument("phase", type=int, help="its phase: the NN of decks/NN-….ipynb")
    nd.add_argument("title")
    nd.add_argument("--lab", required=True, help="the lab that follows it, e.g. J5")
    nd.add_argument("--minutes", type=int, default=45)
    nd.set_defaults(fn=cmd_new)
    nl = what.add_parser("lab", help="a lab's source, checks, wrong answers and attendee copy")
    nl.add_argument("id", help="e.g. J5: a capital letter and digits")
    nl.add_argument("title")
    nl.add_argument("--deck", required=True, help="the deck it follows, e.g. 04-transforms")
    nl.add_argument("--minutes", type=int, default=30)
    nl.set_defaults(fn=cmd_new)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="workshop", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for add in (_build_commands, _check_commands, _present_commands, _hub_command,
                _authoring_commands):
        add(sub)
    return ap


def main(argv: list[str] | None = None, take_ctrl_c: bool = False) -> int:
    """The command line; take_ctrl_c (workshop/__main__.py): Ctrl-C becomes Python's
    KeyboardInterrupt once the command runs, which it answers with its one line (before,
    __main__'s handler ends the process with one line of its own)."""
    ap = parser()
    for stream in (sys.stdout, sys.stderr):   # a terminal that cannot show “ ” · ✓ gets ?
        try:                                    # in their place, never a UnicodeEncodeError
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass
    args = ap.parse_args(argv)
    try:
        if take_ctrl_c:
            import signal
            signal.signal(signal.SIGINT, signal.default_int_handler)
        from .processes import quiet_after_ctrl_c
        quiet_after_ctrl_c()
        return args.fn(args)
    except errors.KitError as e:
        print(f"{ap.prog} {args.cmd}: {e}", file=sys.stderr)
        return 2
    except OSError as e:   # a read-only checkout, a full disk, a folder of another user's
        if e.errno not in UNWRITABLE:
            raise
        where = paths.short(Path(e.filename)) if e.filename else "a file it needs"
        # (the checkout's, where the kit writes; else where it was: the hub's state on a full
        # disk was said to be the checkout, probe 20)
        ours = args.cmd != "hub" and (not e.filename or Path(e.filename).resolve()
                                      .is_relative_to(paths.ROOT))
        hint = ("the kit writes build/ and handouts/ in its checkout: make it writable, or "
                "work in a copy" if ours else "its disk is full: free space there"
                if e.errno in (errno.ENOSPC, errno.EDQUOT) else "make it writable")
        print(f"{ap.prog} {args.cmd}: cannot write {where}: {e.strerror} ({hint})",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{ap.prog} {args.cmd}: interrupted", file=sys.stderr)
        # and nothing after it of what the Ctrl-C cut off half made: an event loop stopped in
        # its own making said "Exception ignored in BaseEventLoop.__del__" and a traceback as
        # Python collected it (CI's rehearsal, a Ctrl-C as the build's printer started)
        sys.unraisablehook = lambda unraisable: None
        return 130
