"""`procure perf import FILE --offer ID`: trials run against a signed vendor after signing, read by
procure/io/trials.py, checked against the offer's signing date and the as-of date, and merged into
actuals/ID/trials.csv (procure/io/offer_trials.py) under the workspace's evidence lock."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem
from procure.io.offer_trials import (
    MAX_LABEL,
    TRIALS_FILE,
    TrialRun,
    parse_trials,
    read_trials,
    runs_from_trials,
    signing_date,
    trials_csv,
)


def store_trials(root: Path, offer_id: str, runs: list[TrialRun]) -> tuple[list[Path], list[str]]:
    """Merge the runs into actuals/OFFER-ID/trials.csv under the evidence lock: a trial (date and
    source) imported again replaces its runs, named; the merged file is checked as the loader reads
    it and written at once. Returns (written, notes)."""
    from procure.io.actuals import ACTUALS
    from procure.io.evidence_store import evidence_lock
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
        # compared as written (the file holds figures rounded as trials_csv writes them), not as read
        same = {
            key
            for key in replaced
            if trials_csv(sorted(r for r in kept if (r.day, r.source) == key))
            == trials_csv(sorted(r for r in runs if (r.day, r.source) == key))
        }
        notes = [
            f"trial {source} of {day}: "
            + ("already kept, unchanged" if (day, source) in same else "replaced by this import")
            for day, source in replaced
        ]
        return write_files_atomic(folder, {TRIALS_FILE: text}), notes


def import_offer_trials(
    root: Path,
    offer: Any,
    paths: list[Path],
    gpus: int,
    day: date | None,
    as_of: date,
    isl: int,
    osl: int,
    labels: dict[str, str | None],
) -> tuple[list[Path], list[str], list[str], list[TrialRun]]:
    """`perf import FILE --offer ID`: the trial files read (procure/io/trials.py), each dated on or
    after the offer's signing and not after as_of, stored in actuals/ID/trials.csv. Every problem of
    every file is reported at once, nothing written. Returns (written, notes, warnings, runs)."""
    from procure.io.trials import read_trial, resolve_model, trial_warnings

    signed = _signed_on(offer, gpus)
    problems: list[Problem] = []
    for option, value in (
        ("--gpu", labels.get("gpu")),
        ("--model", labels.get("model")),
        ("--precision", labels.get("precision")),
    ):
        from procure.textsafe import text_problem

        refused = None if value is None else text_problem(value, True, MAX_LABEL)
        if value is not None and (not value.strip() or refused):
            problems.append(
                Problem(option, None, "", refused or f"must be a name of 1 to {MAX_LABEL} printable characters")
            )
    trials = []
    for path in paths:
        try:
            trial = read_trial(path, day)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        field = "--date" if day is not None else "date"
        if trial.day < signed:
            problems.append(
                Problem(
                    str(path),
                    None,
                    field,
                    f"{trial.day} is before {offer.id} was signed ({signed}): a trial before signing is a curve, "
                    "imported without --offer",
                )
            )
        elif trial.day > as_of:
            problems.append(
                Problem(
                    str(path),
                    None,
                    field,
                    f"{trial.day} is after the as-of date {as_of}: a trial is dated the day it ran",
                )
            )
        trials.append(trial)
    if problems:
        raise InputError(problems)
    model = resolve_model(trials, labels.get("model"))  # --model, else the result files' own
    warnings, _ = trial_warnings(trials, isl, osl)
    runs = runs_from_trials(trials, gpus, labels.get("gpu") or offer.gpu, model, labels.get("precision"))
    written, notes = store_trials(root, offer.id, runs)
    return written, notes, warnings, runs


def _signed_on(offer: Any, gpus: int) -> date:
    """The day the offer was signed; refused when it is not, or when the trial ran on fewer than one GPU or more than
    the offer supplies."""
    if gpus < 1:
        raise InputError([Problem("--gpus", None, "", f"must be at least 1 (got {gpus})")])
    from procure.io.actuals import offer_size

    size = offer_size(offer)
    if size is not None and gpus > size:
        raise InputError(
            [
                Problem(
                    "--gpus",
                    None,
                    "",
                    f"{gpus:,} GPUs is more than {offer.id} supplies (at most {size:,.0f}): a trial of a signed vendor "
                    "runs on the offer's own GPUs",
                )
            ]
        )
    signed = signing_date(offer)
    if signed is None:
        raise InputError(
            [
                Problem(
                    "--offer",
                    None,
                    "",
                    f"{offer.id} is not signed (no contract.signed in its offer file): a trial of a vendor before "
                    "signing is a curve, imported without --offer",
                )
            ]
        )
    return signed
