"""Charts of ranges for the reports: each offer's cost range over the draws, the one-at-a-time sensitivity (the
tornado) and the football field of what the inputs can move (the drawing itself: procure/render/charts.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from procure.analysis.evaluate import Evaluation
from procure.model.units import TASKS, per_thousand
from procure.render.charts import (
    ACCENT,
    BODY_PT,
    GRID,
    HIGHLIGHT,
    INK,
    chart_offers,
    fit_width,
    memoised,
    new_figure,
    short_name,
    style_axes,
    to_svg,
    wrap_text,
)

if TYPE_CHECKING:
    from procure.analysis.scenarios import FieldBar
    from procure.analysis.sensitivity import Sensitivity


@memoised
def cost_ranges(ev: Evaluation) -> str:
    """P10 to P90 of cost per 1,000 successful tasks per acceptable offer, P50 as a dot, the evaluated figure as a
    tick."""
    offers = [o for o in chart_offers(ev) if o.acceptable and o.uncertainty and o.uncertainty.p50 is not None]
    fig = new_figure(17, max(3.5, 0.75 * len(offers) + 1.5))
    ax = fig.add_subplot()
    style_axes(ax)
    ax.grid(axis="y", visible=False)
    ax.grid(axis="x", color=GRID, linewidth=0.6)
    k = TASKS
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
        ax.plot([per_thousand(offer.metrics["cost_per_task"])], [y], "|", color=INK, markersize=10, markeredgewidth=1.2)
        chance = f"cheapest in {u.prob_cheapest:.0%} of draws" if u.prob_cheapest is not None else ""
        ax.text(u.p90 * k, y, f"  {chance}", va="center", fontsize=6.5, color=INK)
    ax.set_yticks(range(len(offers)), [short_name(o.vendor, 26) for o in reversed(offers)], fontsize=7)
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
        return short_name(names.get(offer_id or "", offer_id or ""), 24)

    rows = [
        r
        for r in result.rows
        if leader and r.costs_low.get(leader) is not None and r.costs_high.get(leader) is not None
    ]
    rows.sort(key=lambda r: abs(r.costs_high[leader] - r.costs_low[leader]))  # type: ignore[index,operator]

    def label(r) -> str:  # type: ignore[no-untyped-def]
        # The input, and under it what flips: beside the axis, so that no note runs into a bar or off the chart.
        text = wrap_text(r.input, 32, 2)
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
    fig = new_figure(17, max(3.5, sum(heights) / 0.77))
    ax = fig.add_subplot()
    style_axes(ax)
    ax.grid(axis="y", visible=False)
    base = result.baseline.get(leader) if leader else None
    base = per_thousand(base)
    for y, r in zip(ys, rows):
        low, high = per_thousand(r.costs_low[leader]), per_thousand(r.costs_high[leader])  # type: ignore[index]
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
    fit_width(fig)  # printed at its natural size (figure.natural): every text at body size
    return to_svg(fig, "tornado")


@memoised
def football_field(bars: list[FieldBar], currency: str, horizon_months: int | None, recommended: str | None) -> str:
    """The top offers side by side: the range across the what-if cases (wide bar), the Monte Carlo
    P10 to P90 (narrow bar), the cost today (tick) and over the horizon (diamond). Overlapping bars
    are a near-tie, whatever the point figures say."""
    k = TASKS
    fig = new_figure(17, max(4.0, 1.0 * len(bars) + 1.8))
    ax = fig.add_subplot()
    style_axes(ax)
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
                short_name(bar.low_case or "", 26) + "   ",
                fontsize=6.5,
                color=INK,
                ha="right",
                va="center",
            )
            ax.text(
                max(marks) * k,
                y,
                "   " + short_name(bar.high_case or "", 26),
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
    ax.set_yticks(range(len(rows)), [wrap_text(b.vendor, 22, 2) for b in rows], fontsize=7, linespacing=1.0)
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
