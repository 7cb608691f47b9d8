"""Benchmark trials run against a signed vendor after signing: `procure perf import FILE --offer ID`.

Kept with the offer's evidence in actuals/OFFER-ID/trials.csv, one row per run (one concurrency or
rate of a guidellm, `vllm bench serve`, genai-perf or AIPerf result, read by procure/io/trials.py):

    date,source,interactivity,output_tok_s_gpu,ttft_s,gpus,gpu_type,model,precision

`date` the trial's day (YYYY-MM-DD), `source` the result file's name, `interactivity` output tok/s per
user, `output_tok_s_gpu` output tok/s per billed GPU (the run's throughput / `gpus`), `ttft_s` the
median time to first token (empty when the tool states none), `gpu_type`, `model` and `precision`
what the trial ran (the offer's GPU unless --gpu says otherwise; --model, --precision; empty when not
stated), against which it is set beside the public curves (procure/model/references.py). A trial is the runs of one date
and
source; importing the same file for the same date again replaces its runs (named), other trials stay.
The scorecard reads each month's trials as an observation of the vendor's capacity
(procure/analysis/scorecard.py, docs/actuals.md "Post-signing trials"). The import and the locked
merge are procure/io/trial_evidence.py's (it reads the trial files and the kept evidence, which read this).
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem

TRIALS_FILE = "trials.csv"
TRIAL_COLUMNS = (
    "date",
    "source",
    "interactivity",
    "output_tok_s_gpu",
    "ttft_s",
    "gpus",
    "gpu_type",
    "model",
    "precision",
)
MAX_LABEL = 80  # characters of a gpu_type, model or precision
# figures every curve is loaded with lie in this range (procure/io/workspace.py read_curve)
SMALLEST, LARGEST = 1e-12, 1e12
FIRST_YEAR, LAST_YEAR = 2000, 2199  # as the other evidence's months (procure.io.actuals)


@dataclass(frozen=True)
class TrialRun:
    day: date
    source: str
    interactivity: float
    output_tok_s_gpu: float
    ttft_s: float | None
    gpus: int
    gpu_type: str | None = None
    model: str | None = None
    precision: str | None = None


def _figure(
    raw: str, display: str, line: int, column: str, problems: list[Problem], optional: bool = False
) -> float | None:
    from procure.io.tables import number

    if raw == "" and optional:
        return None
    value = number(raw, display, line, column, problems, quoted=40, finite=False)
    if value is None:
        return None
    if not math.isfinite(value) or not (SMALLEST <= value <= LARGEST or (optional and value == 0)):
        problems.append(
            Problem(
                display, line, column, f"must be a finite number between {SMALLEST:g} and {LARGEST:g} (got {raw[:40]})"
            )
        )
        return None
    return value


def _row(line: int, row: dict[str, str], display: str, problems: list[Problem]) -> TrialRun | None:
    before = len(problems)
    try:
        day = date.fromisoformat(row["date"])
        if not FIRST_YEAR <= day.year <= LAST_YEAR:
            raise ValueError
    except ValueError:
        problems.append(
            Problem(
                display,
                line,
                "date",
                f"must be a date YYYY-MM-DD between {FIRST_YEAR} and {LAST_YEAR} (got {row['date'][:40]!r})",
            )
        )
        day = None  # type: ignore[assignment]
    if not row["source"].strip():
        problems.append(Problem(display, line, "source", "must name the trial's result file"))
    from procure.textsafe import text_problem

    refused = text_problem(row["source"], True, 255)
    if refused is not None:
        problems.append(Problem(display, line, "source", refused))
    x = _figure(row["interactivity"], display, line, "interactivity", problems)
    y = _figure(row["output_tok_s_gpu"], display, line, "output_tok_s_gpu", problems)
    ttft = _figure(row["ttft_s"], display, line, "ttft_s", problems, optional=True)
    gpus = _figure(row["gpus"], display, line, "gpus", problems)
    if gpus is not None and (gpus != int(gpus) or gpus < 1):
        problems.append(
            Problem(display, line, "gpus", f"must be a whole number of at least 1 (got {row['gpus'][:40]})")
        )
    labels = {}
    for column in ("gpu_type", "model", "precision"):
        text = row[column].strip()
        if len(text) > MAX_LABEL or text_problem(text, True):
            problems.append(
                Problem(display, line, column, f"must be a name of at most {MAX_LABEL} printable characters")
            )
        labels[column] = text or None
    if len(problems) > before:
        return None
    return TrialRun(day, row["source"].strip(), x, y, ttft, int(gpus), **labels)  # type: ignore[arg-type]


def parse_trials(text: str, display: str, problems: list[Problem]) -> list[TrialRun]:
    """trials.csv's rows, each checked (file, line, column); the same run twice is an error."""
    from procure.io.tables import csv_text_rows

    rows, _, found = csv_text_rows(text, display, TRIAL_COLUMNS)
    problems.extend(found)
    out: list[TrialRun] = []
    seen: dict[tuple, int] = {}
    for line, row in rows:
        run = _row(line, row, display, problems)
        if run is None:
            continue
        key = (run.day, run.source, run.interactivity)
        if key in seen:
            problems.append(
                Problem(
                    display,
                    line,
                    "interactivity",
                    f"the run of {run.source} on {run.day} at {run.interactivity:g} tok/s/user is also on line "
                    f"{seen[key]}",
                )
            )
            continue
        seen[key] = line
        out.append(run)
    return out


def read_trials(path: Path, display: str, problems: list[Problem]) -> list[TrialRun]:
    from procure.io.yamlsafe import read_text

    try:
        return parse_trials(read_text(path, display), display, problems)
    except InputError as exc:
        problems.extend(exc.problems)
        return []


def trials_csv(runs: list[TrialRun]) -> str:
    from procure.textsafe import csv_writer

    buffer = io.StringIO()
    buffer.write("# benchmark trials run against the signed vendor after signing (procure perf import --offer)\n")
    writer = csv_writer(buffer, lineterminator="\n")
    writer.writerow(TRIAL_COLUMNS)
    for r in sorted(runs, key=lambda r: (r.day, r.source, r.interactivity)):
        writer.writerow(
            [
                r.day.isoformat(),
                r.source,
                format(r.interactivity, ".6g"),
                format(r.output_tok_s_gpu, ".6g"),
                "" if r.ttft_s is None else format(r.ttft_s, ".6g"),
                str(r.gpus),
                r.gpu_type or "",
                r.model or "",
                r.precision or "",
            ]
        )
    return buffer.getvalue()


def runs_from_trials(
    trials: list[Any], gpus: int, gpu_type: str | None = None, model: str | None = None, precision: str | None = None
) -> list[TrialRun]:
    """procure.io.trials.Trial results as rows of trials.csv (each trial needs its date)."""
    missing = [Path(t.source).name for t in trials if t.day is None]
    if missing:
        raise InputError(
            [
                Problem(m, None, "date", "the file states no date: give the trial's date with --date YYYY-MM-DD")
                for m in missing
            ]
        )
    source = {id(t): re.sub(r"[\x00-\x1f\x7f]+", " ", Path(t.source).name) for t in trials}
    labels = {"gpu_type": gpu_type or None, "model": model or None, "precision": precision or None}
    return [
        TrialRun(t.day, source[id(t)], p.interactivity, p.output_tok_s / gpus, p.ttft_s, gpus, **labels)
        for t in trials
        for p in t.points
    ]


def signing_date(offer: Any) -> date | None:
    """The day the offer was first signed (contract.signed, its earliest tranche), None when it is not."""
    held = offer.contract.signed or []
    return min(c.date for c in held) if held else None


def public_curves(curves: Any) -> list[Any]:
    """The reference curves (not measured) that state their gpu, model and precision, as
    procure.model.references.PublicCurve."""
    from procure.model.references import PublicCurve, curve_key

    out = []
    for curve in curves:
        key = curve_key(curve.gpu, curve.model, curve.precision)
        if curve.points_source != "measured" and key is not None:
            out.append(PublicCurve(curve.name, key, curve.points))
    return out


def trial_reference_lines(
    offer_id: str, runs: list[TrialRun], references: list[Any], target: float
) -> tuple[list[str], list[str]]:
    """(warnings, notes) for an offer's post-signing trials against the public curves: each trial
    (date and source) read at the target and set beside the best public curve of its gpu, model and
    precision; a trial that states none of them, or has no public curve of its kind, is a note."""
    from procure.model.references import above_reference, curve_key, missing_marks

    by_trial: dict[tuple[date, str], list[TrialRun]] = {}
    for run in runs:
        by_trial.setdefault((run.day, run.source), []).append(run)
    warnings, notes = [], []
    for (day, source), group in sorted(by_trial.items()):
        first = group[0]
        what = f"actuals/{offer_id}/trials.csv: trial {source} of {day}"
        key = curve_key(first.gpu_type, first.model, first.precision)
        if key is None:
            missing = missing_marks(first.gpu_type, first.model, first.precision)
            notes.append(
                f"{what} states no {', '.join(missing)}: not compared with the public curves (give --model and "
                "--precision)"
            )
            continue
        found = above_reference([(r.interactivity, r.output_tok_s_gpu) for r in group], key, references, target)
        if found is not None:
            warnings.append(found.sentence(what))
        elif not any(r.key == key for r in references):
            notes.append(
                f"{what}: no public curve in performance/ states gpu {first.gpu_type}, model {first.model}, precision "
                f"{first.precision}: not compared"
            )
    return warnings, notes


def curve_reference_lines(curves: Any, references: list[Any], target: float) -> tuple[list[str], list[str]]:
    """(warnings, notes) for the measured curves in performance/ against the public curves, as for trials."""
    from procure.model.references import above_reference, curve_key, missing_marks

    warnings, notes = [], []
    for curve in curves:
        if curve.points_source != "measured":
            continue
        what = f"performance/{curve.name}.csv"
        key = curve_key(curve.gpu, curve.model, curve.precision)
        if key is None:
            notes.append(
                f"{what} states no {', '.join(missing_marks(curve.gpu, curve.model, curve.precision))}: not compared "
                "with the public curves ('# model: ...' lines)"
            )
            continue
        found = above_reference(curve.points, key, references, target)
        if found is not None:
            warnings.append(found.sentence(what))
    return warnings, notes


def offer_reference_curves(offer: Any, curves: dict[str, Any], references: list[Any]) -> tuple[list[Any], str]:
    """The public curves an offer's own points are set against, and what they share with it: the curves of the same
    GPU, model and precision as its named reference curve (`performance.reference`); without one, the public curves
    of its GPU whose name carries its serving stack (`b200-dynamo-trt-fp4` for stack dynamo-trt on B200); without
    those, every public curve of its GPU (none: not compared)."""
    from procure.model.references import curve_key

    named = curves.get(offer.performance.reference) if offer.performance.reference else None
    key = curve_key(named.gpu, named.model, named.precision) if named is not None else None
    if key is not None and any(r.key == key for r in references):
        return [r for r in references if r.key == key], "of the same GPU, model and precision"
    gpu = [r for r in references if r.key[0] == offer.gpu.strip().lower()]
    stack = (offer.performance.stack or "").strip().lower().replace(" ", "-")
    same_stack = [r for r in gpu if stack and stack in r.name.lower()]
    if same_stack:
        return same_stack, f"of the same GPU and stack ({offer.gpu}, {offer.performance.stack})"
    return gpu, f"of the same GPU ({offer.gpu}, any serving stack)"


def offer_point_lines(ws: Any) -> tuple[list[Any], list[str]]:
    """(warnings, notes) for the offers' own throughput points (`performance.points`) against the public curves,
    read at the workload's interactivity with the threshold of the measured curves and trials: a warning names the
    offer's file, the line and the field (procure.errors.Problem)."""
    from procure.model.references import above_curves

    references = public_curves(ws.curves.values())
    target = ws.config.workload.interactivity
    warnings, notes = [], []
    for offer in ws.offers:
        points = offer.performance.points
        if not points or offer.per_token:
            continue
        doc = ws.lines[offer.id]
        where = ("performance", "points")
        curves, basis = offer_reference_curves(offer, ws.curves, references)
        if not curves:
            notes.append(
                f"{doc.display}: performance.points: no public curve in performance/ states gpu {offer.gpu}: not "
                "compared"
            )
            continue
        found = above_curves(
            points,
            curves,
            target,
            basis=basis,
            check="ask the vendor which GPUs a per-GPU figure counts (per billed GPU), the sequence lengths and the "
            "precision",
        )
        if found is not None:
            message = found.sentence("the offer's own curve")
            warnings.append(doc.problem(where, message))
    return warnings, notes


def reference_lines(ws: Any) -> tuple[list[str], list[str]]:
    """(warnings, notes) for a loaded workspace: its measured curves and every signed vendor's
    post-signing trials against its public curves, at the workload's interactivity."""
    references = public_curves(ws.curves.values())
    target = ws.config.workload.interactivity
    warnings, notes = curve_reference_lines(ws.curves.values(), references, target)
    for offer_id in sorted(ws.actuals):
        found = trial_reference_lines(offer_id, ws.actuals[offer_id].trials, references, target)
        warnings += found[0]
        notes += found[1]
    return warnings, notes
