"""SVG elements as values: the pictures build these and serialise a picture once, so no drawing
code writes markup.

An attribute is a keyword, `_` written as `-` (stroke_width=2 is stroke-width='2'); None leaves
it out. A number is written as `:g` writes it (12, 3.5); a str as given, so a picture that has
always written 77.0 passes str(77.0). Text is escaped, quotes too, unless it is `Raw`. Values
are single-quoted, except the font-family (a font list may quote a name in single quotes).
"""
from __future__ import annotations

import html
from dataclasses import dataclass

NS = "http://www.w3.org/2000/svg"


def _value(v) -> str:
    if isinstance(v, str):
        return v
    return str(v) if isinstance(v, int) else f"{v:g}"


def _attr(name: str, v) -> str:
    name = name.replace("_", "-")
    q = '"' if name == "font-family" else "'"
    return f" {name}={q}{html.escape(_value(v))}{q}"


class Raw(str):
    """Text written as given, not escaped: for a literal that a picture has always written
    with a bare ' (valid in text, where only < and & must be escaped)."""


def _content(c) -> str:
    if isinstance(c, Raw):
        return str(c)
    return html.escape(c) if isinstance(c, str) else str(c)


@dataclass(frozen=True)
class Element:
    """One element: its tag, its attributes in order, its children (elements or text)."""
    tag: str
    attrs: dict
    children: tuple = ()

    def opening(self) -> str:
        return f"<{self.tag}{''.join(_attr(k, v) for k, v in self.attrs.items() if v is not None)}>"

    def __str__(self) -> str:
        if not self.children:
            return self.opening()[:-1] + "/>"
        inner = "".join(map(_content, self.children))
        return f"{self.opening()}{inner}</{self.tag}>"


def element(tag: str, *children, **attrs) -> Element:
    return Element(tag, attrs, children)


def rect(x, y, w, h, **attrs) -> Element:
    return Element("rect", {"x": x, "y": y, "width": w, "height": h, **attrs})


def line(x1, y1, x2, y2, **attrs) -> Element:
    return Element("line", {"x1": x1, "y1": y1, "x2": x2, "y2": y2, **attrs})


def path(d: str, **attrs) -> Element:
    return Element("path", {"d": d, **attrs})


def polyline(points: str, **attrs) -> Element:
    return Element("polyline", {"points": points, **attrs})


def text(x, y, *content, **attrs) -> Element:
    """A text at (x, y); `content` is strings and tspans (no content: an empty text)."""
    return Element("text", {"x": x, "y": y, **attrs}, content or ("",))


def tspan(s: str, **attrs) -> Element:
    """A run of text inside a text, styled on its own (a word in bold, in colour)."""
    return Element("tspan", attrs, (s,))


def arrowhead(name: str, colour: str, size: float) -> Element:
    """A marker `url(#name)`: a filled triangle pointing along the line's end. A picture
    names its own (per kind and colour), so two pictures on one page never borrow heads."""
    tip = path("M0,0 L10,5 L0,10 z", fill=colour)
    return Element("marker", {"id": name, "viewBox": "0 0 10 10", "refX": 9, "refY": 5,
                              "markerUnits": "userSpaceOnUse", "markerWidth": size,
                              "markerHeight": size, "orient": "auto"}, (tip,))


def svg(width: float, height: float, children, defs=(), shown: float | None = None) -> str:
    """The picture: shown at its natural size (or `shown` px wide, scaled as a whole), scaled
    down to fit (max-width), one element a line; its defs (markers) in the opening line."""
    head = Element("svg", {"xmlns": NS, "viewBox": f"0 0 {width:g} {height:g}",
                           "width": round(shown) if shown else width,
                           "style": "max-width:100%;height:auto", "role": "img"}).opening()
    if defs:
        head += str(element("defs", *defs))
    return "\n".join([head, *map(str, children), "</svg>"])
