"""Delivered against promised, per signed vendor and month; the SLA credits owed; the evidence.

A signed vendor is an offer with a folder in actuals/ (procure/io/actuals.py). For each calendar month
from its first evidence to the month before `as_of`, the scorecard sets what was delivered beside
what the evaluation promised. Only complete months are scored: the month of `as_of` is not over, so
its evidence is shown as partial and scores nothing (no availability, credit or breach); a month whose
metric samples cover less of it than `actuals.min_coverage` is partial too (its output per GPU-hour
and cost per task are not set against a whole month's invoice; its availability, from the incident
record, still counts). Evidence dated after the month of `as_of` is not shown (a note says so).

- output tokens per billed GPU-hour (metrics' output tokens / the invoice's GPU-hours) against the
  promise: throughput at the target x 3,600 x expected availability x utilization x fill, the
  output the cost per task was priced on (DESIGN, cost model step 12's denominator);
- the share of requests served (`requests_ok / (ok + failed)`), the TTFT and end-to-end quantiles
  against `workload.max_ttft_s`;
- availability from the incident history (procure/io/incidents.py: the union of down-time incidents
  over the month) against the SLA, and the credits the contract's terms owe: by tiers (the deepest
  tier whose `below` the month falls under) or `rate_per_point` per percentage point below the SLA,
  capped, times the month's invoice;
- billed against contracted GPU-hours (the committed GPUs, or for an offer with none the GPUs today's demand
  bills, x the month's hours);
- the delivered cost per successful task: the invoice (in the workspace currency) plus the buyer's
  own staff and software per GPU-hour for the billed hours, over the requests served x the workload's
  success rate, against the promised cost per task.

A figure whose evidence is missing is None ("no data"), never 0.

The evidence behind each vendor (`Evidence`) is conjugate (Gelman et al., *Bayesian Data Analysis*,
3rd ed., ch. 2): a Beta posterior for availability (prior: the expected availability worth
`availability_prior_hours` hours; data: the hours up and down in the months with an incident
history) and for the served-request rate (prior: Beta(n0, 1), n0 = `success_prior_requests`, the promise
that every request is served; data: the requests served and failed), and a normal posterior for log(delivered / promised
throughput) (prior
N(0, throughput_prior_sd^2); each month's log ratio an observation of variance throughput_month_sd^2 /
w, w = the month's billed GPU-hours / (billed GPUs x 730), its exposure), so the ratio is
log-normal. Months weigh by what was bought in them.
"""

from __future__ import annotations

import calendar
import math
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

from procure.io.actuals import OfferActuals
from procure.model.kinds.base import HOURS_PER_MONTH
from procure.model.units import PerThousand


class MonthScore(PerThousand):
    month: str
    data: bool = Field(description="any evidence this month (metrics, invoice or an incident history covering it)")
    billed_gpu_hours: float | None
    contracted_gpu_hours: float | None = Field(
        description="the committed GPUs (an offer with none: the GPUs today's demand bills) x the month's hours"
    )
    billed_vs_contracted: float | None
    output_tokens: float | None
    delivered_tokens_per_gpu_hour: float | None
    promised_tokens_per_gpu_hour: float | None
    throughput_ratio: float | None = Field(description="delivered / promised output tokens per billed GPU-hour")
    requests_ok: float | None
    requests_failed: float | None
    served_rate: float | None = Field(description="requests served / requests finished")
    ttft_p50_s: float | None
    ttft_p90_s: float | None
    ttft_p99_s: float | None
    e2e_p50_s: float | None
    e2e_p90_s: float | None
    e2e_p99_s: float | None
    ttft_within_limit: bool | None = Field(
        description="TTFT P50 within workload.max_ttft_s (null: no limit or no data)"
    )
    availability: float | None
    sla_availability: float | None
    sla_breached: bool | None
    credit_share: float | None = Field(description="share of the month's invoice the terms credit")
    credits_owed: float | None = Field(
        description="in the offer's currency; null when no invoice states the month's fee"
    )
    invoiced: float | None
    delivered_cost_per_task: float | None
    promised_cost_per_task: float | None
    cost_overrun: float | None = Field(description="delivered / promised cost per task - 1")
    coverage: float | None
    partial: bool = Field(
        False,
        description="the evidence does not cover the whole month (the month of --as-of, or metric samples below "
        "actuals.min_coverage): its throughput and cost per task are not scored",
    )
    busy_gpu_hours: float | None = Field(
        None,
        description="GPU-hours the serving engine was busy (utilization telemetry); null when no telemetry states them",
    )
    capacity_ratio: float | None = Field(
        None,
        description="output tokens per busy GPU-hour / (the promised throughput x 3,600): evidence of the vendor's "
        "speed; null without utilization telemetry",
    )
    trial_capacity_ratio: float | None = Field(
        None,
        description="the month's post-signing trials: their reading at the target x benchmark to production (mean) / "
        "the promised throughput; null without a trial",
    )
    trials: list[str] = Field(default_factory=list, description="the trials (date and file) read this month")
    notes: list[str] = Field(default_factory=list)


class Evidence(BaseModel):
    """Posteriors from the delivered months (module docstring)."""

    months: int = Field(
        description="months with evidence of capacity (tokens per busy GPU-hour, or post-signing trials) that moved "
        "the throughput"
    )
    exposure_months: float = Field(
        description="sum of those months' exposure weights (busy GPU-hours / the month's billed GPU-hours)"
    )
    throughput_basis: str = Field("", description="what moved the throughput, or why nothing did")
    availability_months: int = Field(0, description="months with an incident history")
    availability_dispersion: float | None = Field(
        None, description="the month-to-month sd of availability beyond chance (DerSimonian-Laird tau)"
    )
    throughput_ratio: float | None = Field(
        description="posterior median of delivered / promised throughput (log-normal)"
    )
    throughput_ratio_mean: float | None
    throughput_log_sd: float | None = Field(description="posterior sd of the log ratio")
    availability: float | None = Field(description="posterior mean (Beta)")
    availability_alpha: float | None
    availability_beta: float | None
    served_rate: float | None = Field(description="posterior mean (Beta) of the share of requests served")
    served_alpha: float | None
    served_beta: float | None
    warnings: list[str] = Field(
        default_factory=list, description="months whose capacity reads far from the promise (FAR_FROM_PROMISE)"
    )


class VendorScore(BaseModel):
    offer: str
    vendor: str
    currency: str
    months: list[MonthScore]
    scored_through: str = Field(description="the last month scored: the month before --as-of")
    credits_owed_total: float = Field(description="over the months shown")
    breached_months: list[str] = Field(description="the months shown below the SLA")
    evidence: Evidence
    notes: list[str] = Field(default_factory=list)


class ScorecardResult(BaseModel):
    currency: str
    vendors: list[VendorScore]


# --- helpers ---------------------------------------------------------------------------------------


def month_key(day: date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def next_month(key: str) -> str:
    y, m = int(key[:4]), int(key[5:7])
    return f"{y + (m == 12):04d}-{1 if m == 12 else m + 1:02d}"


def month_window(key: str) -> tuple[datetime, datetime]:
    y, m = int(key[:4]), int(key[5:7])
    start = datetime(y, m, 1, tzinfo=UTC)
    return start, start + timedelta(days=calendar.monthrange(y, m)[1])


def credit_share(availability: float, sla: float, terms: Any) -> float:
    """The share of a month's fee the SLA credit terms owe at this availability (0 at or above the SLA).

    Tiers: the credit of the deepest tier whose `below` the availability is under. Else
    rate_per_point x the percentage points below the SLA. Both capped at `cap`."""
    if terms is None or availability >= sla:
        return 0.0
    if terms.tiers:
        share = max((t.credit for t in terms.tiers if availability < t.below), default=0.0)
    else:
        share = terms.rate_per_point * (sla - availability) * 100
    return min(share, terms.cap)


def random_effects(
    prior_mean: float, prior_var: float, values: list[float], within: list[float], prior_is_a_month: bool = False
) -> tuple[float, float, float]:
    """The posterior (mean, variance) of a vendor's underlying level from one observation per month, and the
    between-month variance tau^2 (DerSimonian and Laird, "Meta-analysis in clinical trials", Controlled Clinical
    Trials 7, 1986: tau^2 = max(0, (Q - (k - 1)) / (S1 - S2 / S1)), Q = sum w (y - ybar_w)^2, w = 1 / v,
    S1 = sum w, S2 = sum w^2). Each month is y ~ N(level, v + tau^2), the level ~ N(prior_mean, prior_var):
    the normal-normal hierarchical model (Gelman et al., Bayesian Data Analysis, 3rd ed., section 5.4). Months,
    not hours or requests, are the units: their observed dispersion sets how much a month says.
    `prior_is_a_month`: the prior is stated as one month's worth of observations (prior_var its within-month
    variance), so it carries the between-month variance too, prior_var + tau^2, and weighs exactly one month of
    that size; without it the prior variance is the level's own."""
    tau2 = 0.0
    if len(values) > 1:
        w = [1.0 / v for v in within]
        s1, s2 = sum(w), sum(x * x for x in w)
        mean_w = sum(x * y for x, y in zip(w, values)) / s1
        q = sum(x * (y - mean_w) ** 2 for x, y in zip(w, values))
        tau2 = max(0.0, (q - (len(values) - 1)) / (s1 - s2 / s1))
    prior_var = prior_var + tau2 if prior_is_a_month else prior_var
    precision = 1.0 / prior_var + sum(1.0 / (v + tau2) for v in within)
    mean = (prior_mean / prior_var + sum(y / (v + tau2) for y, v in zip(values, within))) / precision
    return mean, 1.0 / precision, tau2


def _beta(mean: float, var: float) -> tuple[float, float]:
    """The Beta (alpha, beta) with this mean and variance (moments matched): the draws sample it."""
    mean = min(max(mean, 1e-12), 1 - 1e-12)
    total = max(mean * (1 - mean) / var - 1.0, 1e-9)
    return mean * total, (1 - mean) * total


def _share_posterior(
    prior: tuple[float, float], shares: list[float], counts: list[float]
) -> tuple[float, float, float, float]:
    """A share (availability, requests served) over months, each month one observation: prior Beta(alpha, beta)
    worth alpha + beta trials, a month's share with the binomial variance c / n (n its hours or requests, c =
    p(1 - p) at the pooled share p) plus the between-month variance tau^2 (random_effects). The prior is a month of
    alpha + beta trials: its variance c / (alpha + beta) + tau^2, as a month of that size has, so the promise weighs
    one such month whatever the dispersion (with c / (alpha + beta) alone it weighed (c / n + tau^2) / (c / n)
    months: about 2.9 on the example's availability). Without dispersion (tau^2 = 0) the posterior mean is the
    conjugate Beta's, (alpha + sum n x) / (alpha + beta + sum n); with it, months and not hours are the units.
    Returns (alpha, beta, mean, tau) of the Beta with the posterior's moments."""
    a0, b0 = prior
    n0 = a0 + b0
    prior_mean = a0 / n0
    if not shares:
        return a0, b0, prior_mean, 0.0
    pooled = (a0 + sum(x * n for x, n in zip(shares, counts))) / (n0 + sum(counts))
    c = max(pooled * (1 - pooled), 1e-12)
    mean, var, tau2 = random_effects(prior_mean, c / n0, shares, [c / n for n in counts], prior_is_a_month=True)
    if tau2 == 0:  # no dispersion beyond chance: the conjugate Beta itself
        alpha, beta = (
            a0 + sum(x * n for x, n in zip(shares, counts)),
            b0 + sum((1 - x) * n for x, n in zip(shares, counts)),
        )
        return alpha, beta, alpha / (alpha + beta), 0.0
    alpha, beta = _beta(mean, var)
    return alpha, beta, alpha / (alpha + beta), math.sqrt(tau2)


# One short line per month without evidence of capacity: tokens per billed GPU-hour on committed GPUs
# follow the buyer's own traffic, not the vendor's speed (docs/actuals.md).
NO_CAPACITY = (
    "throughput not moved: no busy GPU-hours or post-signing trial this month (tokens per billed GPU-hour "
    "follow our traffic)"
)


def _throughput_basis(months: list[MonthScore], count: int, busy_months: int, trial_months: int) -> str:
    """What the throughput posterior rests on, in words: the months of telemetry and of trials counted, or why none."""
    said = [f"tokens per busy GPU-hour in {busy_months} month{'s' if busy_months != 1 else ''}"] if busy_months else []
    said += [f"post-signing trials in {trial_months} month{'s' if trial_months != 1 else ''}"] if trial_months else []
    without = sum(1 for m in months if not m.partial and m.capacity_ratio is None and m.trial_capacity_ratio is None)
    said += [f"{without} month{'s' if without != 1 else ''} without either not counted"] if count and without else []
    unread = sum(
        1
        for m in months
        if m.trials == [] and any(n.startswith("trial ") and "no reading at the target" in n for n in m.notes)
    )
    none = "no month with utilization telemetry or a post-signing trial"
    if unread:  # trials kept, but none reaches the workload's interactivity: say so, not "no trial"
        none = (
            f"no month with utilization telemetry or a post-signing trial read at the target (trials in {unread} "
            f"month{'s' if unread != 1 else ''} run slower than it)"
        )
    return "; ".join(said) if count else NO_CAPACITY.split(":")[0] + ": " + none


def posterior(months: list[MonthScore], record: Any, actuals: OfferActuals, config: Any) -> Evidence:
    """The month-level posteriors of the module docstring from the months' evidence."""
    ev = config.evidence
    billed = record.metrics.get("billed_gpus") or record.gpus or 0
    # Throughput: months with evidence of capacity only, each a log ratio with its exposure.
    logs, within, exposure = [], [], 0.0
    busy_months = trial_months = 0
    for m in months:
        # the month's exposure: its busy GPU-hours over the GPU-hours it billed (its invoice's, else the contract's,
        # else what the evaluation bills at today's demand), not over the GPUs a demand fit would bill
        paid = (
            getattr(m, "billed_gpu_hours", None) or getattr(m, "contracted_gpu_hours", None) or billed * HOURS_PER_MONTH
        )
        if m.capacity_ratio is not None and m.capacity_ratio > 0 and m.busy_gpu_hours and paid:
            w = m.busy_gpu_hours / paid
            logs.append(math.log(m.capacity_ratio))
            within.append(ev.throughput_month_sd**2 / w)
            exposure += w
            busy_months += 1
        if (
            m.trial_capacity_ratio is not None and m.trial_capacity_ratio > 0
        ):  # a month's trials: one observation of weight trial_weight
            logs.append(math.log(m.trial_capacity_ratio))
            within.append(ev.throughput_month_sd**2 / ev.trial_weight)
            exposure += ev.trial_weight
            trial_months += 1
    count = len(logs)
    mu, var, _ = (
        random_effects(0.0, ev.throughput_prior_sd**2, logs, within) if count else (0.0, ev.throughput_prior_sd**2, 0.0)
    )
    sd = math.sqrt(var)
    basis = _throughput_basis(months, count, busy_months, trial_months)
    expected_availability = record.metrics.get("availability")
    a_alpha = a_beta = a_mean = a_tau = None
    stated = [m for m in months if m.availability is not None]
    if expected_availability is not None:
        n0 = ev.availability_prior_hours
        hours = [(month_window(m.month)[1] - month_window(m.month)[0]).total_seconds() / 3600 for m in stated]
        prior = (
            (expected_availability * n0, (1 - expected_availability) * n0) if expected_availability < 1 else (n0, 1e-9)
        )
        a_alpha, a_beta, a_mean, a_tau = _share_posterior(prior, [m.availability for m in stated], hours)  # type: ignore[misc]
    served = [
        m
        for m in months
        if m.requests_ok is not None and not m.partial and (m.requests_ok + (m.requests_failed or 0.0)) > 0
    ]
    # the promise (every request served) as n0 served and one failed
    s_alpha, s_beta, s_mean, _ = _share_posterior(
        (ev.success_prior_requests, 1.0),
        [m.requests_ok / (m.requests_ok + (m.requests_failed or 0.0)) for m in served],  # type: ignore[operator]
        [m.requests_ok + (m.requests_failed or 0.0) for m in served],  # type: ignore[operator]
    )
    return Evidence(
        months=count,
        exposure_months=exposure,
        throughput_basis=basis,
        throughput_ratio=math.exp(mu) if count else None,
        throughput_ratio_mean=math.exp(mu + sd * sd / 2) if count else None,
        throughput_log_sd=sd if count else None,
        availability=a_mean,
        availability_alpha=a_alpha,
        availability_beta=a_beta,
        availability_months=len(stated),
        availability_dispersion=a_tau,
        served_rate=s_mean,
        served_alpha=s_alpha,
        served_beta=s_beta,
    )


# --- the scorecard ---------------------------------------------------------------------------------


def _months(actuals: OfferActuals, as_of: date) -> tuple[list[str], list[str]]:
    """(months shown, notes): from the first month of service (metrics or an invoice; without either,
    the first incident's) to the month before as_of, and the month of as_of when it has evidence
    (partial). Evidence dated after it, and incidents before the service began, are left out and stated:
    a provider's page of older incidents makes no months of 100% availability."""
    billed = set(actuals.metrics) | set(actuals.invoices)
    trial_months = {month_key(t.day) for t in actuals.trials}
    notes = []
    early = sorted(
        k for k in trial_months if billed and k < min(billed)
    )  # a trial before the service began makes no month
    if early:
        notes.append(f"trials before the first month of service ({min(billed)}) are not scored ({', '.join(early)})")
    service = billed | (trial_months - set(early))
    incident_months = {month_key(i.start.date()) for i in actuals.incidents}
    current = month_key(as_of)
    last = month_key(as_of.replace(day=1) - timedelta(days=1))
    service_from = min((k for k in service if k <= current), default=None)
    before = sorted(k for k in incident_months if service_from is not None and k < service_from)
    if before:
        notes.append(
            f"incidents before the first month of service ({service_from}) are not scored ({before[0]}"
            + (f" to {before[-1]}" if len(before) > 1 else "")
            + ")"
        )
    keys = (service | incident_months) - set(before)
    later = sorted(k for k in keys if k > current)
    if later:
        notes.append(
            f"evidence dated after {as_of.isoformat()} is not shown ({later[0]}"
            + (f" to {later[-1]}" if len(later) > 1 else "")
            + "): score it with a later --as-of"
        )
    keys -= set(later)
    if not keys:
        return [], notes
    out = [min(keys)]
    while out[-1] < last:
        out.append(next_month(out[-1]))
    out = [k for k in out if k <= last]
    if current in keys:
        out.append(current)
    return out, notes


def _promise(workspace: Any, evaluation: Any, offer_id: str) -> Any:
    """What each month is set against: the offer's promised figures and terms."""
    from types import SimpleNamespace

    record = evaluation.offer(offer_id)
    offer = next(o for o in workspace.offers if o.id == offer_id)
    m_ = record.metrics
    promised_tpgh = None
    if m_.get("throughput") and m_.get("availability") is not None:
        promised_tpgh = (
            m_["throughput"] * 3600 * m_["availability"] * (m_.get("utilization") or 0) * (m_.get("fill") or 1)
        )
    return SimpleNamespace(
        record=record,
        offer=offer,
        metrics=m_,
        throughput=m_.get("throughput"),
        target=workspace.config.workload.interactivity,
        production=workspace.config.uncertainty.production.mean,
        fx=workspace.fx_rate(offer.pricing.currency),
        tpgh=promised_tpgh,
        # The contract's GPUs: the commitment, or for an offer with none the GPUs today's demand bills. Not the GPUs
        # today's demand would bill on a commitment: a month billed at the committed GPUs is 100% of its contract.
        contract_gpus=offer.gpus or m_.get("billed_gpus"),
        own_per_gpu_hour=(m_.get("ops") or 0.0) + (m_.get("software") or 0.0),
        sla=offer.service.sla.availability if offer.service.sla else None,
        terms=offer.contract.sla_credits,
        limit=workspace.config.workload.max_ttft_s,
    )


def _availability(actuals: OfferActuals, key: str, down_impacts: Any) -> float | None:
    """The month's availability from the incident record, when the record covers the month: the
    buyer's own incident CSV covers every month shown; a Statuspage export (its latest incidents)
    the months from its oldest incident on."""
    from procure.analysis.incidents import availability

    start, end = month_window(key)
    covered_from = min((i.start for i in actuals.incidents), default=None)
    own_record = any(f.endswith(".csv") for f in actuals.incident_files)
    if actuals.incident_files and (own_record or (covered_from is not None and end > covered_from.replace(day=1))):
        return availability(actuals.incidents, start, end, None, down_impacts)
    return None


def _trial_capacity(
    actuals: OfferActuals, key: str, p: Any, as_of: date, notes: list[str]
) -> tuple[float | None, list[str]]:
    """The month's post-signing trials (dated up to as_of) as one capacity observation: each trial's
    frontier read at the workload's target interactivity (procure.model.performance.throughput_at),
    x the benchmark-to-production factor's mean (a trial is a benchmark: the promise carries that
    factor), over the promised throughput; several trials in a month, the geometric mean."""
    from procure.model.performance import throughput_at

    by_trial: dict[tuple[date, str], list[Any]] = {}
    for run in actuals.trials:
        if month_key(run.day) == key and run.day <= as_of:
            by_trial.setdefault((run.day, run.source), []).append(run)
    logs, names = [], []
    for (day, source), runs in sorted(by_trial.items()):
        reading = throughput_at([(r.interactivity, r.output_tok_s_gpu) for r in runs], p.target).throughput
        if reading is None or not p.throughput:
            notes.append(
                f"trial {source} of {day}: no reading at the target {p.target:g} tok/s/user (its fastest run is "
                "slower): not a capacity observation"
            )
            continue
        ratio = reading * p.production / p.throughput
        logs.append(math.log(ratio))
        names.append(f"{day} {source}")
        notes.append(
            f"trial {source} of {day}: {reading:.1f} tok/s/GPU at the target x {p.production:.4g} (benchmark to "
            f"production) = {ratio:.1%} of the promised {p.throughput:.1f}"
        )
    return (math.exp(sum(logs) / len(logs)) if logs else None), names


# A month's capacity (or a trial's) further than this factor from the promise, either way, is warned about, as a trial
# far above the public curves is (procure.model.references.MAX_ABOVE_REFERENCE): more often a misreading (telemetry
# of part of the fleet, the wrong --gpus) than a vendor that much faster or slower.
FAR_FROM_PROMISE = 1.25


def _far_from_promise(ratio: float | None, what: str, notes: list[str]) -> None:
    if ratio is not None and ratio > 0 and not 1 / FAR_FROM_PROMISE <= ratio <= FAR_FROM_PROMISE:
        notes.append(
            f"warning: {what} read {ratio:.1%} of the promise, more than {FAR_FROM_PROMISE:g}x from it: check that the "
            "evidence covers every billed GPU (and a trial's --gpus) before trusting it"
        )


def _fleet_busy(
    busy: float | None, covered: float | None, gpu_hours: float | None, contract: Any, hours: float, notes: list[str]
) -> float | None:
    """The month's busy GPU-hours set against the GPUs billed (the invoice's GPU-hours over the month's hours, else
    the contract's GPUs): telemetry that covered fewer GPUs is scaled by its coverage (the GPUs not measured taken
    as busy as those measured), never read as the whole fleet's."""
    if not busy:
        return busy
    billed = gpu_hours / hours if gpu_hours else float(contract or 0) or None
    if covered is None or billed is None or covered >= billed * (1 - 1e-9):
        return busy
    notes.append(
        f"busy GPU-hours from telemetry of {covered:,.0f} of the {billed:,.4g} GPUs billed: scaled by "
        f"{billed / covered:.4g} to the whole fleet (the others taken as busy as those measured)"
    )
    return busy * billed / covered


def _partial(met: Any, config: Any, current: bool, as_of: date, notes: list[str]) -> bool:
    """A month shown but not scored, and why in `notes`: not over on as_of, or too few metric samples."""
    if current:
        notes.append(f"partial: the month is not over on {as_of.isoformat()}: shown, not scored")
        return True
    if met is not None and met.coverage is not None and met.coverage < config.min_coverage:
        notes.append(
            f"partial: the metric samples cover {met.coverage:.1%} of the month (actuals.min_coverage "
            f"{config.min_coverage:.0%}): throughput and cost per task not scored"
        )
        return True
    return False


def _score_month(actuals: OfferActuals, key: str, p: Any, config: Any, current: bool, as_of: date) -> MonthScore:
    """One month delivered against promised (`current`: the month of as_of, not over: partial, unscored)."""
    met = actuals.metrics.get(key)
    inv = actuals.invoices.get(key)
    start, end = month_window(key)
    hours = (end - start).total_seconds() / 3600
    notes: list[str] = []
    partial = _partial(met, config, current, as_of, notes)
    avail = None if current else _availability(actuals, key, config.down_impacts)
    gpu_hours = inv.gpu_hours if inv else None
    tokens = met.output_tokens if met else None
    delivered = tokens / gpu_hours if tokens is not None and gpu_hours and not partial else None
    ratio = delivered / p.tpgh if delivered is not None and p.tpgh else None
    ok = met.requests_ok if met else None
    failed = met.requests_failed if met else None
    served = ok / (ok + (failed or 0)) if ok is not None and (ok + (failed or 0)) > 0 else None
    share = credit_share(avail, p.sla, p.terms) if avail is not None and p.sla is not None else None
    breached = avail < p.sla if avail is not None and p.sla is not None else None
    owed = share * inv.amount if share is not None and inv is not None else None
    if share and inv is None:
        notes.append("credits owed but no invoice states the month's fee")
    busy = met.busy_gpu_hours if met else None
    fleet = _fleet_busy(busy, met.busy_gpus if met else None, gpu_hours, p.contract_gpus, hours, notes)
    # capacity: output tokens per busy GPU-hour against the promised throughput per GPU-hour at the target
    capacity = tokens / fleet / (p.throughput * 3600) if tokens and fleet and p.throughput and not partial else None
    trial_ratio, trial_names = _trial_capacity(actuals, key, p, as_of, notes)
    _far_from_promise(capacity, "tokens per busy GPU-hour", notes)
    _far_from_promise(trial_ratio, "the month's post-signing trials", notes)
    if not partial and capacity is None and trial_ratio is None:
        notes.append(NO_CAPACITY)
    cost = None
    if inv is not None and ok and p.metrics.get("success_rate") and not partial:
        cost = (inv.amount * p.fx + p.own_per_gpu_hour * inv.gpu_hours) / (ok * p.metrics["success_rate"])
    # the promise is a point: the cost at the figures the vendor promised (the cost at the typical inputs), not the
    # mean over what we are unsure of
    promised_cost = p.metrics.get("point_cost_per_task", p.metrics.get("cost_per_task"))
    contracted = p.contract_gpus * hours if p.contract_gpus else None
    ttft50 = met.ttft.get(0.5) if met else None
    return MonthScore(
        month=key,
        data=bool(met or inv or avail is not None),
        billed_gpu_hours=gpu_hours,
        contracted_gpu_hours=contracted,
        billed_vs_contracted=gpu_hours / contracted if gpu_hours is not None and contracted and not current else None,
        output_tokens=tokens,
        delivered_tokens_per_gpu_hour=delivered,
        promised_tokens_per_gpu_hour=p.tpgh,
        throughput_ratio=ratio,
        requests_ok=ok,
        requests_failed=failed,
        served_rate=served,
        ttft_p50_s=ttft50,
        ttft_p90_s=met.ttft.get(0.9) if met else None,
        ttft_p99_s=met.ttft.get(0.99) if met else None,
        e2e_p50_s=met.e2e.get(0.5) if met else None,
        e2e_p90_s=met.e2e.get(0.9) if met else None,
        e2e_p99_s=met.e2e.get(0.99) if met else None,
        ttft_within_limit=(ttft50 <= p.limit) if ttft50 is not None and p.limit is not None else None,
        availability=avail,
        sla_availability=p.sla,
        sla_breached=breached,
        credit_share=share,
        credits_owed=owed,
        invoiced=inv.amount if inv else None,
        delivered_cost_per_task=cost,
        promised_cost_per_task=promised_cost,
        cost_overrun=cost / promised_cost - 1 if cost is not None and promised_cost else None,
        coverage=met.coverage if met else None,
        partial=partial,
        notes=notes,
        busy_gpu_hours=busy,
        capacity_ratio=capacity,
        trial_capacity_ratio=trial_ratio,
        trials=trial_names,
    )


def score_vendor(workspace: Any, evaluation: Any, offer_id: str, as_of: date) -> VendorScore:
    actuals = workspace.actuals[offer_id]
    config = workspace.config.actuals
    p = _promise(workspace, evaluation, offer_id)
    keys, notes = _months(actuals, as_of)
    months = [_score_month(actuals, key, p, config, key == month_key(as_of), as_of) for key in keys]
    flagged = [f"{m.month}: {n}" for m in months for n in m.notes if n.startswith(("warning:", "busy GPU-hours from"))]
    notes += flagged
    evidence = posterior(months, p.record, actuals, config)
    evidence.warnings = [n for n in flagged if n.split(": ", 1)[1].startswith("warning:")]
    return VendorScore(
        offer=offer_id,
        vendor=p.offer.vendor,
        currency=p.offer.pricing.currency or workspace.config.currency,
        months=months,
        scored_through=month_key(as_of.replace(day=1) - timedelta(days=1)),
        credits_owed_total=sum(m.credits_owed or 0.0 for m in months),
        breached_months=[m.month for m in months if m.sla_breached],
        evidence=evidence,
        notes=notes,
    )


def scorecard(
    workspace: Any, evaluation: Any, as_of: date, offer: str | None = None, months: int | None = None
) -> ScorecardResult:
    """Every signed vendor's months; `months`: only the last N months scored (and the month of as_of
    when it has evidence, partial), the credits owed and the months breached counted over those alone."""
    ids = sorted(workspace.actuals) if offer is None else [offer]
    vendors = []
    for offer_id in ids:
        score = score_vendor(workspace, evaluation, offer_id, as_of)
        if months is not None:
            scored = [m for m in score.months if m.month <= score.scored_through][-months:]
            score.months = scored + [m for m in score.months if m.month > score.scored_through]
            score.credits_owed_total = sum(m.credits_owed or 0.0 for m in score.months)
            score.breached_months = [m.month for m in score.months if m.sla_breached]
        vendors.append(score)
    return ScorecardResult(currency=workspace.config.currency, vendors=vendors)


# --- the thresholds reevaluate checks --------------------------------------------------------------


def percent_or_no_data(value: float | None, digits: int = 1) -> str:
    """A share as the scorecard writes it (99.950%), or "no data" when its evidence is missing."""
    return "no data" if value is None else f"{value * 100:.{digits}f}%"


def breaches(result: ScorecardResult, max_overrun: float) -> list[tuple[str, str]]:
    """What makes `reevaluate` exit 3: per vendor's latest month scored with data, an SLA breach, credits
    owed, or a delivered cost per task above the promised by more than `max_overrun`."""
    out = []
    for v in result.vendors:
        # the latest month scored: a partial month of as_of, shown but unscored, never hides the one before
        latest = next((m for m in reversed(v.months) if m.data and m.month <= v.scored_through), None)
        if latest is None:
            continue
        if latest.sla_breached:
            out.append(
                (
                    "sla-breach",
                    f"{v.offer}: {latest.month} availability {percent_or_no_data(latest.availability, 3)} is below the "
                    f"SLA's {percent_or_no_data(latest.sla_availability, 2)}",
                )
            )
        if latest.credit_share:
            owed = (
                f"{latest.credits_owed:,.2f} {v.currency}"
                if latest.credits_owed is not None
                else f"{latest.credit_share:.0%} of the invoice"
            )
            out.append(("credits-owed", f"{v.offer}: {latest.month} credits owed: {owed}"))
        if latest.cost_overrun is not None and latest.cost_overrun > max_overrun:
            out.append(
                (
                    "delivered-cost",
                    f"{v.offer}: {latest.month} delivered cost per task {latest.cost_overrun * 100:+.1f}% over the "
                    f"promised (limit {max_overrun * 100:.0f}%)",
                )
            )
    return out


# --- the evidence in the evaluation ----------------------------------------------------------------


def delivered_evidence(
    workspace: Any, day: date, offers: list[Any], costs: list[dict[str, Any]]
) -> dict[str, Evidence]:
    """Each signed offer's posteriors, from its months against the promise (`costs`: the cost model's
    figures of the promise, in `offers` order)."""
    from types import SimpleNamespace

    def clean(value: Any) -> float | None:
        return (
            None
            if value is None or (isinstance(value, float) and math.isnan(value)) or value != value
            else float(value)
        )

    promised = {
        o.id: SimpleNamespace(metrics={k: clean(v) for k, v in c.items()}, gpus=o.gpus) for o, c in zip(offers, costs)
    }
    stand_in = SimpleNamespace(offer=lambda offer_id: promised[offer_id])
    found = {}
    for offer_id in sorted(workspace.actuals):
        if offer_id in promised:
            cache = workspace.actuals[offer_id].evidence_cache
            if day not in cache:
                cache[day] = score_vendor(workspace, stand_in, offer_id, day).evidence
            found[offer_id] = cache[day]
    return found


def apply_evidence(columns: dict[str, Any], evidence: list[Evidence | None]) -> dict[str, Any]:
    """The cost model's input columns with each signed offer's delivered figures, on its own row only:
    its evaluated throughput (the promise the ratio was measured against) x the posterior median
    ratio; the reliability factor that makes SLA x factor the posterior availability, with the
    availability's point factor at 1 (the posterior is the expected availability: it enters once);
    the quality pass rate x the posterior share of requests served."""
    from procure.model.costing import AVAILABILITY_POINT

    columns = {name: (values.copy() if hasattr(values, "copy") else values) for name, values in columns.items()}
    for i, e in enumerate(evidence):
        if e is None:
            continue
        if e.throughput_ratio is not None:
            columns["throughput"][i] = columns["throughput"][i] * e.throughput_ratio
        sla = columns["sla_availability"][i]
        if e.availability is not None and sla and sla == sla:
            columns["reliability_factor"][i] = e.availability / sla
            if AVAILABILITY_POINT in columns:
                columns[AVAILABILITY_POINT][i] = 1.0
        if e.served_rate is not None:
            columns["quality_pass_rate"][i] = columns["quality_pass_rate"][i] * e.served_rate
    return columns


def evidence_note(e: Evidence) -> str:
    parts = []
    if e.throughput_ratio is not None:
        parts.append(f"throughput {e.throughput_ratio:.1%} of the promise ({e.throughput_basis})")
    else:
        parts.append(e.throughput_basis or "throughput not moved")
    if e.availability is not None:
        parts.append(f"availability {e.availability:.3%}")
    if e.served_rate is not None:
        parts.append(f"requests served {e.served_rate:.3%}")
    warned = "".join(f"; {w}" for w in e.warnings)
    return (
        "delivered evidence: " + ", ".join(parts) + " (posteriors blended with the promise, docs/actuals.md)" + warned
    )


def posteriors_for_draws(
    evidence: dict[str, Evidence], offers: list[Any], columns: dict[str, Any], spec: Any
) -> dict[str, Any]:
    """What `--uncertainty` draws for each signed offer (procure.analysis.uncertainty.Posterior): the posterior sd
    of its log throughput ratio and the Beta parameters of its availability and share served, for the
    figures the evidence set (apply_evidence). An offer whose throughput or availability procure.yaml
    sets in `uncertainty.offers` keeps that distribution for it. `columns`: the cost model's inputs in
    `offers` order (an offer without an SLA keeps its availability draw: the evidence did not set it)."""
    from procure.analysis.uncertainty import Posterior

    sla = {o.id: float(value) for o, value in zip(offers, columns["sla_availability"])}
    out = {}
    for offer_id, e in evidence.items():
        own = spec.offers.get(offer_id)
        has_sla = offer_id in sla and not math.isnan(sla[offer_id])
        out[offer_id] = Posterior(
            throughput_log_sd=e.throughput_log_sd if not (own and own.throughput is not None) else None,
            availability=(e.availability_alpha, e.availability_beta)
            if e.availability is not None and has_sla and not (own and own.availability is not None)
            else None,
            served=(e.served_alpha, e.served_beta) if e.served_rate is not None else None,
        )
    return out


def evaluation_posteriors(ev: Any, inputs: Any, spec: Any) -> dict[str, Any]:
    """posteriors_for_draws from an Evaluation's records (each signed offer's `evidence`)."""
    found = {r.id: Evidence(**r.evidence) for r in ev.offers if r.evidence}
    return posteriors_for_draws(found, inputs.offers, inputs.columns, spec) if found else {}
