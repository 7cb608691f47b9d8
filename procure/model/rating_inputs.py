"""procure.yaml's rating section: the operator checklist's categories and criteria (the defaults, after the ClusterMAX
criteria), their weights, and the score thresholds of the rating's tiers."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
)

from procure.model.fields import Count, Fraction, NonNegative, Positive, Strict

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
