"""Benchmark trials run against a signed vendor after signing: `procure perf import FILE --offer ID`.

Kept with the offer's evidence in actuals/OFFER-ID/trials.csv, one row per run (one concurrency or
rate of a guidellm, `vllm bench serve`, genai-perf or AIPerf result, read by procure/io/trials.py):

    date,source,interactivity,output_tok_s_gpu,ttft_s,gpus

`date` the trial's day (YYYY-MM-DD), `source` the result file's name, `interactivity` output tok/s per
user, `output_tok_s_gpu` output tok/s per billed GPU (the run's throughput / `gpus`), `ttft_s` the
median time to first token (empty when the tool states none). A trial is the runs of one date and
source; importing the same file for the same date again replaces its runs (named), other trials stay.
The scorecard reads each month's trials as an observation of the vendor's capacity
(procure/analysis/scorecard.py, docs/actuals.md "Post-signing trials").
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
TRIAL_COLUMNS = ("date", "source", "interactivity", "output_tok_s_gpu", "ttft_s", "gpus")
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


def _figure(raw: str, display: str, line: int, column: str, problems: list[Problem], optional: bool = False) -> float | None:
    if raw == "" and optional:
        return None
    try:
        value = float(raw)
    except ValueError:
        problems.append(Problem(display, line, column, f"must be a number (got {raw[:40]!r})"))
        return None
    if not math.isfinite(value) or not (SMALLEST <= value <= LARGEST or (optional and value == 0)):
        problems.append(Problem(display, line, column, f"must be a finite number between {SMALLEST:g} and {LARGEST:g} (got {raw[:40]})"))
        return None
    return value


def _row(line: int, row: dict[str, str], display: str, problems: list[Problem]) -> TrialRun | None:
    before = len(problems)
    try:
        day = date.fromisoformat(row["date"])
        if not FIRST_YEAR <= day.year <= LAST_YEAR:
            raise ValueError
    except ValueError:
        problems.append(Problem(display, line, "date", f"must be a date YYYY-MM-DD between {FIRST_YEAR} and {LAST_YEAR} (got {row['date'][:40]!r})"))
        day = None  # type: ignore[assignment]
    if not row["source"].strip():
        problems.append(Problem(display, line, "source", "must name the trial's result file"))
    x = _figure(row["interactivity"], display, line, "interactivity", problems)
    y = _figure(row["output_tok_s_gpu"], display, line, "output_tok_s_gpu", problems)
    ttft = _figure(row["ttft_s"], display, line, "ttft_s", problems, optional=True)
    gpus = _figure(row["gpus"], display, line, "gpus", problems)
    if gpus is not None and (gpus != int(gpus) or gpus < 1):
        problems.append(Problem(display, line, "gpus", f"must be a whole number of at least 1 (got {row['gpus'][:40]})"))
    if len(problems) > before:
        return None
    return TrialRun(day, row["source"].strip(), x, y, ttft, int(gpus))  # type: ignore[arg-type]


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
            problems.append(Problem(display, line, "interactivity", f"the run of {run.source} on {run.day} at {run.interactivity:g} tok/s/user is also on line {seen[key]}"))
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
        writer.writerow([r.day.isoformat(), r.source, format(r.interactivity, ".6g"), format(r.output_tok_s_gpu, ".6g"), "" if r.ttft_s is None else format(r.ttft_s, ".6g"), str(r.gpus)])
    return buffer.getvalue()


def runs_from_trials(trials: list[Any], gpus: int) -> list[TrialRun]:
    """procure.io.trials.Trial results as rows of trials.csv (each trial needs its date)."""
    missing = [Path(t.source).name for t in trials if t.day is None]
    if missing:
        raise InputError([Problem(m, None, "date", "the file states no date: give the trial's date with --date YYYY-MM-DD") for m in missing])
    source = {id(t): re.sub(r"[\x00-\x1f\x7f]+", " ", Path(t.source).name) for t in trials}
    return [TrialRun(t.day, source[id(t)], p.interactivity, p.output_tok_s / gpus, p.ttft_s, gpus) for t in trials for p in t.points]


def store_trials(root: Path, offer_id: str, runs: list[TrialRun]) -> tuple[list[Path], list[str]]:
    """Merge the runs into actuals/OFFER-ID/trials.csv under the evidence lock: a trial (date and
    source) imported again replaces its runs, named; the merged file is checked as the loader reads
    it and written at once. Returns (written, notes)."""
    from procure.io.actuals import ACTUALS, evidence_lock
    from procure.io.files import write_files_atomic

    folder = Path(root) / ACTUALS / offer_id
    path = folder / TRIALS_FILE
    shown = f"{ACTUALS}/{offer_id}/{TRIALS_FILE}"
    with evidence_lock(root):
        problems: list[Problem] = []
        kept = read_trials(path, shown, problems) if path.exists() else []
        if problems:
            raise InputError(problems)
        incoming = {(r.day, r.source) for r in runs}
        replaced = sorted({(r.day, r.source) for r in kept} & incoming)
        merged = [r for r in kept if (r.day, r.source) not in incoming] + runs
        text = trials_csv(merged)
        parse_trials(text, shown, problems)  # what the loader will read: never write what it would refuse
        if problems:
            raise InputError(problems)
        notes = [f"trial {source} of {day}: replaced by this import" for day, source in replaced]
        return write_files_atomic(folder, {TRIALS_FILE: text}), notes
