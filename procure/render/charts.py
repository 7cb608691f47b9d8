"""Charts for the reports: matplotlib figures rendered to inline SVG.

Text is real SVG text in the report's body font (Source Sans 3, embedded by the report), the SVG carries no date and
uses a
fixed id salt, so the same Evaluation always gives the same bytes. Charts read figures from the
Evaluation only.
"""

from __future__ import annotations

import functools
import hashlib
import io
import math
import pickle
import re
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from procure.analysis.evaluate import Evaluation
from procure.analysis.record import OfferRecord
from procure.model.inputs import OPERATING_JOBS
from procure.model.units import per_thousand
from procure.render.formats import axis_amount

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from procure.analysis.frontiers import Curve
    from procure.analysis.plan import PlanResult


# One meaning per colour across a report: orange is the recommended offer and nothing else, grey is
# "not acceptable" and nothing else; cost parts, job owners and series each have their own hues.
INK = "#1f2933"
MUTED = "#9aa5b1"  # not acceptable (and axis lines)
ACCENT = "#1f5fa8"  # acceptable offers
# the offer ranked first (the recommendation when it is a single offer; with a plan, not "the recommendation")
HIGHLIGHT = "#c2410c"
GRID = "#e4e7eb"
COMPONENT_COLOURS = {
    "rent": "#1f5fa8",
    "fees": "#6c9bd2",
    "financing": "#b7cbe6",
    "ops": "#6b46c1",
    "software": "#b794f4",
}
REJECTED_COMPONENTS = {
    "rent": "#9aa5b1",
    "fees": "#b3bcc6",
    "financing": "#cbd2d9",
    "ops": "#7b8794",
    "software": "#d9dee3",
}
OWNER_COLOURS = {"provider": "#2c7a7b", "shared": "#e9c46a", "customer": "#8c5a2b"}
# Charts with one mark per offer show at most this many offers (acceptable ones by rank first):
# beyond it labels become unreadable and the SVG slows the PDF down. Captions say when offers are left out.
CHART_OFFERS = 12
CURVE_LABELS = 25
CURVE_KEY = 6  # numbered names in the cost curve's key at most (more would cover the bars)
# Series colours for acceptable offers other than the recommendation (no orange, no grey).
SERIES = ["#1f5fa8", "#2f855a", "#6b46c1", "#2c7a7b", "#d53f8c", "#3182ce", "#805ad5", "#38a169", "#1a365d", "#702459"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


KEPT_CHARTS = 64  # charts kept per process (an SVG is tens of kilobytes)
_drawn: OrderedDict[str, str] = OrderedDict()


def memoised(draw: Callable[..., str]) -> Callable[..., str]:
    """A chart drawn once per process for the same inputs. A chart is a function of what it is given (the same bytes
    for the same inputs: the module's docstring), and drawing it is most of a report's own work; a process that lays
    out reports of the same evaluation (its HTML and its PDF, the parts of a report, a run of tests) draws each chart
    once. The key is the SHA-256 of the chart's name and its pickled arguments: an evaluation made again from the same
    inputs shares its charts, and any difference in what a chart is given draws it again (so may an equal object built
    another way: a missed drawing, never a wrong one); arguments that do not pickle are drawn each time."""

    @functools.wraps(draw)
    def kept(*args: Any, **kwargs: Any) -> str:
        try:
            given = pickle.dumps((draw.__qualname__, args, sorted(kwargs.items())), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return draw(*args, **kwargs)
        key = hashlib.sha256(given).hexdigest()
        if key in _drawn:
            _drawn.move_to_end(key)
            return _drawn[key]
        svg = draw(*args, **kwargs)
        _drawn[key] = svg
        while len(_drawn) > KEPT_CHARTS:
            _drawn.popitem(last=False)
        return svg

    return kept


def wrap_text(text: str, width: int = 13, lines: int = 3) -> str:
    """A label on up to `lines` lines of about `width` characters; an ellipsis only past that."""
    import textwrap

    parts = textwrap.wrap(text, width=width, break_long_words=True) or [""]
    if len(parts) > lines:
        parts = parts[:lines]
        parts[-1] = short_name(parts[-1] + " …", width)
    return "\n".join(parts)


def _slanted_names(ax, offers: list[OfferRecord], positions: list[float], highlight: str | None) -> None:  # type: ignore[no-untyped-def]
    """Offer names under a column each, slanted at 35 degrees and ending under their column: slanted
    lines a column apart never touch (a column is wider than a line is tall divided by sin 35), where
    names set level run into their neighbours as soon as there are more than a few offers."""
    names = [short_name(o.vendor, 24) + ("" if o.acceptable else " (not acc.)") for o in offers]
    ax.set_xticks(positions, names, fontsize=6.5, rotation=35, ha="right", rotation_mode="anchor")
    for tick, offer in zip(ax.get_xticklabels(), offers):
        tick.set_color(HIGHLIGHT if offer.id == highlight else INK if offer.acceptable else MUTED)


def _offer_colour(offer: OfferRecord, highlight: str | None, default: str = ACCENT) -> str:
    return HIGHLIGHT if offer.id == highlight else default if offer.acceptable else MUTED


BODY_PT = 9.5  # the reports' body text (templates/report.css), for charts whose text must read at that size


def new_figure(width_cm: float, height_cm: float) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_cm / 2.54, height_cm / 2.54), dpi=96)
    fig.patch.set_alpha(0)
    return fig


def style_axes(ax) -> None:  # type: ignore[no-untyped-def]
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(MUTED)
    ax.tick_params(colors=INK, labelsize=7, length=3)
    ax.yaxis.label.set_color(INK)
    ax.xaxis.label.set_color(INK)
    ax.grid(axis="y", color=GRID, linewidth=0.6)
    ax.set_axisbelow(True)


BODY_FONT = "'Source Sans 3', 'DejaVu Sans', sans-serif"
COLUMN_CM = 17.4  # the reports' text column (A4 less 17 mm margins: 17.6 cm), a little to spare


def fit_width(fig: Figure, width_cm: float = COLUMN_CM) -> None:
    """Resize the figure so that what it draws, cropped as to_svg crops it, is `width_cm` wide: a chart
    printed at its natural size (templates: figure.natural) then prints its text at the size it sets."""
    pad = 2 * 0.05  # to_svg's pad_inches on each side
    for _ in range(4):
        box = fig.get_tightbbox(fig._get_renderer())  # what bbox_inches="tight" keeps, in inches
        excess = box.width + pad - width_cm / 2.54
        if abs(excess) < 0.005:
            return
        fig.set_size_inches(max(fig.get_figwidth() - excess, 1.0), fig.get_figheight())


def to_svg(fig: Figure, name: str) -> str:
    """Deterministic SVG, ready to inline in HTML, its text real <text> in the report's body font.

    Text as <text> rather than glyph paths: WeasyPrint draws it with the body font the document
    already embeds, and parses a few hundred elements instead of thousands of glyph references (the
    charts of a 50-offer report took a fifth of its rendering time as paths). Matplotlib lays text out
    with DejaVu Sans, which is wider than Source Sans 3, so a label that fits as measured fits as drawn.
    Every id is prefixed with the chart's name: several charts inline in one document would
    otherwise define the same ids twice.
    """
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "procure", "font.family": "DejaVu Sans"}):
        buffer = io.StringIO()
        fig.savefig(
            buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight", pad_inches=0.05
        )
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and doctype for inlining
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{name}-\1"', svg)
    svg = re.sub(r"font-family: [^;\"]*", f"font-family: {BODY_FONT}", svg)
    return re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", svg)


# Each chart's name and one sentence on what it shows, for a reader who cannot see it: the SVG's <title> and <desc>
# (its accessible name and description: role="img" makes the drawing one image to a screen reader).
CHART_WORDS = {
    "cost_curve": (
        "The cost curve",
        "Each offer's cost per 1,000 successful tasks as a bar, cheapest first, the bar as wide as the GPUs the offer "
        "can supply; the recommendation is orange and offers that are not acceptable are grey.",
    ),
    "football": (
        "The top offers side by side",
        "For each of the top offers, its cost per 1,000 successful tasks today and the ranges it spans over the "
        "what-if cases and over the simulated draws.",
    ),
    "breakdown": (
        "What a GPU-hour costs in full",
        "Each offer's full cost per paid GPU-hour as stacked bars of its parts: rent, fees, financing, the buyer's "
        "own operating staff and software.",
    ),
    "throughput": (
        "Throughput at the required speed",
        "Each offer's output tokens per second per GPU against tokens per second per user, with the throughput at "
        "the required speed per user marked on a dashed line.",
    ),
    "responsibilities": (
        "Who does which operating job",
        "A grid of operating jobs by offer, each cell saying whether the provider, both or the customer does the job.",
    ),
    "cash": (
        "Cumulative cost over the horizon",
        "The cumulative cost, month by month over the horizon, of the two offers ranked first and second.",
    ),
    "ranges": (
        "Range of cost in the simulation",
        "For each acceptable offer, the P10 to P90 range of its simulated cost per 1,000 successful tasks, its "
        "median and its expected cost.",
    ),
    "tornado": (
        "What moves the cost most",
        "Bars of the cost per 1,000 successful tasks of the recommendation with each input in turn at the low and "
        "the high end of its range, the widest first.",
    ),
    "scorecard": (
        "Delivered against promised",
        "Three panels by month for one signed vendor: output per billed GPU-hour against the promise, availability "
        "against the SLA, and the delivered cost per 1,000 successful tasks against the promised.",
    ),
    "position": (
        "Cost position over time",
        "Our cost per 1,000 successful tasks over time against each competitor's own cost, with the recommendation "
        "at the as-of date.",
    ),
    "benchmark": (
        "The rental price index against its benchmarks",
        "The GPU-hour rental price index in use over time against the monthly benchmarks built from the market quotes.",
    ),
    "plan_frontier": (
        "The plan's efficient frontier",
        "The lowest expected cost per 1,000 successful tasks the plan reaches at each limit on the risk of its "
        "monthly spend (CVaR).",
    ),
    "hedge": (
        "The hedge under index moves",
        "The change in the floating cost over the horizon for each move of the rental price index, without and with "
        "the hedge.",
    ),
}


def labelled(svg: str, name: str, key: str, subject: str = "") -> str:
    """The chart with its name and description (CHART_WORDS[name], after a colon the subject it is drawn for, such
    as a vendor) as the SVG's <title> and <desc>, role="img"; `key` makes their ids unique in the page."""
    from html import escape

    title, description = CHART_WORDS[name]
    if subject:
        title = f"{title}: {subject}"
    start = svg.index("<svg")
    end = svg.index(">", start)
    ids = f"chart-{key}"
    return (
        f'{svg[:end]} role="img" aria-labelledby="{ids}-title" aria-describedby="{ids}-desc">'
        f'<title id="{ids}-title">{escape(title)}</title><desc id="{ids}-desc">{escape(description)}</desc>'
        f"{svg[end + 1 :]}"
    )


def chart_offers(ev: Evaluation, limit: int = CHART_OFFERS) -> list[OfferRecord]:
    """The offers a per-offer chart shows: the Evaluation's order (acceptable by rank, then the rest), cut at
    `limit`."""
    return list(ev.offers[:limit])


def short_name(text: str, limit: int = 18) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@memoised
def cost_curve(ev: Evaluation, highlight: str | None = None, index_per_task: float | None = None) -> str:
    """Offers sorted by cost per 1,000 successful tasks; bar width = GPUs offered; not acceptable in grey.

    An outlier (more than twice the median) would flatten the bars that decide: the axis stops above
    the others and the outlier's bar is drawn broken, with its value written on it.
    """
    priced = [o for o in ev.offers if o.metrics["cost_per_task"] is not None]
    priced.sort(key=lambda o: (o.metrics["cost_per_task"], o.id))
    fig = new_figure(17, 7.5)
    ax = fig.add_subplot()
    style_axes(ax)
    if not priced:
        ax.text(0.5, 0.5, "no offer has a cost per successful task", ha="center", va="center", transform=ax.transAxes)
        return to_svg(fig, "cost-curve")
    values, top, widths = _curve_scale(priced)
    # Every offer is a bar; with many offers only the cheapest are labelled, so labels stay legible.
    labelled = {o.id for o in priced[:CURVE_LABELS]}
    small = len(priced) > 15
    size = 5 if small else 6.5
    # Names hang at 35 degrees under their bars. Two names overlap when their anchors are closer than
    # the right one's thickness / sin(35 deg): a crowded name drops "(not acceptable)" (the grey says
    # it), then becomes a number with the name in a key; values above bars that would touch are left out.
    # The recommendation is placed first, then the others from the cheapest.
    axis_pt = fig.get_figwidth() * 72 * ax.get_position().width
    bars, left = _curve_bars(ax, priced, widths, values, top, labelled, highlight)
    _curve_labels(ax, bars, left, axis_pt, size, top, highlight)
    if index_per_task is not None:
        level = per_thousand(index_per_task)
        ax.axhline(level, color=INK, linestyle="--", linewidth=0.8)
        ax.text(0, level, " index rent", va="bottom", ha="left", fontsize=6.5, color=INK)
    ax.set_xlim(0, left)
    ax.set_ylim(0, top)
    ax.set_ylabel(f"{ev.currency} per 1,000 successful tasks")
    # The GPU scale runs along the top; offer names sit under their bars.
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.tick_params(axis="x", labelsize=6.5, colors=MUTED)
    ax.set_xlabel("GPUs offered, cumulative (bar width = GPUs each can supply)", fontsize=7, color=MUTED)
    return to_svg(fig, "cost-curve")


def _curve_scale(priced: list[OfferRecord]) -> tuple[list[float], float, list[float]]:
    """Each bar's height (cost per 1,000 tasks), the axis top, and each bar's width (GPUs offered).

    The top stops above the offers within twice the median when an outlier would flatten them."""
    values = [per_thousand(o.metrics["cost_per_task"]) for o in priced]
    ordered = sorted(values)
    median = ordered[len(ordered) // 2]
    kept = [v for v in values if v <= 2 * median]
    top = max(kept) * 1.18 if len(kept) < len(values) else max(values) * 1.12
    widths = [_bar_width(o) for o in priced]
    # Per-token offers have no GPUs: give them a nominal width so they stay visible.
    nominal = max(1.0, sum(w for w in widths if w) / max(1, sum(1 for w in widths if w)) / 2)
    widths = [w or nominal for w in widths]
    return values, top, widths


def _curve_bars(
    ax: Any,
    priced: list[OfferRecord],
    widths: list[float],
    values: list[float],
    top: float,
    labelled: set[str],
    highlight: str | None,
) -> tuple[list[tuple[OfferRecord, float, float, float]], float]:
    """Draws the bars side by side, an outlier's broken below the top; returns the bars to label
    (offer, centre, height drawn, value) and the total width (the GPUs offered, cumulative)."""
    bars: list[tuple[OfferRecord, float, float, float]] = []  # offer, centre, height drawn, value
    left = 0.0
    for offer, width, value in zip(priced, widths, values):
        colour = _offer_colour(offer, highlight)
        shown = min(value, top * 0.97)
        ax.bar(
            left,
            shown,
            width=width,
            align="edge",
            color=colour,
            edgecolor="white",
            linewidth=0.8 if len(priced) <= CURVE_LABELS else 0.3,
        )
        if value > shown:  # broken bar: two white slashes near the top, the true value on it
            ax.plot([left + width * 0.2, left + width * 0.8], [shown * 0.90, shown * 0.93], color="white", linewidth=2)
            ax.plot([left + width * 0.2, left + width * 0.8], [shown * 0.86, shown * 0.89], color="white", linewidth=2)
        if offer.id in labelled or offer.id == highlight:
            bars.append((offer, left + width / 2, shown, value))
        left += width
    return bars, left


def _curve_labels(
    ax: Any,
    bars: list[tuple[OfferRecord, float, float, float]],
    left: float,
    axis_pt: float,
    size: float,
    top: float,
    highlight: str | None,
) -> None:
    """Writes each labelled bar's value above it and its vendor's name under it, where they do not
    touch another; a name that does not fit becomes a number explained in a key."""
    slant = math.sin(math.radians(35))
    names: list[tuple[float, float]] = []  # (anchor in points, thickness in points) of each name placed
    numbers: list[float] = []
    tops: list[tuple[float, float]] = []  # (anchor, height) of each value written
    key: list[str] = []

    def name_fits(at: float, thickness: float) -> bool:
        # a name hangs below its slanted line, towards the right: the left one of two names needs the room of its own
        # thickness
        clear = all(at - p >= t / slant if p < at else p - at >= thickness / slant for p, t in names)
        return clear and all(
            at - n >= size * 3.2 if n < at else n - at >= size for n in numbers
        )  # a name runs down to the left, its first line over a number just left of it

    for offer, centre, shown, value in sorted(bars, key=lambda b: b[0].id != highlight):
        at = centre / left * axis_pt  # points from the axis' left end
        text = f"{value:.2f}"
        if all(abs(at - a) >= len(text) * size * 0.6 or abs(shown - h) > top * 0.06 for a, h in tops):
            ax.text(centre, shown, text, ha="center", va="bottom", fontsize=size, color=INK)
            tops.append((at, shown))
        name = wrap_text(offer.vendor, 16, 2)
        for candidate in (name + ("" if offer.acceptable else "\n(not acceptable)"), name):
            thickness = (candidate.count("\n") + 1) * size * 1.1
            if name_fits(at, thickness):
                ax.text(
                    centre,
                    -0.02,
                    candidate,
                    ha="right",
                    va="top",
                    rotation=35,
                    fontsize=size,
                    color=INK,
                    transform=ax.get_xaxis_transform(),
                    linespacing=1.0,
                )
                names.append((at, thickness))
                break
        else:  # too crowded for a name: a number under the bar and the name in the key, if the number fits
            number = str(len(key) + 1)
            wide = (len(number) * 0.6 + 0.5) * size
            if (
                len(key) < CURVE_KEY
                and all(p - at >= size * 3.2 if at < p else at - p >= wide for p, _ in names)
                and all(abs(at - n) >= wide for n in numbers)
            ):
                rejected = "" if offer.acceptable else " (not acceptable)"
                key.append(f"{number} = {short_name(offer.vendor, 30)}{rejected}")
                ax.text(
                    centre,
                    -0.02,
                    number,
                    ha="center",
                    va="top",
                    fontsize=size,
                    color=INK,
                    transform=ax.get_xaxis_transform(),
                )
                numbers.append(at)
    if key:
        _curve_key(ax, key, size)


def _curve_key(ax: Any, key: list[str], size: float) -> None:
    """The numbered names of the bars too crowded for one, in the empty top left: the bars rise from left to right."""
    ax.text(
        0.01,
        0.98,
        "Key: " + "; ".join(key),
        ha="left",
        va="top",
        fontsize=size,
        color=INK,
        transform=ax.transAxes,
        wrap=True,
        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5},
    )


def _bar_width(offer: OfferRecord) -> float:
    return float(offer.max_gpus or offer.gpus or 0)


@memoised
def cost_breakdown(ev: Evaluation) -> str:
    """Stacked full cost per paid GPU-hour: rent, fees, financing, operating staff, software (not acceptable in
    greys)."""
    offers = [o for o in chart_offers(ev) if o.metrics["full"] is not None]
    fig = new_figure(17, 6.0)
    ax = fig.add_subplot()
    style_axes(ax)
    positions = list(range(len(offers)))
    bottoms = [0.0] * len(offers)
    labels = {
        "rent": "rent",
        "fees": "fees",
        "financing": "financing",
        "ops": "operating staff",
        "software": "software",
    }
    for component, colour in COMPONENT_COLOURS.items():
        values = [o.metrics[component] or 0.0 for o in offers]
        colours = [colour if o.acceptable else REJECTED_COMPONENTS[component] for o in offers]
        ax.bar(
            positions,
            values,
            bottom=bottoms,
            color=colours,
            width=0.62,
            label=labels[component],
            edgecolor="white",
            linewidth=0.5,
        )
        bottoms = [b + v for b, v in zip(bottoms, values)]
    leader = ev.summary.recommended
    for x, total, offer in zip(positions, bottoms, offers):
        ax.text(
            x,
            total,
            f"{total:.2f}",
            ha="center",
            va="bottom",
            fontsize=6.5,
            color=HIGHLIGHT if offer.id == leader else INK,
            fontweight="bold" if offer.id == leader else "normal",
        )
    ax.set_ylim(0, max(bottoms, default=1) * 1.12)  # room for the labels below the legend
    _slanted_names(ax, offers, positions, leader)
    ax.set_ylabel(f"{ev.currency} per paid GPU-hour")
    ax.legend(fontsize=6.5, frameon=False, ncol=5, loc="upper center", bbox_to_anchor=(0.5, 1.12))
    return to_svg(fig, "cost-breakdown")


@memoised
def throughput_frontiers(ev: Evaluation, lines: dict[Curve, tuple[list[float], list[float]]]) -> str:
    """Each frontier (output tok/s per GPU against tok/s per user) with the value used at the target; `lines` each
    curve as the cost model reads it between its points (procure.analysis.frontiers.frontier_lines).

    Offers that share one curve (the same reference curve) are drawn once and named together, so no
    line hides another; each acceptable curve has its own colour and marker, not acceptable ones are
    grey and dotted, the recommendation orange.
    """
    fig = new_figure(17, 7.0)
    ax = fig.add_subplot()
    style_axes(ax)
    ax.grid(axis="x", color=GRID, linewidth=0.6)
    groups: dict[Curve, list[OfferRecord]] = {}
    for offer in chart_offers(ev):
        if offer.performance_points:
            groups.setdefault(tuple(map(tuple, offer.performance_points)), []).append(offer)
    leader = ev.summary.recommended
    target = ev.workload.interactivity
    labels: list[tuple[float, str, str]] = []
    for i, (points, offers) in enumerate(groups.items()):
        # the frontier as the cost model reads it between points; the measured points are drawn apart
        xs, ys = lines.get(points, ([], []))
        first = next((o for o in offers if o.id == leader), next((o for o in offers if o.acceptable), offers[0]))
        colour = _offer_colour(first, leader, SERIES[i % len(SERIES)])
        acceptable = any(o.acceptable for o in offers)
        names = ", ".join(short_name(o.vendor, 32) + ("" if o.acceptable else " (not acceptable)") for o in offers)
        ax.plot(
            xs,
            ys,
            "-" if acceptable else ":",
            color=colour,
            linewidth=1.6 if first.id == leader else 1.1,
            label=wrap_text(names, 60, 2),
        )
        ax.plot([p[0] for p in points], [p[1] for p in points], MARKERS[i % len(MARKERS)], color=colour, markersize=3)
        value = first.metrics["throughput"]
        if value is not None:
            ax.plot([target], [value], MARKERS[i % len(MARKERS)], color=colour, markersize=5.5, markeredgecolor="white")
            labels.append((value, f"{value:,.0f}", colour))
    # Values at the target, written beside the line, spread so that none overlaps another.
    labels.sort()
    top = max((p[1] for points in groups for p in points), default=1.0)
    last = -1e9
    for value, text, colour in labels:
        y = max(value, last + top * 0.05)
        ax.annotate(
            text,
            (target, value),
            xytext=(target + (ax.get_xlim()[1] - target) * 0.06 + 3, y),
            fontsize=6,
            color=colour,
            va="center",
            ha="left",
            arrowprops={"arrowstyle": "-", "color": colour, "linewidth": 0.5},
        )
        last = y
    ax.axvline(target, color=INK, linestyle="--", linewidth=0.8)
    ax.text(
        target,
        1.0,
        f" target {target:g} tokens/s per user",
        color=INK,
        fontsize=6.5,
        va="top",
        transform=ax.get_xaxis_transform(),
    )
    ax.set_xlabel("output tokens per second per user")
    ax.set_ylabel("output tokens per second per GPU")
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    ax.legend(fontsize=6, frameon=False, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    return to_svg(fig, "throughput-frontiers")


@memoised
def responsibility_matrix(ev: Evaluation) -> str:
    """Operating jobs x offers, coloured by who owns each job."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    offers = chart_offers(ev)
    order = ["provider", "shared", "customer"]
    grid = [[order.index(o.responsibilities[job]) for o in offers] for job in OPERATING_JOBS]
    fig = new_figure(17, 9)
    ax = fig.add_subplot()
    # Vector cells (pcolormesh), not a raster image: crisp in print and nothing to fetch.
    ax.pcolormesh(
        grid, cmap=ListedColormap([OWNER_COLOURS[k] for k in order]), vmin=0, vmax=2, edgecolors="white", linewidth=1.2
    )
    ax.set_yticks(
        [y + 0.5 for y in range(len(OPERATING_JOBS))],
        [j.replace("_", " ") for j in OPERATING_JOBS],
        fontsize=6.5,
        color=INK,
    )
    _slanted_names(ax, offers, [x + 0.5 for x in range(len(offers))], ev.summary.recommended)
    ax.invert_yaxis()
    ax.tick_params(which="both", length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    handles = [Patch(color=OWNER_COLOURS[k], label=k) for k in order]
    ax.legend(handles=handles, fontsize=6.5, frameon=False, ncol=3, loc="upper center", bbox_to_anchor=(0.5, 1.1))
    return to_svg(fig, "responsibility-matrix")


@memoised
def plan_frontier(plan: PlanResult) -> str:
    """The efficient frontier: expected cost per 1,000 tasks against CVaR of monthly spend, one point per risk limit."""
    points = sorted(plan.frontier or [], key=lambda p: p.cvar)
    fig = new_figure(17, 5.5)
    ax = fig.add_subplot()
    style_axes(ax)
    ax.grid(axis="x", color=GRID, linewidth=0.6)
    xs = [p.cvar for p in points]
    ys = [per_thousand(p.expected_cost_per_task) for p in points]
    ax.plot(xs, ys, color=ACCENT, linewidth=1.2, marker="o", markersize=4, zorder=2)
    neutral = next((p for p in points if p.cvar_limit is None), None)
    if neutral is not None:
        ax.scatter([neutral.cvar], [per_thousand(neutral.expected_cost_per_task)], s=36, color=HIGHLIGHT, zorder=3)
        ax.annotate(
            "risk-neutral plan",
            (neutral.cvar, per_thousand(neutral.expected_cost_per_task)),
            textcoords="offset points",
            xytext=(-6, 6),
            ha="right",
            fontsize=6.5,
            color=HIGHLIGHT,
        )
    if len(points) > 1:
        safest = points[0]
        ax.annotate(
            "least CVaR",
            (safest.cvar, per_thousand(safest.expected_cost_per_task)),
            textcoords="offset points",
            xytext=(6, -2),
            ha="left",
            fontsize=6.5,
            color=INK,
        )
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(6))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: axis_amount(v, 2)))
    ax.set_xlabel(
        f"CVaR {plan.cvar_alpha:.0%} of a path's cost a month, {plan.currency} (the mean of the worst "
        f"{1 - plan.cvar_alpha:.0%} of paths)",
        fontsize=7,
    )
    ax.set_ylabel(f"{plan.currency} per 1,000 tasks, expected", fontsize=7)
    return to_svg(fig, "plan-frontier")


BREACH = "#9b2c2c"  # a month below the SLA (the scorecard's charts only)
