"""The workbook's plain tables (procure/render/workbook.py writes the live Offers and Assumptions sheets): the
evaluation's figures, gates, ratings and ranges, the purchase plan and its scenarios, every offer over the horizon
and month by month, the sensitivity and the inputs; numbers stored as numbers, headers with their units."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from procure.analysis.record import EXTRA_METRIC_KEYS, METRIC_KEYS
from procure.model.units import per_thousand
from procure.render.ranking import CATEGORY_ABBREVIATIONS
from procure.textsafe import formula_like

if TYPE_CHECKING:
    from procure.analysis.evaluate import Evaluation


# number formats
PER_TASK = "0.000000"
MONEY_HOUR = "0.0000"
MONEY = "#,##0.00"
SHARE = "0.0%"
COUNT = "#,##0"
FRACTIONAL_COUNT = "#,##0.0"


def cell_value(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return float(x) if not isinstance(x, (bool, str)) else x


def finish(sheet: Any, filters: bool = True) -> None:
    """Frozen header row, filters on the header, columns wide enough for their headers."""
    from openpyxl.utils import get_column_letter

    sheet.freeze_panes = "B2" if sheet.max_column > 1 else "A2"
    if filters and sheet.max_row > 1:
        sheet.auto_filter.ref = f"A1:{get_column_letter(sheet.max_column)}{sheet.max_row}"
    for c in range(1, sheet.max_column + 1):
        header = sheet.cell(row=1, column=c).value
        sheet.column_dimensions[get_column_letter(c)].width = max(8, min(40, len(str(header or "")) + 2))


PER_THOUSAND = "0.00"


FACTOR = "0.00"


WHOLE_MONEY = "#,##0"


def table_sheet(book: Any, title: str, columns: list[tuple[str, str | None]], rows: list[list[Any]]) -> Any:
    """A sheet holding one table: headers with their units, numbers stored as numbers in the given
    formats (None: text), a bold frozen header row and filters."""
    from openpyxl.styles import Font

    sheet = book.create_sheet(title)
    sheet.append([header for header, _ in columns])
    for r, row in enumerate(rows, start=2):  # the row number counted, not max_row: that scans every cell
        sheet.append([cell_value(v) for v in row])
        for c, (_, number_format) in enumerate(columns, start=1):
            cell = sheet.cell(row=r, column=c)
            if number_format is not None and cell.value is not None:
                cell.number_format = number_format
            elif isinstance(cell.value, str) and formula_like(cell.value):
                cell.data_type = "s"  # vendor text that looks like a formula stays text
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    finish(sheet)
    return sheet


def add_result_sheets(book: Any, ev: Evaluation) -> None:
    """The evaluation's tables: every offer's figures (the active sheet, Comparison), its gates, its operator's
    rating and, with --uncertainty, its range."""
    sheet = book.active
    sheet.title = "Comparison"
    keys = METRIC_KEYS + EXTRA_METRIC_KEYS
    sheet.append(["rank", "id", "vendor", "grade", "acceptable", "kind", "pricing_basis", *keys, "reasons"])
    for r in ev.offers:
        sheet.append(
            [
                r.rank,
                r.id,
                r.vendor,
                r.grade,
                r.acceptable,
                r.kind,
                r.pricing_basis,
                *[r.metrics[k] for k in keys],
                "; ".join(r.reasons),
            ]
        )
    gates = book.create_sheet("Gates")
    gates.append(["id", "gate", "passed", "headroom", "detail"])
    for r in ev.offers:
        for g in r.gates:
            gates.append([r.id, g.gate, g.passed, g.margin, g.detail])
    ratings = book.create_sheet("Ratings")
    categories = list(CATEGORY_ABBREVIATIONS)
    ratings.append(["id", "rated", "score", "tier", "published_tier", "reliability_factor", *categories])
    for r in ev.offers:
        ratings.append(
            [
                r.id,
                r.rating.rated,
                r.rating.score,
                r.rating.tier,
                r.rating.published_tier,
                r.reliability_factor,
                *[r.rating.categories.get(c) for c in categories],
            ]
        )
    if ev.uncertainty:
        ranges = book.create_sheet("Uncertainty")
        ranges.append(["id", "p10", "p50", "p90", "prob_cheapest"])
        for r in ev.offers:
            u = r.uncertainty
            ranges.append(
                [r.id, u.p10 if u else None, u.p50 if u else None, u.p90 if u else None, u.prob_cheapest if u else None]
            )


def add_inputs_sheet(book: Any, ev: Evaluation) -> None:
    """What the comparison was computed from: the as-of date, the currency, the ranking column, each input's hash."""
    inputs = book.create_sheet("Inputs")
    inputs.append(["as_of", str(ev.as_of)])
    inputs.append(["currency", ev.currency])
    inputs.append(["rank_by", ev.rank_by])  # the Comparison column the ranking sorts by
    inputs.append(["path", "sha256"])
    for f in ev.inputs:
        inputs.append([f.path, f.sha256])


# what each line of the plan asks of the board, in the memo's words: what we hold, what to sign now, what is left to a
# later decision, and pay-as-used capacity, which is used, not signed
PLAN_DECISIONS = {"held": "held", "sign_now": "sign now", "later": "later", None: "as used"}


def add_plan_sheets(book: Any, plan: Any, cur: str) -> None:
    """The purchase plan: its lines (what to commit, with whom, for how long, at what price) and its
    demand scenarios, as `procure plan` prints them."""
    table_sheet(
        book,
        "Plan",
        [
            ("Offer", None),
            ("Vendor", None),
            ("Role", None),
            ("Decision", None),
            ("GPUs", COUNT),
            ("Term months", COUNT),
            ("First month", COUNT),
            ("Last month", COUNT),
            ("First day", None),
            ("Last day", None),
            (f"Price {cur}/GPU-h", MONEY_HOUR),
            (f"Price {cur}/task", PER_TASK),
            ("Share of tasks", SHARE),
        ],
        [
            [
                line.offer,
                line.vendor,
                line.role.replace("_", "-"),
                PLAN_DECISIONS[line.decision],
                line.gpus,
                line.term_months,
                line.start_month,
                line.end_month,
                line.start_date.isoformat() if line.start_date else None,
                line.end_date.isoformat() if line.end_date else None,
                line.price if line.price_unit == "gpu_hour" else None,
                line.price if line.price_unit == "task" else None,
                line.expected_tasks_share,
            ]
            for line in plan.plan
        ],
    )
    table_sheet(
        book,
        "Plan scenarios",
        [
            ("Scenario", None),
            ("Probability", SHARE),
            ("Tasks/month", COUNT),
            (f"{cur}/task", PER_TASK),
            (f"{cur} per 1,000 tasks", PER_THOUSAND),
            ("Unused share", SHARE),
            ("Unserved share", SHARE),
            ("Pay-as-used share", SHARE),
            (f"Max {cur}/month", WHOLE_MONEY),
        ],
        [
            [
                r.name,
                r.probability,
                r.demand_per_month,
                r.cost_per_task,
                per_thousand(r.cost_per_task),
                r.unused_share,
                r.unserved_share,
                r.pay_as_used_share,
                r.max_monthly_spend,
            ]
            for r in plan.scenarios
        ],
    )


# The cash flow's parts in the order of `procure cashflow --offer ID`; total sums those before it.
FLOW_PARTS = (
    ("prepayment", "Prepayment"),
    ("rent", "Rent"),
    ("fees", "Fees"),
    ("staff", "Staff"),
    ("software", "Software"),
    ("power_colo", "Power and colo"),
    ("capital", "Capital"),
    ("credits", "Credits"),
    ("prepay_risk", "Prepay risk"),
    ("exit", "Exit"),
    ("total", "Total"),
    ("sla_credits", "SLA credits (shown)"),
)


def add_horizon_sheet(book: Any, ev: Evaluation) -> None:
    """Every offer over the horizon, as `procure cashflow` prints it: what it binds you to, its total
    and present-value cost, and its cost per task over the horizon beside today's."""
    cur = ev.currency
    table_sheet(
        book,
        "Horizon",
        [
            ("Rank", COUNT),
            ("Offer", None),
            ("Term months", COUNT),
            ("Delivery month", COUNT),
            (f"Commitment {cur}", WHOLE_MONEY),
            (f"Total {cur}", WHOLE_MONEY),
            (f"NPV {cur}", WHOLE_MONEY),
            (f"{cur}/task over {ev.horizon_months} months", PER_TASK),
            (f"{cur}/task today", PER_TASK),
        ],
        [
            [
                r.rank,
                r.id,
                r.term_months,
                r.cashflow.delivery_month if r.cashflow else None,
                r.metrics.get("total_commitment"),
                r.metrics.get("total_cost"),
                r.metrics.get("npv_cost"),
                r.metrics.get("horizon_cost_per_task"),
                r.metrics["cost_per_task"],
            ]
            for r in ev.offers
        ],
    )


def add_cashflow_sheet(book: Any, ev: Evaluation) -> None:
    """Every offer's month-by-month schedule over the horizon (filter on Offer for one)."""
    cur = ev.currency
    table_sheet(
        book,
        "Cash flow",
        [
            ("Offer", None),
            ("Month", COUNT),
            ("Phase", None),
            ("GPUs", FRACTIONAL_COUNT),
            *[(f"{label} {cur}", WHOLE_MONEY) for _, label in FLOW_PARTS],
            ("Successful tasks", COUNT),
        ],
        [
            [r.id, f.month, f.phase, f.gpus, *[getattr(f, key) for key, _ in FLOW_PARTS], f.successful_tasks]
            for r in ev.offers
            for f in (r.cashflow.months if r.cashflow else [])
        ],
    )


def add_sensitivity_sheet(book: Any, result: Any, cur: str) -> None:
    """Each uncertain input at its low and high value: the top offers' cost per task at each end."""
    offers = list(result.offers)
    table_sheet(
        book,
        "Sensitivity",
        [
            ("Input", None),
            ("Low factor", FACTOR),
            ("High factor", FACTOR),
            *[(f"{o} {cur}/task at low", PER_TASK) for o in offers],
            *[(f"{o} {cur}/task at high", PER_TASK) for o in offers],
            (f"Largest swing {cur}/task", PER_TASK),
            ("Swinging offer", None),
            ("Leader at low", None),
            ("Leader at high", None),
            ("Ranking flips", None),
        ],
        [
            [
                r.input,
                r.low,
                r.high,
                *[r.costs_low.get(o) for o in offers],
                *[r.costs_high.get(o) for o in offers],
                r.swing,
                r.swing_offer,
                r.leader_low,
                r.leader_high,
                "yes" if r.flips else "no",
            ]
            for r in result.rows
        ],
    )
