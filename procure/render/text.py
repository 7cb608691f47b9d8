"""Text renderings of an Evaluation: terminal table, JSON, CSV and Markdown.

Renderers format; they never compute a figure. Every number comes from the Evaluation.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, Callable

from procure.analysis.evaluate import Evaluation
from procure.analysis.record import EXTRA_METRIC_KEYS, METRIC_KEYS, OfferRecord
from procure.textsafe import csv_writer, formula_like, markdown_text
from procure.render.fit import prioritise

if TYPE_CHECKING:
    from rich.console import Group
    from rich.table import Table

    from procure.model.grading import GradeCheck, GradeResult
    from procure.model.inputs import Offer
    from procure.analysis.hedging import HedgePlan
    from procure.analysis.history import Breach, Diff, RunInfo
    from procure.analysis.market import IndexBuild
    from procure.analysis.position import Position
    from procure.analysis.uncertainty import Sensitivity
    from procure.analysis.whatif import PriceToWin, WhatIf

DASH = "—"


def money(value: float | None, digits: int = 2) -> str:
    return DASH if value is None else f"{round(value, digits) + 0.0:,.{digits}f}"  # + 0.0: never "-0"


def per_task(value: float | None) -> str:
    """Costs per task are fractions of a cent to a few cents: five decimals keep them comparable."""
    return DASH if value is None else f"{value:.5f}"


def per_thousand(value: float | None, digits: int = 2) -> str:
    """A cost per task shown per 1,000 tasks, as the reports print it: 0.006427 -> '6.43'."""
    return DASH if value is None else f"{round(value * 1000, digits) + 0.0:,.{digits}f}"


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


def first_reason(record: OfferRecord) -> str:
    if record.reasons:
        return record.reasons[0]
    return "unrated: availability unverified; rate before signing" if record.rating_state == "unrated" else ""


def grade_label(record: OfferRecord) -> str:
    return record.grade or "ungraded"


# One definition of the comparison columns, shared by the table, CSV and Markdown.
Column = tuple[str, Callable[[OfferRecord], str]]


def comparison_columns(currency: str, ranges: bool = False, horizon_months: int | None = None) -> list[Column]:
    """The comparison's columns; with `ranges`, the Monte Carlo P10/P50/P90 and probability of being cheapest;
    with `horizon_months` (compare --horizon N), the horizon's commitment and cost per task."""
    columns = _base_columns(currency)
    if horizon_months:
        at = next(i for i, (title, _) in enumerate(columns) if title == per_k(currency)) + 1
        columns[at:at] = [
            (f"{per_k(currency)} {horizon_months} mo", lambda r: per_thousand(r.metrics.get("horizon_cost_per_task"))),
            (f"Commit {currency}", lambda r: cash(r.metrics.get("total_commitment"))),
        ]
    if ranges:
        def band(key: str) -> Callable[[OfferRecord], str]:
            return lambda r: per_thousand(getattr(r.uncertainty, key)) if r.uncertainty else DASH

        columns[-1:-1] = [
            ("P10", band("p10")),
            ("P50", band("p50")),
            ("P90", band("p90")),
            ("P(cheapest)", lambda r: percent(r.uncertainty.prob_cheapest, 1) if r.uncertainty and r.uncertainty.prob_cheapest is not None else DASH),
        ]
    return columns


def _base_columns(currency: str) -> list[Column]:
    return [
        ("Rank", lambda r: str(r.rank) if r.rank else DASH),
        ("Offer", lambda r: r.id),
        ("Vendor", lambda r: r.vendor),
        ("Grade", grade_label),
        ("OK", lambda r: "yes" if r.acceptable else "no"),
        (f"List {currency}/GPU-h", list_cell),
        (f"Full {currency}/GPU-h", lambda r: money(r.metrics["full"])),
        ("tok/s/GPU", lambda r: number(r.metrics["throughput"])),
        ("Avail.", lambda r: percent(r.metrics["availability"])),
        ("Fill", lambda r: percent(r.metrics["fill"], 0)),
        (per_k(currency), lambda r: per_thousand(r.metrics["cost_per_task"])),
        (f"{currency}/M tok", lambda r: money(r.metrics["cost_per_mtok"])),
        ("Reason", first_reason),
    ]


def list_cell(record: OfferRecord) -> str:
    """Today's list price, and the term-average rent beside it when an escalator moves it."""
    price, average, rent = record.metrics["list_price"], record.metrics.get("rent_term_average"), record.metrics.get("rent_today", record.metrics.get("rent"))
    if price is not None and average is not None and rent is not None and abs(average - rent) > 0.005:
        return f"{money(price)} (term avg {money(average)})"
    return money(price)


def _horizon_sort(ev: Evaluation) -> int | None:
    return ev.horizon_months if ev.rank_by == "horizon_cost_per_task" else None


def workload_line(ev: Evaluation) -> str:
    wl = ev.workload
    demand = f", {wl.tasks_per_month:,.0f} tasks/month" if wl.tasks_per_month else ""
    return (
        f"{wl.name}: {wl.input_tokens:,} in / {wl.output_tokens:,} out tokens at {wl.interactivity:g} tok/s per user, "
        f"success {wl.success_rate:.0%}, utilization {wl.utilization:.0%}{demand}; as of {ev.as_of}; {ev.currency}"
    )


def comparison_table(ev: Evaluation) -> Table:
    from rich.table import Table

    caption = workload_line(ev) + (f"\nUncertainty: {ev.uncertainty.method}" if ev.uncertainty else "")
    if _horizon_sort(ev):
        caption += f"\nRanked by the cost per successful task over {ev.horizon_months} months (present value of costs / of tasks)."
    if ev.horizon_months:
        caption += "".join(f"\nBefore delivery: {n}." for n in bridge_notes(ev))
    table = Table(title="Cost per 1,000 successful tasks", caption=caption, caption_justify="left", header_style="bold")
    columns = comparison_columns(ev.currency, ev.uncertainty is not None, ev.horizon_months)
    for i, (title, _) in enumerate(columns):
        table.add_column(title, justify="right" if i == 0 or 5 <= i < len(columns) - 1 else "left", overflow="fold")
    for record in ev.offers:
        style = None if record.acceptable else "dim"
        table.add_row(*(cell(record) for _, cell in columns), style=style)
    cur = ev.currency
    if ev.uncertainty:
        # With ranges, they are the decision figures: the offer, its cost, P50 and its range stay
        # longest; the reason (and whether it is acceptable: its rank says so) go before them.
        # The reason (blank for every acceptable offer) goes first; the expected cost is in its own
        # column, so the median goes before the range and the chance of being cheapest.
        order = ["Reason", "Vendor", f"{cur}/M tok", f"List {cur}/GPU-h", "Fill", "Avail.", "tok/s/GPU", f"Full {cur}/GPU-h", "Grade", "OK", "P50", "P(cheapest)", "P10", "P90"]
        ranks = {h: i + 1 for i, h in enumerate(order)} | {"P90": order.index("P10") + 1}
        return prioritise(table, ranks, one_line=("Reason",), together=(("P10", "P90"),))
    # On a narrow terminal: the offer, its cost per task and why it fails stay longest.
    return prioritise(table, {"Vendor": 1, f"{cur}/M tok": 2, f"List {cur}/GPU-h": 3, "Fill": 4, "Avail.": 5, "tok/s/GPU": 7, f"Full {cur}/GPU-h": 8, "Grade": 9, "OK": 12}, one_line=("Reason",))


def to_json(ev: Evaluation) -> str:
    return ev.to_json()


def to_csv(ev: Evaluation) -> str:
    """One row per offer: identity, gates and every metric, numbers unformatted for spreadsheets."""
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    keys = METRIC_KEYS + EXTRA_METRIC_KEYS
    bands = ("p10", "p50", "p90", "prob_cheapest") if ev.uncertainty else ()
    # rank_by names the column the ranking sorts by (cost_per_task, or horizon_cost_per_task).
    writer.writerow(["rank", "rank_by", "id", "vendor", "grade", "acceptable", "kind", "pricing_basis", *keys, *bands, "reasons"])
    for r in ev.offers:
        values = ["" if r.metrics[k] is None else repr(r.metrics[k]) for k in keys]
        ranges = ["" if r.uncertainty is None or getattr(r.uncertainty, k) is None else repr(getattr(r.uncertainty, k)) for k in bands]
        writer.writerow([r.rank or "", ev.rank_by, r.id, r.vendor, r.grade or "", str(r.acceptable).lower(), r.kind, r.pricing_basis, *values, *ranges, "; ".join(r.reasons)])
    return buffer.getvalue()


def _md_cell(text: str) -> str:
    """Vendor text is data: escape what Markdown would read as table syntax or markup."""
    return markdown_text(text)


def markdown_table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    right = right or set()
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def to_markdown(ev: Evaluation) -> str:
    columns = comparison_columns(ev.currency, ev.uncertainty is not None, ev.horizon_months)
    headers = [title for title, _ in columns]
    rows = [[cell(r) for _, cell in columns] for r in ev.offers]
    parts = [
        f"# Offer comparison: cost per 1,000 successful tasks ({ev.currency})",
        "",
        *([_md_cell(ev.recommendation.headline), ""] if ev.recommendation else []),
        _md_cell(workload_line(ev)),
        "",
        markdown_table(headers, rows, right={0} | set(range(5, len(columns) - 1))),
    ]
    if ev.uncertainty:
        parts += ["", "Uncertainty: " + _md_cell(ev.uncertainty.method)]
    best = next((r for r in ev.ranked if r.rank == 1), None)  # not among the offers printed (--offer): not named
    if best is not None:
        parts += ["", f"**Lowest cost per successful task:** {_md_cell(best.vendor)} (`{best.id}`), {per_thousand(best.metrics['cost_per_task'])} {ev.currency} per 1,000 tasks."]
    rejected = [r for r in ev.offers if not r.acceptable]
    if rejected:
        parts += ["", "## Not acceptable", ""]
        parts += [f"- `{r.id}` ({_md_cell(r.vendor)}): {_md_cell('; '.join(r.reasons))}" for r in rejected]
    noted = [r for r in ev.offers if r.notes]
    if noted:
        parts += ["", "## Notes", ""]
        parts += [f"- `{r.id}`: {_md_cell('; '.join(r.notes))}" for r in noted]
    parts += ["", "Inputs:", ""] + [f"- `{f.path}` sha256 `{f.sha256}`" for f in ev.inputs]
    return "\n".join(parts) + "\n"


RENDERERS: dict[str, Callable[[Evaluation], str]] = {"json": to_json, "csv": to_csv, "markdown": to_markdown}


# --- grades -------------------------------------------------------------------------------------


def grades_table(results: list[tuple[Offer, GradeResult]]) -> Table:
    from rich.table import Table

    table = Table(title="Grades", header_style="bold")
    for title in ("Offer", "Vendor", "Kind", "Grade", "Requirements"):
        table.add_column(title, overflow="fold")
    for offer, result in results:
        shown = result.assigned or result.nearest
        if shown is None:
            detail = "no grades defined"
        elif result.grade:
            detail = f"all {len(shown.results)} requirements of {shown.grade.id} pass"
        else:
            detail = f"nearest {shown.grade.id}; fails " + "; ".join(
                f"{q.requirement} (expected {q.expected}, offer states {q.observed})" for q in shown.failures
            )
        table.add_row(offer.id, offer.vendor, offer.service.kind, result.grade or "ungraded", detail)
    return prioritise(table, {"Vendor": 1, "Kind": 2})


def explain_table(offer_id: str, vendor: str, checks: list[GradeCheck], assigned: str | None) -> Table:
    from rich.table import Table

    verdict = f"grade {assigned}" if assigned else "ungraded"
    # Name the requirements missed for each grade above the one given (every grade when ungraded).
    above = [c for c in checks if not c.passed and (assigned is None or c.grade.rank < next(x.grade.rank for x in checks if x.grade.id == assigned))]
    missed = "\n".join(f"misses {c.grade.id}: " + "; ".join(f"{r.requirement} ({r.observed})" for r in c.failures) for c in above)
    table = Table(title=f"{offer_id} ({vendor}): {verdict}", caption=missed or None, caption_justify="left", header_style="bold")
    for title in ("Grade", "Requirement", "Expected", "Offer states", "Result"):
        table.add_column(title, overflow="fold")
    for check in checks:
        for i, result in enumerate(check.results):
            table.add_row(check.grade.id if i == 0 else "", result.requirement, result.expected, result.observed, "pass" if result.passed else "FAIL")
        table.add_section()
    return prioritise(table, {"Expected": 1})  # the requirement, what the offer states and the result stay


# --- operator ratings ---------------------------------------------------------------------------

CATEGORY_ABBREVIATIONS = {
    "security": "Sec",
    "lifecycle": "Life",
    "orchestration": "Orch",
    "storage": "Stor",
    "networking": "Net",
    "reliability": "Rel",
    "monitoring": "Mon",
    "pricing": "Price",
    "partnerships": "Part",
    "availability": "Avail",
}


def tier_label(record: OfferRecord) -> str:
    rating = record.rating
    if not rating.rated:
        return rating.note
    if rating.tier is None and rating.tier_note:
        return rating.tier_note
    return (rating.tier or DASH).capitalize()


def published_label(record: OfferRecord) -> str:
    published = record.rating.published_tier
    if published is None:
        return DASH
    return published.capitalize() + (" (differs)" if record.rating.disagrees else "")


def rating_records(ev: Evaluation) -> list[dict]:
    """The JSON records of `procure rate`: id, tier (lower-case, null when not rated), score, categories."""
    return [
        {
            "id": r.id,
            "vendor": r.vendor,
            "kind": r.kind,
            "rated": r.rating.rated,
            "note": r.rating.note,
            "tier": r.rating.tier,
            "score": r.rating.score,
            "percentile": r.rating.percentile,
            "categories": r.rating.categories,
            "critical_failures": r.rating.critical_failures,
            "published_tier": r.rating.published_tier,
            "disagrees": r.rating.disagrees,
            "reliability_factor": r.reliability_factor,
            "reliability_source": r.reliability_source,
            "operational_score": r.rating.operational_score,
            "tier_note": r.rating.tier_note,
            "unanswered": r.rating.unanswered,
        }
        for r in by_score(ev)
    ]


def by_score(ev: Evaluation) -> list[OfferRecord]:
    """Rated offers by score (highest first; a critical failure without a score last), then the rest by id."""
    rated = sorted((o for o in ev.offers if o.rating.rated), key=lambda o: (-(o.rating.score if o.rating.score is not None else -1.0), o.id))
    return rated + sorted((o for o in ev.offers if not o.rating.rated), key=lambda o: o.id)


def rating_rows(ev: Evaluation) -> tuple[list[str], list[list[str]]]:
    headers = ["Offer", "Vendor", "Score", "Tier", "Published", "Reliability", *CATEGORY_ABBREVIATIONS.values(), "Critical"]
    rows = []
    for r in by_score(ev):
        rating = r.rating
        cats = [number(rating.categories.get(c)) if rating.rated else DASH for c in CATEGORY_ABBREVIATIONS]
        factor = DASH if r.reliability_factor is None else f"{r.reliability_factor:g}"
        rows.append([r.id, r.vendor, number(rating.score, 1), tier_label(r), published_label(r), factor, *cats, "; ".join(rating.critical_failures)])
    return headers, rows


def rating_table(ev: Evaluation) -> Table:
    from rich.table import Table

    headers, rows = rating_rows(ev)
    table = Table(title="Operator ratings", caption=ev.rating_method, caption_justify="left", header_style="bold")
    for i, title in enumerate(headers):
        table.add_column(title, justify="right" if 2 <= i <= 15 and i not in (3, 4) else "left", overflow="fold")
    for row in rows:
        table.add_row(*row)
    # Narrow: the score, tier and critical failures stay; the categories go first.
    return prioritise(table, {"Vendor": 3, **{c: 1 for c in CATEGORY_ABBREVIATIONS.values()}, "Published": 4, "Reliability": 5})


def rating_json(ev: Evaluation) -> str:
    import json

    return json.dumps({"method": ev.rating_method, "offers": rating_records(ev)}, indent=2) + "\n"


def rating_csv(ev: Evaluation) -> str:
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    categories = list(CATEGORY_ABBREVIATIONS)
    writer.writerow(["id", "vendor", "rated", "score", "tier", "published_tier", "disagrees", "reliability_factor", *categories, "critical_failures", "note"])
    for rec in rating_records(ev):
        writer.writerow(
            [
                rec["id"], rec["vendor"], str(rec["rated"]).lower(), "" if rec["score"] is None else repr(rec["score"]), rec["tier"] or "",
                rec["published_tier"] or "", str(rec["disagrees"]).lower(), "" if rec["reliability_factor"] is None else rec["reliability_factor"],
                *["" if c not in rec["categories"] else repr(rec["categories"][c]) for c in categories], "; ".join(rec["critical_failures"]), rec["note"],
            ]
        )
    return buffer.getvalue()


def rating_markdown(ev: Evaluation) -> str:
    headers, rows = rating_rows(ev)
    return "# Operator ratings\n\n" + markdown_table(headers, rows, right=set(range(2, 16)) - {3, 4}) + "\n\n" + _md_cell(ev.rating_method) + "\n"


RATING_RENDERERS: dict[str, Callable[[Evaluation], str]] = {"json": rating_json, "csv": rating_csv, "markdown": rating_markdown}


# --- what-ifs -----------------------------------------------------------------------------------

WHATIF_ROWS: list[tuple[str, str, Callable[[float | None], str]]] = [
    ("cost_per_task", "Cost per 1,000 successful tasks", per_thousand),
    ("full", "Full cost per paid GPU-hour", money),
    ("rent", "Rent per GPU-hour", money),
    ("throughput", "Output tok/s/GPU at the target", lambda v: number(v, 1)),
    ("availability", "Availability", percent),
    ("utilization", "Utilization", lambda v: percent(v, 0)),
    ("fill", "Fill (share of billed GPUs used)", lambda v: percent(v, 1)),
    ("gpus_needed", "GPUs the demand needs", lambda v: number(v, 1)),
    ("billed_gpus", "GPUs billed", lambda v: number(v, 1)),
    ("monthly_spend", "Monthly spend", lambda v: money(v, 0)),
]


def whatif_lines(result: WhatIf) -> list[str]:
    """The verdict in sentences; every figure from the result."""
    cur = result.currency
    lines = [f"{result.vendor} ({result.offer}) with {', '.join(result.changes) or 'no change'}:"]
    if result.before == result.after:
        lines.append("no figure changes: the offer already has these values, or the change does not reach the cost.")
    if result.monthly_saving is not None:
        lines.append(
            f"cost per 1,000 successful tasks from {per_thousand(result.before.cost_per_task)} to {per_thousand(result.after.cost_per_task)} {cur}; "
            f"monthly saving {money(result.monthly_saving, 0)} {cur} at {number(result.tasks_per_month)} tasks a month ({result.tasks_basis})."
        )
    if result.monthly_cost or result.one_off:
        payback = "never" if result.payback_months is None else f"{result.payback_months:.1f} months (discounted" + (f"; beyond the {result.term_months}-month term)" if result.payback_beyond_term else ")")
        lines.append(f"net of {money(result.monthly_cost, 0)} a month: {money(result.net_monthly, 0)} {cur} a month; payback of {money(result.one_off, 0)}: {payback}.")
    if result.break_even_throughput_gain is not None and (result.monthly_cost or result.one_off):
        lines.append(f"break-even throughput gain (alone): {result.break_even_throughput_gain:+.1%}.")
    lines += [f"note: {n}." for n in result.notes]
    return lines


def whatif_table(result: WhatIf) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"What if: {result.offer}", header_style="bold")
    table.add_column("Figure")
    table.add_column("Before", justify="right")
    table.add_column("After", justify="right")
    for key, label, fmt in WHATIF_ROWS:
        table.add_row(label, fmt(getattr(result.before, key)), fmt(getattr(result.after, key)))
    return Group(table, Text("\n".join(whatif_lines(result))))


def whatif_json(result: WhatIf) -> str:
    return result.model_dump_json(indent=2) + "\n"


def whatif_csv(result: WhatIf) -> str:
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["figure", "before", "after"])
    for key, _, _ in WHATIF_ROWS:
        before, after = getattr(result.before, key), getattr(result.after, key)
        writer.writerow([key, "" if before is None else repr(before), "" if after is None else repr(after)])
    for key in ("tasks_per_month", "monthly_saving", "monthly_cost", "net_monthly", "one_off", "payback_months", "payback_simple_months", "break_even_throughput_gain"):
        value = getattr(result, key)
        writer.writerow([key, "", "" if value is None else repr(value)])
    return buffer.getvalue()


def whatif_markdown(result: WhatIf) -> str:
    rows = [[label, fmt(getattr(result.before, key)), fmt(getattr(result.after, key))] for key, label, fmt in WHATIF_ROWS]
    return f"# What if: {_md_cell(result.offer)}\n\n" + markdown_table(["Figure", "Before", "After"], rows, right={1, 2}) + "\n\n" + "\n".join(_md_cell(line) for line in whatif_lines(result)) + "\n"


WHATIF_RENDERERS: dict[str, Callable[[WhatIf], str]] = {"json": whatif_json, "csv": whatif_csv, "markdown": whatif_markdown}


def price_to_win_rows(rows: list[PriceToWin], currency: str) -> tuple[list[str], list[list[str]]]:
    headers = ["Rank", "Offer", "Vendor", per_k(currency), f"List {currency}/GPU-h", f"Price to tie {currency}/GPU-h", "Change", "Note"]
    body = [
        [str(r.rank), r.id, r.vendor, per_thousand(r.cost_per_task), money(r.list_price, 3), money(r.price_to_tie, 3), percent(r.change, 1) if r.change is not None else DASH, r.note]
        for r in rows
    ]
    return headers, body


def price_to_win_table(rows: list[PriceToWin], currency: str) -> Table:
    from rich.table import Table

    headers, body = price_to_win_rows(rows, currency)
    table = Table(title="Price to win: the GPU-hour list price at which each offer ties the leader", header_style="bold")
    for i, title in enumerate(headers):
        table.add_column(title, justify="right" if i in (0, 3, 4, 5, 6) else "left")
    for row in body:
        table.add_row(*row)
    # The offer, its list price and the price that ties the leader stay longest.
    return prioritise(table, {"Vendor": 1, "Note": 2, per_k(currency): 3, "Rank": 4, "Change": 5}, one_line=("Note",))


def price_to_win_text(rows: list[PriceToWin], currency: str, fmt: str) -> str:
    import json

    if fmt == "json":
        return json.dumps({"currency": currency, "offers": [r.model_dump(mode="json") for r in rows]}, indent=2) + "\n"
    headers, body = price_to_win_rows(rows, currency)
    if fmt == "markdown":
        return "# Price to win\n\n" + markdown_table(headers, body, right={0, 3, 4, 5, 6}) + "\n"
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["rank", "id", "vendor", "cost_per_task", "list_price", "price_to_tie", "change", "note"])
    for r in rows:
        writer.writerow([r.rank, r.id, r.vendor, repr(r.cost_per_task), "" if r.list_price is None else repr(r.list_price), "" if r.price_to_tie is None else repr(r.price_to_tie), "" if r.change is None else repr(r.change), r.note])
    return buffer.getvalue()


# --- cost position ------------------------------------------------------------------------------


def position_rows(pos: Position) -> tuple[list[str], list[list[str]]]:
    headers = ["#", "Who", "Kind", "Figure", "Per 1k tasks", "Date"]
    figure = {"us": "our cost", "offer": "our cost if signed"}
    rows = [
        [str(i), "US" if p.kind == "us" else p.name, p.kind, figure.get(p.kind, "their price" if p.figure == "price" else "their cost"), per_thousand(p.cost_per_task), str(p.date)]
        for i, p in enumerate(pos.curve, start=1)
    ]
    return headers, rows


def position_table(pos: Position) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    headers, rows = position_rows(pos)
    table = Table(title="Cost position: the cost curve, cheapest first", header_style="bold")
    for i, title in enumerate(headers):
        table.add_column(title, justify="right" if i in (0, 3) else "left")
    for row, point in zip(rows, pos.curve):
        table.add_row(*row, style="bold" if point.kind == "us" else None)
    prioritise(table, {"Kind": 1, "Date": 2, "Figure": 3})  # who and the cost per task stay
    if pos.gate_failures:  # a failing offer is said to fail before the table calls it cheap
        return Group(Text(pos.sentences[0]), table, Text("\n".join(pos.sentences[1:])))
    return Group(table, Text("\n".join(pos.sentences)))


def position_text(pos: Position, fmt: str) -> str:
    if fmt == "json":
        return pos.model_dump_json(indent=2) + "\n"
    headers, rows = position_rows(pos)
    if fmt == "markdown":
        warning = f"**{_md_cell(pos.sentences[0])}**\n\n" if pos.gate_failures else ""
        rest = pos.sentences[1:] if pos.gate_failures else pos.sentences
        return "# Cost position\n\n" + warning + markdown_table(headers, rows, right={0, 4}) + "\n\n" + "\n".join(_md_cell(s) for s in rest) + "\n"
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["rank", "name", "kind", "cost_per_task", "date"])
    for i, p in enumerate(pos.curve, start=1):
        writer.writerow([i, p.name, p.kind, repr(p.cost_per_task), p.date])
    return buffer.getvalue()


# --- rental price benchmark ---------------------------------------------------------------------


def index_csv(build: IndexBuild) -> str:
    """The built index: period (first day), level, observations; readable as market/index.csv."""
    buffer = io.StringIO()
    for words in build.splices:  # a level not built from the quotes says so in the file itself
        buffer.write("# spliced: " + " ".join(words.split()) + "\n")
    writer = csv_writer(buffer)
    writer.writerow(["period", "level", "observations"])
    for point in build.points:
        if point.level is not None:
            writer.writerow([point.period, f"{point.level:.4f}", point.observations])
    return buffer.getvalue()


def methodology_rows(build: IndexBuild) -> tuple[list[str], list[list[str]]]:
    headers = ["Method", "Scope", "Advertised", "Transacted", "All", "Spread (adv. - trans.)"]
    rows = [[r.method, r.scope, money(r.advertised, 3), money(r.transacted, 3), money(r.all, 3), money(r.spread, 3)] for r in build.methodology]
    return headers, rows


def methodology_caption(build: IndexBuild) -> str:
    filters = ", ".join(f for f in (f"gpu {build.gpu}", f"term {build.term} months" if build.term else "", f"grade {build.grade}" if build.grade else "") if f)
    return f"Methodology: the {build.period} of {build.methodology_period} under each choice ({filters}); per GPU-hour"


def methodology_table(build: IndexBuild) -> Table:
    from rich.table import Table

    headers, rows = methodology_rows(build)
    table = Table(title=methodology_caption(build), header_style="bold")
    for i, title in enumerate(headers):
        table.add_column(title, justify="right" if i >= 2 else "left")
    for row in rows:
        table.add_row(*row)
    return table


def strata_rows(build: IndexBuild) -> tuple[list[str], list[list[str]]]:
    headers = ["Term", "Kind", "Grade", "Weight", "Quotes", "Sellers", "Level", "Status"]
    rows = [[r.term, r.kind, r.grade, percent(r.weight, 1), str(r.quotes), str(r.sellers), money(r.level, 3), r.status] for r in build.strata]
    return headers, rows


def strata_table(build: IndexBuild) -> Table:
    from rich.table import Table

    headers, rows = strata_rows(build)
    table = Table(title=f"Strata in the {build.period} of {build.methodology_period} (fixed weights: {build.weights_source})", header_style="bold")
    for i, title in enumerate(headers):
        table.add_column(title, justify="right" if 3 <= i <= 6 else "left")
    for row in rows:
        table.add_row(*row)
    return table


def _index_flag(point) -> str:  # type: ignore[no-untyped-def]
    """What a level is besides a plain build: a spliced reading (with the quotes' level), carried or thin."""
    if point.spliced:
        built = f"; quotes {point.spliced_from:.2f}" if point.spliced_from else ""
        return f" (spliced: {point.source}{built})"
    return " (carried)" if point.carried else (" (thin)" if point.thin else "")


def index_table(build: IndexBuild) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    scope = ", scope-adjusted" if build.scope_adjust else ""
    table = Table(title=f"Index: {build.method}, {build.kind} prices{scope}, by {build.period}", header_style="bold")
    for title in ("Period", "Level", "Observations", "Strata own / carried / none"):
        table.add_column(title, justify="right")
    for point in build.points:
        flag = _index_flag(point)
        table.add_row(str(point.period), money(point.level, 3) + flag, str(point.observations), f"{point.strata_own} / {point.strata_carried} / {point.strata_missing}")
    return Group(table, methodology_table(build), strata_table(build), Text("\n".join([f"rule: {r}" for r in build.rules] + [f"note: {n}" for n in build.notes])))


def index_text(build: IndexBuild, fmt: str) -> str:
    if fmt == "json":
        return build.model_dump_json(indent=2) + "\n"
    if fmt == "markdown":
        rows = [[str(p.period), money(p.level, 3) + _index_flag(p), str(p.observations)] for p in build.points]
        headers, method_rows = methodology_rows(build)
        strata_headers, strata_body = strata_rows(build)
        return (
            f"# Index: {build.method}, {build.kind} prices{', scope-adjusted' if build.scope_adjust else ''}, by {build.period}\n\n"
            + markdown_table(["Period", "Level", "Observations"], rows, right={1, 2})
            + f"\n\n{_md_cell(methodology_caption(build))}\n\n"
            + markdown_table(headers, method_rows, right={2, 3, 4, 5})
            + f"\n\nStrata (fixed weights: {build.weights_source})\n\n"
            + markdown_table(strata_headers, strata_body, right={3, 4, 5, 6})
            + "\n\n" + "\n".join(f"- {_md_cell(r)}" for r in build.rules)
            + "\n"
            + "".join(f"\nnote: {_md_cell(n)}" for n in build.notes)
            + ("\n" if build.notes else "")
        )
    return index_csv(build)


# --- hedging ------------------------------------------------------------------------------------


def ladder_rows(plan: HedgePlan) -> tuple[list[str], list[list[str]]]:
    headers = ["Months", "Floating GPU-h", "Share", "Notional GPU-h", "Contracts", "Hedged GPU-h", "Hedged share"]
    rows = [
        [r.months, number(r.exposed_gpu_hours), percent(r.share, 0), number(r.notional_gpu_hours), f"{r.contracts:,}", number(r.hedged_gpu_hours), percent(r.hedged_share, 1)]
        for r in plan.ladder
    ]
    return headers, rows


def stress_rows(plan: HedgePlan) -> tuple[list[str], list[list[str]]]:
    cur = plan.currency
    headers = ["Index move", f"Index {cur}/GPU-h", f"Unhedged {cur}", f"Hedge payoff {cur}", f"Hedged {cur}", f"Change unhedged", f"Change hedged", "Basis band (2 sigma)"]
    rows = [
        [f"{r.index_move:+.0%}", money(r.index_level), money(r.unhedged, 0), money(r.hedge_payoff, 0), money(r.hedged, 0), money(r.unhedged_change, 0), money(r.hedged_change, 0), "+/- " + money(r.basis_band, 0)]
        for r in plan.stress
    ]
    return headers, rows


def hedge_summary(plan: HedgePlan) -> list[str]:
    reg = plan.regression
    if plan.h_star is None:
        fit = "no hedge ratio fitted (no rent history: no tracking is claimed, the basis is unknown)" if reg.source == "none" else "h* not estimable"
    else:
        interval = f", 95% interval {plan.h_star_ci95[0]:.3f} to {plan.h_star_ci95[1]:.3f}" if plan.h_star_ci95 else ""
        se = f" (standard error {plan.h_star_se:.3f}{interval})" if plan.h_star_se is not None else ""
        quality = f", rho = {plan.rho:.3f}, R^2 = {plan.r2:.3f}" if plan.r2 is not None else ""
        fit = f"h* = {plan.h_star:.3f}{se}{quality}, basis volatility {money(plan.basis_volatility, 3)} {plan.currency}/GPU-h per {plan.period}"
    lines = [
        f"Hedging {plan.vendor} ({plan.offer}) over {plan.horizon_months} months from {plan.as_of}: {number(plan.floating_gpu_hours)} floating GPU-hours (from delivery).",
        f"Rent against the index ({reg.source}, {reg.changes} aligned {plan.period}ly changes): {fit}.",
        f"Recommended hedge ratio {plan.hedge_ratio:.3f} ({plan.hedge_ratio_rule}).",
        f"Index {money(plan.index_level)} {plan.currency}/GPU-h on {plan.index_date}; stress from {plan.stress_reference}; contracts of {number(plan.contract_gpu_hours)} GPU-hours.",
    ]
    if plan.nothing_to_hedge:
        lines.append(f"Nothing to hedge: {plan.nothing_to_hedge}.")
    return lines


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
    parts: list = [Text("\n".join(hedge_summary(plan)))]
    if not plan.nothing_to_hedge:
        parts.append(prioritise(table_of("Ladder", *ladder_rows(plan)), {"Notional GPU-h": 1, "Share": 2, "Floating GPU-h": 3}))
        stress = table_of("Stress: floating cost over the horizon", *stress_rows(plan))
        parts.append(prioritise(stress, {"Basis band (2 sigma)": 1, f"Index {cur}/GPU-h": 2, f"Hedge payoff {cur}": 3, "Change unhedged": 4, "Change hedged": 4}, together=(("Change unhedged", "Change hedged"),)))
    parts.append(Text("\n".join([f"note: {n}" for n in plan.notes] + ["Limits:"] + [f"- {line}" for line in plan.limits])))
    return Group(*parts)


def hedge_text(plan: HedgePlan, fmt: str) -> str:
    if fmt == "json":
        return plan.model_dump_json(indent=2) + "\n"
    if fmt == "markdown":
        lh, lr = ladder_rows(plan)
        sh, sr = stress_rows(plan)
        return (
            "# Hedging recommendation\n\n"
            + "\n".join(_md_cell(line) for line in hedge_summary(plan))
            + "\n\n## Ladder\n\n" + markdown_table(lh, lr, right=set(range(1, 7)))
            + "\n\n## Stress\n\n" + markdown_table(sh, sr, right=set(range(1, 8)))
            + "\n\n" + "\n".join(f"- note: {_md_cell(n)}" for n in plan.notes)
            + "\n\n## Limits\n\n" + "\n".join(f"- {_md_cell(line)}" for line in plan.limits) + "\n"
        )
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["months", "exposed_gpu_hours", "share", "hedge_ratio", "notional_gpu_hours", "contracts", "hedged_gpu_hours"])
    for r in plan.ladder:
        writer.writerow([r.months, repr(r.exposed_gpu_hours), r.share, repr(plan.hedge_ratio), repr(r.notional_gpu_hours), r.contracts, repr(r.hedged_gpu_hours)])
    return buffer.getvalue()


# --- sensitivity --------------------------------------------------------------------------------


def sensitivity_rows(result: Sensitivity, currency: str) -> tuple[list[str], list[list[str]]]:
    # Each end's leader with its own cost per task (not the baseline leader's).
    headers = ["Input", "Low", "High", f"Leader at low ({per_k(currency)})", f"Leader at high ({per_k(currency)})", f"Largest swing ({per_k(currency)})", "Ranking flips"]

    def leader(offer: str | None, cost: float | None, fails: dict[str, list[str]]) -> str:
        # a gate that fails at this end is named before the leader it leaves
        failing = "; ".join(f"{o} fails {' and '.join(g)}" for o, g in fails.items())
        shown = f"{offer} {per_thousand(cost)}" if offer else DASH
        return f"{failing}; {shown} leads" if failing else shown

    rows = []
    for r in result.rows:
        rows.append(
            [
                r.input,
                f"x{r.low:g}",
                f"x{r.high:g}",
                leader(r.leader_low, r.leader_cost_low if r.leader_cost_low is not None else r.costs_low.get(r.leader_low or ""), r.fails_low),
                leader(r.leader_high, r.leader_cost_high if r.leader_cost_high is not None else r.costs_high.get(r.leader_high or ""), r.fails_high),
                f"{per_thousand(r.swing)} ({r.swing_offer})" if r.swing_offer else DASH,
                "yes" if r.flips else "no",
            ]
        )
    return headers, rows


def sensitivity_table(result: Sensitivity, currency: str) -> Table:
    from rich.table import Table

    headers, rows = sensitivity_rows(result, currency)
    baseline = ", ".join(f"{k} {per_thousand(v)}" for k, v in result.baseline.items())
    table = Table(title="Sensitivity: each input at its low and high value, the rest as stated", caption=f"Baseline cost per 1,000 successful tasks ({currency}): {baseline}", caption_justify="left", header_style="bold")
    for i, h in enumerate(headers):
        table.add_column(h, justify="right" if i in (1, 2, 5) else "left")
    for row in rows:
        table.add_row(*row)
    # The input, its low and high values and the swing stay longest; the leaders at each end go first.
    return prioritise(table, {h: 1 for h in headers if h.startswith("Leader at")} | {"Ranking flips": 2, headers[5]: 3})


def sensitivity_text(result: Sensitivity, currency: str, fmt: str) -> str:
    if fmt == "json":
        return result.model_dump_json(indent=2) + "\n"
    headers, rows = sensitivity_rows(result, currency)
    if fmt == "markdown":
        return "# Sensitivity\n\n" + markdown_table(headers, rows, right={1, 2, 5}) + "\n"
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["input", "low", "high", *[f"{o}_low" for o in result.offers], *[f"{o}_high" for o in result.offers], "swing", "swing_offer", "leader_low", "leader_high", "flips"])
    for r in result.rows:
        writer.writerow(
            [r.input, r.low, r.high, *["" if r.costs_low[o] is None else repr(r.costs_low[o]) for o in result.offers], *["" if r.costs_high[o] is None else repr(r.costs_high[o]) for o in result.offers], "" if r.swing is None else repr(r.swing), r.swing_offer or "", r.leader_low, r.leader_high, str(r.flips).lower()]
        )
    return buffer.getvalue()


# --- history and differences --------------------------------------------------------------------


def history_rows(runs: list[RunInfo]) -> tuple[list[str], list[list[str]]]:
    headers = ["Run", "Saved (UTC)", "As of", "Label", "Top offer", "Cost per 1k tasks", "Acceptable"]
    from procure.textsafe import printable

    # The database is a file like any other: what it holds is shown with visible escapes (\x1b), never obeyed.
    rows = [[str(r.id), printable(r.saved_at), str(r.as_of), printable(r.label or ""), printable(r.top_offer) if r.top_offer else DASH, per_thousand(r.top_cost_per_task), f"{r.acceptable} of {r.offers}"] for r in runs]
    return headers, rows


def history_table(runs: list[RunInfo]) -> Table:
    from rich.table import Table

    headers, rows = history_rows(runs)
    table = Table(title="Saved runs", header_style="bold")
    for i, h in enumerate(headers):
        table.add_column(h, justify="right" if i in (0, 5) else "left")
    for row in rows:
        table.add_row(*row)
    # The run, when it was saved, and its top offer and cost stay longest.
    return prioritise(table, {"Label": 1, "Acceptable": 2, "As of": 3})


def _change(o: object) -> str:
    share = getattr(o, "cost_change_share")
    return DASH if share is None or share == 0 else f"{share:+.1%}"


def diff_rows(result: Diff, changed_only: bool = False) -> tuple[list[str], list[list[str]]]:
    headers = ["Offer", "Status", "Rank", "Grade", "Acceptable", "Cost per 1k tasks", "Change"]
    rows = []
    for o in result.offers:
        if changed_only and not o.changed:
            continue
        def pair(before: object, after: object) -> str:
            b, a = (DASH if before is None else before), (DASH if after is None else after)
            return str(a) if b == a else f"{b} to {a}"

        acceptable = pair(None if o.acceptable_before is None else ("yes" if o.acceptable_before else "no"), None if o.acceptable_after is None else ("yes" if o.acceptable_after else "no"))
        cost = pair(per_thousand(o.cost_before) if o.cost_before is not None else None, per_thousand(o.cost_after) if o.cost_after is not None else None)
        rows.append([o.id, o.status, pair(o.rank_before, o.rank_after), pair(o.grade_before, o.grade_after), acceptable, cost, _change(o)])
    return headers, rows


def explanation_lines(result: Diff) -> list[str]:
    """Why each moved offer moved: the inputs that changed (old -> new) and the share of the move each explains."""
    lines = []
    for o in result.offers:
        if o.status != "present":
            continue
        if o.explained_by:
            share = f" ({o.cost_change_share:+.1%})" if o.cost_change_share is not None else ""
            parts = ", ".join(f"{d.label} {_figure(d.before)} -> {_figure(d.after)} ({d.share:.0%})" for d in o.explained_by)
            lines.append(f"{o.id}: cost per 1,000 tasks {per_thousand(o.cost_before)} -> {per_thousand(o.cost_after)}{share}: {parts}")
        elif o.rank_changed and o.cost_before is not None and o.cost_before == o.cost_after:
            lines.append(f"{o.id}: rank {o.rank_before or DASH} -> {o.rank_after or DASH} with the same cost per task: other offers moved")
    return lines


def _figure(value: float | None) -> str:
    return DASH if value is None else f"{value:.4g}"


def diff_lines(result: Diff, breached: list[Breach] | None = None, changed_only: bool = False) -> list[str]:
    lines = [f"{result.base} (as of {result.base_as_of}) against {result.head} (as of {result.head_as_of})."]
    if result.unchanged:
        return lines + [f"No changes: the same {len(result.offers)} offers with the same ranks, grades, gates and costs, and the same procure.yaml."]
    if changed_only:
        same = sum(1 for o in result.offers if not o.changed)
        if same:
            lines.append(f"{same} offer{'s' if same != 1 else ''} unchanged (not listed).")
    if result.new_cheapest:
        lines.append(f"The cheapest acceptable offer changed from {result.leader_before or 'none'} to {result.leader_after or 'none'}.")
    else:
        lines.append(f"The cheapest acceptable offer is still {result.leader_after or 'none'}.")
    if result.assumptions:
        lines.append("procure.yaml changed: " + "; ".join(f"{c.path} from {c.before} to {c.after}" for c in result.assumptions))
    lines += explanation_lines(result)
    for b in breached or []:
        lines.append(f"BREACH {b.condition}: {b.detail}")
    return lines


def diff_table(result: Diff, breached: list[Breach] | None = None, changed_only: bool = False) -> Group:
    """The offers that changed (all of them unless `changed_only`); nothing but a sentence when none did."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    if result.unchanged:
        return Group(Text("\n".join(diff_lines(result, breached))))
    headers, rows = diff_rows(result, changed_only)
    table = Table(title="Changes between two evaluations", header_style="bold")
    for h in headers:
        table.add_column(h)
    for row in rows:
        table.add_row(*row)
    prioritise(table, {"Grade": 1, "Acceptable": 2, "Rank": 3})
    return Group(table, Text("\n".join(diff_lines(result, breached, changed_only))))


def diff_markdown(result: Diff, breached: list[Breach] | None = None, title: str = "Re-evaluation", changed_only: bool = False) -> str:
    """Fit for a pull-request comment."""
    verdict = ""
    if breached is not None:
        verdict = "**Thresholds breached:**\n\n" + "\n".join(f"- {_md_cell(b.condition)}: {_md_cell(b.detail)}" for b in breached) + "\n\n" if breached else "**No threshold breached.**\n\n"
    text = f"## {title}\n\n" + verdict + "\n".join(_md_cell(line) for line in diff_lines(result, changed_only=changed_only)) + "\n"
    if result.unchanged:
        return text
    headers, rows = diff_rows(result, changed_only)
    return text + "\n" + markdown_table(headers, rows) + "\n"


def diff_json(result: Diff, breached: list[Breach] | None = None, extra: dict | None = None) -> str:
    import json

    payload = result.model_dump(mode="json")
    payload["new_cheapest"] = result.new_cheapest
    payload["changed"] = not result.unchanged
    if breached is not None:
        payload["breached"] = [b.model_dump() for b in breached]
    payload.update(extra or {})
    return json.dumps(payload, indent=2) + "\n"


# --- spreadsheets -------------------------------------------------------------------------------


def to_xlsx(ev: Evaluation, cost_inputs: Any = None, plan: Any = None, flows: Evaluation | None = None, sensitivity: Any = None, plan_failed: str | None = None) -> bytes:
    """The comparison as a workbook: one sheet per table, numbers stored as numbers.

    With the cost model's inputs (evaluate_with_inputs), an Offers and an Assumptions sheet come
    first, whose costs and ranks are live formulas (render/workbook.py). Then a sheet per analysis
    given, with units in its headers: the purchase plan and its scenarios, every offer over the
    horizon (from `flows`, an evaluation over one; else `ev` when it has one) and, when `ev` has a
    horizon, every offer's months, the sensitivity.
    """
    try:
        from openpyxl import Workbook
    except ImportError:
        from procure.errors import InputError, Problem

        raise InputError([Problem("--format xlsx", None, "", "Excel output needs openpyxl: pip install openpyxl")]) from None
    from datetime import datetime

    book = Workbook()
    stamp = datetime(ev.as_of.year, ev.as_of.month, ev.as_of.day)  # the as-of date, not the clock: same inputs, same workbook
    book.properties.created = book.properties.modified = stamp
    sheet = book.active
    sheet.title = "Comparison"
    keys = METRIC_KEYS + EXTRA_METRIC_KEYS
    sheet.append(["rank", "id", "vendor", "grade", "acceptable", "kind", "pricing_basis", *keys, "reasons"])
    for r in ev.offers:
        sheet.append([r.rank, r.id, r.vendor, r.grade, r.acceptable, r.kind, r.pricing_basis, *[r.metrics[k] for k in keys], "; ".join(r.reasons)])
    gates = book.create_sheet("Gates")
    gates.append(["id", "gate", "passed", "headroom", "detail"])
    for r in ev.offers:
        for g in r.gates:
            gates.append([r.id, g.gate, g.passed, g.margin, g.detail])
    ratings = book.create_sheet("Ratings")
    categories = list(CATEGORY_ABBREVIATIONS)
    ratings.append(["id", "rated", "score", "tier", "published_tier", "reliability_factor", *categories])
    for r in ev.offers:
        ratings.append([r.id, r.rating.rated, r.rating.score, r.rating.tier, r.rating.published_tier, r.reliability_factor, *[r.rating.categories.get(c) for c in categories]])
    if ev.uncertainty:
        ranges = book.create_sheet("Uncertainty")
        ranges.append(["id", "p10", "p50", "p90", "prob_cheapest"])
        for r in ev.offers:
            u = r.uncertainty
            ranges.append([r.id, u.p10 if u else None, u.p50 if u else None, u.p90 if u else None, u.prob_cheapest if u else None])
    from procure.render.workbook import add_cashflow_sheet, add_horizon_sheet, add_plan_sheets, add_sensitivity_sheet

    if plan is not None:
        add_plan_sheets(book, plan, ev.currency)
    elif plan_failed:  # demand: was given but no plan was solved: the sheet says why rather than being absent
        from procure.render.workbook import table_sheet

        table_sheet(book, "Plan", [("Note", None)], [[f"The purchase plan could not be solved ({plan_failed}); the best single offer is recommended instead."]])
    horizon = flows if flows is not None else (ev if ev.horizon_months else None)
    if horizon is not None:
        add_horizon_sheet(book, horizon)
    if ev.horizon_months:  # the months themselves when the horizon was asked for (a sheet of offers x months)
        add_cashflow_sheet(book, ev)
    if sensitivity is not None and sensitivity.rows:
        add_sensitivity_sheet(book, sensitivity, ev.currency)
    inputs = book.create_sheet("Inputs")
    inputs.append(["as_of", str(ev.as_of)])
    inputs.append(["currency", ev.currency])
    inputs.append(["rank_by", ev.rank_by])  # the Comparison column the ranking sorts by
    inputs.append(["path", "sha256"])
    for f in ev.inputs:
        inputs.append([f.path, f.sha256])
    # Formula-like text (a vendor name, a reason) stays text: the same rule as every CSV (textsafe).
    from procure.render.workbook import add_live_sheets, finish

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
                data = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(<)", lambda m: m.group(1) + moment.encode() + m.group(2), data)
            info = zipfile.ZipInfo(item.filename, date_time=zip_time)
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, data)
    return out.getvalue()


# --- cash flow over a horizon -------------------------------------------------------------------

# total sums the columns before it; sla_credits, after it, is shown but counted only with horizon.count_sla_credits
# (then it is part of credits too)
FLOW_COLUMNS = ("prepayment", "rent", "fees", "staff", "software", "power_colo", "capital", "credits", "prepay_risk", "exit", "total", "sla_credits")
FLOW_LABELS = {"power_colo": "power/colo", "prepay_risk": "prepay risk", "sla_credits": "SLA credits (shown)"}


def horizon_rows(ev: Evaluation) -> tuple[list[str], list[list[str]]]:
    cur = ev.currency
    headers = ["Rank", "Offer", "Term", "Delivery month", f"Commitment {cur}", f"Total {cur}", f"NPV {cur}", f"{per_k(cur)} over horizon", f"{per_k(cur)} snapshot"]
    rows = []
    for r in ev.offers:
        plan = r.cashflow
        rows.append(
            [str(r.rank or DASH), r.id, f"{r.term_months} mo", str(plan.delivery_month) if plan else DASH, money(r.metrics.get("total_commitment"), 0),
             money(r.metrics.get("total_cost"), 0), money(r.metrics.get("npv_cost"), 0), per_thousand(r.metrics.get("horizon_cost_per_task")), per_thousand(r.metrics["cost_per_task"])]
        )
    return headers, rows


def bridge_notes(ev: Evaluation) -> list[str]:
    """Each offer delivered after month 1: what serves the months before its delivery, and their cost."""
    return [f"{r.id}: {r.cashflow.bridge}" for r in ev.offers if r.cashflow and r.cashflow.bridge]


def horizon_caption(ev: Evaluation) -> str:
    plan = next((r.cashflow for r in ev.offers if r.cashflow), None)
    rule = f"{plan.renewal_rule} (horizon.renewal: {plan.renewal})" if plan else "the market"
    counted = next((r.cashflow.sla_credits_counted for r in ev.offers if r.cashflow), False)
    rule += "; SLA credits " + ("counted" if counted else "shown, not counted")
    return f"Horizon {ev.horizon_months} months from {ev.as_of}; after its term an offer renews at {rule}; NPV at the cost of capital {ev.assumptions.cost_of_capital:.0%}; ranked by {ev.rank_by.replace('_', ' ')}."


def flow_rows(record: OfferRecord) -> tuple[list[str], list[list[str]]]:
    headers = ["Month", "Phase", "GPUs", *[FLOW_LABELS.get(c, c) for c in FLOW_COLUMNS], "Successful tasks"]
    rows = [[str(f.month), f.phase, number(f.gpus, 1), *[money(getattr(f, c), 0) for c in FLOW_COLUMNS], number(f.successful_tasks)] for f in (record.cashflow.months if record.cashflow else [])]
    return headers, rows


def cashflow_table(ev: Evaluation, offer_id: str | None) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    if offer_id is None:
        headers, rows = horizon_rows(ev)
        title = "Over the horizon"
        # A total below the commitment is explained, offer by offer (the detail: cashflow --offer ID).
        notes: list[str] = [f"{r.id}: {n}" for r in ev.offers if r.cashflow for n in r.cashflow.notes if n.startswith("the total (")]
        notes += bridge_notes(ev)
    else:
        record = ev.offer(offer_id)
        headers, rows = flow_rows(record)
        title = f"Cash flow: {record.id} ({record.vendor})"
        notes = record.cashflow.notes if record.cashflow else []
    table = Table(title=title, caption=horizon_caption(ev), caption_justify="left", header_style="bold")
    for i, h in enumerate(headers):
        table.add_column(h, justify="left" if (offer_id is None and i == 1) or (offer_id is not None and i == 1) else "right")
    for row in rows:
        table.add_row(*row)
    cur = ev.currency
    if offer_id is None:
        # the offer and its cost per task over the horizon stay longest, then its total and commitment
        prioritise(table, {"Term": 1, "Delivery month": 2, f"{per_k(cur)} snapshot": 3, f"NPV {cur}": 4, "Rank": 5, f"Commitment {cur}": 6, f"Total {cur}": 7})
    else:  # the month and the total stay; then what makes it up, least common parts first (empty ones go first of all)
        parts = [h for h in headers[3:-2] if h not in ("rent", "prepayment", "total")]
        prioritise(table, {h: 1 for h in parts} | {FLOW_LABELS["sla_credits"]: 1, "prepayment": 2, "Phase": 3, "Successful tasks": 4, "GPUs": 5, "rent": 6})
    return Group(table, Text("\n".join(f"note: {n}" for n in notes)))


def cashflow_text(ev: Evaluation, offer_id: str | None, fmt: str) -> str:
    import json

    from procure.model.units import with_companions

    if fmt == "json":
        records = [ev.offer(offer_id)] if offer_id else ev.offers
        payload = {
            "as_of": str(ev.as_of),
            "currency": ev.currency,
            "horizon_months": ev.horizon_months,
            "rank_by": ev.rank_by,
            "offers": [
                {"id": r.id, "rank": r.rank, **with_companions({k: r.metrics.get(k) for k in ("total_commitment", "total_cost", "npv_cost", "horizon_cost_per_task", "cost_per_task")}), "cashflow": r.cashflow.model_dump(mode="json") if r.cashflow else None}
                for r in records
            ],
        }
        return json.dumps(payload, indent=2) + "\n"
    headers, rows = flow_rows(ev.offer(offer_id)) if offer_id else horizon_rows(ev)
    if fmt == "markdown":
        return f"# Cash flow over {ev.horizon_months} months\n\n" + _md_cell(horizon_caption(ev)) + "\n\n" + markdown_table(headers, rows, right=set(range(2, len(headers)))) + "\n"
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    if offer_id:
        writer.writerow(["month", "phase", "gpus", *FLOW_COLUMNS, "successful_tasks"])
        for f in ev.offer(offer_id).cashflow.months:  # type: ignore[union-attr]
            writer.writerow([f.month, f.phase, repr(f.gpus), *[repr(getattr(f, c)) for c in FLOW_COLUMNS], repr(f.successful_tasks)])
    else:
        writer.writerow(["rank", "id", "term_months", "total_commitment", "total_cost", "npv_cost", "horizon_cost_per_task", "cost_per_task"])
        for r in ev.offers:
            writer.writerow([r.rank or "", r.id, r.term_months, *["" if r.metrics.get(k) is None else repr(r.metrics.get(k)) for k in ("total_commitment", "total_cost", "npv_cost", "horizon_cost_per_task", "cost_per_task")]])
    return buffer.getvalue()
