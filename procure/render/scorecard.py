"""The scorecard (scorecard): delivered against promised, per signed vendor and month, as a terminal
table, CSV and Markdown (the credit claims, scorecard --claim, are render/claims.py's). They format; the
figures are procure/analysis/scorecard.py's."""

from __future__ import annotations

from typing import Any

from procure.analysis.scorecard import ScorecardResult, percent_or_no_data
from procure.io.actuals import LATENCY_COLUMNS

ROW_COLUMNS = (
    "offer",
    "month",
    "data",
    "billed_gpu_hours",
    "contracted_gpu_hours",
    "billed_vs_contracted",
    "output_tokens",
    "delivered_tokens_per_gpu_hour",
    "promised_tokens_per_gpu_hour",
    "throughput_ratio",
    "requests_ok",
    "requests_failed",
    "served_rate",
    *LATENCY_COLUMNS,
    "availability",
    "sla_availability",
    "sla_breached",
    "credit_share",
    "credits_owed",
    "invoiced",
    "delivered_cost_per_task",
    "promised_cost_per_task",
    "cost_overrun",
    "coverage",
)


def scorecard_text(result: ScorecardResult, fmt: str) -> str:
    """The scorecard as JSON (`procure schema scorecard`, without the envelope), CSV, Markdown or plain text; the
    table is `scorecard_table`."""
    if fmt == "json":
        return result.model_dump_json()
    if fmt == "csv":
        return scorecard_csv(result)
    from procure.render.formats import written

    return written(scorecard_markdown(result), fmt)


def scorecard_csv(result: ScorecardResult) -> str:
    import io

    from procure.textsafe import csv_writer

    buffer = io.StringIO()
    writer = csv_writer(buffer, lineterminator="\n")
    writer.writerow(ROW_COLUMNS)
    for v in result.vendors:
        for m in v.months:
            row = m.model_dump()
            writer.writerow([v.offer] + ["" if row[c] is None else row[c] for c in ROW_COLUMNS[1:]])
    return buffer.getvalue()


def scorecard_markdown(result: ScorecardResult) -> str:
    from procure.textsafe import markdown_text

    lines = ["# Scorecard: delivered against promised", ""]
    if not result.vendors:
        return "\n".join(lines + ["No signed vendor has evidence in actuals/.", ""])
    for v in result.vendors:
        lines += [f"## {markdown_text(v.vendor)} ({markdown_text(v.offer)})", ""]
        lines += [
            "| month | capacity vs promised | tokens per billed GPU-h vs promised | served | TTFT P50 | availability "
            "(SLA) | billed / contracted | cost per task vs promised | credits owed |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for m in v.months:
            if not m.data:
                lines.append(
                    f"| {m.month} | no data | no data | no data | no data | no data | no data | no data | no data |"
                )
                continue
            ttft = "no data" if m.ttft_p50_s is None else f"{m.ttft_p50_s:.2f} s"
            sla = "" if m.sla_availability is None else f" ({percent_or_no_data(m.sla_availability, 2)})"
            owed = (
                "no SLA"
                if m.sla_availability is None
                else "none"
                if m.credit_share == 0
                else (
                    "no data"
                    if m.credit_share is None
                    else (
                        f"{percent_or_no_data(m.credit_share, 0)} of the invoice"
                        if m.credits_owed is None
                        else f"{m.credits_owed:,.2f} {v.currency}"
                    )
                )
            )
            lines.append(
                f"| {_month(m)} | {_capacity(m)} | {percent_or_no_data(m.throughput_ratio)} | "
                f"{percent_or_no_data(m.served_rate, 2)} | {ttft} | {percent_or_no_data(m.availability, 3)}{sla} | "
                f"{percent_or_no_data(m.billed_vs_contracted)} | "
                + ("no data" if m.cost_overrun is None else f"{m.cost_overrun:+.1%}")
                + f" | {owed} |"
            )
        lines += ["", evidence_line(v), ""]
        if v.credits_owed_total:
            lines += [
                f"Credits owed: {v.credits_owed_total:,.2f} {v.currency} (months {', '.join(v.breached_months)}).",
                "",
            ]
        lines += [f"- {markdown_text(n)}" for n in v.notes] + ([""] if v.notes else [])
    return "\n".join(lines)


def _capacity(m: Any) -> str:
    """The vendor's speed this month: tokens per busy GPU-hour, else a post-signing trial, against the promise.
    Tokens per billed GPU-hour follow our own traffic, so they are shown apart and never stand for it."""
    ratio = m.capacity_ratio if m.capacity_ratio is not None else m.trial_capacity_ratio
    if ratio is None:
        return (
            "no data" if m.output_tokens is None else "—"
        )  # "—": served tokens, but no busy GPU-hours to divide them by
    return percent_or_no_data(ratio)


def _month(m: Any) -> str:
    """The month, marked when its evidence does not cover all of it (not scored in full)."""
    return f"{m.month} (partial)" if m.partial else m.month


def evidence_line(v: Any) -> str:
    """What the evidence moved, in words: the throughput only on evidence of capacity (else why not), the
    availability and the share served as month-level posteriors (docs/actuals.md)."""
    e = v.evidence
    said = (
        f"throughput {e.throughput_ratio:.1%} of the promise (posterior median, log sd {e.throughput_log_sd:.3f}; "
        f"{e.throughput_basis})"
        if e.throughput_ratio is not None
        else e.throughput_basis or "throughput not measured"
    )
    if e.availability is not None:
        spread = (
            f", month-to-month sd {e.availability_dispersion * 100:.2f} points" if e.availability_dispersion else ""
        )
        sd = (
            e.availability_alpha
            * e.availability_beta
            / ((e.availability_alpha + e.availability_beta) ** 2 * (e.availability_alpha + e.availability_beta + 1))
        ) ** 0.5
        said += (
            f"; availability {e.availability:.2%} (posterior mean over {e.availability_months} months, sd "
            f"{sd * 100:.2f} points{spread})"
        )
    if e.served_rate is not None:
        said += f"; requests served {e.served_rate:.2%}"
    return f"Evidence for {v.offer}: {said}."


def scorecard_table(result: ScorecardResult) -> Any:
    from rich.table import Table

    from procure.render.fit import prioritise

    # Units in the headers, figures alone in right-aligned cells: a number never wraps away from its unit.
    currencies = {v.currency for v in result.vendors}
    owed = f"credits owed {next(iter(currencies))}" if len(currencies) == 1 else "credits owed"
    table = Table(
        title="Delivered against promised",
        caption="\n".join(evidence_line(v) for v in result.vendors) or None,
        caption_justify="left",
    )
    headers = (
        "offer",
        "month",
        "capacity",
        "tok/billed h",
        "served",
        "TTFT P50 s",
        "availability",
        "SLA",
        "billed/contract",
        "cost/task vs promised",
        owed,
    )
    for i, name in enumerate(headers):
        table.add_column(name, justify="left" if i < 2 else "right")
    for v in result.vendors:
        for m in v.months:
            credit = (
                "no SLA"
                if m.sla_availability is None
                else "no data"
                if m.credit_share is None
                else (
                    "-"
                    if not m.credit_share
                    else (
                        f"{m.credits_owed:,.2f}" + ("" if len(currencies) == 1 else f" {v.currency}")
                        if m.credits_owed is not None
                        else f"{m.credit_share:.0%} of invoice"
                    )
                )
            )
            table.add_row(
                v.offer,
                _month(m),
                _capacity(m),
                percent_or_no_data(m.throughput_ratio),
                percent_or_no_data(m.served_rate, 2),
                "no data" if m.ttft_p50_s is None else f"{m.ttft_p50_s:.2f}",
                percent_or_no_data(m.availability, 3),
                "" if m.sla_availability is None else percent_or_no_data(m.sla_availability, 2),
                percent_or_no_data(m.billed_vs_contracted),
                "no data" if m.cost_overrun is None else f"{m.cost_overrun:+.1%}",
                credit,
            )
    # the offer, month, availability against the SLA and the credits owed stay longest
    return prioritise(
        table,
        {
            "billed/contract": 1,
            "cost/task vs promised": 2,
            "TTFT P50 s": 3,
            "served": 4,
            "tok/billed h": 5,
            "capacity": 6,
            "SLA": 7,
            "availability": 8,
        },
    )
