"""Every figure the comparison report and the board memo print beside the Evaluation, computed once from one
evaluation: sensitivity, cost position, the recommendation and the plan, the hedge, the rental price benchmark,
the what-if cases, the football field, the scorecard chapter, the odds of being cheapest, and the memo's figures
(procure/analysis/memo.py). procure/render formats them.

Each part is computed by its own module from the workspace; a part whose inputs are missing is left
out with the reason, so a report never fails for want of optional market data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from procure.analysis.decision import recommend
from procure.analysis.evaluate import CostInputs, Evaluation
from procure.analysis.frontiers import Curve, frontier_lines
from procure.analysis.hedging import HedgePlan, recommended_hedge
from procure.analysis.market import IndexBuild
from procure.analysis.plan import PlanResult
from procure.analysis.position import Position
from procure.analysis.recommendation import Recommendation
from procure.analysis.scenarios import Case, FieldBar
from procure.analysis.sensitivity import Sensitivity
from procure.errors import InputError

if TYPE_CHECKING:
    from procure.analysis.memo import MemoFigures
    from procure.analysis.plan.frontier import Solves
from procure.io.workspace import QUOTES_FILE, IndexLevel, Workspace


@dataclass
class ReportExtras:
    position: Position | None = None
    hedge: HedgePlan | None = None
    hedge_missing: str = "Hedging recommendation: not yet configured (it needs market/index.csv and an offer to hedge)."
    benchmark: IndexBuild | None = None  # methodology of the default build (median, all prices)
    benchmark_series: dict[str, IndexBuild] = field(default_factory=dict)
    benchmark_notes: list[str] = field(default_factory=list)  # series left out for want of observations
    index: list[IndexLevel] = field(default_factory=list)
    sensitivity: Sensitivity | None = None
    plan: PlanResult | None = None  # with `demand:` in procure.yaml
    plan_missing: str = ""
    cases: list[Case] = field(default_factory=list)  # what-if re-evaluations (demand, index, throughput claims)
    football: list[FieldBar] = field(default_factory=list)  # the football field of the top offers
    memo: MemoFigures | None = None  # the board memo's figures (render/board.py puts them in words)
    recommendation: Recommendation | None = None  # what every part of both reports recommends
    scorecard: ScorecardChapter | None = None  # delivered against promised, per signed vendor (the comparison)
    odds: list[tuple[str, int]] = field(default_factory=list)  # cheapest_odds: each likely cheapest offer, in %
    index_note: dict[str, float] | None = None  # the index price as rent per task at the leader's output
    standing: PositionView | None = None  # the cost position as the comparison shows it
    # each offer's throughput curve as the cost model reads it between its points (the comparison's chart)
    frontiers: dict[Curve, tuple[list[float], list[float]]] = field(default_factory=dict)


@dataclass
class ScorecardChapter:
    """The comparison's scorecard chapter: each signed vendor's months as `procure scorecard` gives them
    (procure/analysis/scorecard.py: delivered figures against the evaluation of the promise alone), and what the
    telemetry behind each month stated (resets, gaps, partial coverage). No vendor: `missing` says why."""

    vendors: list[Any] = field(default_factory=list)  # scorecard.VendorScore
    telemetry: dict[str, list[str]] = field(default_factory=dict)  # offer id -> stated notes, by month
    ttft_limit: float | None = None  # workload.max_ttft_s
    decode_s: float | None = None  # output tokens / the target speed per user: a task's output at the target
    missing: str = ""


SENSITIVITY_OFFERS = 3

# The extras, or a function that computes them when a report needs them (procure report passes one).
LazyExtras = ReportExtras | Callable[[], ReportExtras] | None


def gather_extras(
    ws: Workspace,
    ev: Evaluation,
    inputs: CostInputs | None = None,
    board: bool = False,
    frontier: bool = False,
    solves: Solves | None = None,
) -> ReportExtras:
    """What the report shows beside the evaluation; `frontier` asks the comparison for the plan's efficient frontier,
    whose solves `solves` runs (the layout workers')."""
    extras = ReportExtras(index=[p for p in ws.index if p.date <= ev.as_of])
    if not board:
        extras.frontiers = frontier_lines(ev.offers, ev.assumptions.interpolation)
    # The board memo shows no tornado, rental price benchmark or football field: it does not compute them.
    if inputs is not None and ev.ranked and not board:
        from procure.analysis.evaluate import offer_sensitivity

        extras.sensitivity = offer_sensitivity(ws, ev, inputs, [o.id for o in ev.ranked], SENSITIVITY_OFFERS)
    market = ws.config.market
    if market.competitors or market.own:
        from procure.analysis.position import position

        extras.position = position(ev, market)
    # The what-if cases re-evaluate the workspace and do not depend on the plan: worked out beside its solves (HiGHS
    # holds no lock while it solves), and waited for where they were computed before, so an error is raised there.
    pending_cases = None
    if ev.ranked:
        from procure.analysis.milp import started
        from procure.analysis.scenarios import cases

        pending_cases = started(lambda: cases(ws, ev), "procure-cases")
    # The recommendation, once: the plan with `demand:` (or why it cannot be solved), else the best offer.
    # The efficient frontier is a chart of the comparison, drawn when asked for (`procure report --frontier`): its
    # solves cost a first report more than its whole layout (docs/plan.md), and the board memo has no charts.
    try:
        extras.recommendation, extras.plan = recommend(ws, ev, inputs, frontier=frontier and not board, solves=solves)
    except Exception:
        _finished(pending_cases)  # nothing left running while the error is reported and the process ends
        raise
    if extras.recommendation.plan_failed:
        extras.plan_missing = f"Procurement plan: not available ({extras.recommendation.plan_failed})."
    if ws.index and (ev.summary.recommended or ws.config.hedge.offer):
        try:
            extras.hedge = recommended_hedge(ws, ev, extras.plan)
        except InputError as exc:
            extras.hedge_missing = (
                "Hedging recommendation: not available (" + "; ".join(str(p) for p in exc.problems) + ")."
            )
    if not board:  # the board memo shows no rental price benchmark
        _benchmarks(ws, ev, extras)
    if pending_cases is not None:
        from procure.analysis.scenarios import football_field

        extras.cases = pending_cases()
        if not board:
            extras.football = football_field(ev, extras.cases)
    if not board:
        extras.scorecard = scorecard_chapter(ws, ev)
    extras.odds = cheapest_odds(ev)
    extras.index_note = index_note(ev)
    extras.standing = position_view(ev, extras.position)
    if board:
        from procure.analysis.memo import memo_figures

        extras.memo = memo_figures(
            ev, extras.cases, extras.position, extras.hedge, extras.hedge_missing, extras.plan, extras.recommendation
        )
    return extras


def _benchmarks(ws: Workspace, ev: Evaluation, extras: ReportExtras) -> None:
    """The comparison's rental price benchmarks, each series from what market/quotes.csv holds."""
    quotes = ws.quotes  # market/quotes.csv, read by the workspace (None: there is none)
    if quotes is not None:
        from procure.analysis.market import Filters, build_index, scope_adjustments, settings_from

        rows = [q for q in quotes if q.date <= ev.as_of]
        adjustments = scope_adjustments(ws.grades, ws.config.assumptions, ws.config.index.scope_gpus)
        strata = settings_from(ws.config.index)
        # Each series from what the observations hold: a kind without observations (there are no public B200
        # transacted prices) is left out with a note, never a refusal of the whole report.
        builds = {
            "all": ("median", "all", "median of all prices"),
            "median of advertised prices": ("median", "advertised", "advertised prices"),
            "volume-weighted transacted prices": ("volume-weighted", "transacted", "transacted prices"),
        }
        for key, (method, kind, words) in builds.items():
            try:
                build = build_index(rows, method, kind, Filters(), "month", adjustments, False, QUOTES_FILE, strata)
            except InputError:
                extras.benchmark_notes.append(
                    f"no {words} in {QUOTES_FILE} on or before {ev.as_of}: that series is left out"
                )
                continue
            if key == "all":
                extras.benchmark = build
            else:
                extras.benchmark_series[key] = build


def _finished(pending: Callable[[], object] | None) -> None:
    """Wait for work started beside the solve, whatever it raises (the caller has an error of its own to report)."""
    if pending is not None:
        try:
            pending()
        except Exception:  # noqa: BLE001 - the first error is the one reported
            pass


NO_ACTUALS = (
    "No signed vendor has delivered evidence in this workspace (actuals/ is empty or absent), so there is nothing yet "
    "to set "
    "against the promises. After signing, the serving metrics, incident history and invoices "
    "of each signed offer are imported into actuals/OFFER-ID/ (procure actuals import), and this chapter then scores "
    "every month (docs/actuals.md)."
)


def scorecard_chapter(ws: Workspace, ev: Evaluation) -> ScorecardChapter:
    """Every signed vendor's months, delivered against the promise: `procure scorecard` as of the
    evaluation's date, set against the evaluation of the promise alone (no evidence blended in)."""
    wl = ws.config.workload
    chapter = ScorecardChapter(ttft_limit=wl.max_ttft_s, decode_s=wl.output_tokens / wl.interactivity)
    signed = [offer_id for offer_id in sorted(ws.actuals) if any(o.id == offer_id for o in ev.offers)]
    if not signed:
        chapter.missing = NO_ACTUALS
        return chapter
    from procure.analysis.promised import scored_promise

    _, result = scored_promise(ws, ev.as_of)
    chapter.vendors = [v for v in result.vendors if v.months]
    if not chapter.vendors:
        chapter.missing = (
            "The signed vendors' folders in actuals/ hold no month of evidence before " + ev.as_of.isoformat() + "."
        )
    for v in chapter.vendors:
        chapter.telemetry[v.offer] = telemetry_notes(ws.actuals[v.offer], [m.month for m in v.months])
    return chapter


def telemetry_notes(actuals: Any, months: list[str]) -> list[str]:
    """What the serving metrics of each month shown stated on import: counter resets, gaps, and samples
    covering less than the whole month (so a reader knows a figure's footing)."""
    out = []
    for key in months:
        m = actuals.metrics.get(key)
        if m is None:
            continue
        parts = []
        if m.resets:
            parts.append(
                f"counter resets in {m.resets} series (a restart: each counted from zero again, as Prometheus' rate() "
                "does)"
            )
        if m.gaps:
            parts.append(f"gaps in the samples longer than actuals.gap_minutes in {m.gaps} series")
        if m.coverage is not None and m.coverage < 0.995:
            parts.append(f"samples cover {m.coverage:.1%} of the month (the counters' increase spans the gaps)")
        if parts:
            out.append(f"{key}: " + "; ".join(parts) + ".")
    return out


def index_note(ev: Evaluation) -> dict[str, float] | None:
    """The latest index price as a rent per successful task at the recommended offer's output, for the cost curve."""
    leader = ev.offer(ev.summary.recommended) if ev.summary.recommended else None
    level = next((o.index_level for o in ev.offers if o.index_level is not None), None)
    if level is None or leader is None or not leader.metrics.get("successful_tasks_per_gpu_hour"):
        return None
    return {"level": level, "per_task": level / leader.metrics["successful_tasks_per_gpu_hour"]}


ODDS_NAMED = 0.05  # offers at least this likely to be the cheapest are named in the headline


def cheapest_odds(ev: Evaluation) -> list[tuple[str, int]]:
    """Each offer at least 5% likely to be the cheapest, by vendor, the rest pooled as "others", in whole
    percent that add up to 100 (largest remainder: rounding each on its own can give 99 or 101)."""
    shares = [
        (o.vendor, o.uncertainty.prob_cheapest) for o in ev.ranked if o.uncertainty and o.uncertainty.prob_cheapest
    ]
    total = sum(p for _, p in shares)
    if not shares or total <= 0:
        return []
    named = [(v, p / total) for v, p in shares if p / total >= ODDS_NAMED]
    rest = 1.0 - sum(p for _, p in named)
    parts = named + ([("others", rest)] if rest > 1e-9 else [])
    floors = [int(p * 100) for _, p in parts]
    order = sorted(range(len(parts)), key=lambda i: -(parts[i][1] * 100 - floors[i]))
    for i in order[: 100 - sum(floors)]:
        floors[i] += 1
    return [(name, pct) for (name, _), pct in zip(parts, floors) if pct > 0 or name != "others"]


@dataclass
class Signing:
    """Where signing the recommended offer leaves us against the cheapest competitor's own cost."""

    vendor: str
    cost_per_task: float  # the recommended offer's
    competitor: str
    competitor_cost: float  # the cheapest competitor's cost per task
    gap: float  # ours over the competitor's, less 1
    today: float | None  # what we pay per task today; None when today's figure is the recommended offer's


@dataclass
class PositionView:
    """The cost position split as a reader needs it: the offers we could sign, the competitors' own
    costs, ours today, and where signing the recommendation leaves us against the cheapest competitor."""

    offers: list[tuple[str, float]]  # vendor, cost per task
    competitors: list[tuple[str, float, str, bool]]  # name, cost per task, date, a public price (not its cost)
    ours: float
    ours_label: str
    signing: Signing | None


def position_view(ev: Evaluation, pos: Position | None) -> PositionView | None:
    if pos is None:
        return None
    vendors = {o.id: o.vendor for o in ev.offers}
    offers = [(vendors.get(p.name, p.name), p.cost_per_task) for p in pos.curve if p.kind == "offer"]
    # A competitor's public price is marked as one; only competitors' costs are compared with our cost.
    competitors = [
        (p.name, p.cost_per_task, p.date.isoformat(), p.figure == "price") for p in pos.curve if p.kind == "competitor"
    ]
    costs = [c for c in competitors if not c[3]]
    signing = None
    leader = ev.offer(ev.summary.recommended) if ev.summary.recommended else None
    if leader is not None and costs and leader.metrics.get("cost_per_task") is not None:
        name, best, _, _ = min(costs, key=lambda c: c[1])
        ours = leader.metrics["cost_per_task"]
        signing = Signing(
            vendor=leader.vendor,
            cost_per_task=ours,
            competitor=name,
            competitor_cost=best,
            gap=ours / best - 1,
            today=None if pos.label.startswith("the recommended") else pos.cost_per_task,
        )
    return PositionView(
        offers=offers, competitors=competitors, ours=pos.cost_per_task, ours_label=pos.label, signing=signing
    )
