"""Input models: the single source of the workspace schemas and of `procure schema`.

Field names follow the design's "Names" section; scripts depend on them. Models forbid unknown
fields so that a misspelt key is reported rather than silently ignored. Rules that span several
fields or files (a price basis, the responsibility list, curve names, currencies) are checked in
`workspace_checks.py`, where the line of each field is known. The offer's models are in `offer_inputs.py`, the
field types in `input_types.py`, the rating and market sections in `rating_inputs.py` and `market_inputs.py`.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    Field,
    StrictBool,
    StringConstraints,
)

from procure.model.fields import Count, Fraction, NonNegative, Number, Positive, PositiveFraction, Strict

# Names of the modules the schema is split into, imported from here by scripts and tests (one schema, one import).
from procure.model.input_types import CURRENCY_PATTERN as CURRENCY_PATTERN
from procure.model.input_types import NO_CONTROLS as NO_CONTROLS
from procure.model.input_types import (
    ONE_LINE,
    CurrencyCode,
    Name,
    PublishedTier,
    Text,
    _gate,
)
from procure.model.input_types import OPERATING_JOBS as OPERATING_JOBS
from procure.model.input_types import PUBLISHED_TIERS as PUBLISHED_TIERS
from procure.model.kinds.index_linked import IndexLinked as IndexLinked
from procure.model.market_inputs import CompetitorPoint as CompetitorPoint
from procure.model.market_inputs import HedgeConfig, IndexConfig, MarketConfig
from procure.model.market_inputs import LadderBucket as LadderBucket
from procure.model.market_inputs import OwnPoint as OwnPoint
from procure.model.offer_inputs import CONTRACT_TERMS as CONTRACT_TERMS
from procure.model.offer_inputs import Burst as Burst
from procure.model.offer_inputs import ContractTerms as ContractTerms
from procure.model.offer_inputs import Grade, Offer
from procure.model.offer_inputs import Pricing as Pricing
from procure.model.offer_inputs import Ramp as Ramp
from procure.model.offer_inputs import RateLimits as RateLimits
from procure.model.offer_inputs import ReferenceCurve as ReferenceCurve
from procure.model.offer_inputs import SlaCredits as SlaCredits
from procure.model.rating_inputs import RATING_CATEGORIES as RATING_CATEGORIES
from procure.model.rating_inputs import Criterion as Criterion
from procure.model.rating_inputs import RatingCategory as RatingCategory
from procure.model.rating_inputs import RatingConfig
from procure.model.rating_inputs import TierThresholds as TierThresholds

# --- procure.yaml -------------------------------------------------------------------------------


class Workload(Strict):
    """The task being bought: tokens per task, speed per user, and how often it succeeds."""

    name: Name = "workload"
    input_tokens: Annotated[Count, Field(gt=0)]
    output_tokens: Annotated[Count, Field(gt=0)]
    interactivity: Positive = Field(description="output tok/s per user (P50) the service must sustain")
    success_rate: PositiveFraction = Field(description="share of tasks meeting the quality bar on a correct service")
    min_success_rate: Fraction = 0.90
    utilization: PositiveFraction = Field(0.80, description="share of available GPU time traffic keeps busy")
    tasks_per_month: Positive | None = Field(None, description="demand; absent: every offer is taken as fully used")
    # Not a contract name: an optional latency bound on time to first token (seconds).
    max_ttft_s: Positive | None = None
    peak_factor: Annotated[Number, Field(ge=1, le=100)] = Field(
        3.0, description="peak tasks per minute over the average (per-token offers' rate limits must carry the peak)"
    )
    cached_input_share: Fraction = Field(
        0.0, description="share of input tokens served from the provider's prompt cache (per-token offers)"
    )


class JobStaffing(Strict):
    fte_fixed: NonNegative = 0.0
    fte_per_1000_gpus: NonNegative = 0.0


# Default staffing per operating job, in full-time engineers. Figures are estimates for a team
# running B200 clusters: a fixed core per job plus a share that grows with the fleet. They are
# consistent with the ClusterMAX operating criteria (the jobs a provider must staff to keep
# health checks, patching, fabric isolation and monitoring current; SemiAnalysis, 2025-2026) and are
# meant to be replaced by the buyer's own figures in procure.yaml.
DEFAULT_JOBS: dict[str, JobStaffing] = {
    "hardware_repair": JobStaffing(fte_fixed=0.5, fte_per_1000_gpus=2.0),
    "firmware_drivers": JobStaffing(fte_fixed=0.25, fte_per_1000_gpus=0.5),
    "os_patching": JobStaffing(fte_fixed=0.25, fte_per_1000_gpus=0.5),
    "fabric_isolation": JobStaffing(fte_fixed=0.25, fte_per_1000_gpus=0.5),
    "health_checks": JobStaffing(fte_fixed=0.25, fte_per_1000_gpus=1.0),
    "scheduler": JobStaffing(fte_fixed=0.5, fte_per_1000_gpus=0.5),
    "storage": JobStaffing(fte_fixed=0.25, fte_per_1000_gpus=0.5),
    "monitoring": JobStaffing(fte_fixed=0.25, fte_per_1000_gpus=0.5),
    "incident_response": JobStaffing(fte_fixed=1.0, fte_per_1000_gpus=1.0),
    "serving_stack": JobStaffing(fte_fixed=1.0, fte_per_1000_gpus=1.0),
    "release_validation": JobStaffing(fte_fixed=0.5, fte_per_1000_gpus=0.5),
    "capacity_planning": JobStaffing(fte_fixed=0.25, fte_per_1000_gpus=0.25),
}


def _published_bands() -> dict[str, float]:
    # The same factors as the score bands, tier for tier: a published ClusterMAX tier is evidence of
    # the same strength as a checklist landing in the matching band (Platinum ~ 85+, Underperform ~ critical).
    # The Participation Ribbon (3.0) has no score band of its own: it sits between Bronze and Underperform, so
    # it takes the midpoint of their factors, (0.98 + 0.95) / 2 = 0.965.
    return {
        "platinum": 1.0,
        "gold": 0.995,
        "silver": 0.99,
        "bronze": 0.98,
        "participation_ribbon": 0.965,
        "underperform": 0.95,
    }


class Reliability(Strict):
    """Factor on SLA availability: what an SLA figure is worth given who operates the service."""

    unrated: PositiveFraction | None = Field(
        None,
        description="the haircut on the SLA of an offer with no rating evidence, in the availability gate and the cost "
        "alike; default: the lowest published tier short of Underperform (the Participation Ribbon's 0.965), never "
        "above the middle band's factor; a stated one above the middle band is refused",
    )
    bands: list[tuple[Annotated[Number, Field(ge=0, le=100)], PositiveFraction]] = Field(
        default_factory=lambda: [(85, 1.0), (70, 0.995), (55, 0.99), (40, 0.98), (0, 0.95)],
        description="[minimum operational score, factor] pairs",
    )
    published: dict[PublishedTier, PositiveFraction] = Field(
        default_factory=_published_bands,
        description="factor per published (ClusterMAX) tier, used when an offer has no checklist",
    )


class Assumptions(Strict):
    fte_cost_year: Positive = 250_000
    shared_weight: Fraction = 0.5
    cost_of_capital: Annotated[Number, Field(ge=0, lt=1)] = 0.10
    software_gpu_hour: NonNegative = 0.05
    self_operated_reliability: PositiveFraction = Field(
        0.98,
        description="availability of each layer we run ourselves: the host (hardware repair) and the eight operating "
        "jobs above it (spread evenly); see self_operated_jobs",
    )
    self_operated_jobs: dict[str, PositiveFraction] = Field(
        default_factory=dict,
        description="factor on availability per operating job we run ourselves; default: self_operated_reliability for "
        "hardware_repair (the host), self_operated_reliability^(1/8) for each of the eight operating infrastructure "
        "jobs, 1 for serving_stack, release_validation and capacity_planning",
    )
    reliability: Reliability = Field(default_factory=Reliability)
    fx: dict[CurrencyCode, Positive] = Field(
        default_factory=dict, description="units of workspace currency per 1 unit of the keyed currency"
    )
    jobs: dict[str, JobStaffing] = Field(default_factory=dict, description="staffing per operating job")
    # Throughput between two frontier points; the default is chosen by a leave-one-out study on real
    # InferenceX curves (docs/interpolation.md): log-linear has the smallest unbiased error (median -0.9%)
    # and never reorders two offers on one true curve by how densely each was sampled; step is the floor.
    interpolation: Literal["linear", "log", "step", "monotone"] = Field(
        "log",
        description="throughput between frontier points: linear, log (linear in log throughput), step (the next faster "
        "point's), monotone (PCHIP)",
    )
    vendor_default_rate: Annotated[Number, Field(ge=0, lt=1)] = Field(
        0.0,
        description="annual probability that a vendor fails while holding unearned prepayment (prices the expected "
        "loss)",
    )

    def staffing(self, job: str) -> JobStaffing:
        """A job's staffing: procure.yaml's figure, else the built-in default."""
        return self.jobs.get(job, DEFAULT_JOBS[job])


class Policy(Strict):
    acceptable_grades: list[str] | None = None
    min_availability: Fraction = 0.99
    min_demand_coverage: Positive = 1.0
    gate_confidence: PositiveFraction = Field(
        0.5,
        description="the probability of passing a gate whose inputs are drawn (availability, capacity) an acceptable "
        "offer must reach",
    )
    allowed_regions: list[str] | None = None
    require_attestation_any: list[str] = Field(default_factory=lambda: ["soc2_type2", "iso27001"])
    require_tenant_isolation: bool = True
    require_isolated_monitoring: bool = True
    ttft_unstated: Literal["pass", "fail"] = Field(
        "fail", description="the TTFT gate where a curve states no time to first token at the target"
    )
    rate_limits_unstated: Literal["pass", "fail"] = Field(
        "pass",
        description="capacity gate of a per-token offer that states no rate limits: pass with a warning, or fail",
    )
    unrated: Literal["rank", "exclude"] = Field(
        "rank",
        description="an offer with no rating evidence: ranked with the unrated haircut and flagged 'rate before "
        "signing', or excluded",
    )


class Distribution(Strict):
    """A factor on a stated figure (1 = as stated): triangular [low, mode, high] or uniform [low, high]."""

    triangular: tuple[Number, Number, Number] | None = None
    uniform: tuple[Number, Number] | None = None

    @property
    def bounds(self) -> tuple[float, float, float]:
        """(low, mode, high); a uniform's mode is its midpoint."""
        if self.triangular is not None:
            return self.triangular
        if self.uniform is not None:
            low, high = self.uniform
            return (low, (low + high) / 2, high)
        return (1.0, 1.0, 1.0)

    @property
    def mean(self) -> float:
        """The expected factor: (low + mode + high) / 3 for a triangular, the midpoint for a uniform."""
        low, mode, high = self.bounds
        return (low + mode + high) / 3 if self.triangular is not None else (low + high) / 2

    def capped_mean(self, cap: float) -> float:
        """E[min(factor, cap)]: the mean of a factor whose product is capped (availability and utilization at most
        1: cap = 1 / the stated figure). The mean less E[max(factor - cap, 0)], the integral of 1 - F from cap to the
        high end: (high - cap)^3 / (3 (high - low) (high - mode)) above the mode, (high - cap)^2 / (2 (high - low)) for
        a uniform."""
        low, mode, high = self.bounds
        if cap >= high:
            return self.mean
        if cap <= low:
            return cap
        if self.uniform is not None:
            return self.mean - (high - cap) ** 2 / (2 * (high - low))
        width = high - low
        if cap >= mode:
            return self.mean - (high - cap) ** 3 / (3 * width * (high - mode))
        below = (mode - cap) - ((mode - low) ** 3 - (cap - low) ** 3) / (3 * width * (mode - low))
        return self.mean - below - (high - mode) ** 2 / (3 * width)

    @property
    def sd(self) -> float:
        """The standard deviation: sqrt((a^2 + b^2 + c^2 - ab - ac - bc) / 18) for a triangular, (b - a) / sqrt(12) for
        a uniform."""
        low, mode, high = self.bounds
        if self.triangular is not None:
            return max(0.0, (low * low + mode * mode + high * high - low * mode - low * high - mode * high) / 18) ** 0.5
        return (high - low) / 12**0.5 if self.uniform is not None else 0.0


def _tri(low: float, mode: float, high: float) -> Distribution:
    return Distribution(triangular=(low, mode, high))


class OfferUncertainty(Strict):
    throughput: Distribution | None = None
    availability: Distribution | None = None


class UncertaintyConfig(Strict):
    """Distributions of the uncertain inputs, as factors on the stated figures."""

    draws: Annotated[Count, Field(ge=100, le=1_000_000)] = 10_000
    seed: Annotated[Count, Field(ge=0)] = 7
    # A vendor's throughput claim is usually an upper bound: triangular 0.75 / 0.9 / 1.0 of the claim;
    # a measurement on your own workload is narrower; a public reference curve sits in between.
    throughput: dict[Literal["measured", "vendor_claim", "reference"], Distribution] = Field(
        default_factory=lambda: {
            "vendor_claim": _tri(0.75, 0.9, 1.0),
            "measured": _tri(0.95, 1.0, 1.03),
            "reference": _tri(0.85, 0.95, 1.05),
        }
    )
    availability: Distribution = Field(
        default_factory=lambda: _tri(0.99, 1.0, 1.0), description="factor on availability (at most 1 in all)"
    )
    utilization: Distribution = Field(
        default_factory=lambda: _tri(0.85, 1.0, 1.1),
        description="factor on the workload's utilization (at most 1 in all)",
    )
    fte_cost: Distribution = Field(
        default_factory=lambda: _tri(0.9, 1.0, 1.25), description="factor on the cost of an engineer"
    )
    index: Distribution = Field(
        default_factory=lambda: _tri(0.8, 1.0, 1.2), description="factor on the index level (index-linked offers)"
    )
    fx: Distribution = Field(default_factory=lambda: _tri(0.95, 1.0, 1.05), description="factor on each exchange rate")
    offers: dict[str, OfferUncertainty] = Field(
        default_factory=dict, description="per-offer throughput and availability distributions"
    )
    # Production runs below the benchmark (real prompt mixes, restarts, noisy neighbours): one factor
    # shared by every GPU-hour offer, on top of each curve's own factor.
    production: Distribution = Field(
        default_factory=lambda: _tri(0.85, 0.95, 1.0),
        description="factor from benchmark to production throughput, shared by all GPU-hour offers",
    )
    # Offers on one serving stack (performance.stack) share how that stack fares on this workload; each
    # curve (an offer's own points, or a reference curve) adds its own residual (`throughput` above).
    stack: Distribution = Field(
        default_factory=lambda: _tri(0.95, 1.0, 1.05),
        description="factor on throughput shared by every offer on one serving stack",
    )
    demand: Distribution = Field(
        default_factory=lambda: _tri(0.8, 1.0, 1.2),
        description="factor on workload.tasks_per_month, shared by all offers",
    )
    readings: StrictBool = Field(
        True,
        description="draw the calibrated range of every log-linear reading between frontier points "
        "(docs/interpolation.md), one per curve",
    )


class HorizonConfig(Strict):
    """Compare offers over one horizon of months, with what happens after each term stated."""

    months: Annotated[Count, Field(ge=1, le=240)] | None = Field(
        None, description="default horizon for cashflow and compare --horizon"
    )
    renewal: Literal["basis", "index", "escalate"] = Field(
        "basis",
        description="after its term an offer renews at the index plus its own basis (its rent minus the index at "
        "as-of; "
        "index-linked: its spread, floor and cap), at the raw index, or at its last price plus its escalator",
    )
    index_growth: Annotated[Number, Field(ge=-0.9, le=1)] = Field(
        0.0, description="the index change a year that the horizon assumes (0: today's level stays)"
    )
    count_sla_credits: StrictBool = Field(
        False, description="count expected SLA credits in the horizon cost (a remedy, not a saving: off by default)"
    )
    downtime_cv: Annotated[Number, Field(gt=0, le=10)] = Field(
        1.0,
        description="coefficient of variation of monthly downtime (1 - availability), Gamma-distributed around the "
        "expected availability",
    )
    claim_success: Fraction = Field(
        0.5, description="share of SLA credits that must be claimed which are actually obtained"
    )
    expected_delay_weeks: Annotated[NonNegative, Field(le=520)] = Field(
        0.0, description="expected delivery delay beyond the promised date, in weeks (at most 520: ten years)"
    )


class ReevaluateConfig(Strict):
    """Thresholds of `procure reevaluate` (its flags replace them)."""

    max_increase: Fraction | None = Field(
        None, description="fail when an acceptable offer's cost per task rises more than this share"
    )
    fail_on: list[Literal["rank-change", "grade-change", "new-cheapest", "gate-change"]] = Field(
        default_factory=lambda: ["rank-change", "grade-change", "new-cheapest", "gate-change"]
    )
    claim_warning_days: Annotated[Count, Field(ge=0, le=365)] = Field(
        14, description="fail when an SLA credit claim worth more than claim_min_amount lapses within this many days"
    )
    claim_min_amount: NonNegative = Field(
        0.0, description="the smallest claim (workspace currency) whose lapsing deadline fails a re-evaluation"
    )


class MetricNames(Strict):
    """The serving stack's Prometheus metric names (vLLM's by default, docs/design/metrics.md of vLLM)."""

    output_tokens: Text = Field("vllm:generation_tokens_total", description="counter of output (generated) tokens")
    requests: Text = Field("vllm:request_success_total", description="counter of finished requests, by outcome label")
    outcome_label: Text = Field("finished_reason", description="the label of `requests` that says how a request ended")
    # vLLM's finish reasons (vllm-project/vllm vllm/v1/engine/__init__.py FINISH_REASON_STRINGS, "stop", "length",
    # "abort", "error", "repetition" since v0.17.0): its Prometheus logger creates the request_success series of
    # every one up front, at 0. Served: stop, length, and repetition (a request's own opt-in
    # SamplingParams.repetition_detection ended it, as a stop string would); failed: abort, error.
    ok_outcomes: list[Text] = Field(
        default_factory=lambda: ["stop", "length", "repetition"], description="outcomes that served the request"
    )
    failed_outcomes: list[Text] = Field(
        default_factory=lambda: ["abort", "error"], description="outcomes that failed it"
    )
    ttft: Text = Field("vllm:time_to_first_token_seconds", description="histogram of the time to first token, seconds")
    e2e_latency: Text = Field(
        "vllm:e2e_request_latency_seconds", description="histogram of the end-to-end request latency, seconds"
    )
    labels: list[Text] = Field(
        default_factory=list,
        description="labels allowed beyond model_name, instance, job, engine, pod, namespace, le and the outcome label",
    )
    # Utilization telemetry, for the busy GPU-hours that make tokens per busy GPU-hour (docs/actuals.md, "Busy
    # GPU-hours").
    gpu_busy: Text = Field(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        description="gauge 0..1 per GPU of the time its engine was active (NVIDIA dcgm-exporter; preferred)",
    )
    requests_running: Text = Field(
        "vllm:num_requests_running",
        description="gauge of the requests in the engine's running batch (vLLM), read when no GPU gauge covers the "
        "month",
    )
    max_concurrency: Positive | None = Field(
        None,
        description="the engine's most requests at once (vLLM --max-num-seqs): requests_running / this is its "
        "saturation; unset: requests_running is not read",
    )
    gpus_per_engine: Annotated[Count, Field(ge=1, le=1024)] = Field(
        1,
        description="GPUs one serving engine runs on (its tensor x pipeline parallel size): busy GPU-hours = "
        "saturation x these",
    )


class EvidenceConfig(Strict):
    """How much the promised figures weigh against delivered ones (docs/actuals.md, "Evidence")."""

    availability_prior_hours: Positive = Field(
        730.0, description="the SLA's availability counts as this many hours observed"
    )
    success_prior_requests: Positive = Field(
        10_000.0, description="a served-request rate of 1 counts as this many requests observed"
    )
    throughput_prior_sd: Positive = Field(
        0.10, description="sd of log(delivered / promised throughput) before any month is seen"
    )
    throughput_month_sd: Positive = Field(
        0.05, description="sd of one fully exposed month's log ratio around the vendor's true one"
    )
    trial_weight: Annotated[Number, Field(gt=0, le=1)] = Field(
        0.25,
        description="a month's post-signing trials (perf import --offer) weigh as this share of a fully busy month of "
        "telemetry",
    )


class ActualsConfig(Strict):
    """Delivered evidence: metric names, what counts as down time, and how the evidence is weighed."""

    metrics: MetricNames = Field(default_factory=MetricNames)
    gap_minutes: Positive = Field(10.0, description="a series without a sample for longer than this has a stated gap")
    down_impacts: Annotated[list[Literal["none", "minor", "major", "critical", "maintenance"]], Field(min_length=1)] = (
        Field(
            default_factory=lambda: ["major", "critical"],
            description="the incident impacts counted as down time (at least one: none would make every month 100% "
            "available)",
        )
    )
    evidence: EvidenceConfig = Field(default_factory=EvidenceConfig)
    max_cost_overrun: Fraction = Field(
        0.10,
        description="reevaluate fails when the delivered cost per task exceeds the promised by more than this share",
    )
    min_coverage: Fraction = Field(
        0.9,
        description="a month whose metric samples cover less of it than this share is partial: its throughput and cost "
        "per task are not scored",
    )


class DemandPath(Strict):
    """One explicit demand scenario: a factor on the trend in every month, with its probability."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=80, pattern=ONE_LINE), _gate(True)]
    factor: Annotated[Number, Field(ge=0, le=100)]
    probability: PositiveFraction


class DemandConfig(Strict):
    """Tasks per month over the planning horizon: a trend with lognormal uncertainty, or explicit paths."""

    months: Annotated[Count, Field(ge=1, le=120)] | None = Field(
        None, description="planning horizon (default horizon.months, else 24)"
    )
    start: Positive | None = Field(None, description="tasks in month 1 (default workload.tasks_per_month)")
    growth: Annotated[Number, Field(ge=-0.5, le=1)] = Field(0.0, description="expected growth per month, e.g. 0.02")
    volatility: Annotated[Number, Field(ge=0, le=3)] = Field(
        0.30, description="lognormal sd of the level after 12 months (scales with sqrt(months))"
    )
    scenarios: Annotated[Count, Field(ge=1, le=20_000)] = Field(
        500, description="sampled paths, seeded by uncertainty.seed"
    )
    paths: Annotated[list[DemandPath], Field(min_length=1, max_length=1000)] | None = Field(
        None, description="explicit scenarios instead of sampled ones: [{name, factor, probability}]"
    )


class PlanConfig(Strict):
    """The buyer's policy for `procure plan`."""

    max_vendor_share: PositiveFraction = Field(
        1.0,
        description="most of the expected capacity (tasks) one vendor may provide (1: no cap, the default; set one, "
        "e.g. 0.7, to spread the risk)",
    )
    max_spot_share: Fraction = Field(
        0.3,
        description="most of each month's demand (tasks) spot or preemptible capacity may serve, all spot offers "
        "together: a burst source, never the primary",
    )
    cvar_alpha: Annotated[Number, Field(gt=0, lt=1)] = Field(0.9, description="CVaR level on monthly spend")
    cvar_weight: Annotated[Number, Field(ge=0, le=1000)] = Field(
        0.0, description="weight of CVaR in the objective (0: risk-neutral)"
    )
    cvar_limit: Positive | None = Field(None, description="most CVaR of monthly spend allowed (workspace currency)")
    unserved_penalty_per_task: Positive | None = Field(
        None,
        description="price of a task the plan's sources do not serve; absent: bought on demand at the market price "
        "(the rental index, else the dearest on-demand list price) x plan.unserved_premium",
    )
    # The default premium: on-demand capacity bought at short notice costs more than the rental index, which blends
    # reserved and on-demand rents (tests/data/real_offers, public list prices whose sources each offer file cites: the
    # median on-demand list price, RunPod's 6.79 USD per GPU-hour, is 1.35x the index's 5.03 of 2026-11-23; Silicon
    # Data's B200 rental index SDB200RT, silicondata.com, about 5.30-5.73 in 2026 as read in secondary mirrors), and a
    # bare GPU-hour comes without the service, staff and software an offer's full cost carries (the same offers' full
    # cost per GPU-hour is 1.14x-1.98x their rent, 1.54x at the median): 1.35 x 1.54 = 2.08, about 2.
    unserved_premium: Annotated[Number, Field(ge=1, le=100)] = Field(
        2.0,
        description="factor on the market's cost per task of on-demand capacity that prices a task the plan's "
        "sources do not serve, when plan.unserved_penalty_per_task is not set",
    )
    time_limit_s: Annotated[Number, Field(gt=0, le=3600)] = Field(
        600.0,
        description="backstop only: seconds a solve may run before it is stopped (the plan then depends on the "
        "machine's load; plan.node_limit is the limit that gives the same plan on any machine)",
    )
    node_limit: Annotated[Count, Field(ge=1, le=10_000_000)] = Field(
        5000,
        description="branch-and-bound nodes a solve may explore before it stops with its best plan: a count of work, "
        "so the same inputs give the same plan on an idle or a loaded machine",
    )
    decide_within: date | None = Field(
        None,
        description="end of the decision window (default: the earliest expiry, valid_until, of the offers the plan can "
        "use): commitments starting by then are signed now, later ones are intentions to re-plan",
    )
    mip_gap: Annotated[Number, Field(ge=0, le=0.5)] = Field(
        1e-3, description="relative optimality gap at which the solver stops"
    )
    frontier_points: Annotated[Count, Field(ge=2, le=20)] = Field(
        4, description="risk limits on the efficient frontier"
    )
    max_candidates: Annotated[Count, Field(ge=1, le=1000)] = Field(
        60,
        description="with more usable offers, the solver chooses among the best single offers and those the linear "
        "relaxation uses most, then re-adds any left-out offer that improves the plan (the bound over all is stated)",
    )
    levels: Annotated[Count, Field(ge=2, le=10_000)] = Field(
        12,
        description="demand levels per month the solver starts from (equally likely bands of scenarios, refined until "
        "the plan's cost on them matches every scenario); the figures use every scenario",
    )


class WorkspaceConfig(Strict):
    """procure.yaml: the workload, the assumptions and the buyer's policy."""

    currency: CurrencyCode = "USD"
    as_of: date | None = None
    workload: Workload
    assumptions: Assumptions = Field(default_factory=Assumptions)
    policy: Policy = Field(default_factory=Policy)
    rating: RatingConfig = Field(default_factory=RatingConfig)
    market: MarketConfig = Field(default_factory=MarketConfig)
    hedge: HedgeConfig = Field(default_factory=HedgeConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)
    uncertainty: UncertaintyConfig = Field(default_factory=UncertaintyConfig)
    reevaluate: ReevaluateConfig = Field(default_factory=ReevaluateConfig)
    horizon: HorizonConfig = Field(default_factory=HorizonConfig)
    demand: DemandConfig | None = None
    plan: PlanConfig = Field(default_factory=PlanConfig)
    actuals: ActualsConfig = Field(default_factory=ActualsConfig)


# --- offers/*.yaml ------------------------------------------------------------------------------


# --- grades/*.yaml ------------------------------------------------------------------------------


# --- performance/*.csv --------------------------------------------------------------------------


SCHEMAS: dict[str, type[BaseModel]] = {"offer": Offer, "grade": Grade, "workspace": WorkspaceConfig}
