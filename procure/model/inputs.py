"""Input models: the single source of the workspace schemas and of `procure schema`.

Field names follow the design's "Names" section; scripts depend on them. Models forbid unknown
fields so that a misspelt key is reported rather than silently ignored. Rules that span several
fields or files (a price basis, the responsibility list, curve names, currencies) are checked in
`workspace.py`, where the line of each field is known.
"""

from __future__ import annotations

import datetime as _dt
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    ValidationInfo,
    create_model,
    field_validator,
)

from procure.model.fields import Count, Fraction, NonNegative, Number, Positive, PositiveFraction, Strict
from procure.model.kinds import KINDS, kind_of
from procure.model.kinds.index_linked import IndexLinked
from procure.model.kinds.owned import OwnedCost
from procure.model.kinds.per_token import PerMtok
from procure.textsafe import MAX_NAME

# The canonical operating jobs. Every offer names an owner for each; procure.yaml staffs each.
OPERATING_JOBS: tuple[str, ...] = (
    "hardware_repair",
    "firmware_drivers",
    "os_patching",
    "fabric_isolation",
    "health_checks",
    "scheduler",
    "storage",
    "monitoring",
    "incident_response",
    "serving_stack",
    "release_validation",
    "capacity_planning",
)

Owner = Literal["provider", "customer", "shared"]
ServiceKind = Literal["managed_serving", "managed_cluster", "bare_metal", "owned"]
SERVICE_KINDS: tuple[str, ...] = ("managed_serving", "managed_cluster", "bare_metal", "owned")

CURRENCY_PATTERN = r"^[A-Z]{3}$"
CurrencyCode = Annotated[str, StringConstraints(pattern=CURRENCY_PATTERN)]
# Offer ids end up in file names and report anchors: letters, digits, dot, dash, underscore.
OfferId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")]
# Vendor text may hold any printable character (any language, emoji), but no control characters:
# an escape sequence in a vendor name would reach the buyer's terminal.
# No control characters (escape sequences), no carriage return (it forges lines in Markdown and
# terminals), no line or paragraph separator U+2028/U+2029 (a line of its own in a memo), no
# bidirectional overrides U+202A-U+202E / U+2066-U+2069 (they reverse names on screen).
NO_CONTROLS = "^[^\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$"
# One line: the same, and no line feed either (a vendor name with one forges a line of its own on every screen).
ONE_LINE = "^[^\\x00-\\x08\\x0a-\\x1f\\x7f-\\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$"


def _gate(one_line: bool, max_length: int | None = None) -> AfterValidator:
    """The one text gate (procure.textsafe.text_problem) as a field's check: what the patterns cannot say (a run of
    combining marks, a name too long for a screen) is refused here, in the same words."""

    def check(value: str) -> str:
        from procure.textsafe import TextRefused, text_problem

        problem = text_problem(value, one_line, max_length)
        if problem is not None:
            raise TextRefused(problem)
        return value

    return AfterValidator(check)


# Text from outside on one line (no line break of any kind, control character or bidirectional control, no long run
# of combining marks); a Name also fits a screen (procure.textsafe.MAX_NAME characters).
Text = Annotated[str, StringConstraints(min_length=1, max_length=2000, pattern=ONE_LINE), _gate(True)]
Name = Annotated[str, StringConstraints(min_length=1, pattern=ONE_LINE), _gate(True, MAX_NAME)]
Notes = Annotated[str, StringConstraints(max_length=20_000, pattern=NO_CONTROLS), _gate(False)]


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


# ClusterMAX's tiers, best first. ClusterMAX 3.0 (SemiAnalysis, 2026-09-23,
# newsletter.semianalysis.com/p/clustermax-30-the-industry-standard, read through secondary copies) added the
# Participation Ribbon between Bronze and Underperform (procure/model/scope.py holds the published tiers).
PUBLISHED_TIERS: tuple[str, ...] = ("platinum", "gold", "silver", "bronze", "participation_ribbon", "underperform")
PublishedTier = Literal["platinum", "gold", "silver", "bronze", "participation_ribbon", "underperform"]


def _edition_text(value: Any) -> Any:
    """A ClusterMAX edition written as a number (3, 3.0: what YAML reads unquoted) as its text, '3.0'."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{float(value):.1f}"
    return value


# ClusterMAX editions: 1.0 (2025-03-26), 2.0 (2025-11-06), 3.0 (2026-09-23); procure/model/scope.py has their dates.
PublishedEdition = Annotated[Literal["1.0", "2.0", "3.0"], BeforeValidator(_edition_text)]


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


RATING_CATEGORIES: tuple[str, ...] = (
    "security",
    "lifecycle",
    "orchestration",
    "storage",
    "networking",
    "reliability",
    "monitoring",
    "pricing",
    "partnerships",
    "availability",
)


class Criterion(Strict):
    """One checklist item: true/false by default; a number when `at_least` or `at_most` is set
    (full marks at the threshold, proportionally less short of it); `any_of` is met when any of
    the named answers is true."""

    weight: Positive = 1.0
    at_least: Positive | None = None
    at_most: Positive | None = None
    any_of: list[str] | None = None


class RatingCategory(Strict):
    weight: NonNegative
    criteria: dict[str, Criterion]


def _criteria(*names: str, **numeric: Criterion) -> dict[str, Criterion]:
    found = {name: Criterion() for name in names}
    found.update(numeric)
    return found


# Default checklist, after the ClusterMAX criteria (SemiAnalysis, 2025-2026): attestations, fabric
# pentests and isolation, patching to published minimum versions, audit logs kept 90 days; passive
# and weekly active health checks with automatic drain; managed dashboards, alerting and DCGM
# metrics; transparent onboarding costs, delivery dates met, no punitive egress or offboarding fees.
# Category weights put security and reliability first; pricing and availability matter but do not
# measure output. Every figure can be replaced in procure.yaml under `rating.categories`.
DEFAULT_RATING_CATEGORIES: dict[str, RatingCategory] = {
    "security": RatingCategory(
        weight=0.15,
        criteria=_criteria(
            "soc2_type2",
            "iso27001",
            "pentest_fabric",
            "fabric_tenant_isolation",
            "isolation_beyond_namespaces",
            "patched_min_versions",
            audit_log_days=Criterion(at_least=90),
        ),
    ),
    "lifecycle": RatingCategory(
        weight=0.10,
        criteria=_criteria(
            "transparent_onboarding_costs", "delivery_dates_met", "no_punitive_egress", "no_offboarding_fee"
        ),
    ),
    "orchestration": RatingCategory(
        weight=0.10,
        criteria=_criteria(
            "managed_control_plane", "topology_aware_scheduling", scheduler=Criterion(any_of=["slurm", "kubernetes"])
        ),
    ),
    "storage": RatingCategory(
        weight=0.08,
        criteria=_criteria("parallel_filesystem", "object_store", read_gb_s_per_gpu=Criterion(at_least=2.0)),
    ),
    "networking": RatingCategory(
        weight=0.10,
        criteria=_criteria(
            "infiniband", "rail_optimized", "nccl_tests_published", allreduce_busbw_gb_s=Criterion(at_least=350)
        ),
    ),
    "reliability": RatingCategory(
        weight=0.15,
        criteria=_criteria(
            "passive_health_checks",
            "active_health_checks",
            "automatic_drain",
            "sdc_checks",
            "automatic_sla_credits",
            node_replacement_hours=Criterion(at_most=24),
        ),
    ),
    "monitoring": RatingCategory(
        weight=0.12, criteria=_criteria("managed_dashboards", "alerting", "dcgm_metrics", "tenant_isolated")
    ),
    "pricing": RatingCategory(weight=0.06, criteria=_criteria("published_prices", "no_hidden_fees", "term_discounts")),
    "partnerships": RatingCategory(
        weight=0.06, criteria=_criteria("nvidia_cloud_partner", "serving_stack_partnerships", "upstream_contributions")
    ),
    "availability": RatingCategory(
        weight=0.08,
        criteria=_criteria(
            lead_time_weeks=Criterion(at_most=4),
            gpus_available_now=Criterion(at_least=256),
            can_expand_to=Criterion(at_least=1024),
        ),
    ),
}


class TierThresholds(Strict):
    """Minimum peer percentile (0 = lowest score among rated offers, 1 = highest) for each tier."""

    platinum: Fraction = 0.9
    gold: Fraction = 0.6
    silver: Fraction = 0.3


class RatingConfig(Strict):
    categories: dict[str, RatingCategory] = Field(
        default_factory=dict, description="replaces the default checklist of the categories named"
    )
    critical: list[Annotated[list[str], Field(min_length=1)]] = Field(
        default_factory=lambda: [["security.soc2_type2", "security.iso27001"], ["monitoring.tenant_isolated"]],
        description="each entry: evidence answers of which at least one must be true, else Underperform",
    )
    tiers: TierThresholds = Field(default_factory=TierThresholds)
    min_peers: Annotated[Count, Field(ge=1, le=1000)] = Field(
        5,
        description="fewest rated offers for peer-relative tiers; below it the tier reads 'too few peers' beside the "
        "absolute band",
    )

    def category(self, name: str) -> RatingCategory:
        return self.categories.get(name, DEFAULT_RATING_CATEGORIES[name])


class CompetitorPoint(Strict):
    name: Text
    cost_per_task: Positive
    date: date
    figure: Literal["cost", "price"] = Field(
        "cost",
        description="cost: what serving a task costs the competitor (an estimate of its own cost); price: what it "
        "charges its customers per task (public pricing)",
    )


class OwnPoint(Strict):
    cost_per_task: Positive
    date: date


class MarketConfig(Strict):
    competitors: list[CompetitorPoint] = Field(
        default_factory=list, description="competitors' cost per successful task, by date"
    )
    own: list[OwnPoint] = Field(default_factory=list, description="our own cost per successful task, by date")


class LadderBucket(Strict):
    """Hedge `share` of the exposure in months first_month..last_month after the as-of date."""

    first_month: Annotated[Count, Field(ge=1)]
    last_month: Annotated[Count, Field(ge=1)]
    share: Fraction


CONTRACT_TERMS: tuple[str, ...] = ("venue", "index", "settlement", "gpu_hours")


class FuturesContract(Strict):
    """The futures contract a hedge is built of. The defaults are CME's B200 GPU-hour futures on Silicon Data's index:
    announced 2026-05-12, reported (CNBC, 2026-08-11: secondary) to list from 2026-10-05, cash-settled on Silicon
    Data's rental indices, "each contract represents one month's rent" of a GPU. The size in GPU-hours, the tick and
    the final-settlement averaging were not found published: the 730 GPU-hours (one GPU for a 730-hour month) is an
    inference, unconfirmed until `confirmed` lists gpu_hours."""

    venue: Text = Field("CME Group", description="the exchange that lists the contract")
    index: Text = Field("Silicon Data SDB200RT (B200 rental index)", description="the index the contract settles on")
    settlement: Literal["cash", "physical"] = Field("cash", description="how the contract settles")
    gpu_hours: Positive | None = Field(
        None, description="GPU-hours per contract; default hedge.contract_gpu_hours (730)"
    )
    confirmed: list[Literal["venue", "index", "settlement", "gpu_hours"]] = Field(
        default_factory=lambda: ["venue", "index", "settlement"],
        description="the terms checked against the exchange's published contract specification; every other term is "
        "labelled unverified in every output",
    )


class BasisPrior(Strict):
    """The basis assumed without a rent history: rent changes with `volatility_ratio` x the index's volatility and
    correlation `correlation` with it. Default 0.928, Hull's cross-hedge example (Options, Futures, and Other
    Derivatives, ch. 3: jet fuel hedged with heating oil futures, rho 0.928), the same volatility as the index."""

    correlation: Annotated[Number, Field(ge=-1, le=1)] = Field(
        0.928, description="assumed correlation of rent changes with index changes"
    )
    volatility_ratio: Annotated[Number, Field(gt=0, le=10)] = Field(
        1.0, description="assumed volatility of rent changes over the index's"
    )


class HedgeConfig(Strict):
    horizon_months: Annotated[Count, Field(ge=1, le=120)] = 12
    period: Literal["week", "month"] = Field(
        "month", description="the period over which rent and index changes are aligned"
    )
    contract_gpu_hours: Positive = Field(
        730,
        description="GPU-hours per futures contract (one GPU for a 730-hour month); hedge.contract.gpu_hours replaces "
        "it",
    )
    contract: FuturesContract = Field(
        default_factory=FuturesContract,
        description="the futures contract: venue, settlement index, settlement, size, and which terms are confirmed",
    )
    basis_prior: BasisPrior = Field(
        default_factory=BasisPrior, description="the basis assumed without a rent history (never 0)"
    )
    # Layered ladder, a common procurement practice: hedge most of the near months, less further out.
    ladder: list[LadderBucket] = Field(
        default_factory=lambda: [
            LadderBucket(first_month=1, last_month=3, share=0.75),
            LadderBucket(first_month=4, last_month=6, share=0.50),
            LadderBucket(first_month=7, last_month=12, share=0.25),
        ]
    )
    offer: str | None = Field(None, description="the offer to hedge; default: the top-ranked acceptable one")
    forward: Positive | None = Field(
        None, description="the futures price per GPU-hour at which hedges are bought; default: today's index level"
    )

    @property
    def contract_size(self) -> float:
        """GPU-hours per contract: hedge.contract.gpu_hours, else hedge.contract_gpu_hours."""
        return self.contract.gpu_hours if self.contract.gpu_hours is not None else self.contract_gpu_hours


class StratumWeight(Strict):
    """The fixed weight of one stratum (term bucket x kind x grade) of the rental price benchmark."""

    term: Literal["0-3", "4-12", "13-36", "37+"]
    kind: Literal["advertised", "transacted"]
    grade: Annotated[str, StringConstraints(min_length=1, max_length=40)]
    weight: Positive


class IndexReading(Strict):
    """A level entered by hand or read from an external series, spliced into the built index in its period."""

    date: date
    level: Annotated[Positive, Field(le=10_000)]
    source: Text = Field(description="where the reading comes from, e.g. 'Silicon Data SDB200RT, entered by hand'")


class IndexConfig(Strict):
    scope_gpus: Annotated[Count, Field(gt=0)] = Field(
        512, description="fleet size at which scope adjustment prices the buyer's operating jobs"
    )
    min_quotes: Annotated[Count, Field(ge=1, le=1000)] = Field(
        3, description="fewest quotes a stratum needs in a period to publish its own level"
    )
    seller_cap: Annotated[Number, Field(gt=0, le=1)] = Field(
        0.5, description="most weight one seller carries within a stratum and period"
    )
    weights: Annotated[list[StratumWeight], Field(min_length=1)] | None = Field(
        None, description="fixed stratum weights; default: each stratum's share of the quotes in the base period"
    )
    base_period: date | None = Field(
        None,
        description="the period (any day in it) whose quotes fix the stratum weights when index.weights is absent; "
        "default: the first period",
    )
    readings: list[IndexReading] = Field(
        default_factory=list,
        description="external or hand-entered levels spliced into the built index, each shown with its level jump",
    )
    strata: list[Literal["term", "kind", "grade"]] = Field(
        default_factory=lambda: ["term", "kind", "grade"],
        description="the dimensions of the strata; [] pools every quote (the mix then moves the level)",
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


class Fee(Strict):
    """Exactly one of once, monthly, gpu_hour or per_tb (with tb_per_month)."""

    name: Name
    once: NonNegative | None = None
    monthly: NonNegative | None = None
    gpu_hour: NonNegative | None = None
    per_tb: NonNegative | None = None
    tb_per_month: NonNegative | None = None


class Burst(Strict):
    """Capacity above the commitment at its own price, billed only as used (on-demand)."""

    gpu_hour: Positive
    max_gpus: Annotated[Count, Field(gt=0)] = Field(description="the most burst GPUs at one time")


class CommitOption(Strict):
    """A volume and term tier: commit at least `gpus` for `term_months` at `gpu_hour`."""

    gpus: Annotated[Count, Field(gt=0)]
    term_months: Annotated[Count, Field(gt=0, le=240)]
    gpu_hour: Positive


class _Pricing(Strict):
    currency: CurrencyCode | None = Field(None, description="defaults to the workspace currency")
    gpu_hour: Positive | None = None
    discount: Annotated[Number, Field(ge=0, lt=1)] = 0.0
    prepay_fraction: Fraction = 0.0
    software_gpu_hour: NonNegative = 0.0
    fees: list[Fee] = Field(default_factory=list)
    index_linked: IndexLinked | None = None
    per_mtok: PerMtok | None = None
    owned: OwnedCost | None = None
    burst: Burst | None = None
    commit_options: Annotated[list[CommitOption], Field(max_length=50)] = Field(default_factory=list)
    billed_per: Literal["month", "hour", "minute", "second"] | None = Field(
        None,
        description="billing granularity: month (the GPUs are committed and billed every month of the term) or hour, "
        "minute, second "
        "(billed for the time it runs: pay-as-used in the plan); not stated: hour for a managed-serving endpoint "
        "priced per GPU-hour, "
        "else month, and `validate` warns naming the assumption",
    )

    @property
    def usage_billed(self) -> bool:
        """Stated as billed for the time the capacity runs (by the hour, minute or second). An offer's
        effective unit, the default included, is `Offer.billing_unit`."""
        return self.billed_per not in (None, "month")

    @property
    def rate(self) -> float | None:
        """The price per GPU-hour the offer states, by its kind (`Kind.rate`; None where the cost model derives it)."""
        return kind_of(self).rate(self)  # type: ignore[arg-type]

    def kind_row(self, currency: str) -> tuple[str, str] | None:
        """The kind's row of the report's offer table: (label, its terms in words), None for the GPU-hour price."""
        kind = kind_of(self)  # type: ignore[arg-type]
        return kind.terms_row(self, currency) if kind.terms_row is not None else None  # type: ignore[arg-type]


# `pricing` is these fields and each offer kind's block (procure/model/kinds/): a kind not named above adds its own.
Pricing = create_model(
    "Pricing",
    __base__=_Pricing,
    __module__=__name__,
    **{
        kind.field: (kind.block | None, None)
        for kind in KINDS
        if kind.block is not None and kind.field not in _Pricing.model_fields
    },
)


class Sla(Strict):
    availability: PositiveFraction
    node_replacement_hours: NonNegative | None = None
    automatic_credits: bool = False


class HealthChecks(Strict):
    active: Literal["none", "daily", "weekly", "monthly"] = "none"
    passive: bool = False


class RateLimits(Strict):
    """A per-token service's capacity: the most it accepts per minute (either may be left out); it caps the tasks \
it can take a month."""

    requests_per_minute: Positive | None = None
    output_tokens_per_minute: Positive | None = None


class Service(Strict):
    kind: ServiceKind
    orchestration: Text | None = None
    sla: Sla | None = Field(None, description="required unless kind is owned")
    attestations: list[Text] = Field(default_factory=list)
    tenant_isolation: bool = False
    isolated_monitoring: bool = False
    health_checks: HealthChecks = Field(default_factory=HealthChecks)
    node_gpus: Annotated[Count, Field(ge=1, le=1024)] = Field(
        8, description="GPUs are committed and billed in whole nodes of this size"
    )
    preemptible: StrictBool = Field(
        False, description="spot or preemptible capacity: a pay-as-used burst source, never the primary offer"
    )
    interruptions_per_month: NonNegative | None = Field(
        None, description="spot: expected interruptions per node per month"
    )
    restart_minutes: NonNegative = Field(
        30.0, description="spot: GPU time lost per interruption (work in flight, reload, warm-up), minutes"
    )
    rate_limits: RateLimits | None = Field(None, description="per-token offers: requests and output tokens per minute")


# [interactivity, output tok/s/GPU] or, with a measured time to first token, [..., ttft seconds]
Point = tuple[Positive, Positive] | tuple[Positive, Positive, Positive]


class Performance(Strict):
    stack: Text | None = None
    reference: str | None = Field(None, description="a curve in performance/, used when points are absent")
    points: Annotated[list[Point], Field(min_length=1)] | None = Field(
        None, description="[interactivity, output tok/s/GPU] pairs"
    )
    points_source: Literal["measured", "vendor_claim", "reference"] = "vendor_claim"
    quality_pass_rate: Fraction = 1.0
    interactivity: Positive | None = Field(
        None, description="per-token offers: output tok/s per user (P50) the provider delivers"
    )
    ttft_s: Positive | None = Field(None, description="per-token offers: time to first token (P50), seconds")


class StatusHistory(Strict):
    """A provider's published incident history: what its service delivered, not what it promises."""

    file: Text = Field(
        description="a Statuspage incidents.json or a CSV of incidents (start,end,impact,components), relative to the "
        "workspace"
    )
    components: list[Text] | None = Field(
        None, description="the components that serve this offer (absent: every incident counts)"
    )
    days: Annotated[Count, Field(ge=1, le=3650)] = Field(
        90, description="the window before the as-of date over which availability is measured"
    )
    impacts: Annotated[list[Literal["none", "minor", "major", "critical", "maintenance"]], Field(min_length=1)] = Field(
        default_factory=lambda: ["major", "critical"],
        description="the incident impacts counted as down time (at least one)",
    )


class Operator(Strict):
    published_tier: PublishedTier | None = None
    published_edition: PublishedEdition | None = Field(
        None,
        description="the ClusterMAX edition the published tier comes from (1.0, 2.0 or 3.0; 3 or 3.0 unquoted is read "
        "as '3.0'); an older edition is warned about with the newer tier",
    )
    evidence: dict[str, dict[str, Any]] = Field(default_factory=dict)
    status_history: StatusHistory | None = Field(
        None, description="a published incident history: sets the provider's availability"
    )


class Ramp(Strict):
    """GPUs available in each month from delivery; after the ramp, every GPU the demand fit bills."""

    gpus_by_month: Annotated[list[Annotated[Count, Field(ge=0)]], Field(min_length=1)]


class LateDelivery(Strict):
    """What the vendor credits per week of delivery after the promised date, up to a cap."""

    per_week: NonNegative
    cap: NonNegative | None = None


class Termination(Strict):
    """Termination for convenience: notice in months and a fee."""

    notice_months: Annotated[Count, Field(ge=0)]
    fee: NonNegative = 0.0


class ExitCosts(Strict):
    offboarding: NonNegative = 0.0
    egress_tb: NonNegative = 0.0
    egress_per_tb: NonNegative = 0.0


class CreditTier(Strict):
    """A month whose availability is below `below` is credited `credit` of its fee."""

    below: PositiveFraction
    credit: Fraction


class SlaCredits(Strict):
    """Credit as a share of the month's fee per percentage point of availability below the SLA, or by
    tiers (the deepest tier the month falls into applies)."""

    rate_per_point: NonNegative = 0.0
    tiers: list[CreditTier] = Field(
        default_factory=list, description="[{below: 0.995, credit: 0.10}, {below: 0.99, credit: 0.25}]"
    )
    cap: Fraction = Field(0.3, description="at most this share of the month's fee")
    automatic: bool | None = Field(None, description="default: service.sla.automatic_credits")
    # Public SLA comparisons of GPU clouds (a comparison of 9 providers' terms, 2026-07-03;
    # CoreWeave's at docs.coreweave.com/policies/terms-of-service): no provider credits
    # automatically, claims are due within about 10-14 days (CoreWeave 10, Nebius 14 of the month's end; Google 60,
    # Azure two months), caps run 10-50%, and a degraded but reachable GPU is usually not down time.
    claim_window_days: Annotated[Count, Field(ge=1, le=3650)] | None = Field(
        None,
        description="days to file a claim, from the end of the month (or of the incident: claim_window_from); absent: "
        "the terms state none",
    )
    claim_window_from: Literal["month_end", "incident"] = Field(
        "month_end", description="what the claim window counts from: the month's end or the incident's end"
    )
    degraded_counts: StrictBool = Field(
        False, description="a degraded but reachable GPU (a `minor` incident) counts as down time for credits"
    )


class Signed(Strict):
    """A contract signed on this offer: held, not offered. The plan takes its GPUs as fixed from `start` to `end` (both
    inclusive) and adds only what demand needs on top; its cost is paid whatever the plan does (docs/plan.md, "What
    we hold")."""

    date: _dt.date = Field(description="the day it was signed")
    gpus: Annotated[Count, Field(gt=0)] = Field(description="GPUs held")
    start: _dt.date = Field(description="first day of service")
    end: _dt.date = Field(description="last day of service (inclusive)")

    @field_validator("start")
    @classmethod
    def _after_signing(cls, start: _dt.date, info: ValidationInfo) -> _dt.date:
        signed = info.data.get("date")
        if signed is not None and start < signed:
            raise ValueError(
                f"{start} is before the signing date {signed}: expected a first day of service on or after it"
            )
        return start

    @field_validator("end")
    @classmethod
    def _after_start(cls, end: _dt.date, info: ValidationInfo) -> _dt.date:
        start = info.data.get("start")
        if start is not None and end < start:
            raise ValueError(f"{end} is before start {start}: expected the last day of service")
        return end


def _one_or_many(value: Any) -> Any:
    """`signed:` may be one contract (a mapping) or a list of tranches."""
    return [value] if isinstance(value, dict) else value


def _no_overlap(value: list[Signed] | None) -> list[Signed] | None:
    """The tranches of one offer in order; two that overlap in time would hold the same GPUs twice."""
    if value is None:
        return None
    held = sorted(value, key=lambda c: c.start)
    for before, after in zip(held, held[1:]):
        if after.start <= before.end:
            raise ValueError(
                f"the contract from {after.start} overlaps the one from {before.start} to {before.end}: give each "
                "tranche its own months"
            )
    return held


class ContractTerms(Strict):
    """Terms that move real money over a horizon; all optional."""

    signed: Annotated[list[Signed] | None, BeforeValidator(_one_or_many), AfterValidator(_no_overlap)] = Field(
        None,
        description="a contract already signed on this offer: {date, gpus, start, end}, or a list of tranches that do "
        "not overlap",
    )

    escalator: Annotated[Number, Field(ge=-0.5, le=1)] | None = Field(
        None, description="price change per contract year, e.g. 0.03"
    )
    escalator_schedule: list[tuple[Annotated[Count, Field(ge=1)], Annotated[Number, Field(ge=-0.5, le=1)]]] | None = (
        Field(
            None,
            description="[[from month, rise], ...]: the price rises by `rise` from that contract month on (compounded)",
        )
    )
    renewal_price: Literal["escalated", "list"] = Field(
        "escalated",
        description="a renewal after the term starts from the escalated price of the term's last month (escalated), "
        "or, when the terms say so, from today's list price (list)",
    )
    ramp: Ramp | None = None
    late_delivery: LateDelivery | None = None
    termination: Termination | None = None
    exit: ExitCosts | None = None
    sla_credits: SlaCredits | None = None
    minimum_monthly: NonNegative | None = Field(None, description="minimum monthly bill, offer currency")


# Fields the loader requires in some cases only, stated in the JSON Schema so that `procure schema`
# and `procure validate` agree (workspace.py checks the same three conditions).
CONDITIONALLY_REQUIRED: dict[str, Any] = {
    "allOf": [
        {  # GPUs are committed unless priced per million tokens
            "if": {"properties": {"pricing": {"not": {"required": ["per_mtok"]}}}},
            "then": {"required": ["gpus"]},
        },
        {  # a term unless owned (then life_years x 12)
            "if": {"properties": {"pricing": {"not": {"required": ["owned"]}}}},
            "then": {"required": ["term_months"]},
        },
        {  # an SLA unless you operate it yourself
            "if": {"properties": {"service": {"properties": {"kind": {"not": {"const": "owned"}}}}}},
            "then": {"properties": {"service": {"required": ["sla"]}}},
        },
    ]
}


class SigningCondition(Strict):
    """A condition of signing an offer: an input its acceptance rests on that is still to be confirmed (an
    attestation taken from a summary, a price from one of two sources that disagree). The memo lists it beside the
    ask and `compare` names the offer until it is confirmed."""

    text: Text = Field(description="what must be confirmed, in words, e.g. 'SOC 2 Type II report received'")
    gates: Literal["attestation", "price", "sla", "capacity", "delivery", "security", "performance", "other"] = Field(
        description="what the unconfirmed input decides: the gate or figure that would change if it were wrong"
    )
    confirmed: bool = Field(False, description="true once confirmed: the condition is then met and no longer listed")


class Offer(Strict):
    """One vendor offer (an RFP response), one file in offers/."""

    model_config = ConfigDict(json_schema_extra=CONDITIONALLY_REQUIRED)

    id: OfferId
    vendor: Name
    received: date
    valid_until: date
    region: Name
    gpu: Name
    gpus: Annotated[Count, Field(ge=0)] | None = Field(
        None,
        description="minimum commitment (committed GPU count); required unless priced per million tokens "
        "(pricing.per_mtok); 0 with pricing.burst: a pure on-demand offer",
    )
    max_gpus: Annotated[Count, Field(gt=0)] | None = None
    term_months: Annotated[Count, Field(gt=0, le=240)] | None = Field(
        None, description="contract term in months; required unless owned (pricing.owned: the term is life_years x 12)"
    )
    delivery: date | None = None
    notes: Notes | None = None
    pricing: Pricing
    service: Service
    responsibilities: dict[str, Owner]
    performance: Performance = Field(default_factory=Performance)
    operator: Operator = Field(default_factory=Operator)
    contract: ContractTerms = Field(default_factory=ContractTerms)
    conditions: list[SigningCondition] = Field(
        default_factory=list, description="conditions of signing: inputs to confirm before the offer is signed"
    )

    @property
    def open_conditions(self) -> list[SigningCondition]:
        """The conditions of signing not yet confirmed."""
        return [c for c in self.conditions if not c.confirmed]

    @property
    def per_token(self) -> bool:
        return self.pricing.per_mtok is not None

    @property
    def owned(self) -> bool:
        return self.service.kind == "owned"

    @property
    def committed_gpus(self) -> int:
        return self.gpus or 0

    @property
    def billing_unit(self) -> str | None:
        """The unit rented GPU-hours are billed in: `pricing.billed_per`, else hour for a managed-serving
        endpoint priced per GPU-hour (an endpoint is billed for the time it runs) unless a burst price above
        its commitment says its GPUs are committed, else month (committed GPUs billed every month of the
        term). None: billed per token or owned."""
        kind = kind_of(self.pricing)
        if not kind.rented:
            return None
        if kind.billed_monthly:
            return "month"
        if self.pricing.billed_per is not None:
            return self.pricing.billed_per
        return "hour" if self.service.kind == "managed_serving" and self.pricing.burst is None else "month"

    @property
    def usage_billed(self) -> bool:
        """Billed for the time the capacity runs (finer than a month), stated or by default: pay-as-used in the plan."""
        return self.billing_unit not in (None, "month")

    @property
    def on_demand(self) -> bool:
        """No commitment at all: `gpus: 0`, no max_gpus, capacity from pricing.burst only."""
        return self.gpus == 0 and not self.max_gpus and self.pricing.burst is not None

    @property
    def supply_gpus(self) -> int:
        if self.on_demand:
            assert self.pricing.burst is not None
            return self.pricing.burst.max_gpus
        return self.max_gpus or self.committed_gpus

    @property
    def contract_months(self) -> int:
        """The term: stated, or the owned equipment's life."""
        if self.pricing.owned is not None and self.term_months is None:
            return round(self.pricing.owned.life_years * 12)
        return self.term_months or 0


# --- grades/*.yaml ------------------------------------------------------------------------------


class GradeRequirements(Strict):
    service_kinds: Annotated[list[ServiceKind], Field(min_length=1)]
    provider_jobs: list[Text] = Field(default_factory=list, description="jobs the provider must own")
    provider_or_shared_jobs: list[Text] = Field(
        default_factory=list, description="jobs the provider must own or share with the buyer"
    )
    max_node_replacement_hours: NonNegative | None = None
    min_sla_availability: Fraction | None = None
    attestations_any: list[Text] = Field(default_factory=list)
    tenant_isolation: bool = False


class Grade(Strict):
    """A compute service and what its buyers can expect: only offers of one grade are comparable."""

    id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")]
    name: Text
    rank: Annotated[Count, Field(ge=1)] = Field(description="1 = highest")
    gpu: Text
    expect: Text
    requires: GradeRequirements


# --- performance/*.csv --------------------------------------------------------------------------


class ReferenceCurve(Strict):
    """A named throughput curve: output tok/s/GPU against interactivity (tok/s per user)."""

    name: str
    points: Annotated[list[Point], Field(min_length=1)]
    source: str = ""
    points_source: Literal["measured", "vendor_claim", "reference"] = Field(
        "reference",
        description="measured for a curve of the buyer's own trial ('# points_source: measured' in its file)",
    )
    measured_on: date | None = Field(None, description="the trial's date ('# trial date:' in its file)")
    # What the curve measures ('# gpu:', '# model:', '# precision:' in its file): compared with the public curves
    # (procure/model/references.py)
    gpu: str | None = None
    model: str | None = None
    precision: str | None = None


SCHEMAS: dict[str, type[BaseModel]] = {"offer": Offer, "grade": Grade, "workspace": WorkspaceConfig}
