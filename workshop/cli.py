"""`python -m workshop COMMAND`: the logic behind scripts/ (which only make .venv first)."""
from __future__ import annotations

import argparse
import sys

from . import notebooks as nbs

BUILD = nbs.ROOT / "build"


def cmd_build(args) -> int:
    """Execute every deck and lab solution (fresh kernels, two at a time), export handouts."""
    import nbformat

    from . import browser, env, labgen
    from .build import execute, handouts, report

    bad = env.mismatches()
    if bad:
        print("build: the running environment does not match environment/requirements.lock:")
        print("\n".join(f"  {b}" for b in bad[:10]))
        print("  fix: scripts/setup --force")
        return 1
    paths = nbs.select(args.notebooks)
    for p in paths:   # a corrupt notebook, or one that would show the audience author
        problems = nbs.audience_problems(nbs.read(p))   # material, is named before any kernel
        if problems:
            raise nbs.KitError(f"{nbs.short(p)}: {problems[0]}"
                               + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    pdf = not args.no_pdf
    if pdf and browser.find() is None:
        raise nbs.KitError(f"no browser to print the handouts: {browser.INSTALL} "
                           "(or build without them: --no-pdf)")
    stale = labgen.generate()
    if stale:
        print(f"build: regenerated {', '.join(stale)} from exercises/solutions/")
    todo = [p for p in paths if args.force or not pdf or not handouts.current(p)]
    if len(todo) < len(paths):
        print(f"build: {len(paths) - len(todo)} notebook(s) current, not rebuilt "
              "(--force rebuilds them)")
    executed = {}
    out = BUILD / "executed"
    out.mkdir(parents=True, exist_ok=True)
    run = []
    for p in todo:
        copy = out / p.name
        digest = handouts.inputs_hash(*handouts.sources_of(p))
        if pdf and not args.force and copy.exists():
            nb = nbs.read(copy)
            if nb.metadata.get("workshop_build", {}).get("inputs") == digest:
                executed[p] = nb   # executed from these very inputs: export only
                continue
        run.append(p)
    if run:
        print(f"build: executing {len(run)} notebook(s), {execute.PARALLEL} at a time")
    results = {}
    for p, (res, text) in zip(run, execute.run_many([(p, None) for p in run]) if run else []):
        nb = nbformat.reads(text, as_version=4)
        nb.metadata["workshop_build"] = {"inputs": handouts.inputs_hash(*handouts.sources_of(p))}
        if res.ok:
            handouts.write_atomic(out / p.name, nbformat.writes(nb).encode())
            executed[p] = nb
        results[p] = res
    for p in todo:
        results.setdefault(p, execute.Result(name=nbs.short(p), status="reused run"))
    failed = [r for r in results.values() if not r.ok]
    if pdf and not failed and todo:
        with handouts.Printer() as printer:
            for p in todo:
                try:
                    printed = handouts.export(printer, p, executed[p])
                except handouts.Overflow as e:
                    raise nbs.KitError(f"{nbs.short(p)}: {e}") from None
                results[p].pages = sum(x.pages for x in printed)
                results[p].export_seconds = sum(x.seconds for x in printed)
            if printer.offsite:
                raise nbs.KitError(f"the export asked for addresses off this machine: "
                                   f"{printer.offsite[:3]}")
    if pdf:
        pdfs = sorted(handouts.HANDOUTS.glob("*.pdf"))
        handouts.write_index([(q, handouts.pages_of(q)) for q in pdfs])
    rows = []
    for p in paths:
        if p in results:
            rows.append(results[p])
        else:
            rows.append(execute.Result(name=nbs.short(p), status="current", pages=sum(
                handouts.pages_of(t) for t in handouts.targets(p))))
    exempt = {nbs.short(p): {i for i, c in enumerate(nbs.read(p).cells)
                             if {"slow", "setup"} & set(nbs.tags(c))} for p in paths}
    print(report.write(rows, report.over_budget(rows, exempt), BUILD))
    print(f"build: report in {nbs.short(BUILD / 'report.md')}, executed copies in "
          f"{nbs.short(out)}/" + (", handouts in handouts/" if pdf else ""))
    for r in failed:
        print(f"FAILED {r.name}: {r.failure}")
    return 1 if failed else 0


def cmd_labs(args) -> int:
    from . import labgen
    stale = labgen.generate(check=args.check)
    if args.check and stale:
        print(f"labs: stale attendee copies: {', '.join(stale)}; run python -m workshop labs")
        return 1
    print(f"labs: {'regenerated ' + ', '.join(stale) if stale else 'attendee copies current'}")
    return 0


def cmd_fmt(args) -> int:
    """Strip outputs and normalise the JSON of the kit's notebooks (or check that they are)."""
    dirty = []
    for p in nbs.select(args.notebooks):
        text = nbs.normalised(nbs.read(p))
        if p.read_text(encoding="utf-8") != text:
            dirty.append(nbs.short(p))
            if not args.check:
                tmp = p.with_name(p.name + ".tmp")
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(p)
    if args.check and dirty:
        print(f"fmt: not normalised: {', '.join(dirty)}; run python -m workshop fmt")
        return 1
    print(f"fmt: {'normalised ' + ', '.join(dirty) if dirty else 'all notebooks normalised'}")
    return 0


def cmd_doctor(args) -> int:
    from . import doctor
    return doctor.main()


def cmd_drift(args) -> int:
    from . import drift
    from pathlib import Path
    return drift.main(args.version, args.python, args.notebooks,
                      Path(args.report) if args.report else drift.DRIFT)


def cmd_present(args) -> int:
    from . import present
    return present.main(args.deck, port=args.port, open_browser=not args.no_browser)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="workshop", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="execute every deck and lab solution; write the report")
    b.add_argument("notebooks", nargs="*", help="01, 1, J1, a name or a path; none means all")
    b.add_argument("--force", action="store_true", help="rebuild even what is current")
    b.add_argument("--no-pdf", action="store_true", help="only execute (no browser needed)")
    b.set_defaults(fn=cmd_build)
    la = sub.add_parser("labs", help="generate the attendee copies of the labs")
    la.add_argument("--check", action="store_true", help="fail if a committed copy is stale")
    la.set_defaults(fn=cmd_labs)
    f = sub.add_parser("fmt", help="strip outputs, normalise notebook JSON")
    f.add_argument("notebooks", nargs="*")
    f.add_argument("--check", action="store_true")
    f.set_defaults(fn=cmd_fmt)
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
    pr = sub.add_parser("present", help="open a deck in RISE (JupyterLab on 127.0.0.1)")
    pr.add_argument("deck", nargs="?", help="03, 3 or a name; none lists the decks")
    pr.add_argument("--port", type=int, help="a loopback port (default: a free one)")
    pr.add_argument("--no-browser", action="store_true", help="print the URL only")
    pr.set_defaults(fn=cmd_present)
    args = ap.parse_args(argv)
    try:
        return args.fn(args)
    except nbs.KitError as e:
        print(f"{ap.prog} {args.cmd}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{ap.prog} {args.cmd}: interrupted", file=sys.stderr)
        return 130
