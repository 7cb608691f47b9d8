"""The use cases of the delivered evidence: scorecard (the delivered months against the promise, with the credit
claims), perf import (public curves and trial results, a signed vendor's trials kept as evidence) and actuals
import (serving metrics, incidents, invoices kept in actuals/ID/).

An import's result holds the files written and, in the order they are told, the lines a person reads beside them
("warning: ...", "note: ..."): the cli says them, the use case never prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procure.analysis.claims import VendorClaims
    from procure.analysis.evaluate import Evaluation
    from procure.analysis.scorecard import ScorecardResult
    from procure.io.workspace import Workspace


def _problem(where: str, message: str) -> Any:
    from procure.errors import InputError, Problem

    return InputError([Problem(where, None, "", message)])


def _signed_offer(ws: Workspace, offer_id: str) -> Any:
    """The offer `offer_id` of the workspace, else an unknown offer with "did you mean"."""
    from procure.errors import InputError, unknown_offer

    known = [o.id for o in ws.offers]
    if offer_id not in known:
        raise InputError([unknown_offer(offer_id, known)])
    return next(o for o in ws.offers if o.id == offer_id)


@dataclass
class Scorecards:
    """What `procure scorecard` prints: the promise evaluated, the delivered months set against it, and with
    --claim the credit claims drafted for the months shown."""

    evaluation: Evaluation
    result: ScorecardResult
    claims: list[VendorClaims] | None = None


def scorecards(
    workspace: Path, as_of: date | None, offer: str | None, months: int | None, claims: bool = False
) -> Scorecards:
    """Every signed vendor with evidence in actuals/ (or the one of `offer`, which must have some) scored month by
    month over the last `months` complete months; with `claims`, the SLA credit claims of those months."""
    from procure.analysis.promised import scored_promise
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    if offer is not None:
        _signed_offer(ws, offer)  # a typo gets "did you mean"
        if offer not in ws.actuals:
            known = ", ".join(sorted(ws.actuals)) or "none"
            message = f"no evidence in actuals/ for {offer!r} (signed offers with evidence: {known})"
            raise _problem("--offer", message)
    ev, result = scored_promise(ws, as_of, offer, months)  # the promise, and the months set against it
    found = Scorecards(ev, result)
    if claims:
        from procure.analysis.claims import draft_claims

        found.claims = draft_claims(ws, result, ev.as_of)
    return found


@dataclass
class Imported:
    """What an import wrote, and the lines told about it, in order ("warning: ...", "note: ...")."""

    written: list[Path] = field(default_factory=list)
    said: list[str] = field(default_factory=list)


@dataclass
class Trials:
    """perf import's options for trial results: what the tools do not record (the GPUs billed, the labels, the date),
    the curve's name, and the signed offer a trial ran against after signing (kept as evidence, not as a curve)."""

    gpus: int | None = None
    name: str | None = None
    day: date | None = None
    offer: str | None = None
    labels: dict[str, str | None] = field(default_factory=dict)
    curve_options: list[str] = field(default_factory=list)  # the curve-only options given, as named on the command


def import_performance(
    workspace: Path,
    sources: list[Path],
    out: Path,
    trials: Trials,
    lengths: tuple[int | None, int | None],
    gpu: str | None = None,
    model: str | None = None,
    force: bool = False,
    per_gpu_basis: str | None = None,
    as_of: date | None = None,
) -> Imported:
    """InferenceX rows (one file) as public curves in `out`, or trial results as one measured curve there, or with
    `trials.offer` as the signed vendor's evidence in actuals/ID/trials.csv; `lengths` are the input and output
    tokens (None: the workload's). A trial curve and kept trials are set beside the public curves."""
    from procure.io.inferencex import import_curves
    from procure.io.trials import default_name, import_trials, looks_like_inferencex, looks_like_trial

    isl, osl = lengths
    if isl is None or osl is None:
        from procure.io.workspace import load_workspace

        workload = load_workspace(workspace).config.workload
        isl, osl = isl or workload.input_tokens, osl or workload.output_tokens
    # with --offer every file is a trial (a broken one is told by its own reader: file, line, field)
    is_trial = [looks_like_trial(p) or (trials.offer is not None and not looks_like_inferencex(p)) for p in sources]
    if not any(is_trial):
        if trials.offer is not None:
            message = "InferenceX rows are public curves, not a trial of a signed vendor: import them without --offer"
            raise _problem("--offer", message)
        if len(sources) != 1:
            raise _problem("perf import", "InferenceX rows come in one file at a time")
        written, warnings = import_curves(sources[0], out, isl, osl, gpu, force, model, per_gpu_basis)
        return Imported(written, [f"warning: {w}" for w in warnings])
    if not all(is_trial):
        raise _problem("perf import", "give trial results or InferenceX rows, not both in one import")
    if trials.gpus is None:
        message = "a trial's curve is per billed GPU: state how many GPUs served the endpoint (--gpus N)"
        raise _problem("--gpus", message)
    if trials.offer is not None:
        if trials.curve_options:
            message = "a trial with --offer is kept in actuals/ID/trials.csv, not written as a curve: leave it out"
            raise _problem(trials.curve_options[0], message)
        return _offer_trials(workspace, sources, trials, as_of, isl, osl)
    name = trials.name or default_name(sources[0])
    written, warnings = import_trials(sources, out, name, trials.gpus, isl, osl, trials.day, force, trials.labels)
    return Imported(written, _curve_check(workspace, out, written) + [f"warning: {w}" for w in warnings])


def _offer_trials(workspace: Path, sources: list[Path], trials: Trials, as_of: date | None, isl: int, osl: int) -> Any:
    """perf import --offer: the trials stored as the signed vendor's evidence, set beside the public curves."""
    from procure.analysis.evaluate import resolve_as_of
    from procure.io.offer_trials import public_curves, trial_reference_lines
    from procure.io.trial_evidence import import_offer_trials
    from procure.io.workspace import load_workspace

    assert trials.offer is not None and trials.gpus is not None
    ws = load_workspace(workspace, actuals=False)  # the import checks the kept trials it merges into
    signed = _signed_offer(ws, trials.offer)
    written, notes, warnings, runs = import_offer_trials(
        ws.root, signed, sources, trials.gpus, trials.day, resolve_as_of(ws, as_of), isl, osl, trials.labels
    )
    found, said = trial_reference_lines(
        trials.offer, runs, public_curves(ws.curves.values()), ws.config.workload.interactivity
    )
    return Imported(written, [f"warning: {w}" for w in warnings + found] + [f"note: {n}" for n in notes + said])


def _curve_check(workspace: Path, folder: Path, written: list[Path]) -> list[str]:
    """Lines on a trial curve just written, set beside the public curves of the same folder at the
    workload's interactivity (procure/model/references.py): warnings, and notes of what was not compared."""
    from procure.errors import InputError
    from procure.io.offer_trials import curve_reference_lines, public_curves
    from procure.io.workspace import load_workspace, read_curve
    from procure.io.yamlsafe import read_text

    try:
        target = load_workspace(workspace).config.workload.interactivity
    except InputError:
        return [
            "note: no valid workspace states the workload's interactivity: the curve is not compared with the public "
            "curves"
        ]
    curves = [
        read_curve(read_text(path, str(path)), str(path), path.stem, []) for path in sorted(Path(folder).glob("*.csv"))
    ]
    curves = [c for c in curves if c is not None]
    ours = [c for c in curves if c.name in {Path(w).stem for w in written}]
    warnings, notes = curve_reference_lines(ours, public_curves(curves), target)
    return [f"warning: {w}" for w in warnings] + [f"note: {n}" for n in notes]


@dataclass
class Server:
    """A Prometheus server to read the serving metrics from (procure/io/prometheus_api.py): range queries from
    `since` to `until` (not included; None: now) at `step` seconds."""

    url: str
    since: date
    until: date | None = None
    step: int = 60
    token_file: Path | None = None
    timeout: float = 300.0


def import_evidence(
    workspace: Path, offer: str, sources: list[Path], server: Server | None = None, gpu_filter: Any = None
) -> Imported:
    """The files, and with a server the answers of its range queries saved to a temporary folder, checked and kept
    in actuals/OFFER/ of the workspace together: all or nothing. `gpu_filter`: a FOCUS export's rows that bill
    GPU capacity besides those procure knows (procure/io/focus.py GpuFilter)."""
    from procure.io.actuals import offer_size
    from procure.io.actuals_import import import_actuals
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace, actuals=False)  # the import checks the kept evidence it merges into
    signed = _signed_offer(ws, offer)
    size = offer_size(signed)  # counts are judged against the offer's own GPUs
    currency = signed.pricing.currency or ws.config.currency  # a FOCUS export's BillingCurrency must be it
    rate = signed.pricing.rate  # a FOCUS month's cost per GPU-hour is judged against it
    if server is None:
        written, notes = import_actuals(ws.root, offer, sources, ws.config.actuals, size, currency, gpu_filter, rate)
        return Imported(written, [f"note: {n}" for n in notes])
    import tempfile

    from procure.errors import InputError
    from procure.io import prometheus_api

    until = server.until
    end = datetime(until.year, until.month, until.day, tzinfo=UTC) if until else datetime.now(UTC)
    prometheus_api.check_step(server.step, server.since, end)
    gap_s = ws.config.actuals.gap_minutes * 60
    if server.step > gap_s:
        raise _problem(
            "--step",
            f"{server.step} s is longer than actuals.gap_minutes ({ws.config.actuals.gap_minutes:g} min): every "
            "step between two answers would be a gap, and no month measured; give the scrape interval",
        )
    names = ws.config.actuals.metrics
    wanted = [
        names.output_tokens,
        names.requests,
        names.ttft + "_bucket",
        names.e2e_latency + "_bucket",
        names.gpu_busy,
    ] + ([names.requests_running] if names.max_concurrency else [])
    with prometheus_api.unwound_on_signals(), tempfile.TemporaryDirectory(prefix="procure-prometheus-") as folder:
        queries = prometheus_api.fetch_all(
            server.url, wanted, server.since, end, server.step, server.token_file, server.timeout, Path(folder)
        )
        try:
            written, notes = import_actuals(
                ws.root,
                offer,
                [*sources, *(q.path for q in queries)],
                ws.config.actuals,
                size,
                currency,
                gpu_filter,
                rate,
            )
        except InputError as exc:
            raise InputError(prometheus_api.relabel(exc.problems, queries)) from None
    return Imported(written, [f"note: {prometheus_api.relabel_text(n, queries)}" for n in notes])
