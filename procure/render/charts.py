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

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from procure.analysis.hedging import HedgePlan
    from procure.analysis.market import IndexBuild
    from procure.analysis.plan import PlanResult
    from procure.analysis.position import Position
    from procure.analysis.scenarios import FieldBar
    from procure.analysis.uncertainty import Sensitivity
    from procure.io.workspace import IndexLevel

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
PER_THOUSAND = 1000.0  # reports show costs per 1,000 successful tasks


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


def _wrap(text: str, width: int = 13, lines: int = 3) -> str:
    """A label on up to `lines` lines of about `width` characters; an ellipsis only past that."""
    import textwrap

    parts = textwrap.wrap(text, width=width, break_long_words=True) or [""]
    if len(parts) > lines:
        parts = parts[:lines]
        parts[-1] = _short(parts[-1] + " …", width)
    return "\n".join(parts)


def _slanted_names(ax, offers: list[OfferRecord], positions: list[float], highlight: str | None) -> None:  # type: ignore[no-untyped-def]
    """Offer names under a column each, slanted at 35 degrees and ending under their column: slanted
    lines a column apart never touch (a column is wider than a line is tall divided by sin 35), where
    names set level run into their neighbours as soon as there are more than a few offers."""
    names = [_short(o.vendor, 24) + ("" if o.acceptable else " (not acc.)") for o in offers]
    ax.set_xticks(positions, names, fontsize=6.5, rotation=35, ha="right", rotation_mode="anchor")
    for tick, offer in zip(ax.get_xticklabels(), offers):
        tick.set_color(HIGHLIGHT if offer.id == highlight else INK if offer.acceptable else MUTED)


def _offer_colour(offer: OfferRecord, highlight: str | None, default: str = ACCENT) -> str:
    return HIGHLIGHT if offer.id == highlight else default if offer.acceptable else MUTED


BODY_PT = 9.5  # the reports' body text (templates/report.css), for charts whose text must read at that size


def _figure(width_cm: float, height_cm: float) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_cm / 2.54, height_cm / 2.54), dpi=96)
    fig.patch.set_alpha(0)
    return fig


def _style(ax) -> None:  # type: ignore[no-untyped-def]
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


def _fit_width(fig: Figure, width_cm: float = COLUMN_CM) -> None:
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


def _short(text: str, limit: int = 18) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@memoised
def cost_curve(ev: Evaluation, highlight: str | None = None, index_per_task: float | None = None) -> str:
    """Offers sorted by cost per 1,000 successful tasks; bar width = GPUs offered; not acceptable in grey.

    An outlier (more than twice the median) would flatten the bars that decide: the axis stops above
    the others and the outlier's bar is drawn broken, with its value written on it.
    """
    priced = [o for o in ev.offers if o.metrics["cost_per_task"] is not None]
    priced.sort(key=lambda o: (o.metrics["cost_per_task"], o.id))
    fig = _figure(17, 7.5)
    ax = fig.add_subplot()
    _style(ax)
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
        level = index_per_task * PER_THOUSAND
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
    values = [o.metrics["cost_per_task"] * PER_THOUSAND for o in priced]  # type: ignore[operator]
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
        name = _wrap(offer.vendor, 16, 2)
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
                key.append(f"{number} = {_short(offer.vendor, 30)}{'' if offer.acceptable else ' (not acceptable)'}")
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
    if key:  # in the empty top left: the bars rise from left to right
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
    fig = _figure(17, 6.0)
    ax = fig.add_subplot()
    _style(ax)
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
def throughput_frontiers(ev: Evaluation) -> str:
    """Each frontier (output tok/s per GPU against tok/s per user) with the value used at the target.

    Offers that share one curve (the same reference curve) are drawn once and named together, so no
    line hides another; each acceptable curve has its own colour and marker, not acceptable ones are
    grey and dotted, the recommendation orange.
    """
    from procure.model.performance import frontier_line

    fig = _figure(17, 7.0)
    ax = fig.add_subplot()
    _style(ax)
    ax.grid(axis="x", color=GRID, linewidth=0.6)
    groups: dict[tuple, list[OfferRecord]] = {}
    for offer in chart_offers(ev):
        if offer.performance_points:
            groups.setdefault(tuple(map(tuple, offer.performance_points)), []).append(offer)
    leader = ev.summary.recommended
    target = ev.workload.interactivity
    labels: list[tuple[float, str, str]] = []
    for i, (points, offers) in enumerate(groups.items()):
        # the frontier as the cost model reads it between points; the measured points are drawn apart
        xs, ys = frontier_line(points, ev.assumptions.interpolation)
        first = next((o for o in offers if o.id == leader), next((o for o in offers if o.acceptable), offers[0]))
        colour = _offer_colour(first, leader, SERIES[i % len(SERIES)])
        acceptable = any(o.acceptable for o in offers)
        names = ", ".join(_short(o.vendor, 32) + ("" if o.acceptable else " (not acceptable)") for o in offers)
        ax.plot(
            xs,
            ys,
            "-" if acceptable else ":",
            color=colour,
            linewidth=1.6 if first.id == leader else 1.1,
            label=_wrap(names, 60, 2),
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
    fig = _figure(17, 9)
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
def position_history(pos: Position, currency: str, best_offer: tuple[str, float] | None = None) -> str:
    """Our cost per task over time against each competitor's; the best offer as a marker at the as-of date."""
    fig = _figure(17, 7)
    ax = fig.add_subplot()
    _style(ax)
    competitors = [name for name in pos.history if name != "us"]
    for i, name in enumerate(competitors):
        points = pos.history[name]
        ax.plot(
            [p.date for p in points],
            [p.cost_per_task * PER_THOUSAND for p in points],
            "-" + MARKERS[(i + 1) % len(MARKERS)],
            color=SERIES[(i + 1) % len(SERIES)],
            linewidth=1.1,
            markersize=3,
            label=_short(name, 30),
        )
    ours = pos.history.get("us", [])
    if ours:
        ax.plot(
            [p.date for p in ours],
            [p.cost_per_task * PER_THOUSAND for p in ours],
            "-o",
            color=INK,
            linewidth=2.2,
            markersize=4.5,
            label="us (today)",
        )
    if best_offer is not None:
        ax.plot(
            [pos.as_of],
            [best_offer[1] * PER_THOUSAND],
            "D",
            color=HIGHLIGHT,
            markersize=5.5,
            label=f"ranked first today ({_short(best_offer[0], 24)})",
        )  # with demand: the recommendation is a plan, not this offer
    ax.set_ylabel(f"{currency} per 1,000 successful tasks")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=6.5, frameon=False, loc="lower left")
    fig.autofmt_xdate(rotation=0, ha="center")
    return to_svg(fig, "position-history")


@memoised
def hedge_stress(plan: HedgePlan) -> str:
    """Change in floating cost over the horizon for each index move, unhedged and hedged (with the basis band)."""
    fig = _figure(17, 6.5)
    ax = fig.add_subplot()
    _style(ax)
    labels = [f"{r.index_move:+.0%}" for r in plan.stress]
    x = list(range(len(plan.stress)))
    ax.bar(
        [i - 0.18 for i in x], [r.unhedged_change for r in plan.stress], width=0.34, color="#6c9bd2", label="unhedged"
    )
    ax.bar(
        [i + 0.18 for i in x],
        [r.hedged_change for r in plan.stress],
        width=0.34,
        color=ACCENT,
        label="hedged (bars: the basis band)",
        yerr=[r.basis_band or 0.0 for r in plan.stress],  # None: the basis is unknown (the table says so)
        error_kw={"ecolor": INK, "elinewidth": 0.8, "capsize": 3},
    )
    ax.axhline(0, color=INK, linewidth=0.6)
    ax.set_xticks(x, labels)
    ax.set_xlabel(
        "index move from the forward" if plan.stress_level != plan.index_level else "index move from today's level",
        fontsize=7,
    )
    ax.set_ylabel(f"change in floating cost, {plan.currency}")
    ax.yaxis.set_major_formatter(_thousands())
    ax.legend(fontsize=6.5, frameon=False, loc="upper left")
    return to_svg(fig, "hedge-stress")


def _thousands():  # type: ignore[no-untyped-def]
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(
        lambda v, _: f"{v / 1e6:,.1f}M" if abs(v) >= 1e6 else f"{v / 1e3:,.0f}k" if abs(v) >= 1e3 else f"{v:,.0f}"
    )


@memoised
def index_history(published: list[IndexLevel], builds: dict[str, IndexBuild], currency: str) -> str:
    """The index in use against benchmarks built from the observations under different choices."""
    fig = _figure(17, 6.5)
    ax = fig.add_subplot()
    _style(ax)
    if published:
        ax.plot(
            [p.date for p in published],
            [p.price for p in published],
            color=INK,
            linewidth=1.4,
            label="index in use (market/index.csv)",
        )
    for i, (label, build) in enumerate(builds.items()):
        points = [p for p in build.points if p.level is not None]
        ax.plot(
            [p.period for p in points],
            [p.level for p in points],
            "-o",
            markersize=2.5,
            linewidth=1.0,
            color=SERIES[(i + 1) % len(SERIES)],
            label=label,
        )
    ax.set_ylabel(f"{currency} per GPU-hour")
    ax.legend(fontsize=6.5, frameon=False, loc="upper right")
    fig.autofmt_xdate(rotation=0, ha="center")
    return to_svg(fig, "index-history")


@memoised
def cost_ranges(ev: Evaluation) -> str:
    """P10 to P90 of cost per 1,000 successful tasks per acceptable offer, P50 as a dot, the evaluated figure as a
    tick."""
    offers = [o for o in chart_offers(ev) if o.acceptable and o.uncertainty and o.uncertainty.p50 is not None]
    fig = _figure(17, max(3.5, 0.75 * len(offers) + 1.5))
    ax = fig.add_subplot()
    _style(ax)
    ax.grid(axis="y", visible=False)
    ax.grid(axis="x", color=GRID, linewidth=0.6)
    k = PER_THOUSAND
    # An outlier (P10 above twice the median P50) is drawn as an arrow at the edge with its range
    # written out, so that the bars that decide keep their scale.
    middles = sorted(o.uncertainty.p50 * k for o in offers)  # type: ignore[union-attr,operator]
    cap = 2 * middles[len(middles) // 2] if middles else None
    inside = [o.uncertainty.p90 * k for o in offers if cap is None or o.uncertainty.p10 * k <= cap]  # type: ignore[union-attr,operator]
    edge = max(inside, default=cap or 1.0) * 1.08
    for y, offer in enumerate(reversed(offers)):
        u = offer.uncertainty
        colour = HIGHLIGHT if offer.id == ev.summary.recommended else ACCENT
        if cap is not None and u.p10 * k > cap:
            ax.annotate(
                "",
                xy=(edge, y),
                xytext=(edge * 0.93, y),
                arrowprops={"arrowstyle": "->", "color": colour, "linewidth": 1.5},
            )
            ax.text(
                edge * 0.92,
                y,
                f"off the scale: {u.p10 * k:.2f} to {u.p90 * k:.2f}  ",
                va="center",
                ha="right",
                fontsize=6.5,
                color=INK,
            )
            continue
        ax.plot([u.p10 * k, u.p90 * k], [y, y], color=colour, linewidth=4, solid_capstyle="butt", alpha=0.45)
        ax.plot([u.p50 * k], [y], "o", color=colour, markersize=5)
        ax.plot([offer.metrics["cost_per_task"] * k], [y], "|", color=INK, markersize=10, markeredgewidth=1.2)
        chance = f"cheapest in {u.prob_cheapest:.0%} of draws" if u.prob_cheapest is not None else ""
        ax.text(u.p90 * k, y, f"  {chance}", va="center", fontsize=6.5, color=INK)
    ax.set_yticks(range(len(offers)), [_short(o.vendor, 26) for o in reversed(offers)], fontsize=7)
    ax.set_xlabel(f"{ev.currency} per 1,000 successful tasks: P10 to P90 (bar), P50 (dot), expected (tick)", fontsize=7)
    left, _ = ax.get_xlim()
    ax.set_xlim(left, edge + (edge - left) * 0.3)  # room for the labels
    return to_svg(fig, "cost-ranges")


@memoised
def tornado(result: Sensitivity, currency: str, names: dict[str, str] | None = None) -> str:
    """The leader's cost per task with each input at its low and high end; flips of the top offers noted."""
    leader = result.offers[0] if result.offers else None
    names = names or {}

    def name(offer_id: str | None) -> str:
        return _short(names.get(offer_id or "", offer_id or ""), 24)

    rows = [
        r
        for r in result.rows
        if leader and r.costs_low.get(leader) is not None and r.costs_high.get(leader) is not None
    ]
    rows.sort(key=lambda r: abs(r.costs_high[leader] - r.costs_low[leader]))  # type: ignore[index,operator]

    def label(r) -> str:  # type: ignore[no-untyped-def]
        # The input, and under it what flips: beside the axis, so that no note runs into a bar or off the chart.
        text = _wrap(r.input, 32, 2)
        if r.flips:
            changed = r.leader_low != leader or r.leader_high != leader
            text += "\n" + (
                f"cheapest becomes {name(r.leader_low if r.leader_low != leader else r.leader_high)}"
                if changed
                else "order of the top offers changes"
            )
        return text

    labels = [label(r) for r in rows]
    # Each row as tall as its own label's lines at body size (9.5 pt at 1.05 spacing: 0.36 cm a line) and a gap,
    # in cm of the axes (which take about 0.77 of the figure's height: matplotlib's default margins).
    heights = [0.36 * (t.count("\n") + 1) + 0.2 for t in labels]
    ys = [sum(heights[:i]) + h / 2 for i, h in enumerate(heights)]
    fig = _figure(17, max(3.5, sum(heights) / 0.77))
    ax = fig.add_subplot()
    _style(ax)
    ax.grid(axis="y", visible=False)
    base = result.baseline.get(leader) if leader else None
    base = base * PER_THOUSAND if base is not None else None
    for y, r in zip(ys, rows):
        low, high = r.costs_low[leader] * PER_THOUSAND, r.costs_high[leader] * PER_THOUSAND  # type: ignore[index,operator]
        ax.barh(y, low - base, left=base, color="#b7cbe6", height=0.4)  # type: ignore[operator]
        ax.barh(y, high - base, left=base, color=ACCENT, height=0.4)  # type: ignore[operator]
    if base is not None:
        ax.axvline(base, color=INK, linewidth=0.8)
    ax.set_yticks(ys, labels, fontsize=BODY_PT, linespacing=1.05, color=INK)
    for tick in ax.get_yticklabels():
        tick.set_multialignment("left")  # its lines start together, whichever font prints them
    ax.tick_params(axis="x", labelsize=BODY_PT)
    ax.set_xlabel(
        f"{name(leader)}: {currency} per 1,000 successful tasks\nwith the input low (light) and high (dark)",
        fontsize=BODY_PT,
    )
    ax.set_ylim(0, max(sum(heights), 1.0))
    _fit_width(fig)  # printed at its natural size (figure.natural): every text at body size
    return to_svg(fig, "tornado")


@memoised
def cash_flows(ev: Evaluation, offer_ids: list[str]) -> str:
    """Cumulative cash out over the horizon for the offers named (the recommendation and its runner-up)."""
    fig = _figure(17, 6.5)
    ax = fig.add_subplot()
    _style(ax)
    for offer_id in offer_ids:
        record = ev.offer(offer_id)
        if record.cashflow is None:
            continue
        running, xs, ys = 0.0, [], []
        for flow in record.cashflow.months:
            running += flow.total
            xs.append(flow.month)
            ys.append(running)
        ax.step(
            xs,
            ys,
            where="post",
            color=HIGHLIGHT if record.id == ev.summary.recommended else ACCENT,
            linewidth=1.6,
            label=f"{_short(record.vendor, 24)} ({record.term_months}-month term)",
        )
    ax.set_xlabel("months from the as-of date (0 = signing)", fontsize=7)
    ax.set_ylabel(f"cumulative cost, {ev.currency}")
    ax.yaxis.set_major_formatter(_thousands())
    ax.legend(fontsize=6.5, frameon=False, loc="upper left")
    return to_svg(fig, "cash-flows")


@memoised
def plan_frontier(plan: PlanResult) -> str:
    """The efficient frontier: expected cost per 1,000 tasks against CVaR of monthly spend, one point per risk limit."""
    k = PER_THOUSAND
    points = sorted(plan.frontier or [], key=lambda p: p.cvar)
    fig = _figure(17, 5.5)
    ax = fig.add_subplot()
    _style(ax)
    ax.grid(axis="x", color=GRID, linewidth=0.6)
    xs = [p.cvar for p in points]
    ys = [p.expected_cost_per_task * k for p in points]
    ax.plot(xs, ys, color=ACCENT, linewidth=1.2, marker="o", markersize=4, zorder=2)
    neutral = next((p for p in points if p.cvar_limit is None), None)
    if neutral is not None:
        ax.scatter([neutral.cvar], [neutral.expected_cost_per_task * k], s=36, color=HIGHLIGHT, zorder=3)
        ax.annotate(
            "risk-neutral plan",
            (neutral.cvar, neutral.expected_cost_per_task * k),
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
            (safest.cvar, safest.expected_cost_per_task * k),
            textcoords="offset points",
            xytext=(6, -2),
            ha="left",
            fontsize=6.5,
            color=INK,
        )
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(6))
    ax.xaxis.set_major_formatter(
        FuncFormatter(
            lambda v, _: f"{v / 1e6:,.2f}M" if abs(v) >= 1e6 else f"{v / 1e3:,.0f}k" if abs(v) >= 1e3 else f"{v:,.0f}"
        )
    )
    ax.set_xlabel(
        f"CVaR {plan.cvar_alpha:.0%} of a path's cost a month, {plan.currency} (the mean of the worst "
        f"{1 - plan.cvar_alpha:.0%} of paths)",
        fontsize=7,
    )
    ax.set_ylabel(f"{plan.currency} per 1,000 tasks, expected", fontsize=7)
    return to_svg(fig, "plan-frontier")


@memoised
def football_field(bars: list[FieldBar], currency: str, horizon_months: int | None, recommended: str | None) -> str:
    """The top offers side by side: the range across the what-if cases (wide bar), the Monte Carlo
    P10 to P90 (narrow bar), the cost today (tick) and over the horizon (diamond). Overlapping bars
    are a near-tie, whatever the point figures say."""
    k = PER_THOUSAND
    fig = _figure(17, max(4.0, 1.0 * len(bars) + 1.8))
    ax = fig.add_subplot()
    _style(ax)
    ax.grid(axis="y", visible=False)
    ax.grid(axis="x", color=GRID, linewidth=0.6)
    rows = list(reversed(bars))
    for y, bar in enumerate(rows):
        colour = HIGHLIGHT if bar.offer == recommended else ACCENT
        if bar.low is not None and bar.high is not None:
            ax.barh(
                y,
                (bar.high - bar.low) * k,
                left=bar.low * k,
                height=0.6,
                color=colour,
                alpha=0.22,
                edgecolor=colour,
                linewidth=0.6,
            )
            # the case at each end beyond everything drawn on its row (both bars, the tick, the diamond), on the
            # row's own line: labels of two rows never meet, and none is drawn over a bar
            marks = [v for v in (bar.low, bar.high, bar.p10, bar.p90, bar.snapshot, bar.horizon) if v is not None]
            ax.text(
                min(marks) * k,
                y,
                _short(bar.low_case or "", 26) + "   ",
                fontsize=6.5,
                color=INK,
                ha="right",
                va="center",
            )
            ax.text(
                max(marks) * k,
                y,
                "   " + _short(bar.high_case or "", 26),
                fontsize=6.5,
                color=INK,
                ha="left",
                va="center",
            )
        if bar.p10 is not None and bar.p90 is not None:
            ax.barh(y, (bar.p90 - bar.p10) * k, left=bar.p10 * k, height=0.2, color=colour)
        if bar.snapshot is not None:
            ax.plot([bar.snapshot * k], [y], "|", color=INK, markersize=14, markeredgewidth=1.6)
        if bar.horizon is not None:
            ax.plot([bar.horizon * k], [y], "D", color=INK, markersize=4.5, markerfacecolor="white")
    ax.set_yticks(range(len(rows)), [_wrap(b.vendor, 22, 2) for b in rows], fontsize=7, linespacing=1.0)
    for tick, bar in zip(ax.get_yticklabels(), rows):
        tick.set_color(HIGHLIGHT if bar.offer == recommended else INK)
    over = f"over {horizon_months} months (diamond)" if horizon_months else ""
    ax.set_xlabel(
        f"{currency} per 1,000 successful tasks: today (tick){', ' + over if over else ''}; what-if range (wide bar), "
        "P10 to P90 (narrow bar)",
        fontsize=7,
    )
    ax.set_ylim(-0.7, len(rows) - 0.3)
    left, right = ax.get_xlim()
    ax.set_xlim(left - (right - left) * 0.45, right + (right - left) * 0.45)  # room for the case names beside the bars
    return to_svg(fig, "football-field")


BREACH = "#9b2c2c"  # a month below the SLA (the scorecard's charts only)


def _month_labels(months: list[str]) -> list[str]:
    """'May' for each month, with the year under the first and under each January; every other label
    when there are more than 12 months, so they stay readable."""
    import calendar

    step = 1 if len(months) <= 12 else 2
    out = []
    for i, key in enumerate(months):
        y, m = int(key[:4]), int(key[5:7])
        label = calendar.month_abbr[m] + (f"\n{y}" if i == 0 or m == 1 else "")
        out.append(label if i % step == 0 or m == 1 else "")
    return out


@memoised
def scorecard_months(vendor: object, currency: str, name: str = "scorecard") -> str:
    """One signed vendor over its months, in three panels: output per billed GPU-hour as a share of the
    promise (the promise at 100%), availability against the SLA (months below it marked), and the cost
    per 1,000 successful tasks delivered against the promised one. A month without the figure's
    evidence is a gap in the line, shaded and marked "no data", never a zero."""
    months = [m.month for m in vendor.months]  # type: ignore[attr-defined]
    x = list(range(len(months)))
    nan = float("nan")

    def series(get) -> list[float]:  # type: ignore[no-untyped-def]
        return [nan if get(m) is None else get(m) for m in vendor.months]  # type: ignore[attr-defined]

    fig = _figure(17, 6.2)
    axes = fig.subplots(1, 3)
    panels = [
        (
            "output per billed GPU-hour,\n% of the promise",
            series(lambda m: None if m.throughput_ratio is None else m.throughput_ratio * 100),
            None,
        ),
        (
            "availability, %,\nagainst the SLA",
            series(lambda m: None if m.availability is None else m.availability * 100),
            series(lambda m: None if m.sla_availability is None else m.sla_availability * 100),
        ),
        (
            f"{currency} per 1,000 successful tasks,\nagainst the promised",
            series(lambda m: None if m.delivered_cost_per_task is None else m.delivered_cost_per_task * PER_THOUSAND),
            series(lambda m: None if m.promised_cost_per_task is None else m.promised_cost_per_task * PER_THOUSAND),
        ),
    ]
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    breached = gaps = False
    for k, (ax, (title, delivered, promised)) in enumerate(zip(axes, panels)):
        _style(ax)
        ax.set_title(title, fontsize=7, color=INK, loc="left", linespacing=1.1)
        if k == 0:
            ax.axhline(100, color=INK, linewidth=0.8, linestyle="--")
        elif promised is not None:
            ax.plot(x, promised, color=INK, linewidth=0.9, linestyle="--")
        ax.plot(x, delivered, color=ACCENT, linewidth=1.4, marker="o", markersize=3.2)
        if k == 1:
            below = [(i, d) for i, (d, s) in enumerate(zip(delivered, promised or [])) if d == d and s == s and d < s]
            if below:
                breached = True
                ax.plot([i for i, _ in below], [d for _, d in below], "o", color=BREACH, markersize=4.5)
        values = [v for v in delivered + (promised or []) + ([100.0] if k == 0 else []) if v == v]
        low, high = (min(values), max(values)) if values else (0.0, 1.0)
        pad = max((high - low) * 0.15, abs(high) * 0.002, 0.05)
        ax.set_ylim(low - pad, high + pad)
        for i, d in enumerate(delivered):
            if d != d:  # no data: a shaded gap, never a zero
                gaps = True
                ax.axvspan(i - 0.4, i + 0.4, color=GRID, alpha=0.8, linewidth=0)
                ax.text(i, (low + high) / 2, "no data", fontsize=5.5, color=INK, ha="center", va="center", rotation=90)
        ax.set_xticks(x, _month_labels(months), fontsize=6.5, linespacing=1.0)
        ax.set_xlim(-0.6, len(months) - 0.4)
        ax.yaxis.set_major_locator(MaxNLocator(5))
    handles = [
        Line2D([], [], color=ACCENT, linewidth=1.4, marker="o", markersize=3.2, label="delivered"),
        Line2D([], [], color=INK, linewidth=0.9, linestyle="--", label="promised (the SLA for availability)"),
    ]
    if breached:
        handles.append(
            Line2D([], [], color=BREACH, marker="o", linestyle="none", markersize=4.5, label="below the SLA")
        )
    if gaps:
        handles.append(Line2D([], [], color=GRID, linewidth=6, label="no data"))
    fig.legend(
        handles=handles, fontsize=6.5, frameon=False, ncol=len(handles), loc="lower center", bbox_to_anchor=(0.5, -0.04)
    )
    fig.subplots_adjust(wspace=0.32, bottom=0.2)
    return to_svg(fig, name)
