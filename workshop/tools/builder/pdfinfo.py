"""A printed PDF's own record: stamped with what it was built from (the inputs hash, dates
from the notebook's last commit, a file ID from the hash, so printing twice with no change
gives the same bytes), and read back (the stamp, the pages, the slides printed small)."""
from __future__ import annotations

import io
from pathlib import Path

STAMP_KEY = "/WorkshopInputs"
SHRUNK_KEY = "/WorkshopShrunk"   # slides printed below 100%: "5:0.84 10:0.72", or "none"


def stamp_of(pdf: Path) -> str | None:
    """The inputs hash a PDF was built from, or None (missing, unreadable, unstamped)."""
    from pypdf import PdfReader
    try:
        meta = PdfReader(pdf).metadata or {}
        return str(meta.get(STAMP_KEY)) if meta.get(STAMP_KEY) else None
    except Exception:
        return None


def shrunk_of(pdf: Path) -> list[tuple[int, float]] | None:
    """The slides a slides PDF printed below 100% (page, scale), as its build recorded them;
    None when the PDF records nothing (unreadable, or not a slides PDF)."""
    from pypdf import PdfReader
    try:
        value = (PdfReader(pdf).metadata or {}).get(SHRUNK_KEY)
    except Exception:
        return None
    if value is None:
        return None
    return [] if str(value) == "none" else [
        (int(a), float(b)) for a, b in (x.split(":") for x in str(value).split())]


def pages_of(pdf: Path) -> int | None:
    """Its page count, or None when it is not a readable PDF (truncated, not a PDF)."""
    from pypdf import PdfReader
    try:
        return len(PdfReader(pdf).pages)
    except Exception:
        return None


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _fix_outline(w, headings: list[str]) -> None:
    """Chromium builds the bookmarks from the laid-out headings and drops the space where a
    long heading wraps ("bytesper policy"); give each bookmark its heading's own text back."""
    from pypdf.generic import NameObject, TextStringObject
    proper = {_squeezed(h): h for h in headings}
    node = w._root_object.get("/Outlines")
    stack = [node.get_object()["/First"]] if node and "/First" in node.get_object() else []
    while stack:
        item = stack.pop().get_object()
        title = str(item.get("/Title", ""))
        if _squeezed(title) in proper and proper[_squeezed(title)] != title:
            item[NameObject("/Title")] = TextStringObject(proper[_squeezed(title)])
        stack += [item[k] for k in ("/First", "/Next") if k in item]


def stamp(data: bytes, title: str, digest: str, day: str, source: str,
           shrunk: list | None = None, headings: list[str] = ()) -> bytes:
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, ByteStringObject
    w = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    _fix_outline(w, list(headings))
    date = "D:" + day.replace("-", "") + "000000Z"
    w.metadata = None
    w.add_metadata({"/Title": title, "/Author": "JAX Core, From the Inside",
                    "/Subject": f"built from {source}", "/Creator": "workshop build",
                    "/Producer": "Chromium via Playwright; pypdf", "/CreationDate": date,
                    "/ModDate": date, STAMP_KEY: digest})
    if shrunk is not None:
        w.add_metadata({SHRUNK_KEY: " ".join(f"{i}:{k:.2f}" for i, k in shrunk) or "none"})
    fid = ByteStringObject(bytes.fromhex(digest[:32]))
    w._ID = ArrayObject([fid, fid])
    out = io.BytesIO()
    w.write(out)
    return out.getvalue()


