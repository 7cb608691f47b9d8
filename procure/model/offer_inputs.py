"""An offer's input model: the offer file's schema (`Offer`: its pricing, fees, service, performance, operator,
contract terms and conditions of signing), and the grade and reference-curve files beside it."""

from __future__ import annotations

import datetime as _dt
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
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
from procure.model.input_types import (
    CurrencyCode,
    Name,
    Notes,
    OfferId,
    Owner,
    PublishedEdition,
    PublishedTier,
    ServiceKind,
    Text,
)
from procure.model.kinds import KINDS, kind_of
from procure.model.kinds.base import TermsRow
from procure.model.kinds.index_linked import IndexLinked
from procure.model.kinds.owned import OwnedCost
from procure.model.kinds.per_token import PerMtok

CONTRACT_TERMS: tuple[str, ...] = ("venue", "index", "settlement", "gpu_hours")


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

    def kind_row(self, currency: str) -> TermsRow | None:
        """The kind's row of the report's offer table (`Kind.terms_row`): its label and its terms in words."""
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
