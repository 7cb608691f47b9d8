"""The workspace's rules that span fields or files, each located at its field's line: procure.yaml's sections against
each other and the grades (`_check_config`), an offer's prices, commitment, fees and performance (`check_offer`), its
responsibilities (`responsibility_problems`), and the grade files."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from procure.errors import Problem
from procure.io.yamlsafe import Document
from procure.model.inputs import (
    OPERATING_JOBS,
    PUBLISHED_TIERS,
    RATING_CATEGORIES,
    DemandConfig,
    Grade,
    HedgeConfig,
    Offer,
    Reliability,
    UncertaintyConfig,
    WorkspaceConfig,
)
from procure.model.kinds import KINDS, join, kind_of, stated_kinds
from procure.model.rating import evidence_problems

if TYPE_CHECKING:
    from procure.io.workspace import IndexLevel

MAX_FACTOR = 3.0  # an uncertainty factor of more than 3x the stated figure is a typo (a percentage)


Add = Callable[[tuple, str], None]  # records one problem at a field's location (line and path)


def _problem_list(doc: Document) -> tuple[list[Problem], Add]:
    """A list of problems and the function that adds one, at the line of the field named by its loc."""
    problems: list[Problem] = []

    def add(loc: tuple, message: str) -> None:
        problems.append(doc.problem(loc, message))

    return problems, add


def _check_config(config: WorkspaceConfig, doc: Document, grades: list[Grade] | None) -> list[Problem]:
    """Rules of procure.yaml that span fields or files, each section's in turn."""
    problems, add = _problem_list(doc)
    _check_config_names(config, grades, add)
    _check_ladder(config.hedge, add)
    _check_uncertainty(config.uncertainty, add)
    _check_index_and_market(config, add)
    _check_published_tiers(config.assumptions.reliability, add)
    if config.demand is not None:
        _check_demand(config, config.demand, add)
    if config.plan.cvar_limit is not None and config.plan.cvar_weight > 0:
        add(("plan", "cvar_limit"), "give a CVaR weight or a CVaR limit, not both")
    _check_bands(config.assumptions.reliability, add)
    return problems


def _check_config_names(config: WorkspaceConfig, grades: list[Grade] | None, add: Add) -> None:
    """Names that must be one of a known list: grades, operating jobs, rating categories and the
    category.criterion paths of critical groups (a misspelt name would otherwise be silently ignored)."""
    known_grades = {g.id for g in grades or []}
    for i, grade_id in enumerate(config.policy.acceptable_grades or []):
        if known_grades and grade_id not in known_grades:
            add(
                ("policy", "acceptable_grades", i),
                f"unknown grade '{grade_id}' (grades/ defines: {', '.join(sorted(known_grades))})",
            )
    for job in config.assumptions.jobs:
        if job not in OPERATING_JOBS:
            add(("assumptions", "jobs", job), f"unknown operating job (expected one of: {', '.join(OPERATING_JOBS)})")
    for job in config.assumptions.self_operated_jobs:
        if job not in OPERATING_JOBS:
            add(
                ("assumptions", "self_operated_jobs", job),
                f"unknown operating job (expected one of: {', '.join(OPERATING_JOBS)})",
            )
    for category in config.rating.categories:
        if category not in RATING_CATEGORIES:
            add(
                ("rating", "categories", category),
                f"unknown rating category (expected one of: {', '.join(RATING_CATEGORIES)})",
            )
    for i, group in enumerate(config.rating.critical):
        for j, path in enumerate(group):
            category, _, key = path.partition(".")
            if category not in RATING_CATEGORIES or not key:
                add(
                    ("rating", "critical", i, j),
                    f"expected category.criterion, e.g. security.soc2_type2 (got {path!r})",
                )


def _check_ladder(hedge: HedgeConfig, add: Add) -> None:
    """The hedge ladder's buckets: each a range of months, none overlapping another (a month hedged
    twice would be bought twice)."""
    ladder = sorted(hedge.ladder, key=lambda b: b.first_month)
    for i, bucket in enumerate(hedge.ladder):
        if bucket.first_month > bucket.last_month:
            add(("hedge", "ladder", i), f"first_month {bucket.first_month} is after last_month {bucket.last_month}")
    for earlier, later in zip(ladder, ladder[1:]):
        if later.first_month <= earlier.last_month:
            add(
                ("hedge", "ladder"),
                (
                    f"buckets {earlier.first_month}-{earlier.last_month} and {later.first_month}-{later.last_month} "
                    "overlap"
                ),
            )
    contract = hedge.contract
    if (
        contract.gpu_hours is not None
        and "contract_gpu_hours" in hedge.model_fields_set
        and contract.gpu_hours != hedge.contract_gpu_hours
    ):
        add(
            ("hedge", "contract", "gpu_hours"),
            f"{contract.gpu_hours:g} differs from hedge.contract_gpu_hours ({hedge.contract_gpu_hours:g}): give the "
            "contract size once",
        )


def _check_uncertainty(unc: UncertaintyConfig, add: Add) -> None:
    """Every uncertainty distribution: exactly one shape, 0 < low <= mode <= high, and factors (1 = as
    stated), not percentages."""
    named = [
        (("uncertainty", key), d)
        for key, d in (
            ("availability", unc.availability),
            ("utilization", unc.utilization),
            ("fte_cost", unc.fte_cost),
            ("index", unc.index),
            ("fx", unc.fx),
            ("production", unc.production),
            ("demand", unc.demand),
            ("stack", unc.stack),
        )
    ]
    named += [(("uncertainty", "throughput", k), d) for k, d in unc.throughput.items()]
    for offer_id, spec in unc.offers.items():
        named += [
            (("uncertainty", "offers", offer_id, k), d)
            for k, d in (("throughput", spec.throughput), ("availability", spec.availability))
            if d is not None
        ]
    for loc, dist in named:
        if (dist.triangular is None) == (dist.uniform is None):
            add(loc, "give exactly one of triangular: [low, mode, high] or uniform: [low, high]")
            continue
        low, mode, high = dist.bounds
        if not 0 < low <= mode <= high:
            add(loc, f"needs 0 < low <= mode <= high (got {low:g}, {mode:g}, {high:g})")
        elif high > MAX_FACTOR:  # 15 for 15%, or 85/100/115 for -15%..+15%, would multiply the cost many times
            add(
                loc,
                f"factors multiply the stated figure (1 = as stated) and stay at most {MAX_FACTOR:g}: got {high:g}, a "
                "percentage? write 0.85, 1.0, 1.15 for -15%..+15%",
            )


def _check_index_and_market(config: WorkspaceConfig, add: Add) -> None:
    """The index's strata and readings and the market's figures: one figure per stratum, per date, per
    competitor and date (a change over no time is no trend), and one source of the index weights."""
    seen_strata: set[tuple[str, str, str]] = set()
    for i, stratum in enumerate(config.index.weights or []):
        key = (stratum.term, stratum.kind, stratum.grade)
        if key in seen_strata:
            add(
                ("index", "weights", i),
                f"stratum {stratum.term} / {stratum.kind} / {stratum.grade} is listed twice: give each stratum one "
                "weight",
            )
        seen_strata.add(key)
    if config.index.weights is not None and config.index.base_period is not None:
        add(
            ("index", "base_period"),
            "the weights are fixed by index.weights: give index.weights or index.base_period, not both",
        )
    seen_readings: set[object] = set()
    for i, reading in enumerate(config.index.readings):
        if reading.date in seen_readings:
            add(("index", "readings", i, "date"), f"a second reading on {reading.date}: give each date one reading")
        seen_readings.add(reading.date)
    seen_points: dict[tuple[str, str, object], int] = {}
    for i, point in enumerate(config.market.competitors):
        first = seen_points.setdefault((point.name, point.figure, point.date), i)
        if first != i:
            add(
                ("market", "competitors", i, "date"),
                f"a second {point.figure} figure for {point.name} on {point.date} (also market.competitors[{first}]): "
                "give each date one figure",
            )
    own_dates: dict[object, int] = {}
    for i, own in enumerate(config.market.own):
        first = own_dates.setdefault(own.date, i)
        if first != i:
            add(
                ("market", "own", i, "date"),
                f"a second figure on {own.date} (also market.own[{first}]): give each date one figure",
            )


def _check_published_tiers(rel: Reliability, add: Add) -> None:
    """The published tiers' factors, best tier first, never rise: a better tier never lowers the factor."""
    published = rel.published
    ordered = [(tier, published[tier]) for tier in PUBLISHED_TIERS if tier in published]
    for (better, high), (worse, low) in zip(ordered, ordered[1:]):
        if low > high:
            add(
                ("assumptions", "reliability", "published", worse),
                f"{worse} ({low:g}) must not be above {better} ({high:g}): a better tier never lowers the factor",
            )


def _check_demand(config: WorkspaceConfig, demand: DemandConfig, add: Add) -> None:
    """The demand: explicit paths or sampled scenarios, not both; path probabilities that add up to 1
    and unique names; a start; and a growth that stays a figure (1, 100% a month, over 120 months is
    6.6e35 times month 1)."""
    if demand.paths is not None:
        if "scenarios" in demand.model_fields_set or "volatility" in demand.model_fields_set:
            add(
                ("demand", "paths"),
                "explicit paths replace sampled scenarios: give paths, or scenarios and volatility, not both",
            )
        total = sum(p.probability for p in demand.paths)
        if abs(total - 1) > 1e-6:
            add(("demand", "paths"), f"probabilities must add up to 1 (got {total:g})")
        names = [p.name for p in demand.paths]
        for i, name in enumerate(names):
            if name in names[:i]:
                add(("demand", "paths", i, "name"), f"duplicate path name '{name}'")
    if demand.start is None and config.workload.tasks_per_month is None:
        add(("demand", "start"), "required when workload.tasks_per_month is absent (tasks in month 1)")
    start = demand.start if demand.start is not None else config.workload.tasks_per_month
    if start is not None:
        from procure.io.yamlsafe import MAX_MAGNITUDE
        from procure.model.demand import horizon_months

        months = horizon_months(config)
        factor = max([p.factor for p in demand.paths], default=1.0) if demand.paths is not None else 1.0
        peak = start * factor * max(1.0, (1 + demand.growth) ** (months - 1))
        if peak > MAX_MAGNITUDE:
            add(
                ("demand", "growth"),
                f"demand grows to {peak:.3g} tasks a month by month {months} ({start:g} x (1 + "
                f"{demand.growth:g})^{months - 1}"
                + (f" x path factor {factor:g}" if factor != 1 else "")
                + f"); no figure exceeds {MAX_MAGNITUDE:.0e}: lower demand.growth, demand.months or demand.start",
            )


def _check_bands(rel: Reliability, add: Add) -> None:
    """The reliability bands: from the highest score down to 0, factors that never fall with a higher
    score, and an unrated factor no better than the middle band's (no evidence never beats the median)."""
    bands = rel.bands
    if not bands:
        add(("assumptions", "reliability", "bands"), "needs at least one [score, factor] band")
    elif [b[0] for b in bands] != sorted((b[0] for b in bands), reverse=True) or min(b[0] for b in bands) != 0:
        add(
            ("assumptions", "reliability", "bands"),
            "bands must be listed from the highest score down and end at score 0",
        )
    else:
        from procure.model.rating import middle_factor

        for i, ((score, factor), (lower, below)) in enumerate(zip(bands, bands[1:])):
            if factor < below:  # as for the published tiers: a better score never lowers the factor
                add(
                    ("assumptions", "reliability", "bands", i),
                    f"the factor {factor:g} at score {score:g} is below {below:g} at score {lower:g}: a higher score "
                    "never lowers the factor",
                )
        if rel.unrated is not None and rel.unrated > middle_factor(rel) + 1e-12:
            add(
                ("assumptions", "reliability", "unrated"),
                f"{rel.unrated:g} is above the middle band's factor {middle_factor(rel):g}: an offer with no rating "
                "evidence may not count better than a median rated one",
            )


def check_offer(
    offer: Offer, doc: Document, config: WorkspaceConfig | None, curve_names: set[str], index: list[IndexLevel]
) -> list[Problem]:
    """Rules that span fields: price basis, responsibilities, curves, currency, dates."""
    problems, add = _problem_list(doc)
    _check_price_basis(offer, add)
    for kind in KINDS:
        kind.checks(offer, add, bool(index))
    if config is not None:
        currency = offer.pricing.currency or config.currency
        if currency != config.currency and currency not in config.assumptions.fx:
            add(
                ("pricing", "currency"),
                f"unknown currency {currency}: add assumptions.fx.{currency} (units of {config.currency} per "
                f"{currency}) to procure.yaml",
            )
        problems.extend(evidence_problems(offer, config.rating, doc.display, doc.lines.line_of))
    problems.extend(responsibility_problems(doc))
    if offer.owned:
        not_customer = [j for j, o in offer.responsibilities.items() if o != "customer" and j in OPERATING_JOBS]
        if not_customer:
            add(
                ("responsibilities",),
                f"an owned cluster is operated by you: every job must be customer (not: {', '.join(not_customer)})",
            )
    _check_commitment(offer, add)
    _check_fees(offer, add)
    _check_performance(offer, curve_names, add)
    return problems


def _check_price_basis(offer: Offer, add: Add) -> None:
    """Exactly one price basis (one offer kind, procure/model/kinds/), and a discount only on a rented GPU-hour
    price; each kind checks what goes with it (`Kind.checks`)."""
    pricing = offer.pricing
    bases = [kind.field for kind in stated_kinds(pricing)]
    if offer.on_demand and not bases:
        pass  # a pure on-demand offer: pricing.burst is its price
    elif len(bases) != 1:
        add(
            ("pricing",),
            f"needs exactly one price basis: {join([kind.field for kind in KINDS], 'or')} "
            f"(got {', '.join(bases) or 'none'})",
        )
    if pricing.discount and not kind_of(pricing).rented:
        add(
            ("pricing", "discount"),
            f"a discount applies to {join(_labels(rented=True), 'and')} prices; fold it into "
            f"{join([kind.field for kind in KINDS if not kind.rented], 'or')} figures",
        )


def _labels(rented: bool) -> list[str]:
    return [kind.label for kind in KINDS if kind.rented == rented]


def _check_commitment(offer: Offer, add: Add) -> None:
    """GPUs, term, SLA, dates and the ways of buying more (burst, commit options, usage billing,
    renewal), where the price basis needs them: the cost model divides by the GPUs and the term."""
    pricing = offer.pricing
    if not offer.per_token:
        if offer.gpus is None:
            add(("gpus",), "required field is missing (committed GPU count)")
        if offer.max_gpus is not None and offer.gpus is not None and offer.max_gpus < offer.gpus:
            add(("max_gpus",), f"must be at least gpus ({offer.gpus}) (got {offer.max_gpus})")
        if offer.gpus == 0 and not offer.max_gpus and pricing.burst is None:
            add(
                ("gpus",),
                "0 committed GPUs needs pricing.burst (a pure on-demand offer) or max_gpus (a commitment without "
                "minimum)",
            )
        supply = offer.supply_gpus
        most = (
            "pricing.burst.max_gpus" if offer.on_demand else "max_gpus"
        )  # an on-demand offer's reserved tiers come from its burst capacity
        for i, option in enumerate(pricing.commit_options):
            if supply and option.gpus > supply:
                add(("pricing", "commit_options", i, "gpus"), f"must be at most {most} ({supply}) (got {option.gpus})")
    if pricing.usage_billed and pricing.burst is not None:
        add(
            ("pricing", "burst"),
            f"an offer billed per {pricing.billed_per} is already pay-as-used up to max_gpus; a burst above a "
            "commitment needs billed_per: month",
        )
    rented = kind_of(pricing).rented
    goes_with = f"goes with {join(_labels(rented=True), 'or')} pricing, not {join(_labels(rented=False), 'or')}"
    if pricing.usage_billed and not rented:
        add(("pricing", "billed_per"), goes_with)
    if offer.contract.renewal_price == "list" and pricing.gpu_hour is None:
        # Only a fixed GPU-hour price has a list price to restart from; the others renew by their own rule.
        add(
            ("contract", "renewal_price"),
            "list goes with a fixed price (pricing.gpu_hour): an index-linked renewal keeps its spread, floor and cap; "
            "per-token and owned offers have no GPU-hour list price",
        )
    for name in ("burst", "commit_options"):
        if getattr(pricing, name) and not rented:
            add(("pricing", name), goes_with)
    limits = offer.service.rate_limits
    if limits is not None and limits.requests_per_minute is None and limits.output_tokens_per_minute is None:
        add(("service", "rate_limits"), "give requests_per_minute, output_tokens_per_minute or both")
    if offer.term_months is None and pricing.owned is None:
        add(("term_months",), "required field is missing (contract term in months)")
    if offer.service.sla is None and not offer.owned:
        add(("service", "sla"), "required field is missing (SLA availability)")
    if offer.valid_until < offer.received:
        add(("valid_until",), f"is before received ({offer.received})")


def _check_fees(offer: Offer, add: Add) -> None:
    """Each fee exactly one kind (once, monthly, gpu_hour, per_tb with tb_per_month), and no per-GPU-hour
    fee on a per-token offer, which has no GPU-hours to charge it on."""
    for i, fee in enumerate(offer.pricing.fees):
        kinds = [k for k in ("once", "monthly", "gpu_hour", "per_tb") if getattr(fee, k) is not None]
        if len(kinds) != 1:
            add(
                ("pricing", "fees", i),
                f"a fee has exactly one of once, monthly, gpu_hour, per_tb (got {', '.join(kinds) or 'none'})",
            )
        if fee.per_tb is not None and fee.tb_per_month is None:
            add(("pricing", "fees", i, "tb_per_month"), "required with per_tb")
        if fee.tb_per_month is not None and fee.per_tb is None:
            add(("pricing", "fees", i, "tb_per_month"), "only goes with per_tb")
        if fee.gpu_hour is not None and offer.per_token:
            add(("pricing", "fees", i, "gpu_hour"), "a per-GPU-hour fee needs GPU-hour pricing, not per-token")


def _check_performance(offer: Offer, curve_names: set[str], add: Add) -> None:
    """A GPU-hour offer needs a curve at the target: its own points or a reference curve that exists (a
    curve file with bad rows is reported on its own; only a missing file is "unknown")."""
    perf = offer.performance
    if not offer.per_token:
        if perf.points is None and perf.reference is None:
            add(("performance",), "needs points [[interactivity, output tok/s/GPU], ...] or a reference curve")
        if perf.reference is not None and perf.reference not in curve_names:
            known = ", ".join(sorted(curve_names)) or "none in performance/"
            add(("performance", "reference"), f"unknown reference curve '{perf.reference}' (known: {known})")


def responsibility_problems(doc: Document) -> list[Problem]:
    """Every operating job named, none unknown; read from the raw file so that these problems are
    reported together with the field problems of the same offer (the model checks the owners)."""
    raw = doc.data.get("responsibilities") if isinstance(doc.data, dict) else None
    if not isinstance(raw, dict):
        return []  # missing or not a mapping: the model reports it
    problems = []
    for job in raw:
        if job not in OPERATING_JOBS:
            loc = ("responsibilities", job)
            problems.append(doc.problem(loc, f"unknown operating job (expected one of: {', '.join(OPERATING_JOBS)})"))
    missing = [job for job in OPERATING_JOBS if job not in raw]
    if missing:
        problems.append(
            doc.problem(
                ("responsibilities",),
                f"no owner given for: {', '.join(missing)} (every operating job needs provider, customer or shared)",
            )
        )
    return problems


def _check_grades(grades: list[tuple[Grade, Document]]) -> list[Problem]:
    problems = []
    seen: dict[str, str] = {}
    for grade, doc in grades:
        if grade.id in seen:
            problems.append(doc.problem(("id",), f"duplicate grade id '{grade.id}' (also in {seen[grade.id]})"))
        seen.setdefault(grade.id, doc.display)
        same_rank = [(g, d) for g, d in grades if g.rank == grade.rank and d.display < doc.display]
        if same_rank:
            problems.append(
                doc.problem(
                    ("rank",),
                    f"rank {grade.rank} is also {same_rank[0][0].id}'s: each grade needs its own rank (1 = highest)",
                )
            )
        named = [("provider_jobs", i, job) for i, job in enumerate(grade.requires.provider_jobs)]
        named += [("provider_or_shared_jobs", i, job) for i, job in enumerate(grade.requires.provider_or_shared_jobs)]
        for key, i, job in named:
            if job not in OPERATING_JOBS:
                loc = ("requires", key, i)
                problems.append(
                    doc.problem(loc, f"unknown operating job '{job}' (expected one of: {', '.join(OPERATING_JOBS)})")
                )
    return problems


def _offer_references(
    config: WorkspaceConfig, config_doc: Document, offers: list[Offer], unloaded_ids: set[str]
) -> list[Problem]:
    """procure.yaml's references to offers: the hedged offer and the offers given their own uncertainty exist (an
    invalid offer's own problems are named), and a per-token offer is not given a throughput to vary."""
    problems: list[Problem] = []
    known_offers = {o.id for o in offers}
    by_id = {o.id: o for o in offers}
    hedged = config.hedge.offer
    if offers and hedged is not None and hedged not in known_offers and hedged not in unloaded_ids:
        from procure.errors import unknown_offer

        near = unknown_offer(hedged, known_offers)  # "did you mean", then every known id
        problems.append(config_doc.problem(("hedge", "offer"), near.message))
    for offer_id, spec in config.uncertainty.offers.items():
        if (
            offers and offer_id not in known_offers and offer_id not in unloaded_ids
        ):  # an invalid offer's own problems are named
            loc = ("uncertainty", "offers", offer_id)
            problems.append(
                config_doc.problem(loc, f"no offer with this id (known: {', '.join(sorted(known_offers))})")
            )
        elif offer_id in by_id and by_id[offer_id].per_token and spec.throughput is not None:
            loc = ("uncertainty", "offers", offer_id, "throughput")
            problems.append(
                config_doc.problem(
                    loc,
                    "a per-token offer has no GPU throughput to vary: its cost per task does not depend on it "
                    "(vary its availability)",
                )
            )
    return problems
