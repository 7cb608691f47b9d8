"""Charts of figures over time for the reports: the position against the market, the hedge's stress, the index's
history, cash flows and a signed vendor's months (the drawing itself: procure/render/charts.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from procure.analysis.evaluate import Evaluation
from procure.model.units import per_thousand
from procure.render.charts import (
    ACCENT,
    BREACH,
    GRID,
    HIGHLIGHT,
    INK,
    MARKERS,
    SERIES,
    memoised,
    new_figure,
    short_name,
    style_axes,
    to_svg,
)
from procure.render.formats import axis_amount

if TYPE_CHECKING:
    from procure.analysis.hedging import HedgePlan
    from procure.analysis.market import IndexBuild
    from procure.analysis.position import Position
    from procure.io.workspace import IndexLevel


@memoised
def position_history(pos: Position, currency: str, best_offer: tuple[str, float] | None = None) -> str:
    """Our cost per task over time against each competitor's; the best offer as a marker at the as-of date."""
    fig = new_figure(17, 7)
    ax = fig.add_subplot()
    style_axes(ax)
    competitors = [name for name in pos.history if name != "us"]
    for i, name in enumerate(competitors):
        points = pos.history[name]
        ax.plot(
            [p.date for p in points],
            [per_thousand(p.cost_per_task) for p in points],
            "-" + MARKERS[(i + 1) % len(MARKERS)],
            color=SERIES[(i + 1) % len(SERIES)],
            linewidth=1.1,
            markersize=3,
            label=short_name(name, 30),
        )
    ours = pos.history.get("us", [])
    if ours:
        ax.plot(
            [p.date for p in ours],
            [per_thousand(p.cost_per_task) for p in ours],
            "-o",
            color=INK,
            linewidth=2.2,
            markersize=4.5,
            label="us (today)",
        )
    if best_offer is not None:
        ax.plot(
            [pos.as_of],
            [per_thousand(best_offer[1])],
            "D",
            color=HIGHLIGHT,
            markersize=5.5,
            label=f"ranked first today ({short_name(best_offer[0], 24)})",
        )  # with demand: the recommendation is a plan, not this offer
    ax.set_ylabel(f"{currency} per 1,000 successful tasks")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=6.5, frameon=False, loc="lower left")
    fig.autofmt_xdate(rotation=0, ha="center")
    return to_svg(fig, "position-history")


@memoised
def hedge_stress(plan: HedgePlan) -> str:
    """Change in floating cost over the horizon for each index move, unhedged and hedged (with the basis band)."""
    fig = new_figure(17, 6.5)
    ax = fig.add_subplot()
    style_axes(ax)
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

    return FuncFormatter(lambda v, _: axis_amount(v))


@memoised
def index_history(published: list[IndexLevel], builds: dict[str, IndexBuild], currency: str) -> str:
    """The index in use against benchmarks built from the observations under different choices."""
    fig = new_figure(17, 6.5)
    ax = fig.add_subplot()
    style_axes(ax)
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
def cash_flows(ev: Evaluation, offer_ids: list[str]) -> str:
    """Cumulative cash out over the horizon for the offers named (the recommendation and its runner-up)."""
    fig = new_figure(17, 6.5)
    ax = fig.add_subplot()
    style_axes(ax)
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
            label=f"{short_name(record.vendor, 24)} ({record.term_months}-month term)",
        )
    ax.set_xlabel("months from the as-of date (0 = signing)", fontsize=7)
    ax.set_ylabel(f"cumulative cost, {ev.currency}")
    ax.yaxis.set_major_formatter(_thousands())
    ax.legend(fontsize=6.5, frameon=False, loc="upper left")
    return to_svg(fig, "cash-flows")


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

    fig = new_figure(17, 6.2)
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
            series(lambda m: per_thousand(m.delivered_cost_per_task)),
            series(lambda m: per_thousand(m.promised_cost_per_task)),
        ),
    ]
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    breached = gaps = False
    for k, (ax, (title, delivered, promised)) in enumerate(zip(axes, panels)):
        style_axes(ax)
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
