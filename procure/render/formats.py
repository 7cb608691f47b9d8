"""How every text rendering writes a figure or vendor text: money, costs per task (per 1,000 tasks),
shares, counts, amounts as a board reads them, clipped vendor text, and Markdown tables whose cells
are escaped. The terminal tables, JSON, CSV, Markdown and the report's templates (its filters) share them."""

from __future__ import annotations

from procure.model.units import TASKS
from procure.textsafe import markdown_text

DASH = "—"


def money(value: float | None, digits: int = 2) -> str:
    return DASH if value is None else f"{round(value, digits) + 0.0:,.{digits}f}"  # + 0.0: never "-0"


def per_task(value: float | None) -> str:
    """Costs per task are fractions of a cent to a few cents: five decimals keep them comparable."""
    return DASH if value is None else f"{value:.5f}"


def per_thousand(value: float | None, digits: int = 2) -> str:
    """A cost per task shown per 1,000 tasks, as the reports print it: 0.006427 -> '6.43'."""
    return DASH if value is None else f"{round(value * TASKS, digits) + 0.0:,.{digits}f}"


def per_k(currency: str) -> str:
    """The unit of a column of costs per task, shown per 1,000 successful tasks: 'USD/1k tasks'."""
    return f"{currency}/1k tasks"


def plain(value: float | None, digits: int | None = None) -> str:
    """A figure inside a printed formula: thousands separated, `digits` decimals or up to six significant ones."""
    if value is None:
        return DASH
    if digits is not None:
        return f"{round(value, digits) + 0.0:,.{digits}f}"
    if float(value).is_integer():
        return f"{int(value):,}"
    decimals = max(0, 6 - len(str(int(abs(value)))))
    return f"{value:,.{decimals}f}".rstrip("0").rstrip(".")


def cash(value: float | None, currency: str = "") -> str:
    """Money the way a board reads it: '11.0 M USD', '738 k USD', '7.0 k USD' (below 1,000: the full
    figure), so a column of amounts reads in one unit from thousands up."""
    if value is None:
        return DASH
    unit = f" {currency}" if currency else ""
    size = abs(value)
    if size >= 999_500:  # rounding up to the next unit, not "1,000 k"
        return f"{value / 1e6:,.{2 if size < 9_995_000 else 1}f} M{unit}"
    if size >= 999.5:
        return f"{value / 1e3:,.{1 if size < 9.95e3 else 0}f} k{unit}"
    return f"{round(value) + 0:,}{unit}"


def factor(value: float | None, digits: int = 1) -> str:
    """A multiplier as the change it makes, one decimal of a percent: 0.961191 -> '-3.9%', 1.2 -> '+20.0%',
    1 -> '0%'. A factor in a table or a sentence reads as a percentage, never as 'x0.961191'."""
    if value is None:
        return DASH
    change = round((value - 1) * 100, digits) + 0.0
    return "0%" if change == 0 else f"{change:+,.{digits}f}%"


def count(value: float | None, noun: str = "") -> str:
    """A count with separators, its noun after it: 256.0 -> '256', (256, 'GPUs') -> '256 GPUs'. A count
    that is an average over a month (GPUs on a ramp) keeps one decimal only when it is not whole: 12.5."""
    if value is None:
        return DASH
    shown = f"{round(value):,}" if abs(value - round(value)) < 0.05 else f"{value:,.1f}"
    return shown + (f" {noun}" if noun else "")


def month_range(first: int, last: int) -> str:
    """A span of months that never reads 'months 25-25': 'month 25' or 'months 25–27'."""
    return f"month {first}" if first == last else f"months {first}–{last}"


def prose_count(value: float | None, noun: str = "") -> str:
    """A large count in a sentence, to three significant figures: 188,797,697 -> '189 M', 45,210 -> '45.2 k',
    812 -> '812' (a table gives the count whole)."""
    if value is None:
        return DASH
    unit = f" {noun}" if noun else ""
    size = abs(value)
    if size >= 999_500:
        return f"{_three(value / 1e6)} M{unit}"
    if size >= 999.5:
        return f"{_three(value / 1e3)} k{unit}"
    return f"{round(value):,}{unit}"


def small_share(value: float) -> str:
    """A share that may be small, one decimal of a percent, two below 0.1%: 0.0248 -> '2.5%', 0.00048 -> '0.05%'."""
    return f"{value:.1%}" if value >= 0.001 else f"{value:.2%}"


def relative(gap: float, level: str = "level with") -> str:
    """A relative gap in a sentence, whole percent: 0.12 -> '12% above', -0.05 -> '5% below', under half a percent
    either way -> `level`."""
    return level if abs(gap) < 0.005 else f"{abs(gap):.0%} {'above' if gap > 0 else 'below'}"


def axis_amount(value: float, decimals: int = 1) -> str:
    """A chart axis's tick, short: 2,500,000 -> '2.5M' (`decimals` of a million), 45,000 -> '45k', 812 -> '812'."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:,.{decimals}f}M"
    return f"{value / 1e3:,.0f}k" if abs(value) >= 1e3 else f"{value:,.0f}"


def whole_millions(value: float) -> str:
    """A count as a board reads it in a sentence of the risk register: '115 M' from a million up, else whole."""
    return f"{value / 1e6:,.0f} M" if value >= 1e6 else f"{value:,.0f}"


def _three(value: float) -> str:
    """Three significant figures of a value from 1 to 999.5 (more digits above 999, never fewer)."""
    size = abs(value)
    digits = 2 if size < 9.995 else 1 if size < 99.95 else 0
    return f"{value:,.{digits}f}"


def clip(text: object, limit: int = 60) -> str:
    """Vendor text for a table cell or heading: at most `limit` characters, an ellipsis when cut
    (the full text stays in the appendix)."""
    value = str(text)
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def clip_html(text: object, limit: int = 60) -> str:
    """`clip` as escaped HTML, with a break opportunity every 12 characters of a long word: a narrow
    table cell then wraps it at once instead of searching for a break point character by character."""
    return breakable(clip(text, limit), 12)


def breakable(text: object, run: int = 60) -> str:
    """Vendor text as escaped HTML with a line-break opportunity (<wbr>) every `run` characters of an
    unbroken word: a 2,000-character word then lays out like ordinary text, fast and inside the page."""
    import re

    from markupsafe import Markup, escape

    pieces = re.split(r"(\S+)", str(text))  # separators at even positions, words at odd ones
    out = []
    for i, piece in enumerate(pieces):
        if i % 2 and len(piece) > run:
            out.append("<wbr>".join(str(escape(piece[k : k + run])) for k in range(0, len(piece), run)))
        else:
            out.append(str(escape(piece)))
    return Markup("".join(out))


def percent(value: float | None, digits: int = 2) -> str:
    return DASH if value is None else f"{value:.{digits}%}"


def number(value: float | None, digits: int = 0) -> str:
    return DASH if value is None else f"{value:,.{digits}f}"


def written(markdown: str, fmt: str) -> str:
    """A Markdown document as it is, or as plain text (`--format text`, for a mail or a chat message)."""
    if fmt == "text":
        from procure.textsafe import plain_text

        return plain_text(markdown)
    return markdown


def md_cell(text: str) -> str:
    """Vendor text is data: escape what Markdown would read as table syntax or markup."""
    return markdown_text(text)


def markdown_table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    right = right or set()
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|",
    ]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
