"""A hedging recommendation (hedge) as text: its summary, ladder and stress as terminal tables, JSON,
CSV and Markdown. They format; they never compute."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from procure.render.fit import prioritise, summarised
from procure.render.formats import markdown_table, md_cell, money, number, percent
from procure.textsafe import csv_writer

if TYPE_CHECKING:
    from rich.console import Group

    from procure.analysis.hedging import HedgePlan


def ladder_rows(plan: HedgePlan) -> tuple[list[str], list[list[str]]]:
    headers = ["Months", "Floating GPU-h", "Share", "Notional GPU-h", "Contracts", "Hedged GPU-h", "Hedged share"]
    rows = [
        [
            r.months,
            number(r.exposed_gpu_hours),
            percent(r.share, 0),
            number(r.notional_gpu_hours),
            f"{r.contracts:,}",
            number(r.hedged_gpu_hours),
            percent(r.hedged_share, 1),
        ]
        for r in plan.ladder
    ]
    return headers, rows


def stress_rows(plan: HedgePlan) -> tuple[list[str], list[list[str]]]:
    cur = plan.currency
    headers = [
        "Index move",
        f"Index {cur}/GPU-h",
        f"Unhedged {cur}",
        f"Hedge payoff {cur}",
        f"Hedged {cur}",
        "Change unhedged",
        "Change hedged",
        "Basis band (2 sigma)",
    ]
    rows = [
        [
            f"{r.index_move:+.0%}",
            money(r.index_level),
            money(r.unhedged, 0),
            money(r.hedge_payoff, 0),
            money(r.hedged, 0),
            money(r.unhedged_change, 0),
            money(r.hedged_change, 0),
            "unknown" if r.basis_band is None else "+/- " + money(r.basis_band, 0),
        ]
        for r in plan.stress
    ]
    return headers, rows


def hedge_summary(plan: HedgePlan) -> list[str]:
    from procure.analysis.hedging import PLAN_HEDGE_ID  # the plan's hedge is named by its vendors, not "(plan)"

    reg = plan.regression
    if plan.h_star is None:
        fit = (
            "no hedge ratio fitted (no rent history: no tracking is claimed)"
            if reg.source == "none"
            else "h* not estimable"
        )
    else:
        interval = f", 95% interval {plan.h_star_ci95[0]:.3f} to {plan.h_star_ci95[1]:.3f}" if plan.h_star_ci95 else ""
        se = f" (standard error {plan.h_star_se:.3f}{interval})" if plan.h_star_se is not None else ""
        quality = f", rho = {plan.rho:.3f}, R^2 = {plan.r2:.3f}" if plan.r2 is not None else ""
        fit = (
            f"h* = {plan.h_star:.3f}{se}{quality}, basis volatility {money(plan.basis_volatility, 3)} "
            f"{plan.currency}/GPU-h per {plan.period}"
        )
    lines = [
        f"Hedging {plan.vendor}{'' if plan.offer == PLAN_HEDGE_ID else f' ({plan.offer})'} over {plan.horizon_months} "
        f"months from {plan.as_of}: {number(plan.floating_gpu_hours)} floating GPU-hours (from delivery).",
        f"Rent against the index ({reg.source}, {reg.changes} aligned {plan.period}ly changes): {fit}.",
        f"Recommended hedge ratio {plan.hedge_ratio:.3f} ({plan.hedge_ratio_rule}).",
        f"Index {money(plan.index_level)} {plan.currency}/GPU-h on {plan.index_date}; stress from "
        f"{plan.stress_reference}.",
        "Contract: "
        + (
            plan.contract.label
            if plan.contract is not None
            else f"{number(plan.contract_gpu_hours)} GPU-hours a contract"
        )
        + ".",
        f"Basis band: {basis_words(plan)}.",
    ]
    if plan.nothing_to_hedge:
        lines.append(f"Nothing to hedge: {plan.nothing_to_hedge}.")
    return lines


def summary_lines(plan: HedgePlan) -> list[str]:
    """hedge_summary with the contracts to buy after the recommended ratio (a document's order)."""
    lines = hedge_summary(plan)
    return lines[:3] + ([bought_words(plan)] if plan.contracts else []) + lines[3:]


def bought_words(plan: HedgePlan) -> str:
    """The contracts to buy, in all and by months of the ladder: 'Recommended: buy 774 contracts (565,020
    GPU-hours hedged): 49 for months 1-3, 66 for months 4-6, ...'."""
    hedged = sum(r.hedged_gpu_hours for r in plan.ladder)
    parts = ", ".join(f"{r.contracts:,} for months {r.months}" for r in plan.ladder if r.contracts)
    count = plan.contracts
    return (
        f"Recommended: buy {count:,} contract{'s' if count != 1 else ''} of {number(plan.contract_gpu_hours)} "
        f"GPU-hours ({number(hedged)} GPU-hours hedged): {parts}."
    )


def basis_words(plan: HedgePlan) -> str:
    """Where the basis band comes from: the fit, or the stated prior (never a silent 0)."""
    if plan.band_basis_volatility is None:
        return "unknown (no rent history, and too short an index history for a stated prior)"
    if plan.basis_source == "prior":
        return (
            f"a stated prior (hedge.basis_prior), {money(plan.band_basis_volatility, 4)} {plan.currency}/GPU-h per "
            f"{plan.period}, not a fit"
        )
    return f"fitted, {money(plan.band_basis_volatility, 4)} {plan.currency}/GPU-h per {plan.period}"


def hedge_table(plan: HedgePlan) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    def table_of(title: str, headers: list[str], rows: list[list[str]]) -> Table:
        table = Table(title=title, header_style="bold")
        for i, h in enumerate(headers):
            table.add_column(h, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*row)
        return table

    cur = plan.currency
    summary = hedge_summary(plan)  # on a screen: what is hedged and the ratio above the ladder; the method below
    bought = [bought_words(plan)] if plan.contracts else []
    parts: list = [Text("\n".join([summary[0], summary[2], *bought] + summary[6:]))]
    if not plan.nothing_to_hedge:
        parts.append(
            prioritise(table_of("Ladder", *ladder_rows(plan)), {"Notional GPU-h": 1, "Share": 2, "Floating GPU-h": 3})
        )
        stress = table_of("Stress: floating cost over the horizon", *stress_rows(plan))
        parts.append(
            prioritise(
                stress,
                {
                    "Basis band (2 sigma)": 1,
                    f"Index {cur}/GPU-h": 2,
                    f"Hedge payoff {cur}": 3,
                    "Change unhedged": 4,
                    "Change hedged": 4,
                },
                together=(("Change unhedged", "Change hedged"),),
            )
        )
    parts.append(Text("\n".join([summary[1]] + summary[3:6])))
    parts += [Text(f"note: {n}") for n in plan.notes]
    parts.append(
        summarised(
            Text("\n".join(["Limits:"] + [f"- {line}" for line in plan.limits])),
            f"Limits: what a rental price hedge does not do ({len(plan.limits)} points).",
        )
    )
    return Group(*parts)


def hedge_text(plan: HedgePlan, fmt: str) -> str:
    if fmt == "json":
        return plan.model_dump_json(indent=2) + "\n"
    if fmt == "markdown":
        lh, lr = ladder_rows(plan)
        sh, sr = stress_rows(plan)
        return (
            "# Hedging recommendation\n\n"
            + "\n".join(md_cell(line) for line in summary_lines(plan))
            + "\n\n## Ladder\n\n"
            + markdown_table(lh, lr, right=set(range(1, 7)))
            + "\n\n## Stress\n\n"
            + markdown_table(sh, sr, right=set(range(1, 8)))
            + "\n\n"
            + "\n".join(f"- note: {md_cell(n)}" for n in plan.notes)
            + "\n\n## Limits\n\n"
            + "\n".join(f"- {md_cell(line)}" for line in plan.limits)
            + "\n"
        )
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(
        [
            "months",
            "exposed_gpu_hours",
            "share",
            "hedge_ratio",
            "notional_gpu_hours",
            "contracts",
            "hedged_gpu_hours",
            "contract_gpu_hours",
            "contract_unverified",
        ]
    )
    unverified = ";".join(plan.contract.unverified) if plan.contract is not None else ""
    for r in plan.ladder:
        writer.writerow(
            [
                r.months,
                repr(r.exposed_gpu_hours),
                r.share,
                repr(plan.hedge_ratio),
                repr(r.notional_gpu_hours),
                r.contracts,
                repr(r.hedged_gpu_hours),
                repr(plan.contract_gpu_hours),
                unverified,
            ]
        )
    return buffer.getvalue()
