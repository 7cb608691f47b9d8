"""Text renderings of a plan: terminal table, JSON, CSV and Markdown. They format; they never compute."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from procure.render.formats import markdown_table, md_cell, money, number, per_thousand, percent

if TYPE_CHECKING:
    from rich.console import Group

    from procure.analysis.plan import PlanLine, PlanResult


def _price(line: PlanLine, currency: str) -> str:
    if line.price is None:
        return "—"
    return (
        f"{per_thousand(line.price)} {currency}/1k tasks"
        if line.price_unit == "task"
        else f"{money(line.price)} {currency}/GPU-h"
    )


DECISION_WORDS = {"sign_now": "sign now", "later": "later (re-plan)", "held": "held"}


def plan_rows(result: PlanResult) -> tuple[list[str], list[list[str]]]:
    # One price unit for every line: it goes in the header and the cells hold the figures.
    units = {line.price_unit for line in result.plan if line.price is not None}
    unit = (
        None
        if len(units) != 1
        else (f"{result.currency}/1k tasks" if units == {"task"} else f"{result.currency}/GPU-h")
    )
    headers = [
        "Offer",
        "Vendor",
        "Role",
        "GPUs",
        "Term",
        "Months",
        f"Price {unit}" if unit else "Price",
        "Share of tasks",
        "Decision",
    ]

    def price(line: PlanLine) -> str:
        if unit is None or line.price is None:
            return _price(line, result.currency)
        return per_thousand(line.price) if line.price_unit == "task" else money(line.price)

    rows = [
        [
            line.offer,
            line.vendor,
            line.role.replace("_", "-"),
            "—" if line.gpus is None else f"{line.gpus:,}" + (" peak" if line.role == "pay_as_used" else ""),
            "—" if line.term_months is None else f"{line.term_months} mo",
            "all"
            if line.start_month is None
            else str(line.start_month)
            if line.start_month == line.end_month
            else f"{line.start_month}-{line.end_month}",
            price(line),
            percent(line.expected_tasks_share, 1),
            DECISION_WORDS.get(line.decision or "", "as used"),
        ]
        for line in result.plan
    ]
    return headers, rows


def scenario_table_rows(result: PlanResult) -> tuple[list[str], list[list[str]]]:
    cur = result.currency
    headers = [
        "Scenario",
        "Probability",
        "Tasks/month",
        f"{cur}/1k tasks",
        "Unused",
        "Unserved",
        "Pay-as-used",
        f"Max {cur}/month",
        f"Shortfall {cur}",
    ]
    rows = [
        [
            r.name,
            percent(r.probability, 1),
            number(r.demand_per_month),
            per_thousand(r.cost_per_task),
            percent(r.unused_share, 1),
            percent(r.unserved_share, 1),
            percent(r.pay_as_used_share, 1),
            money(r.max_monthly_spend, 0),
            money(r.shortfall_cost, 0),
        ]
        for r in result.scenarios
    ]
    return headers, rows


SHORTFALL_SHOWN = 0.0005  # a month whose expected unserved share is below this is left out of the month table
SCENARIO_COLUMNS = 6  # the most scenario rows the month table gives a column each


def shortfall_table_rows(result: PlanResult) -> tuple[list[str], list[list[str]]]:
    """The months that leave demand unserved: expected tasks and share, by scenario row, the part beyond every usable
    offer, and their price at the unserved price (apart from the cash). Empty when every month is served."""
    cur = result.currency
    months = [m for m in result.shortfall_by_month if m.unserved_share >= SHORTFALL_SHOWN]
    names = list(months[0].by_scenario) if months else []
    if len(names) > SCENARIO_COLUMNS:
        names = []  # many explicit paths: each one's month is in the JSON (`by_scenario`), not a column here
    headers = ["Month", "Demand", "Unserved", "Share", *names, "Beyond offers", f"Shortfall {cur}"]
    rows = [
        [
            str(m.month),
            number(m.demand),
            number(m.unserved_tasks),
            percent(m.unserved_share, 1),
            *(number(m.by_scenario.get(n, 0.0)) for n in names),
            number(m.beyond_offers_tasks),
            money(m.shortfall_cost, 0),
        ]
        for m in months
    ]
    return headers, rows


def shortfall_title(result: PlanResult) -> str:
    price = result.unserved_penalty_per_task or 0.0
    return (
        f"Unserved demand by month (expected tasks; the shortfall at {per_thousand(price)} {result.currency} per 1,000 "
        "tasks, apart from the cash)"
    )


def frontier_rows(result: PlanResult) -> tuple[list[str], list[list[str]]]:
    cur = result.currency
    headers = [f"CVaR limit {cur}/month", f"Expected {cur}/1k tasks", f"CVaR {cur}/month", f"P90 {cur}/month"]
    rows = [
        [
            "none (risk-neutral)" if p.cvar_limit is None else money(p.cvar_limit, 0),
            per_thousand(p.expected_cost_per_task),
            money(p.cvar, 0),
            money(p.p90_monthly_spend, 0),
        ]
        for p in result.frontier or []
    ]
    return headers, rows


def summary_lines(result: PlanResult) -> list[str]:
    cur = result.currency
    d, s = result.demand, result.solver
    demand = (
        f"{d.scenarios} sampled demand paths (seed {d.seed}) over {d.months} months: {number(d.start)} tasks in month "
        f"1, growth {d.growth:.1%} a month, volatility {d.volatility:.0%} after 12 months"
        if d.sampled
        else f"{d.scenarios} explicit demand paths over {d.months} months from {number(d.start)} tasks in month 1, "
        f"growth {d.growth:.1%} a month"
    )
    lines = [
        demand + ".",
        f"Expected cost per 1,000 successful tasks {per_thousand(result.expected_cost_per_task)} {cur} (present value "
        "over present value of tasks); "
        f"expected cash a month {money(result.expected_monthly_spend, 0)}, P90 of a month "
        f"{money(result.p90_monthly_spend, 0)}, CVaR {result.cvar_alpha:.0%} of a path's whole cost "
        f"{money(result.cvar, 0)} {cur}.",
        f"Committed capacity left unused: {percent(result.expected_unused_share, 1)}; served pay-as-used: "
        f"{percent(result.pay_as_used_share, 1)}.",
        result.served
        + (
            " Spend, the highest month and the cost per task are cash; the shortfall is not in them."
            if result.shortfall_cost > 0
            else ""
        ),
    ]
    for h in result.held:
        lines.append(
            f"Held: {h.gpus:,} GPUs with {h.vendor} ({h.offer}) from {h.start} to {h.end}: fixed in the plan, "
            f"{money(h.cost_in_horizon, 0)} {cur} over the horizon whatever it does."
        )
    if result.decide_by is not None:
        now = ", ".join(f"{r.gpus:,} GPUs with {r.vendor} from {r.start}" for r in result.term_sheet) or "no commitment"
        later = [line for line in result.plan if line.decision == "later"]
        lines.append(
            f"Sign now (offers valid today, starting within the decision window to {result.decide_by}, "
            f"plan.decide_within): {now}."
            + (f" Decide by {result.sign_by}: {result.sign_by_reason}." if result.sign_by else "")
            + (
                " Later decisions, intentions to re-plan: "
                + "; ".join(
                    f"{line.gpus:,} GPUs with {line.vendor} from month {line.start_month} at "
                    f"{money(line.expected_price or 0)} {cur}/GPU-h expected"
                    for line in later
                )
                + "."
                if later
                else ""
            )
        )
    lines += result.unserved_remedy
    best = result.single_best
    if best.offer is None:
        lines.append("No single offer can serve every scenario alone.")
    else:
        saving = ""
        if result.saving_per_task is not None and result.saving_share is not None:
            word = "saves" if result.saving_per_task >= 0 else "costs"
            saving = (
                f"; the plan {word} {per_thousand(abs(result.saving_per_task))} {cur} per 1,000 tasks "
                f"{'' if word == 'saves' else 'more '}({percent(abs(result.saving_share), 1)})"
            )
        lines.append(
            f"Best single offer (on the same scenarios): {best.offer} at {per_thousand(best.expected_cost_per_task)} "
            f"{cur} per 1,000 tasks{saving}."
        )
    gap = "—" if s.gap is None else percent(s.gap, 3)
    lines.append(
        f"Solver: {s.method}, {s.status}; gap {gap} (stops at {percent(s.mip_gap, 3)} or after {s.node_limit or 0:,} "
        f"nodes; time backstop {s.time_limit_s:g} s); "
        f"{s.variables:,} variables ({s.integers:,} integer), {s.constraints:,} constraints."
    )
    return lines


def plan_table(result: PlanResult) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    def table_of(title: str, headers: list[str], rows: list[list[str]]) -> Table:
        table = Table(title=title, header_style="bold")
        for i, h in enumerate(headers):
            table.add_column(h, justify="left" if i < 3 else "right")
        for row in rows:
            table.add_row(*row)
        return table

    from procure.render.fit import prioritise, summarised

    cur = result.currency
    # On a narrow terminal (render/fit.py): the offer, its role, GPUs, months, price and share stay longest.
    parts: list = [Text(result.headline)] if result.headline else []
    lines = summary_lines(result)  # on a screen: what to sign and hold under the plan; the figures and method below
    decision = [
        line
        for line in lines
        if line.startswith(("Held:", "Sign now"))
        or line in result.unserved_remedy
        or bool(result.served)
        and line.startswith(result.served)
    ]
    parts += [
        prioritise(
            table_of("Procurement plan", *plan_rows(result)),
            {"Vendor": 1, "Term": 2, "Share of tasks": 3, "Role": 4, "Decision": 5},
        )
    ]
    parts += [Text("\n".join(decision))] if decision else []
    method = [line for line in lines if line not in decision]
    parts.append(
        summarised(
            Text("\n".join(method)), "Demand, expected cost and spend risk, unused capacity, best single offer, solver."
        )
    )
    parts.append(
        prioritise(
            table_of("Demand scenarios", *scenario_table_rows(result)),
            {f"Shortfall {cur}": 1, "Pay-as-used": 2, "Unused": 3, "Probability": 4, "Unserved": 5},
        )
    )
    short_headers, short_rows = shortfall_table_rows(result)
    if short_rows:
        parts.append(
            prioritise(
                table_of(shortfall_title(result), short_headers, short_rows),
                {h: i + 1 for i, h in enumerate(short_headers[4:-1][::-1] + ["Demand"])},
            )
        )
    if result.frontier:
        parts.append(
            prioritise(
                table_of("Efficient frontier: expected cost against CVaR of monthly spend", *frontier_rows(result)),
                {f"P90 {cur}/month": 1},
            )
        )
    notes = [n for n in result.notes if n != result.headline]
    if notes:
        parts.append(Text("\n".join(f"note: {n}" for n in notes)))
    return Group(*parts)


def plan_text(result: PlanResult, fmt: str) -> str:
    if fmt == "json":
        return result.to_json()
    if fmt == "markdown":
        ph, pr = plan_rows(result)
        sh, sr = scenario_table_rows(result)
        text = (
            (f"**{md_cell(result.headline)}**\n\n" if result.headline else "")
            + "# Procurement plan\n\n"
            + markdown_table(ph, pr, right={3, 4, 6, 7})
            + "\n\n"
            + "\n".join(f"- {md_cell(line)}" for line in summary_lines(result))
            + "\n\n## Demand scenarios\n\n"
            + markdown_table(sh, sr, right=set(range(1, 9)))
            + "\n"
        )
        mh, mr = shortfall_table_rows(result)
        if mr:
            text += f"\n## {shortfall_title(result)}\n\n" + markdown_table(mh, mr, right=set(range(0, len(mh)))) + "\n"
        if result.frontier:
            fh, fr = frontier_rows(result)
            text += "\n## Efficient frontier\n\n" + markdown_table(fh, fr, right={1, 2, 3}) + "\n"
        notes = [n for n in result.notes if n != result.headline]
        if notes:
            text += "\n" + "\n".join(f"- note: {md_cell(n)}" for n in notes) + "\n"
        return text
    from procure.textsafe import csv_writer  # spreadsheet-safe cells, as in every CSV the tool writes

    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(
        [
            "offer",
            "vendor",
            "role",
            "gpus",
            "term_months",
            "start_month",
            "end_month",
            "price",
            "price_unit",
            "expected_tasks_share",
            "decision",
        ]
    )
    for line in result.plan:
        writer.writerow(
            [
                line.offer,
                line.vendor,
                line.role,
                "" if line.gpus is None else line.gpus,
                "" if line.term_months is None else line.term_months,
                "" if line.start_month is None else line.start_month,
                "" if line.end_month is None else line.end_month,
                "" if line.price is None else repr(line.price),
                line.price_unit,
                repr(line.expected_tasks_share),
                line.decision or "",
            ]
        )
    return buffer.getvalue()
