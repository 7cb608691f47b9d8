"""The comparison as a workbook (--format xlsx, `to_xlsx`): a sheet per table, numbers stored as numbers,
and the workbook a spreadsheet user keeps: an Assumptions sheet and an Offers sheet whose cost columns
are live formulas over those assumptions and the offers' inputs.

Change the staff cost, the shared weight, a list price or a discount, and the costs per task and the
ranks recompute, in Excel and in LibreOffice. The formulas are the cost model's (docs/cost-model.md,
steps 1-6 and 12, and the per-token formula), written cell by cell:

    rent       = list price x (1 - discount)
    financing  = prepay share x rent x cost of capital x term / 24     (owned: 0, its prepay is not financed)
    prepay risk= prepay share x rent x vendor default rate x term / 24  (owned: 0)
    staff      = (your FTE + shared weight x shared FTE) x staff cost per FTE-year / (billed GPUs x 8,760)
    software   = your share of the serving stack x software per GPU-hour + the offer's software
    full       = rent + fees + financing + prepay risk + staff + software
    tasks/GPU-h= throughput x 3,600 / output tokens x availability x success rate x quality x utilization x its factor's
    mean x fill
    cost/task  = full / tasks per GPU-hour
    per-token  = (input tokens x ((1 - s) x input + s x cached) + output tokens x output) x fx / 1e6
                 / (success rate x quality) + (fixed fees + staff per month) / tasks per month

Inputs are values (blue); what the demand fit decides (billed GPUs, fill) and what a curve or the
index gives (throughput, the list price of index-linked and owned offers) are values as evaluated:
they do not move when an assumption does, and the sheet says so.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from procure.model.costing import HOURS_PER_MONTH, HOURS_PER_YEAR, owner_codes
from procure.model.inputs import OPERATING_JOBS
from procure.model.kinds import KINDS, kind_named
from procure.render.workbook_sheets import (
    COUNT,
    FRACTIONAL_COUNT,
    MONEY,
    MONEY_HOUR,
    PER_TASK,
    SHARE,
    add_cashflow_sheet,
    add_horizon_sheet,
    add_inputs_sheet,
    add_plan_sheets,
    add_result_sheets,
    add_sensitivity_sheet,
    cell_value,
    finish,
    table_sheet,
)
from procure.textsafe import formula_like

if TYPE_CHECKING:
    from procure.analysis.evaluate import CostInputs, Evaluation

INPUT_FONT_COLOR = "1F4E9A"  # inputs in blue, formulas in black: the spreadsheet convention

# name, label, unit, number format; the row order of the Assumptions sheet (B2, B3, ...)
ASSUMPTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("fte_cost_year", "Staff cost per FTE-year", "{cur}/year", MONEY),
    ("shared_weight", "Weight of a shared job", "share of an FTE", SHARE),
    ("software_gpu_hour", "Serving software", "{cur}/GPU-h", MONEY_HOUR),
    ("cost_of_capital", "Cost of capital", "per year", SHARE),
    ("vendor_default_rate", "Vendor default rate", "per year", SHARE),
    ("input_tokens", "Input tokens per task", "tokens", COUNT),
    ("output_tokens", "Output tokens per task", "tokens", COUNT),
    ("cached_input_share", "Share of input tokens cached", "share", SHARE),
    ("success_rate", "Workload success rate", "share", SHARE),
    ("utilization", "Utilization", "share", SHARE),
    ("utilization_factor", "Utilization factor (the mean of its draws)", "factor", SHARE),
    ("tasks_per_month", "Tasks per month", "tasks", COUNT),
)


def _ref(name: str) -> str:
    return f"Assumptions!$B${2 + [a[0] for a in ASSUMPTIONS].index(name)}"


def _assumption_values(ev: Evaluation, inputs: CostInputs) -> dict[str, Any]:
    """The Assumptions sheet's values; the utilization factor is the point's (the mean of uncertainty.utilization,
    procure.model.costing.UTILIZATION_POINT), which the cost model multiplies the workload's utilization by."""
    from procure.model.costing import UTILIZATION_POINT

    a, w = ev.assumptions, ev.workload
    factors = inputs.columns.get(UTILIZATION_POINT)
    return {
        "fte_cost_year": a.fte_cost_year,
        "shared_weight": a.shared_weight,
        "software_gpu_hour": a.software_gpu_hour,
        "cost_of_capital": a.cost_of_capital,
        "vendor_default_rate": a.vendor_default_rate,
        "input_tokens": w.input_tokens,
        "output_tokens": w.output_tokens,
        "cached_input_share": w.cached_input_share,
        "success_rate": w.success_rate,
        "utilization": w.utilization,
        "utilization_factor": float(factors[0]) if factors is not None and len(factors) else 1.0,
        "tasks_per_month": w.tasks_per_month,
    }


def _staff(columns: dict[str, Any], i: int, spread: float, model: Any, fixed_only: bool) -> tuple[float, float]:
    """The buyer's FTE on the jobs it owns and on the shared ones (before the shared weight)."""
    yours = shared = 0.0
    for j, job in enumerate(OPERATING_JOBS):
        code = int(owner_codes(columns[f"owner_{job}"][i : i + 1])[0])
        fte = model.staffing_fixed[j] + (0.0 if fixed_only else model.staffing_per_gpu[j] * spread)
        if code == 2:
            yours += fte
        elif code == 1:
            shared += fte
    return float(yours), float(shared)


def _serving_owner(columns: dict[str, Any], i: int) -> str:
    return ("provider", "shared", "customer")[int(owner_codes(columns["owner_serving_stack"][i : i + 1])[0])]


def offer_rows(ev: Evaluation, inputs: CostInputs) -> list[dict[str, Any]]:
    """Each offer's inputs to the sheet's formulas, in the Evaluation's order."""
    col = inputs.columns
    position = {o.id: i for i, o in enumerate(inputs.offers)}
    rows = []
    for record in ev.offers:
        i = position[record.id]
        m = record.metrics
        basis = str(col["basis"][i])
        own = kind_named(basis)
        fx = float(col["fx"][i])
        token = own.per_task  # no GPU-hour: its GPU-hour inputs are blank, its fixed fees a month filled in
        billed = m.get("billed_gpus")
        spread = float(billed) if billed is not None and math.isfinite(billed) else float(col["gpus"][i])
        yours, shared = _staff(col, i, spread, inputs.model, fixed_only=token)
        term = float(col["term_months"][i])
        once_monthly = float(col["fees_once"][i]) / term if term > 0 else 0.0
        rows.append(
            {
                "id": record.id,
                "vendor": record.vendor,
                "basis": basis,
                "acceptable": record.acceptable,
                "list_price": None if token else cell_value(m.get("list_price")),
                "discount": float(col["discount"][i]) if own.rented else None,  # only a rent takes a discount
                "escalation": 1.0
                if not own.escalates or "escalation" not in col or math.isnan(float(col["escalation"][i]))
                else float(col["escalation"][i]),
                "fees": None if token else cell_value(m.get("fees")),
                "prepay_fraction": None if token else float(col["prepay_fraction"][i]),
                "term_months": term,
                "fte_yours": yours,
                "fte_shared": shared,
                "billed_gpus": None if token else spread,
                "serving_owner": _serving_owner(col, i),
                "offer_software": None if token else float(col["software_gpu_hour"][i]) * fx,
                "throughput": None if token else cell_value(m.get("throughput")),
                "availability": cell_value(m.get("availability")),
                "quality": float(col["quality_pass_rate"][i]),
                "fill": None if token else cell_value(m.get("fill")),
                "fx": fx,
                "fixed_fees_month": (once_monthly + float(col["fees_monthly"][i]) + float(col["fees_per_tb_month"][i]))
                * fx
                if token
                else None,
                "cost_per_task": m.get("cost_per_task"),
                "expected_to_point_ratio": cell_value(m.get("expected_to_point_ratio")),
                **{key: None for kind in KINDS for key, _, formula in kind.workbook_columns if formula is None},
                **{key: None for kind in KINDS for key, _, _ in kind.workbook_inputs},
                **(own.workbook_values(inputs.offers[i], m) if own.workbook_values is not None else {}),
            }
        )
    return rows


Column = tuple[str, str, str, Callable[[dict[str, str], int, int], Any]]  # key, header, number format, cell


def _input(key: str) -> Callable[[dict[str, str], int, int], Any]:
    """A cell holding the offer's value under `key` (an input, blue)."""
    return lambda c, r, n: ("value", key)


def _formula(make: Callable[[Callable[[str], str], int, int], str]) -> Callable[[dict[str, str], int, int], Any]:
    """A cell holding a formula; `make` names the row's cells by key (k("rent") -> "H2")."""
    return lambda c, r, n: ("formula", make(lambda k: f"{c[k]}{r}", r, n))


def _unless(basis: str, kinds: list[str], then: str, body: str) -> str:
    """`body`, or `then` where the row's pricing basis (the cell `basis`) is one of `kinds` (none: `body` alone)."""
    if not kinds:
        return body
    tests = [f'{basis}="{name}"' for name in kinds]
    return f"IF({tests[0] if len(tests) == 1 else 'OR(' + ','.join(tests) + ')'},{then},{body})"


def _gpu_hour_only(basis: str, body: str) -> str:
    """A cost per GPU-hour: blank for an offer of a kind with no GPU-hour (`Kind.per_task`: priced per task)."""
    return _unless(basis, [kind.name for kind in KINDS if kind.per_task], '""', body)


def _financed(basis: str, body: str) -> str:
    """The financing or the prepay risk of a prepayment: 0 for a kind whose prepay is not financed
    (`Kind.prepay_financed`: owned, whose capital recovery already carries the cost of capital)."""
    return _unless(basis, [kind.name for kind in KINDS if not kind.prepay_financed], "0", body)


def _per_gpu_hour(make: Callable[[Callable[[str], str]], str]) -> Callable[[dict[str, str], int, int], Any]:
    """A formula of a cost or yield per GPU-hour (`make` names the row's cells by key), blank for an offer priced per
    task."""
    return _formula(lambda k, r, n: _gpu_hour_only(k("basis"), make(k)))


def _prepaid(rate: str) -> Callable[[dict[str, str], int, int], Any]:
    """The cost per GPU-hour of prepaying: the prepaid share of the rent x the assumption `rate` x the term's average
    years outstanding (term months / 24); 0 where a prepayment is not financed."""
    return _per_gpu_hour(
        lambda k: _financed(k("basis"), f"{k('prepay_fraction')}*{k('rent')}*{_ref(rate)}*{k('term_months')}/24")
    )


def _offer_columns(cur: str) -> list[Column]:
    """Steps 1 to 3 (docs/cost-model.md): the offer, its rent (list price less the discount, at the term average),
    fees, financing and prepay risk per GPU-hour: the prices the rest of the sheet adds up."""
    return [
        ("id", "Offer", "@", _input("id")),
        ("vendor", "Vendor", "@", _input("vendor")),
        ("basis", "Pricing basis", "@", _input("basis")),
        ("acceptable", "Acceptable", "General", _input("acceptable")),
        ("list_price", f"List price {cur}/GPU-h", MONEY_HOUR, _input("list_price")),
        ("discount", "Discount", SHARE, _input("discount")),
        ("escalation", "Escalators, term average", "0.0000", _input("escalation")),
        (
            "rent",
            f"Rent {cur}/GPU-h",
            MONEY_HOUR,
            _per_gpu_hour(lambda k: f"{k('list_price')}*(1-N({k('discount')}))*{k('escalation')}"),
        ),
        ("fees", f"Fees {cur}/GPU-h", MONEY_HOUR, _input("fees")),
        ("prepay_fraction", "Prepaid share", SHARE, _input("prepay_fraction")),
        ("term_months", "Term months", COUNT, _input("term_months")),
        ("financing", f"Financing {cur}/GPU-h", MONEY_HOUR, _prepaid("cost_of_capital")),
        ("prepay_risk", f"Prepay risk {cur}/GPU-h", MONEY_HOUR, _prepaid("vendor_default_rate")),
    ]


def _staff_software_columns(cur: str) -> list[Column]:
    """Steps 4 to 6: the staff and the serving software per GPU-hour, then the full cost per paid GPU-hour,
    the sum of every cost before it."""
    return [
        ("fte_yours", "Your staff FTE", "0.000", _input("fte_yours")),
        ("fte_shared", "Shared staff FTE", "0.000", _input("fte_shared")),
        ("billed_gpus", "Billed GPUs", FRACTIONAL_COUNT, _input("billed_gpus")),
        (
            "ops",
            f"Staff {cur}/GPU-h",
            MONEY_HOUR,
            _per_gpu_hour(
                lambda k: (
                    f"({k('fte_yours')}+{_ref('shared_weight')}*{k('fte_shared')})*{_ref('fte_cost_year')}/({k('billed_gpus')}*{HOURS_PER_YEAR:g})"
                )
            ),
        ),
        ("serving_owner", "Serving stack owner", "@", _input("serving_owner")),
        ("offer_software", f"Offer software {cur}/GPU-h", MONEY_HOUR, _input("offer_software")),
        (
            "software",
            f"Software {cur}/GPU-h",
            MONEY_HOUR,
            _per_gpu_hour(
                lambda k: (
                    f'IF({k("serving_owner")}="customer",1,IF({k("serving_owner")}="shared",{_ref("shared_weight")},0))*{_ref("software_gpu_hour")}+{k("offer_software")}'
                )
            ),
        ),
        (
            "full",
            f"Full {cur}/GPU-h",
            MONEY_HOUR,
            _per_gpu_hour(
                lambda k: "+".join(k(x) for x in ("rent", "fees", "financing", "prepay_risk", "ops", "software"))
            ),
        ),
    ]


def _tasks_columns() -> list[Column]:
    """Steps 7 to 11: throughput, availability, quality and fill, and from them the successful tasks a
    paid GPU-hour yields, the denominator of the cost per task."""
    return [
        ("throughput", "Throughput tok/s/GPU", COUNT, _input("throughput")),
        ("availability", "Availability (expected)", "0.00%", _input("availability")),
        ("quality", "Quality pass rate", SHARE, _input("quality")),
        ("fill", "Fill", SHARE, _input("fill")),
        (
            "tasks_per_gpu_hour",
            "Successful tasks/GPU-h",
            "#,##0.0",
            _per_gpu_hour(
                lambda k: (
                    f'IFERROR({k("throughput")}*3600/{_ref("output_tokens")}*{k("availability")}*{_ref("success_rate")}*{k("quality")}*MIN(1,{_ref("utilization")}*{_ref("utilization_factor")})*{k("fill")},"")'
                )
            ),
        ),
    ]


def _kind_input_columns(cur: str) -> list[Column]:
    """The FX, the inputs of each kind's own cost formula (`Kind.workbook_inputs`: the per-token prices, in the
    offer's currency, times FX) and a per-task offer's fixed fees a month, which its cost per task is computed from
    instead of a GPU-hour. On every row: each row's cost formula names them."""
    return [
        ("fx", "FX to " + cur, "0.0000", _input("fx")),
        *[(key, header, fmt, _input(key)) for kind in KINDS for key, header, fmt in kind.workbook_inputs],
        ("fixed_fees_month", f"Fixed fees {cur}/month", MONEY, _input("fixed_fees_month")),
    ]


def _kind_cost(k: Callable[[str], str], gpu_hour_formula: str) -> str:
    """The cost per task of the row's offer kind: each kind with a formula of its own (procure/model/kinds/,
    `Kind.workbook_cost`) in an IF on the pricing basis, the GPU-hour formula for the rest."""
    own = [kind for kind in KINDS if kind.workbook_cost is not None]
    ifs = "".join(f'IF({k("basis")}="{kind.name}",{kind.workbook_cost(k, _ref)},' for kind in own)  # type: ignore[misc]
    return ifs + gpu_hour_formula + ")" * len(own)


def _cost_columns(cur: str) -> list[Column]:
    """Step 12 and the ranking: the cost per successful task at the typical inputs (the per-token formula for
    per-token offers), the expected cost (times the draws' ratio), per 1,000 tasks, and the rank among the acceptable
    offers, live over every row."""
    return [
        (
            "point_cost_per_task",
            f"{cur}/task at typical inputs",
            PER_TASK,
            _formula(lambda k, r, n: "IFERROR(" + _kind_cost(k, f"{k('full')}/{k('tasks_per_gpu_hour')}") + ',"")'),
        ),
        # the mean of the Monte Carlo draws over the cost at the typical inputs (docs/uncertainty.md): a value, as the
        # draws are not in the sheet
        ("expected_to_point_ratio", "Expected / typical", "0.000000", _input("expected_to_point_ratio")),
        (
            "cost_per_task",
            f"{cur}/task",
            PER_TASK,
            _formula(lambda k, r, n: f'IFERROR({k("point_cost_per_task")}*{k("expected_to_point_ratio")},"")'),
        ),
        (
            "cost_per_1000",
            f"{cur} per 1,000 tasks",
            MONEY,
            _formula(lambda k, r, n: f'IF(ISNUMBER({k("cost_per_task")}),{k("cost_per_task")}*1000,"")'),
        ),
        (
            "rank",
            "Rank",
            COUNT,
            lambda c, r, n: (
                "formula",
                f"IF(AND({c['acceptable']}{r},ISNUMBER({c['cost_per_task']}{r})),"
                # numbers compared as numbers: COUNTIFS's "<"&cost criterion goes through text (15 digits), and a
                # cost that text rounds up counted itself as cheaper
                f"SUMPRODUCT((${c['acceptable']}$2:${c['acceptable']}${n}=TRUE)*ISNUMBER(${c['cost_per_task']}$2:${c['cost_per_task']}${n})"
                f'*(${c["cost_per_task"]}$2:${c["cost_per_task"]}${n}<{c["cost_per_task"]}{r}))+1,"")',
            ),
        ),
    ]


def _kind_columns(bases: frozenset[str]) -> list[Column]:
    """An offer kind's own cells (`Kind.workbook_columns`: values, and formulas over the row's cells), shown when an
    offer of the kind is in the sheet."""
    return [
        (key, header, "General", _input(key) if formula is None else _formula(lambda k, r, n, f=formula: f(k)))
        for kind in KINDS
        if kind.name in bases
        for key, header, formula in kind.workbook_columns
    ]


def _columns(cur: str, last: int, bases: frozenset[str] = frozenset()) -> list[Column]:
    """The Offers sheet: key, header (with unit), number format, and the cell (a value key or a formula),
    in the order of the cost model's steps; `bases`: the offer kinds in the sheet."""
    return (
        _offer_columns(cur)
        + _staff_software_columns(cur)
        + _tasks_columns()
        + _kind_input_columns(cur)
        + _kind_columns(bases)
        + _cost_columns(cur)
    )


def add_live_sheets(book: Any, ev: Evaluation, inputs: CostInputs) -> None:
    """The Offers and Assumptions sheets, first in the book (Offers is the one that opens)."""
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    cur = ev.currency
    blue = Font(color=INPUT_FONT_COLOR)
    bold = Font(bold=True)
    rows = offer_rows(ev, inputs)
    offers = book.create_sheet("Offers", 0)
    assumptions = book.create_sheet("Assumptions", 1)

    assumptions.append(["Assumption", "Value", "Unit", "Key in procure.yaml"])
    values = _assumption_values(ev, inputs)
    for name, label, unit, number_format in ASSUMPTIONS:
        key = (
            "uncertainty.utilization (mean)"
            if name == "utilization_factor"
            else (
                "workload."
                if name
                in (
                    "input_tokens",
                    "output_tokens",
                    "cached_input_share",
                    "success_rate",
                    "utilization",
                    "tasks_per_month",
                )
                else "assumptions."
            )
            + name
        )
        assumptions.append([label, cell_value(values[name]), unit.format(cur=cur), key])
        cell = assumptions.cell(row=assumptions.max_row, column=2)
        cell.number_format, cell.font = number_format, blue
    assumptions.append([])
    for note in (
        "Change a blue value here or on the Offers sheet: the costs per task and the ranks recompute.",
        f"Billed GPUs, fill and throughput are as evaluated on {ev.as_of} (the demand fit and the curves do not move "
        "with these cells);",
        "the list price of index-linked and owned offers is as evaluated (the index level, the capital recovery "
        "factor).",
        f"Hours: {HOURS_PER_MONTH:g} a month, {HOURS_PER_YEAR:,.0f} a year. Amounts in {cur}; per-token prices in the "
        "offer's currency, times FX.",
    ):
        assumptions.append([note])

    n = len(rows) + 1
    cols = _columns(cur, n, frozenset(str(row["basis"]) for row in rows))
    letters = {key: get_column_letter(i + 1) for i, (key, *_rest) in enumerate(cols)}
    offers.append([header for _, header, _, _ in cols])
    for r, row in enumerate(rows, start=2):
        for c, (_key, _, number_format, cell_of) in enumerate(cols, start=1):
            kind, content = cell_of(letters, r, n)
            cell = offers.cell(row=r, column=c)
            if kind == "value":
                cell.value = cell_value(row[content])
                if formula_like(cell.value):
                    cell.data_type = "s"  # a vendor's text that looks like a formula stays text
                if content not in ("id", "vendor", "basis", "acceptable"):
                    cell.font = blue
            else:
                cell.value = "=" + content
            cell.number_format = number_format
    for sheet in (offers, assumptions):
        for cell in sheet[1]:
            cell.font = bold
    finish(offers)
    finish(assumptions, filters=False)


# --- one sheet per analysis that has a table ----------------------------------------------------


def to_xlsx(
    ev: Evaluation,
    cost_inputs: Any = None,
    plan: Any = None,
    flows: Evaluation | None = None,
    sensitivity: Any = None,
    plan_failed: str | None = None,
) -> bytes:
    """The comparison as a workbook: one sheet per table, numbers stored as numbers.

    With the cost model's inputs (evaluate_with_inputs), an Offers and an Assumptions sheet come
    first, whose costs and ranks are live formulas (add_live_sheets). Then a sheet per analysis
    given, with units in its headers: the purchase plan and its scenarios, every offer over the
    horizon (from `flows`, an evaluation over one; else `ev` when it has one) and, when `ev` has a
    horizon, every offer's months, the sensitivity.
    """
    try:
        from openpyxl import Workbook
    except ImportError:
        from procure.errors import InputError, Problem

        raise InputError(
            [Problem("--format xlsx", None, "", "Excel output needs openpyxl: pip install openpyxl")]
        ) from None
    from datetime import datetime

    book = Workbook()
    stamp = datetime(
        ev.as_of.year, ev.as_of.month, ev.as_of.day
    )  # the as-of date, not the clock: same inputs, same workbook
    book.properties.created = book.properties.modified = stamp
    add_result_sheets(book, ev)
    if plan is not None:
        add_plan_sheets(book, plan, ev.currency)
    elif plan_failed:  # demand: was given but no plan was solved: the sheet says why rather than being absent
        table_sheet(
            book,
            "Plan",
            [("Note", None)],
            [[f"The purchase plan could not be solved ({plan_failed}); the best single offer is recommended instead."]],
        )
    horizon = flows if flows is not None else (ev if ev.horizon_months else None)
    if horizon is not None:
        add_horizon_sheet(book, horizon)
    if ev.horizon_months:  # the months themselves when the horizon was asked for (a sheet of offers x months)
        add_cashflow_sheet(book, ev)
    if sensitivity is not None and sensitivity.rows:
        add_sensitivity_sheet(book, sensitivity, ev.currency)
    add_inputs_sheet(book, ev)
    # Formula-like text (a vendor name, a reason) stays text: the same rule as every CSV (textsafe).
    for sheet_ in book.worksheets:
        for row in sheet_.iter_rows():
            for cell in row:
                if formula_like(cell.value):
                    cell.data_type = "s"
        if sheet_.title != "Inputs":
            finish(sheet_)
    if cost_inputs is not None:
        add_live_sheets(book, ev, cost_inputs)  # its text values are kept as text there; its formulas are ours
    buffer = io.BytesIO()
    book.save(buffer)
    return _fixed_times(buffer.getvalue(), stamp)


def _fixed_times(workbook: bytes, stamp: object) -> bytes:
    """openpyxl stamps the save time into the zip entries and docProps/core.xml; pin both to the
    as-of date so that the same inputs give the same bytes."""
    import re
    import zipfile

    moment = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")  # type: ignore[attr-defined]
    # Zip entries can only carry dates from 1980 to 2107: an as-of date outside is clamped there.
    zip_time = max((1980, 1, 1, 0, 0, 0), min((2107, 12, 31, 0, 0, 0), stamp.timetuple()[:6]))  # type: ignore[attr-defined]
    source = zipfile.ZipFile(io.BytesIO(workbook))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "docProps/core.xml":
                data = re.sub(
                    rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(<)",
                    lambda m: m.group(1) + moment.encode() + m.group(2),
                    data,
                )
            info = zipfile.ZipInfo(item.filename, date_time=zip_time)
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, data)
    return out.getvalue()
