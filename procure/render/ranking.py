"""The ranking of offers as text: the comparison (compare, evaluate), the grades (grade, its --explain)
and the operator ratings (rate), each as a terminal table, JSON, CSV and Markdown.

Renderers format; they never compute a figure. Every number comes from the Evaluation.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING

from procure.analysis.evaluate import Evaluation
from procure.analysis.record import EXTRA_METRIC_KEYS, METRIC_KEYS, OfferRecord
from procure.render.cashflow import bridge_notes
from procure.render.fit import prioritise
from procure.render.formats import DASH, cash, markdown_table, md_cell, money, number, per_k, per_thousand, percent
from procure.textsafe import csv_writer

if TYPE_CHECKING:
    from datetime import date

    from rich.table import Table

    from procure.model.grading import GradeCheck, GradeResult
    from procure.model.inputs import Offer


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
            (
                "P(cheapest)",
                lambda r: (
                    percent(r.uncertainty.prob_cheapest, 1)
                    if r.uncertainty and r.uncertainty.prob_cheapest is not None
                    else DASH
                ),
            ),
            # the share of draws in which a gate re-applied to the draw (availability, capacity) fails
            (
                "P(fail)",
                lambda r: (
                    percent(r.uncertainty.prob_fails_gate, 1)
                    if r.uncertainty and r.uncertainty.prob_fails_gate is not None
                    else DASH
                ),
            ),
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
    price, average, rent = (
        record.metrics["list_price"],
        record.metrics.get("rent_term_average"),
        record.metrics.get("rent_today", record.metrics.get("rent")),
    )
    if price is not None and average is not None and rent is not None and money(average) != money(rent):
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

    # The method's account (a paragraph) is in Markdown and JSON; a screen gives the draws and where to read it.
    caption = workload_line(ev) + (
        f"\nUncertainty: {ev.uncertainty.draws:,} draws, seed {ev.uncertainty.seed}. Method: docs/uncertainty.md, or "
        "in full with --format markdown or json."
        if ev.uncertainty
        else ""
    )
    if _horizon_sort(ev):
        caption += (
            f"\nRanked by the cost per successful task over {ev.horizon_months} months (present value of costs "
            "/ of tasks)."
        )
    if ev.horizon_months:
        caption += "".join(f"\nBefore delivery: {n}." for n in bridge_notes(ev))
    caption += "".join(
        f"\nUnconfirmed: {r.vendor} ({r.id}) rests on {'; '.join(c.text for c in r.terms.open_conditions)}: "
        "conditions of signing."
        for r in ev.offers
        if r.acceptable and r.terms.open_conditions
    )
    table = Table(
        title="Cost per 1,000 successful tasks, expected", caption=caption, caption_justify="left", header_style="bold"
    )
    columns = comparison_columns(ev.currency, ev.uncertainty is not None, ev.horizon_months)
    for i, (title, _) in enumerate(columns):
        table.add_column(title, justify="right" if i == 0 or 5 <= i < len(columns) - 1 else "left", overflow="fold")
    for record in ev.offers:
        style = None if record.acceptable else "dim"
        table.add_row(*(cell(record) for _, cell in columns), style=style)
    cur = ev.currency
    # --horizon asked for its cost per task and commitment
    horizon = (f"{per_k(cur)} {ev.horizon_months} mo", f"Commit {cur}") if ev.horizon_months else ()
    if ev.uncertainty:
        # The decision columns stay at any width: the offer, its expected cost, whether it is
        # acceptable (OK) and the reason's first words (Reason goes last of all, render/fit.py);
        # of the ranges, the chance of being cheapest stays longest, the spread (P10, P90) goes first.
        # --uncertainty asked for the ranges: they outlast every other optional column and the reason; of
        # them the chance of failing a gate goes first, then of being cheapest, then the spread (P10, P90),
        # the median last.
        order = [
            "Vendor",
            f"{cur}/M tok",
            f"List {cur}/GPU-h",
            "Fill",
            "Avail.",
            "tok/s/GPU",
            f"Full {cur}/GPU-h",
            "Grade",
            *horizon,
            "P(fail)",
            "P(cheapest)",
            "P10",
            "P90",
            "P50",
        ]
        ranks = {h: i + 1 for i, h in enumerate(order)} | {"P90": order.index("P10") + 1}
        asked = ("P10", "P50", "P90", "P(cheapest)", "P(fail)", *horizon)
        return prioritise(table, ranks, one_line=("Reason",), together=(("P10", "P90"),), asked=asked)
    # On a narrow terminal: the offer, its cost per task and why it fails stay longest.
    return prioritise(
        table,
        {
            "Vendor": 1,
            f"{cur}/M tok": 2,
            f"List {cur}/GPU-h": 3,
            "Fill": 4,
            "Avail.": 5,
            "tok/s/GPU": 7,
            f"Full {cur}/GPU-h": 8,
            "Grade": 9,
        }
        | {h: 10 + i for i, h in enumerate(horizon)},
        one_line=("Reason",),
        asked=horizon,
    )  # OK stays: a grade or OK is a decision column


def to_json(ev: Evaluation) -> str:
    return ev.to_json()


def to_csv(ev: Evaluation) -> str:
    """One row per offer: identity, gates and every metric, numbers unformatted for spreadsheets."""
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    keys = METRIC_KEYS + EXTRA_METRIC_KEYS
    bands = ("p10", "p50", "p90", "prob_cheapest", "prob_fails_gate") if ev.uncertainty else ()
    # rank_by names the column the ranking sorts by (cost_per_task, or horizon_cost_per_task).
    writer.writerow(
        ["rank", "rank_by", "id", "vendor", "grade", "acceptable", "kind", "pricing_basis", *keys, *bands, "reasons"]
    )
    for r in ev.offers:
        values = ["" if r.metrics[k] is None else repr(r.metrics[k]) for k in keys]
        ranges = [
            "" if r.uncertainty is None or getattr(r.uncertainty, k) is None else repr(getattr(r.uncertainty, k))
            for k in bands
        ]
        writer.writerow(
            [
                r.rank or "",
                ev.rank_by,
                r.id,
                r.vendor,
                r.grade or "",
                str(r.acceptable).lower(),
                r.kind,
                r.pricing_basis,
                *values,
                *ranges,
                "; ".join(r.reasons),
            ]
        )
    return buffer.getvalue()


def to_markdown(ev: Evaluation) -> str:
    columns = comparison_columns(ev.currency, ev.uncertainty is not None, ev.horizon_months)
    headers = [title for title, _ in columns]
    rows = [[cell(r) for _, cell in columns] for r in ev.offers]
    parts = [
        f"# Offer comparison: cost per 1,000 successful tasks ({ev.currency})",
        "",
        *(
            [
                md_cell(ev.recommendation.headline),
                "",
                *(md_cell(n) for n in ev.recommendation.usage),
                *([""] if ev.recommendation.usage else []),
            ]
            if ev.recommendation
            else []
        ),
        md_cell(workload_line(ev)),
        "",
        markdown_table(headers, rows, right={0} | set(range(5, len(columns) - 1))),
    ]
    if ev.uncertainty:
        parts += ["", "Uncertainty: " + md_cell(ev.uncertainty.method)]
    best = next((r for r in ev.ranked if r.rank == 1), None)  # not among the offers printed (--offer): not named
    if best is not None:
        parts += [
            "",
            f"**Lowest cost per successful task:** {md_cell(best.vendor)} (`{best.id}`), "
            f"{per_thousand(best.metrics['cost_per_task'])} {ev.currency} per 1,000 tasks.",
        ]
    rejected = [r for r in ev.offers if not r.acceptable]
    if rejected:
        parts += ["", "## Not acceptable", ""]
        parts += [f"- `{r.id}` ({md_cell(r.vendor)}): {md_cell('; '.join(r.reasons))}" for r in rejected]
    noted = [r for r in ev.offers if r.notes]
    if noted:
        parts += ["", "## Notes", ""]
        parts += [f"- `{r.id}`: {md_cell('; '.join(r.notes))}" for r in noted]
    parts += ["", "Inputs:", ""] + [f"- `{f.path}` sha256 `{f.sha256}`" for f in ev.inputs]
    return "\n".join(parts) + "\n"


def ranking_text(ev: Evaluation, fmt: str) -> str:
    """The ranking as JSON, CSV or Markdown (the table is `ranking_table`), as every `*_text` renderer is called."""
    return {"json": to_json, "csv": to_csv, "markdown": to_markdown}[fmt](ev)


# --- grades -------------------------------------------------------------------------------------


def grades_table(results: list[tuple[Offer, GradeResult]], day: date | None = None) -> Table:
    from rich.table import Table

    table = Table(title="Grades", header_style="bold")
    for title in ("Offer", "Vendor", "Kind", "Grade", "Requirements"):
        table.add_column(title, overflow="fold")
    for offer, result in results:
        shown = result.assigned or result.nearest
        if shown is None:
            detail = "no grades defined"
        elif result.grade:
            detail = f"all {len(shown.results)} pass"  # the Grade column names the grade
        else:
            detail = f"nearest {shown.grade.id}; fails " + "; ".join(
                f"{q.requirement} (expected {q.expected}, offer states {q.observed})" for q in shown.failures
            )
        grade = result.grade or "ungraded"
        if day is not None and offer.valid_until < day:  # grade --as-of: terms that no longer hold
            grade += f" (expired {offer.valid_until})"
        table.add_row(offer.id, offer.vendor, offer.service.kind, grade, detail)
    return prioritise(table, {"Vendor": 1, "Kind": 2}, one_line=("Requirements",))


def throughput_factors_table(record: OfferRecord) -> Table:
    """The throughput the cost uses as the curve's reading at the target x each factor, with its source: a
    buyer recomputes metrics.throughput by hand from it."""
    from rich.table import Table

    table = Table(
        title=f"{record.id}: throughput at the target, factor by factor",
        header_style="bold",
        caption_justify="left",
        caption=f"product: {number(record.metrics['throughput'], 1)} tok/s/GPU, the figure the cost per task uses",
    )
    for title in ("Factor", "Value", "Source"):
        table.add_column(title, overflow="fold")
    for i, f in enumerate(record.throughput_factors):
        table.add_row(f.name, f"{f.value:,.1f} tok/s/GPU" if i == 0 else f"x {f.value:.4f}", f.source)
    return table


def explain_table(offer_id: str, vendor: str, checks: list[GradeCheck], assigned: str | None) -> Table:
    from rich.table import Table

    verdict = f"grade {assigned}" if assigned else "ungraded"
    # Name the requirements missed for each grade above the one given (every grade when ungraded).
    above = [
        c
        for c in checks
        if not c.passed
        and (assigned is None or c.grade.rank < next(x.grade.rank for x in checks if x.grade.id == assigned))
    ]
    missed = "\n".join(
        f"misses {c.grade.id}: " + "; ".join(f"{r.requirement} ({r.observed})" for r in c.failures) for c in above
    )
    table = Table(
        title=f"{offer_id} ({vendor}): {verdict}", caption=missed or None, caption_justify="left", header_style="bold"
    )
    for title in ("Grade", "Requirement", "Expected", "Offer states", "Result"):
        table.add_column(title, overflow="fold")
    for check in checks:
        for i, result in enumerate(check.results):
            table.add_row(
                check.grade.id if i == 0 else "",
                result.requirement,
                result.expected,
                result.observed,
                "pass" if result.passed else "FAIL",
            )
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
    # "participation_ribbon" reads "Participation Ribbon"; a tier on a kind ClusterMAX does not rate is shown, marked
    # unused
    unused = "" if record.rating.published_applies else " (not used: ClusterMAX rates managed clusters)"
    return published.replace("_", " ").title() + (" (differs)" if record.rating.disagrees else "") + unused


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
    rated = sorted(
        (o for o in ev.offers if o.rating.rated),
        key=lambda o: (-(o.rating.score if o.rating.score is not None else -1.0), o.id),
    )
    return rated + sorted((o for o in ev.offers if not o.rating.rated), key=lambda o: o.id)


def rating_rows(ev: Evaluation) -> tuple[list[str], list[list[str]]]:
    headers = [
        "Offer",
        "Vendor",
        "Score",
        "Tier",
        "Published",
        "Reliability",
        *CATEGORY_ABBREVIATIONS.values(),
        "Critical",
    ]
    rows = []
    for r in by_score(ev):
        rating = r.rating
        cats = [number(rating.categories.get(c)) if rating.rated else DASH for c in CATEGORY_ABBREVIATIONS]
        factor = DASH if r.reliability_factor is None else f"{r.reliability_factor:g}"
        rows.append(
            [
                r.id,
                r.vendor,
                number(rating.score, 1),
                tier_label(r),
                published_label(r),
                factor,
                *cats,
                "; ".join(rating.critical_failures),
            ]
        )
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
    return prioritise(
        table,
        {"Vendor": 3, **{c: 1 for c in CATEGORY_ABBREVIATIONS.values()}, "Published": 4, "Reliability": 5},
        one_line=("Tier", "Critical"),
    )


def rating_json(ev: Evaluation) -> str:
    import json

    return json.dumps({"method": ev.rating_method, "offers": rating_records(ev)}, indent=2) + "\n"


def rating_csv(ev: Evaluation) -> str:
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    categories = list(CATEGORY_ABBREVIATIONS)
    writer.writerow(
        [
            "id",
            "vendor",
            "rated",
            "score",
            "tier",
            "published_tier",
            "disagrees",
            "reliability_factor",
            *categories,
            "critical_failures",
            "note",
        ]
    )
    for rec in rating_records(ev):
        writer.writerow(
            [
                rec["id"],
                rec["vendor"],
                str(rec["rated"]).lower(),
                "" if rec["score"] is None else repr(rec["score"]),
                rec["tier"] or "",
                rec["published_tier"] or "",
                str(rec["disagrees"]).lower(),
                "" if rec["reliability_factor"] is None else rec["reliability_factor"],
                *["" if c not in rec["categories"] else repr(rec["categories"][c]) for c in categories],
                "; ".join(rec["critical_failures"]),
                rec["note"],
            ]
        )
    return buffer.getvalue()


def rating_markdown(ev: Evaluation) -> str:
    headers, rows = rating_rows(ev)
    return (
        "# Operator ratings\n\n"
        + markdown_table(headers, rows, right=set(range(2, 16)) - {3, 4})
        + "\n\n"
        + md_cell(ev.rating_method)
        + "\n"
    )


def rating_text(ev: Evaluation, fmt: str) -> str:
    """The operator ratings as JSON, CSV or Markdown (the table is `rating_table`)."""
    return {"json": rating_json, "csv": rating_csv, "markdown": rating_markdown}[fmt](ev)
