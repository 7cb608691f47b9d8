"""Where each piece of text of a chart's SVG falls, measured independently of the chart code.

The charts write their text as SVG <text> (procure/render/charts.py: svg.fonttype none), each placed
either by x, y and a text-anchor (rotated about that point) or by translate(x y) and an optional
rotate(-a) (start-anchored). A text's box is its width in DejaVu Sans (the font matplotlib lays out
with, wider than the report's Source Sans 3: a label that fits here fits as printed) by the font's
ascent above the baseline and descent below, turned by its rotation. Two boxes overlapping by more
than half a point are a collision; a box reaching beyond the SVG's viewBox is clipped.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

ASCENT, DESCENT = (
    0.72,
    0.2,
    # DejaVu Sans: capital height 0.73 of the font size, and most of a descender (matplotlib stacks a label's lines 0.9
    # apart)
)
TOLERANCE = 0.5  # points of overlap or overhang tolerated (anti-aliasing, rounding)

TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.S)


@dataclass
class TextBox:
    text: str
    size: float
    corners: list[tuple[float, float]]  # in the SVG's user units (points), clockwise


def _style(attrs: str, name: str) -> str | None:
    style = re.search(r'style="([^"]*)"', attrs)
    found = re.search(rf"(?:^|;)\s*{name}:\s*([^;]+)", style.group(1)) if style else None
    return found.group(1).strip() if found else None


def _width(text: str, size: float, bold: bool) -> float:
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    props = FontProperties(family="DejaVu Sans", size=size, weight="bold" if bold else "normal")
    width, _, _ = TextToPath().get_text_width_height_descent(text, props, ismath=False)
    return width


def text_boxes(svg: str) -> list[TextBox]:
    """Every <text> of an SVG with the box its glyphs take."""
    boxes = []
    for attrs, body in TEXT.findall(svg):
        text = html.unescape(re.sub(r"<[^>]+>", "", body))
        if not text.strip():
            continue
        size = float((_style(attrs, "font-size") or "10px").rstrip("px"))
        bold = (_style(attrs, "font-weight") or "400") in ("700", "bold")
        anchor = _style(attrs, "text-anchor") or "start"
        transform = (re.search(r'transform="([^"]*)"', attrs) or [None, ""])[1]
        x_attr, y_attr = re.search(r'\bx="([-\d.e]+)"', attrs), re.search(r'\by="([-\d.e]+)"', attrs)
        rotation = re.search(r"rotate\((-?[\d.e]+)", transform)
        angle = -float(rotation.group(1)) if rotation else 0.0  # SVG rotate(-a): a degrees counter-clockwise as seen
        shift = re.search(r"translate\(([-\d.e]+)[ ,]+([-\d.e]+)\)", transform)
        if shift:
            x, y = float(shift.group(1)), float(shift.group(2))
            if x_attr and y_attr:  # translate, then the text's own offset along its rotated axes
                x, y = _turn(float(x_attr.group(1)), float(y_attr.group(1)), angle, x, y)
        elif x_attr and y_attr:
            x, y = float(x_attr.group(1)), float(y_attr.group(1))
        else:
            x = y = 0.0
        width = _width(text, size, bold)
        start = {"start": 0.0, "middle": -width / 2, "end": -width}[anchor]
        local = [
            (start, -ASCENT * size),
            (start + width, -ASCENT * size),
            (start + width, DESCENT * size),
            (start, DESCENT * size),
        ]
        boxes.append(TextBox(text, size, [_turn(u, v, angle, x, y) for u, v in local]))
    return boxes


def _turn(u: float, v: float, angle: float, x: float, y: float) -> tuple[float, float]:
    """A point (u, v) of a text's own axes placed at (x, y) and turned `angle` degrees counter-clockwise (y down)."""
    a = math.radians(angle)
    return (x + u * math.cos(a) + v * math.sin(a), y - u * math.sin(a) + v * math.cos(a))


def _overlap(a: TextBox, b: TextBox) -> float:
    """How far two boxes overlap along the axis where they overlap least (separating axes); <= 0: apart."""
    least = math.inf
    for box in (a, b):
        for i in range(2):
            (x0, y0), (x1, y1) = box.corners[i], box.corners[i + 1]
            length = math.hypot(x1 - x0, y1 - y0) or 1.0
            axis = ((x1 - x0) / length, (y1 - y0) / length)
            pa = [p[0] * axis[0] + p[1] * axis[1] for p in a.corners]
            pb = [p[0] * axis[0] + p[1] * axis[1] for p in b.corners]
            least = min(least, min(max(pa), max(pb)) - max(min(pa), min(pb)))
    return least


def collisions(svg: str) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes overlap by more than the tolerance."""
    boxes = text_boxes(svg)
    return [(a.text, b.text) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if _overlap(a, b) > TOLERANCE]


def clipped(svg: str) -> list[str]:
    """Texts whose box reaches beyond the SVG's viewBox (cut off where the chart is drawn)."""
    view = re.search(r'viewBox="([-\d.e]+) ([-\d.e]+) ([-\d.e]+) ([-\d.e]+)"', svg)
    if not view:
        return []
    x0, y0, w, h = (float(v) for v in view.groups())
    return [
        box.text
        for box in text_boxes(svg)
        if any(
            px < x0 - TOLERANCE or px > x0 + w + TOLERANCE or py < y0 - TOLERANCE or py > y0 + h + TOLERANCE
            for px, py in box.corners
        )
    ]


def charts_in(document: str) -> dict[str, str]:
    """The inline SVG charts of a report's HTML by name (each chart's ids are prefixed with its name)."""
    found = {}
    for svg in re.findall(r"<svg\b.*?</svg>", document, flags=re.S):
        name = re.search(r'id="([a-z0-9-]+?)-figure_1"', svg)
        found[name.group(1) if name else f"svg-{len(found)}"] = svg
    return found
