"""The presenter's pack, printed by the build beside the handouts, in handouts/presenter/ (a
folder of its own: the room is handed handouts/, the presenter and the helpers this):

- `NN-name.card.pdf`, one A4 page per deck: the plan (each section's minutes and start, from
  the same talk-time estimate as the notes window's pacing, `rehearse.plan`), where to cut when
  behind and what to bring in when ahead with their minutes (`present/pacing.py`), the key
  points, and the lab that follows with its minutes and its debrief slot;
- `ID-name.debrief.pdf`, one per lab: `debrief.py`'s five common mistakes with what the check
  says to each, what to say after the lab, the lab's minutes.

Each is stamped, as every handout is, with the hash of what it is made from (`inputs.digest_of`:
the notebook, the lab's metadata or its debrief and wrong answers, the lock, the modules that
make it), and reprinted only when that moved.
"""
from __future__ import annotations

import html
import json
import time
from pathlib import Path

from ...config import DEBRIEF, PACING_THRESHOLD
from .. import errors, paths
from .. import notebooks as nbs
from ..present import pacing, rehearse
from . import debrief, inputs, pdfinfo, render
from .handouts import HANDOUTS, jax_version
from .inputs import build_date
from .printer import Printer

FOLDER = HANDOUTS / "presenter"
MODULE = "workshop.tools.builder.presenter"


def card_path(deck: Path) -> Path:
    return FOLDER / f"{Path(deck).stem}.card.pdf"


def debrief_path(lab: Path) -> Path:
    return FOLDER / f"{Path(lab).stem}.debrief.pdf"


def targets(sources: list[Path] | None = None) -> list[Path]:
    """The pack's PDFs for the kit's decks and labs named (all when None)."""
    sources = nbs.all_notebooks() if sources is None else sources
    decks = {p.resolve() for p in nbs.decks()}
    return [card_path(p) if Path(p).resolve() in decks else debrief_path(p) for p in sources]


def lab_of(deck_nb) -> tuple[Path | None, dict]:
    """The deck's lab: its source (None when not written yet) and its metadata."""
    lab = deck_nb.metadata.workshop.get("lab", "")
    found = [p for p in nbs.lab_sources() if p.name.startswith(f"{lab}-")]
    if not found:
        return None, {"lab": lab}
    return found[0], dict(nbs.read(found[0]).metadata.get("workshop", {}))


def digest(src: Path) -> str:
    """The hash of what the pack's page for `src` (a deck or a lab source) is made from."""
    src = Path(src)
    if src.resolve() in {p.resolve() for p in nbs.decks()}:
        _, meta = lab_of(nbs.read(src))
        return inputs.digest_of([src], {MODULE}, [("lab metadata", json.dumps(
            meta, sort_keys=True).encode())])
    answers = debrief.answers_file(src)
    uses = inputs._imported(answers.read_text(encoding="utf-8")) if answers.is_file() else set()
    return inputs.digest_of(
        [f for f in (src, debrief.source_of(src), answers, answers.parent / "__init__.py")
         if f.is_file()],
        {MODULE, f"workshop.labs.{src.stem.split('-')[0].lower()}"} | uses)


def current(src: Path) -> bool:
    return pdfinfo.stamp_of(targets([src])[0]) == digest(src)


# ---- the card

CSS = """
body { font-size: 10.5pt; line-height: 1.3; }
h1 { font-size: 20pt; margin: 0 0 1mm; } h2 { font-size: 12.5pt; margin: 4mm 0 1mm; }
p.sub { margin: 0 0 2mm; color: #333; }
table { border-collapse: collapse; width: 100%; }
td, th { border-bottom: 1px solid #ccc; padding: 0.7mm 1.5mm; text-align: left;
         vertical-align: top; }
th { font-weight: 600; } td.n, th.n { text-align: right; white-space: nowrap; }
tr.total td { font-weight: 600; border-bottom: none; }
ul { margin: 0; padding-left: 5mm; } li { margin: 0 0 0.8mm; }
pre.said { white-space: pre-wrap; font-size: 8pt; background: #f5f5f5; padding: 1mm 2mm;
           margin: 1mm 0 0; border-left: 3px solid #b00; }
div.mistake { margin: 0 0 2.5mm; break-inside: avoid; }
"""


def _e(text: str) -> str:
    return html.escape(nbs.plain(str(text)))


def _plan_rows(slides) -> list[str]:
    """One row per talk-path section: its slides, minutes and start, from rehearse.plan."""
    rows, order = [], []
    for s in slides:
        if not s.appendix and s.section not in order:
            order.append(s.section)
    for sec in order:
        mine = [s for s in slides if s.section == sec and not s.appendix]
        rows.append(f"<tr><td>{_e(sec)}</td><td class='n'>{mine[0].number}–{mine[-1].number}"
                    f"</td><td class='n'>{sum(s.seconds for s in mine) / 60:.0f}</td>"
                    f"<td class='n'>{mine[0].at / 60:.0f}</td></tr>")
    return rows


def _lab_line(meta: dict, source: Path | None) -> str:
    if source is None:
        return f"Lab {_e(meta['lab'])} (not written yet)."
    return (f"Lab {_e(meta['lab'])} · {_e(meta.get('title', ''))}: {meta.get('minutes')} "
            f"minutes (a presenter working its tasks as an attendee would, hints included), "
            f"then a {DEBRIEF}-minute debrief: its page is "
            f"<i>{html.escape(debrief_path(source).name)}</i> in this folder.")


def card_html(nb, number: str = "") -> str:
    """The deck's card (`number`: the deck's, 03): the plan, the cuts and expansions, the key
    points, the lab."""
    w = nb.metadata.workshop
    slides = rehearse.plan(nb)
    cuts, adds, _ = pacing.resolve(nb, slides)
    talk_s = sum(s.seconds for s in slides if not s.appendix)
    source, meta = lab_of(nb)
    late = PACING_THRESHOLD // 60
    head = f"{number} · {_e(w.title)}" if number else _e(w.title)
    out = [f"<h1>{head}</h1><p class='sub'>Presenter's card · {w.minutes} minutes; the "
           f"talk path is about {talk_s / 60:.0f} by the kit's estimate (the notes window's "
           "pacing), the rest is the room's questions.</p>",
           "<h2>The plan</h2><table><tr><th>section</th><th class='n'>slides</th>"
           "<th class='n'>min</th><th class='n'>at</th></tr>", *_plan_rows(slides),
           f"<tr class='total'><td>talk path</td><td></td><td class='n'>{talk_s / 60:.0f}</td>"
           f"<td class='n'>of {w.minutes}</td></tr></table>",
           f"<h2>Behind by more than {late} minutes: cut</h2><table><tr><th>at slide</th>"
           "<th>skip to slide</th><th class='n'>saves</th></tr>"]
    out += [f"<tr><td>{c.start + 1} “{_e(c.frm)}”</td><td>{c.stop + 1} “{_e(c.to)}”</td>"
            f"<td class='n'>{pacing.minutes(c.saves)} min</td></tr>" for c in cuts]
    out.append("</table>")
    if adds:
        out.append(f"<h2>Ahead by more than {late} minutes: bring in from the appendix</h2>"
                   "<table><tr><th>section</th><th class='n'>slide</th><th class='n'>adds</th>"
                   "</tr>")
        out += [f"<tr><td>“{_e(e.section)}”</td><td class='n'>{e.at + 1}</td>"
                f"<td class='n'>{pacing.minutes(e.adds)} min</td></tr>" for e in adds]
        out.append("</table>")
    out += ["<h2>Key points</h2><ul>", *[f"<li>{_e(k)}</li>" for k in w.key_points],
            "</ul>", f"<h2>Then</h2><p>{_lab_line(meta, source)}</p>"]
    return render.document(f"{w.title}: presenter's card", render.READING_CSS + CSS,
                           "".join(out))


# ---- the debrief

def _inline(text: str) -> str:
    """One line of Markdown as HTML, without the paragraph around it."""
    import re
    return re.sub(r"^\s*<p>(.*)</p>\s*$", r"\1", render.markdown(text), flags=re.S)


def debrief_html(lab: Path, d: debrief.Debrief, said: list[dict]) -> str:
    w = nbs.read(lab).metadata.get("workshop", {})
    out = [f"<h1>Lab {_e(w.get('lab'))} · {_e(w.get('title'))}: debrief</h1>"
           f"<p class='sub'>For the presenter and the helpers · after deck "
           f"{_e(w.get('deck', '')[:2])} · the lab takes {w.get('minutes')} minutes (a "
           "presenter working its tasks as an attendee would, hints included), then "
           f"{DEBRIEF} minutes of debrief.</p>",
           f"<h2>{len(d.mistakes)} common mistakes, and what the check says to each</h2>"]
    for m, s in zip(d.mistakes, said):
        words = f"✗ Not yet: {s['message']}" + (f"\n  Hint: {s['hint']}" if s["hint"] else "")
        out.append(f"<div class='mistake'><b>Task {m.task[1:]} · {_e(s['title'])}</b>: "
                   f"{_inline(m.what)}<pre class='said'>"
                   f"{html.escape(render.clean(words))}</pre></div>")
    out.append(f"<h2>What to say after the lab</h2>{render.markdown(d.say)}")
    return render.document(f"Lab {w.get('lab')}: debrief", render.READING_CSS + CSS,
                           "".join(out))


# ---- printing

def _print(printer, src: Path, page: str, title: str, one_page: bool, folder: Path) -> Path:
    out = folder / targets([src])[0].name
    day = build_date(src)
    data, _ = printer.pdf(page, "a4", f"{title} · JAX {jax_version()} · built {day}")
    data = pdfinfo.stamp(data, title, digest(src), day, paths.short(src))
    folder.mkdir(parents=True, exist_ok=True)
    paths.write_atomic(out, data)
    if one_page and pdfinfo.pages_of(out) != 1:
        raise errors.KitError(f"{paths.short(out)} runs to {pdfinfo.pages_of(out)} pages: a "
                              "card is one page (fewer cuts, expansions or key points)")
    return out


def print_one(printer, src: Path, folder: Path = FOLDER) -> Path:
    """Print the pack's page for one deck or lab source, now, into `folder`."""
    src = Path(src)
    if src.resolve() in {p.resolve() for p in nbs.decks()}:
        nb = nbs.read(src)
        return _print(printer, src, card_html(nb, src.stem[:2]),
                      f"{nb.metadata.workshop.title}: presenter's card", True, folder)
    d = debrief.read(src)
    w = nbs.read(src).metadata.get("workshop", {})
    return _print(printer, src, debrief_html(src, d, debrief.said(src, d)),
                  f"Lab {w.get('lab')}: debrief", False, folder)


def write_stale(sources: list[Path]) -> list[Path]:
    """Print the pack's pages of the kit's decks and labs among `sources` that are not made
    from them as they are now (one Chromium for all); the files written."""
    kit = {p.resolve() for p in nbs.all_notebooks()}
    todo = [Path(s) for s in sources if Path(s).resolve() in kit and not current(s)]
    if not todo:
        return []
    t0 = time.perf_counter()
    with Printer() as printer:
        out = [print_one(printer, s) for s in todo]
    print(f"build: the presenter's pack: {len(out)} page(s) in "
          f"{time.perf_counter() - t0:.0f} s")
    return out
