"""The plan for a workspace, step by step as docs/plan.md tells it: scenarios and candidates, the unserved price,
each offer alone, the shortlist, the solve, the figures, the notes and the headline, the frontier and the stress."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

import numpy as np

from procure.analysis.evaluate import CostInputs, Evaluation, evaluate_with_inputs
from procure.analysis.plan.candidates import (
    Candidate,
    Unit,
    candidates,
    decision_window,
    term_units,
)
from procure.analysis.plan.classes import Reduction, reduce_near_copies, solve_reduced
from procure.analysis.plan.decisions import (
    decisions,
    index_monthly_volatility,
    remedies,
    served_statement,
)
from procure.analysis.plan.discount import discount_factors
from procure.analysis.plan.dispatch import Outcome, dispatch, fixed_spend, source_months
from procure.analysis.plan.figures import (
    Figures,
    figures,
    plan_lines,
    scenario_rows,
)
from procure.analysis.plan.frontier import Solves, efficient_frontier
from procure.analysis.plan.notes import plan_notes, price_note
from procure.analysis.plan.program import (
    MAX_NONZEROS,
    RELAXATION_MAX_NONZEROS,
    Risk,
    Setting,
    check_size,
    model_size,
    solver_scales,
)
from procure.analysis.plan.result import (
    Bridge,
    DemandInfo,
    FrontierPoint,
    HeldContract,
    PlanLine,
    PlanResult,
    PlanStress,
    ScenarioRow,
    ShortfallMonth,
    SingleBest,
    SolverInfo,
    TermSheetRow,
)
from procure.analysis.plan.shortlist import reindexed, shortlist, whole_check
from procure.analysis.plan.single import single_offer
from procure.analysis.plan.solver import Chosen, Solved, infeasible_problem, solve_plan, vendor_shares_ok
from procure.analysis.plan.stress import Fixed, stress
from procure.analysis.scenarios import claim_low_end
from procure.analysis.unserved import market_unserved_price
from procure.errors import InputError, Problem
from procure.io.workspace import Workspace
from procure.model.calendar import earliest, share_from
from procure.model.demand import Scenarios, from_as_of
from procure.model.demand import scenarios as demand_scenarios
from procure.model.inputs import Offer, PlanConfig, WorkspaceConfig
from procure.model.kinds import kind_of

# one offer alone (single.single_offer): its expected cost, blocks and node counts
Alone = tuple[float, list[Unit], np.ndarray]


def make_plan(
    ws: Workspace,
    as_of: date | None = None,
    frontier: bool = False,
    scenario_count: int | None = None,
    evaluation: tuple[Evaluation, CostInputs] | None = None,
    solves: Solves | None = None,
) -> PlanResult:
    """The plan for a workspace: commitments and pay-as-used sources over the demand scenarios.

    The steps of docs/plan.md in order: scenarios and candidates, what cannot be planned refused, the unserved
    price, each offer alone, the solve (over a shortlist when there are many offers), the plan against the best
    single offer, its figures and notes, then the frontier and the stress. `solves` runs the frontier's solves
    (frontier.Solves: in this process, in order, by default)."""
    config = ws.config
    policy = config.plan
    s = _solve(ws, as_of, scenario_count, evaluation)
    ev, inputs, scen, delta, cands, pick = s.ev, s.inputs, s.scen, s.delta, s.cands, s.pick
    notes, penalty = s.notes, s.penalty
    chosen = s.found.chosen
    refuse_empty_stop(chosen.solved, pick.out, scen, policy)
    saving, saving_share = savings(s.single_block, pick.fig, policy, notes)
    lines = plan_lines(pick.cands, pick.units, pick.nodes, pick.in_plan, pick.out, scen)
    offers_by_id = {o.id: o for o in inputs.offers}
    sigma, index_changes = index_monthly_volatility([(x.date, x.price) for x in ws.index], ev.as_of)
    sheet, held = decisions(
        pick.cands,
        pick.units,
        pick.nodes,
        lines,
        offers_by_id,
        ev.as_of,
        config.horizon.expected_delay_weeks,
        ev.currency,
        sigma,
    )
    bridges, bridge, by_month, headline = plan_notes(s, lines, held, index_changes, policy.max_vendor_share)

    frontier_points = (
        efficient_frontier(
            s.found.solver_cands, Setting(scen, policy, delta, Risk(), s.money, s.tasks, penalty), pick.fig, solves
        )
        if frontier
        else None
    )
    alone = alone_costs(s.singles, cands, scen, delta, penalty, policy.cvar_alpha, s.holding)
    rows = scenario_rows(pick.out, scen, delta)
    signing = signing_deadline(
        sheet, [offers_by_id[x.offer] for x in lines if x.role == "pay_as_used" and x.offer in offers_by_id]
    )
    stressed = _stress(ws, s)
    price_note(stressed, notes)
    described = _Described(
        lines,
        saving,
        saving_share,
        rows,
        frontier_points,
        alone,
        stressed,
        headline,
        bridge,
        bridges,
        sigma,
        index_changes,
        sheet,
        held,
        signing,
        by_month,
    )
    result = _result(s, policy, described)
    sheet_commitments(result, ev)
    return result


@dataclass
class SolvedPlan:
    """The plan as solved, what its description reads: the evaluation, scenarios and candidates, the unserved price,
    each offer alone, the solve, and the plan picked against the best single offer (`single_block`)."""

    ev: Evaluation
    inputs: CostInputs
    scen: Scenarios
    delta: np.ndarray
    window: date
    cands: list[Candidate]
    excluded: dict[str, str]
    money: float
    tasks: float
    penalty: float
    basis: str
    notes: list[str]
    singles: list[tuple[str, Alone | None]]
    best_single: tuple[str, Alone] | None
    holding: Held
    found: Found
    pick: Pick
    single_block: SingleBest | None


def _solve(
    ws: Workspace,
    as_of: date | None,
    scenario_count: int | None,
    evaluation: tuple[Evaluation, CostInputs] | None,
) -> SolvedPlan:
    """The steps up to the plan chosen: scenarios and candidates, what cannot be planned refused, the unserved price,
    near-copies, each offer alone, the solve, and the plan against the best single offer."""
    config = ws.config
    policy = config.plan
    ev, inputs = evaluation or evaluate_with_inputs(ws, as_of)
    scen = from_as_of(demand_scenarios(config, scenario_count), share_from(as_of))
    window = decision_window(ev, inputs, policy.decide_within)
    cands, excluded = _candidates(config, ev, inputs, scen, window)
    delta = discount_factors(scen.months, config.assumptions.cost_of_capital)
    notes: list[str] = []
    refuse_unplannable(policy, scen, cands)
    money, tasks = solver_scales(cands, scen)
    penalty, basis = unserved_price(ws, ev, inputs)

    # Near-copies (classes.py): of each class of interchangeable offers the program keeps only the cheapest it can use
    reduction = reduce_near_copies(cands, scen, policy)
    program_size(
        reindexed(cands, reduction.keep) if reduction.dropped else cands,
        scen,
        policy,
        Risk(policy.cvar_weight, policy.cvar_limit),
    )  # before anything of that size is computed

    holding = Held.of(cands, scen)
    singles, best_single = _singles(cands, holding, delta, policy, penalty)

    risk = Risk(policy.cvar_weight, policy.cvar_limit)
    setting = Setting(scen, policy, delta, risk, money, tasks, penalty)

    def over(kept: Reduction, into: list[str], allowed: PlanConfig) -> Found:
        program = reindexed(cands, kept.keep) if kept.dropped else cands
        program_size(program, scen, allowed, risk)
        alone = [singles[i] for i in kept.keep]
        return solve_over_offers(program, replace(setting, policy=allowed), alone, into)

    def used(found: Found) -> set[str]:
        return _used(found, scen, penalty)

    def shares_kept(found: Found) -> bool:
        return _shares_kept(found, scen, penalty, policy.max_vendor_share)

    found = solve_reduced(cands, scen, policy, reduction, notes, over, used, shares_kept)
    chosen = found.chosen
    out = dispatch(found.plan_cands, chosen.units, chosen.nodes, chosen.in_plan, scen, penalty)
    pick = Pick(
        chosen.units, chosen.nodes, chosen.in_plan, out, figures(out, scen, delta, policy.cvar_alpha), found.plan_cands
    )
    single_block, pick = against_single_best(
        pick, best_single, cands, scen, delta, policy, risk, penalty, notes, holding
    )
    return SolvedPlan(
        ev,
        inputs,
        scen,
        delta,
        window,
        cands,
        excluded,
        money,
        tasks,
        penalty,
        basis,
        notes,
        singles,
        best_single,
        holding,
        found,
        pick,
        single_block,
    )


def program_size(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, risk: Risk) -> None:
    """Refuse what the solver cannot hold (program.check_size): the program over every offer, or, with more offers
    than plan.max_candidates, its linear relaxation, the shortlist's program being checked when it is chosen."""
    whole = len(cands) <= policy.max_candidates
    check_size(cands, scen, policy, risk, MAX_NONZEROS if whole else RELAXATION_MAX_NONZEROS)


def _singles(
    cands: list[Candidate], holding: Held, delta: np.ndarray, policy: PlanConfig, penalty: float
) -> tuple[
    list[tuple[str, tuple[float, list[Unit], np.ndarray] | None]],
    tuple[str, tuple[float, list[Unit], np.ndarray]] | None,
]:
    """Single offers: the baseline the plan must beat (each must serve every scenario from its delivery alone), each
    beside what we hold: a signed contract is in every plan and every single-offer comparison. The best of them."""
    singles = [
        (c.id, single_offer(c, i, holding.residual, delta, policy.unserved_penalty_per_task, penalty))
        for i, c in enumerate(cands)
    ]
    best_single = min(((cid, s) for cid, s in singles if s is not None), key=lambda t: (t[1][0], t[0]), default=None)
    return singles, best_single


def _candidates(
    config: WorkspaceConfig, ev: Evaluation, inputs: CostInputs, scen: Scenarios, window: date
) -> tuple[list[Candidate], dict[str, str]]:
    """The offers the plan may combine (candidates.py), under the workspace's settings."""
    wl = config.workload
    return candidates(
        ev,
        inputs,
        config.assumptions.fte_cost_year,
        wl.output_tokens,
        wl.success_rate,
        scen.months,
        config.horizon.expected_delay_weeks,
        config.plan.max_spot_share,
        window,
        config.horizon.index_growth,
    )


def _stress(ws: Workspace, s: SolvedPlan) -> PlanStress:
    """The chosen plan under stress (stress.py): index-linked rents move with market prices, vendor-claimed
    throughput at the low end of its range."""
    pick, ev = s.pick, s.ev
    return stress(
        Fixed(pick.cands, pick.units, pick.nodes, pick.in_plan, s.scen, s.penalty),
        s.delta,
        index_linked={o.id for o in ev.offers if kind_of(o.terms.pricing).index_rent is not None},
        claims={o.id for o in ev.offers if o.points_source == "vendor_claim"},
        claims_factor=claim_low_end(ws),
    )


@dataclass
class _Described:
    """What make_plan says of the solved plan: its lines and saving, the scenarios, the frontier, each offer alone,
    the stress, the notes' headline and bridges, the index's volatility, the term sheet and the signing deadline."""

    lines: list[PlanLine]
    saving: float | None
    saving_share: float | None
    rows: list[ScenarioRow]
    frontier: list[FrontierPoint] | None
    alone: dict[str, float | None]
    stressed: PlanStress
    headline: str | None
    bridge: list[str]
    bridges: list[Bridge]
    sigma: float | None
    index_changes: int
    sheet: list[TermSheetRow]
    held: list[HeldContract]
    signing: tuple[date | None, str]
    by_month: list[ShortfallMonth]


def _solver_info(policy: PlanConfig, found: Found) -> SolverInfo:
    """The solve's settings, status and size."""
    model, solved = found.chosen.model, found.chosen.solved
    return SolverInfo(
        time_limit_s=policy.time_limit_s,
        node_limit=policy.node_limit,
        mip_gap=policy.mip_gap,
        status=solved.status,
        gap=solved.gap,
        bound_gap=found.bound_gap,
        shortlist_check=found.check,
        variables=len(model.c),
        constraints=model.nrows,
        integers=int(model.integrality.sum()),
        nonzeros=model.nonzeros,
    )


def _result(s: SolvedPlan, policy: PlanConfig, d: _Described) -> PlanResult:
    """The plan's result, every field from the solve (`s`) and what is said of it (`d`)."""
    ev, scen, cands, pick, fig, chosen = s.ev, s.scen, s.cands, s.pick, s.pick.fig, s.found.chosen
    model, lines, rows = chosen.model, d.lines, d.rows
    return PlanResult(
        as_of=ev.as_of,
        currency=ev.currency,
        plan=lines,
        expected_cost_per_task=fig.cost_per_task,
        p90_monthly_spend=fig.p90,
        cvar=fig.cvar,
        cvar_alpha=policy.cvar_alpha,
        expected_unused_share=fig.unused,
        pay_as_used_share=fig.payg_share,
        expected_monthly_spend=fig.monthly,
        single_best=s.single_block,
        saving_per_task=d.saving,
        saving_share=d.saving_share,
        scenarios=rows,
        frontier=d.frontier,
        demand=DemandInfo(
            months=scen.months,
            start=scen.start,
            growth=scen.growth,
            volatility=scen.volatility,
            scenarios=scen.count,
            seed=scen.seed,
            sampled=scen.sampled,
        ),
        policy=policy,
        solver=_solver_info(policy, s.found),
        candidates=[c.id for c in cands],
        excluded=s.excluded,
        notes=s.notes,
        single_offers=d.alone,
        stress=d.stressed,
        headline=d.headline,
        unserved_share=fig.unserved,
        unserved_penalty_per_task=s.penalty,
        unserved_penalty_basis=s.basis,
        band_gap=chosen.band_gap,
        bands=len(model.bands) if model.bands is not None else 0,
        beyond_horizon_cost=fig.beyond,
        delivery={c.id: c.start + 1 for c in cands},
        bridge=d.bridge,
        bridges=d.bridges,
        index_monthly_volatility=d.sigma,
        index_monthly_changes=d.index_changes,
        decide_by=s.window,
        term_sheet=d.sheet,
        held=d.held,
        sign_by=d.signing[0],
        sign_by_reason=d.signing[1],
        held_gpus=sum(h.gpus for h in d.held if h.start <= ev.as_of <= h.end),
        ask_gpus=sum(r.gpus for r in d.sheet),
        later_gpus=sum(line.gpus or 0 for line in lines if line.decision == "later"),
        unserved_tasks=fig.unserved_tasks,
        shortfall_cost=fig.shortfall,
        shortfall_by_month=d.by_month,
        served=served_statement(fig, [(r.name, r.unserved_share) for r in rows], ev.currency),
        unserved_remedy=remedies(
            pick.cands, s.excluded, pick.units, pick.nodes, pick.out, scen.probability, ev.currency
        )
        if fig.unserved > 0.0005
        else [],
    )


def sheet_commitments(result: PlanResult, ev: Evaluation) -> None:
    """Each term sheet row's committed_cost: the one commitment figure of its line (commitment.line_commitments, as
    decision reads it), which
    the memo's ask and risk register read too. The rows are the sign-now commit lines in the plan's order."""
    from procure.analysis.commitment import line_commitments

    bound = line_commitments(result, {o.id: o for o in ev.offers})
    now = [(line, b) for line, b in zip(result.plan, bound) if line.role == "commit" and line.decision == "sign_now"]
    for row, (line, b) in zip(result.term_sheet, now, strict=True):
        assert (row.offer, row.gpus, row.start) == (line.offer, line.gpus, line.start_date)
        row.committed_cost = b


def refuse_unplannable(policy: PlanConfig, scen: Scenarios, cands: list[Candidate]) -> None:
    """Refuse, before any solve, what no plan can do: no usable offer, or a vendor share no split of the vendors can
    meet (each a located error from `infeasible_problem`). Demand beyond what the offers can serve is not refused: it
    is left unserved at the unserved price and reported by month and scenario (`shortfall_by_month`, `scenarios`)."""
    if not cands:
        raise InputError([infeasible_problem(policy, scen, cands)])
    vendors = {c.vendor for c in cands}
    if policy.max_vendor_share < 1 and (len(vendors) == 1 or policy.max_vendor_share * len(vendors) < 1):
        raise InputError([infeasible_problem(policy, scen, cands)])


def unserved_price(ws: Workspace, ev: Evaluation, inputs: CostInputs) -> tuple[float, str]:
    """The price of a task left unserved (docs/plan.md, "In plain words" 4) and where it comes from:
    plan.unserved_penalty_per_task, else bought on demand at the market price (procure/analysis/unserved.py), which no
    gate moves."""
    policy = ws.config.plan
    if policy.unserved_penalty_per_task is not None:
        return float(policy.unserved_penalty_per_task), "plan.unserved_penalty_per_task"
    records = {r.id: r.metrics for r in ev.offers}
    offers = [o for o in inputs.offers if o.id in records]
    found = market_unserved_price(ws.config, offers, [records[o.id] for o in offers], ws.index_level_on(ev.as_of))
    return found.per_task, found.basis


# The relaxation's and the plan's objectives come from two solves, each to its own feasibility tolerance: a plan this
# far (relative) below the bound is the same figure; further is a fault.
BOUND_TOLERANCE = 1e-6


@dataclass
class Found:
    """The solver's plan, over the offers it was chosen among (`plan_cands`, `solver_cands` for the frontier), with
    what the shortlist's bound and check proved (None without a shortlist)."""

    chosen: Chosen
    plan_cands: list[Candidate]
    solver_cands: list[Candidate]
    bound_gap: float | None
    check: str | None


def _used(found: Found, scen: Scenarios, penalty: float) -> set[str]:
    """The ids of the offers a plan uses: a commitment or pay-as-used capacity that serves."""
    ch = found.chosen
    out = dispatch(found.plan_cands, ch.units, ch.nodes, ch.in_plan, scen, penalty)
    return {found.plan_cands[u.commit.offer].id for u, n in zip(ch.units, ch.nodes) if n > 0} | {
        found.plan_cands[c].id for c, served in out.by_source.items() if float(served.sum()) > 0
    }


def _shares_kept(found: Found, scen: Scenarios, penalty: float, share: float) -> bool:
    """Whether a plan keeps the vendor share rule as stated (solver.vendor_shares_ok, on its dispatch)."""
    ch = found.chosen
    out = dispatch(found.plan_cands, ch.units, ch.nodes, ch.in_plan, scen, penalty)
    return vendor_shares_ok(found.plan_cands, ch.units, ch.nodes, out, scen, share)


def solve_over_offers(
    cands: list[Candidate],
    setting: Setting,
    singles: list[tuple[str, tuple[float, list[Unit], np.ndarray] | None]],
    notes: list[str],
) -> Found:
    """The solve (docs/plan.md, "No offer is dropped unseen"): over every usable offer up to plan.max_candidates, else
    over the shortlist, which is then checked against the whole program and replaced by its solve if that finds a
    cheaper plan. The notes say which."""
    scen, policy, risk = setting.scen, setting.policy, setting.risk
    keep, bound = shortlist(cands, setting, [found[0] if found is not None else None for _, found in singles])
    plan_cands = reindexed(cands, keep) if len(keep) < len(cands) else cands
    check_size(plan_cands, scen, policy, risk)
    solver_cands = plan_cands
    chosen = solve_plan(plan_cands, setting)
    solved = chosen.solved
    bound_gap = None
    check = None
    if bound is not None and solved.objective:
        bound_gap = (solved.objective - bound) / abs(solved.objective)
        if bound_gap < -BOUND_TOLERANCE:
            # a plan below the relaxation's bound over every offer solved another program than the bound's (what
            # dropped a held contract once): a fault, never a figure to print as "within 0.00%"
            raise AssertionError(
                f"the plan's objective {solved.objective:.6g} is below the relaxation's bound {bound:.6g} over every "
                "offer"
            )
        bound_gap = max(0.0, bound_gap)
        notes.append(
            f"the solver chose among the {len(keep)} offers the linear relaxation uses most and the best single offers "
            f"(of {len(cands)} usable, "
            f"plan.max_candidates {policy.max_candidates}); the plan is within {bound_gap:.2%} of the relaxation's "
            "bound over all of them"
        )
        size = model_size(cands, scen, policy, risk)
        if size > MAX_NONZEROS:
            # the whole program cannot be held: what the plan may miss is bounded by the relaxation alone
            check, better = (
                f"not proven: the program over all {len(cands):,} usable offers would have about {size:,} nonzeros, "
                f"over the {MAX_NONZEROS:,} the solver can take whole; a left-out offer may improve the plan, by at "
                f"most its {bound_gap:.2%} from the relaxation's bound",
                False,
            )
        else:
            check, better = whole_check(cands, setting, chosen)
        notes.append(check)
        if better:
            plan_cands = solver_cands = cands
            chosen = solve_plan(cands, setting)
    return Found(chosen, plan_cands, solver_cands, bound_gap, check)


@dataclass
class Pick:
    """The plan reported: its commitments, when its sources serve, its dispatch and figures, over `cands`."""

    units: list[Unit]
    nodes: np.ndarray
    in_plan: np.ndarray
    out: Outcome
    fig: Figures
    cands: list[Candidate]


def against_single_best(
    pick: Pick,
    best_single: tuple[str, tuple[float, list[Unit], np.ndarray]] | None,
    cands: list[Candidate],
    scen: Scenarios,
    delta: np.ndarray,
    policy: PlanConfig,
    risk: Risk,
    penalty: float,
    notes: list[str],
    held: Held,
) -> tuple[SingleBest, Pick]:
    """The best single offer as the buyer would run it, beside what we hold, and the plan: a single offer is a
    portfolio too, so when the solver stopped at its gap above it (and neither CVaR nor a vendor share rules it out)
    the single offer with the held contracts is the plan."""
    if best_single is None:
        return SingleBest(offer=None, expected_cost_per_task=None), pick
    cid, (_, s_units, s_nodes) = best_single
    index = next(i for i, c in enumerate(cands) if c.id == cid)
    s_units, s_nodes, s_in = held.beside(index, s_units, s_nodes, len(cands))
    s_out = dispatch(cands, s_units, s_nodes, s_in, scen, penalty)
    s_fig = figures(s_out, scen, delta, policy.cvar_alpha)
    single_block = SingleBest(
        offer=cid,
        expected_cost_per_task=s_fig.cost_per_task,
        plan=plan_lines(cands, s_units, s_nodes, s_in, s_out, scen),
    )
    if not risk.active and policy.max_vendor_share >= 1 and s_fig.pv_cost < pick.fig.pv_cost * (1 - 1e-12):
        pick = Pick(s_units, s_nodes, source_months(cands, scen.months, s_in), s_out, s_fig, cands)
        notes.append(f"the best single offer ({cid}) is the plan: no combination the solver found does better")
    return single_block, pick


def refuse_empty_stop(solved: Solved, out: Outcome, scen: Scenarios, policy: PlanConfig) -> None:
    """No plan rather than an empty one: with a penalty, serving nothing is feasible, so a solver stopped early may
    hold nothing better."""
    if solved.status != "optimal" and float(out.served.sum()) <= 0 < float(scen.demand.sum()):
        clock = solved.status.startswith("time")
        field, limit = (
            ("plan.time_limit_s", f"its time limit ({policy.time_limit_s:g} s)")
            if clock
            else ("plan.node_limit", f"its node limit ({policy.node_limit:,} nodes)")
        )
        raise InputError(
            [
                Problem(
                    "procure.yaml",
                    None,
                    field,
                    f"the solver stopped at {limit} before finding a plan that serves any demand "
                    f"(its best leaves every task unserved at the unserved price); raise {field}, or lower "
                    "plan.levels or demand.scenarios",
                )
            ]
        )


def savings(
    single_block: SingleBest, fig: Figures, policy: PlanConfig, notes: list[str]
) -> tuple[float | None, float | None]:
    """What the plan saves a task against the best single offer (negative: what a vendor share costs)."""
    saving = saving_share = None
    if single_block.expected_cost_per_task is not None and fig.cost_per_task is not None:
        saving = single_block.expected_cost_per_task - fig.cost_per_task
        saving_share = saving / single_block.expected_cost_per_task
        if policy.max_vendor_share < 1 and saving < 0:
            notes.append(
                f"plan.max_vendor_share {policy.max_vendor_share:g} rules out the single offer; spreading across "
                f"vendors costs {-saving:.5f} per task"
            )
    return saving, saving_share


def signing_deadline(sheet: list[TermSheetRow], as_used: Sequence[Offer] = ()) -> tuple[date | None, str]:
    """The day the contracts signed now must be signed by: the first of their last days to sign and still start on
    time (TermSheetRow.sign_by: the offer's lead time before its start, or its expiry) and the expiry of the offers
    the plan buys capacity from as used, with what sets it."""
    found: list[tuple[date, str]] = [(o.valid_until, f"the offer of {o.vendor} expires then") for o in as_used]
    for row in sheet:
        if row.sign_by >= row.offer_expires:
            found.append((row.offer_expires, f"the offer of {row.vendor} expires then"))
        else:
            found.append(
                (
                    row.sign_by,
                    f"the last day to sign for the {row.gpus:,} GPUs of {row.vendor} to start on {row.start:%-d %B %Y}",
                )
            )
    return earliest(found)


def alone_costs(
    singles: list[tuple[str, tuple[float, list[Unit], np.ndarray] | None]],
    cands: list[Candidate],
    scen: Scenarios,
    delta: np.ndarray,
    penalty: float,
    alpha: float,
    held: Held,
) -> dict[str, float | None]:
    """Each usable offer alone beside what we hold, dispatched like the plan: its expected cost per task (None: it
    cannot serve every scenario alone)."""
    alone: dict[str, float | None] = {}
    for i, (cid, found) in enumerate(singles):
        if found is None:
            alone[cid] = None
            continue
        units, nodes, only = held.beside(i, found[1], found[2], len(cands))
        alone[cid] = figures(dispatch(cands, units, nodes, only, scen, penalty), scen, delta, alpha).cost_per_task
    return alone


@dataclass(frozen=True)
class Held:
    """The signed contracts (contract.signed) every plan holds, as the program's held blocks, and the demand left
    once their capacity serves it: what a single offer is sized for beside them."""

    units: list[Unit]
    offers: np.ndarray  # (offers,) bool: the candidates holding a contract
    residual: Scenarios

    @classmethod
    def of(cls, cands: list[Candidate], scen: Scenarios) -> Held:
        units = [u for u in term_units(cands, scen.months) if u.held]
        offers = np.array([bool(c.held) for c in cands], dtype=bool)
        if not units:
            return cls([], offers, scen)
        capacity, _, _ = fixed_spend(cands, units, np.ones(len(units)), offers, scen.months)
        return cls(units, offers, replace(scen, demand=np.maximum(0.0, scen.demand - capacity[None, :])))

    def beside(
        self, index: int, units: list[Unit], nodes: np.ndarray, count: int
    ) -> tuple[list[Unit], np.ndarray, np.ndarray]:
        """One offer's units and nodes with the held blocks (one node each, fixed), and which offers are in."""
        chosen = np.array([i == index for i in range(count)], dtype=bool) | self.offers
        held = [u for u in self.units if u not in units]  # after the offer's own: its lines come first
        return [*units, *held], np.concatenate([np.asarray(nodes, dtype=float), np.ones(len(held))]), chosen
