"""The report's fonts inside its HTML: a page that fetches nothing, wherever it is written.

templates/fonts.css names the font files beside the templates (WeasyPrint reads them from there for the PDF).
A page opened in a browser has no templates folder beside it, so the HTML written by `report --format html`
carries each face as a data: URI instead: only the faces whose unicode-range holds a character of the page, each
cut by fontTools to the characters the page holds (WOFF2 where fontTools can compress it, else WOFF), so the
example's comparison carries tens of kilobytes of fonts rather than the 250 KB of the files. Where fontTools is
missing (it comes with WeasyPrint; HTML output needs neither), the whole files are embedded. The PDF is laid out
from the same template with the fonts read from the files: the same faces, so the same pages.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import re
from pathlib import Path

from procure.render.documents import templates_dir

_FACE = re.compile(r"@font-face\s*\{[^}]*\}")
_SRC = re.compile(r"url\(([^)]+)\)\s*format\('woff'\)")
_RANGE = re.compile(r"unicode-range:\s*([^;}]+)")
# Layout features kept besides fontTools' defaults (kerning, ligatures, marks): tabular figures, which the
# report's number columns ask for (font-variant-numeric: tabular-nums).
FEATURES = ("tnum", "lnum", "pnum")


def _ranges(text: str) -> list[tuple[int, int]]:
    """A unicode-range value as (first, last) code points."""
    found = []
    for part in text.split(","):
        part = part.strip().upper().removeprefix("U+")
        first, _, last = part.partition("-")
        found.append((int(first, 16), int(last or first, 16)))
    return found


# What a browser or WeasyPrint draws that the page's source does not spell: list bullets (disc, circle, square), the
# figures and full stop of numbered lists, the hyphen of a word broken at a line's end.
DRAWN = "\u2022\u25e6\u25aa0123456789.-\u2010"


def _characters(page: str) -> set[int]:
    """Every code point the page may draw: its text, its attributes and its CSS (generated content such as
    "Page 1 of 9" is there), character references read as the characters they stand for, and DRAWN."""
    return {ord(c) for c in html.unescape(page) + DRAWN}


def _subset(data: bytes, codepoints: set[int]) -> tuple[bytes, str]:
    """The face cut to `codepoints`: (font bytes, CSS format name); the whole file without fontTools."""
    try:
        from fontTools import subset
        from fontTools.ttLib import TTFont
    except ImportError:
        return data, "woff"
    try:
        import brotli  # noqa: F401  (fontTools writes WOFF2 with it)

        flavor = "woff2"
    except ImportError:
        flavor = "woff"
    options = subset.Options()
    options.flavor = flavor
    options.layout_features = [*options.layout_features, *FEATURES]
    options.hinting = False  # screens hint on their own; a print driver ignores it
    options.desubroutinize = True  # compresses better
    font = TTFont(io.BytesIO(data))
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=codepoints)
    subsetter.subset(font)
    out = io.BytesIO()
    font.flavor = flavor
    font.save(out)
    return out.getvalue(), flavor


@functools.lru_cache(maxsize=64)
def _face_data(path: Path, codepoints: frozenset[int]) -> tuple[bytes, str]:
    return _subset(path.read_bytes(), set(codepoints))


def fonts_css() -> str:
    """templates/fonts.css as the templates embed it for the PDF."""
    return (templates_dir() / "fonts.css").read_text(encoding="utf-8")


def embedded_fonts(page: str) -> str:
    """fonts.css with each face the page uses as a data: URI cut to the page's characters; faces the page
    has no character for are left out."""
    folder = templates_dir()
    css = fonts_css()
    used = _characters(page)
    kept = []
    for face in _FACE.findall(css):
        src, ranges = _SRC.search(face), _RANGE.search(face)
        if src is None or ranges is None:
            raise ValueError(f"templates/fonts.css: a face without a woff url and a unicode-range: {face[:80]}")
        wanted = frozenset(c for c in used if any(a <= c <= b for a, b in _ranges(ranges.group(1))))
        if not wanted:
            continue
        data, kind = _face_data(folder / src.group(1).strip("'\""), wanted)
        uri = f"data:font/{kind};base64,{base64.b64encode(data).decode('ascii')}"
        kept.append(face.replace(src.group(0), f"url({uri}) format('{kind}')"))
    comment = css[: css.index("@font-face")].rstrip()
    return "\n".join([comment, *kept])


def self_contained(page: str) -> str:
    """The rendered report with its fonts inside it instead of named beside it."""
    css = fonts_css()
    if css not in page:
        raise ValueError("the page does not carry templates/fonts.css as the report templates place it")
    return page.replace(css, embedded_fonts(page), 1)
