"""The plan's figures from its dispatch: expected cost per task, p90 and CVaR of spend (Rockafellar-Uryasev), unused
commitment, the plan's lines, the scenario rows and the months bridged before a late delivery."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from procure.analysis.plan.candidates import Candidate, Unit
from procure.analysis.plan.dispatch import Outcome
from procure.analysis.plan.result import Bridge, PlanLine, ScenarioRow, ShortfallMonth
from procure.model.demand import Scenarios


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    return float(values[order][min(int(np.searchsorted(cum, q * cum[-1] - 1e-12)), len(values) - 1)])


def cvar(values: np.ndarray, weights: np.ndarray, alpha: float) -> float:
    """Rockafellar-Uryasev: CVaR = VaR + E[(L - VaR)+] / (1 - alpha), exact on a discrete distribution."""
    var = weighted_quantile(values, weights, alpha)
    return var + float(weights @ np.maximum(values - var, 0.0)) / weights.sum() / (1 - alpha)


@dataclass
class Figures:
    cost_per_task: float | None
    pv_cost: float
    p90: float
    cvar: float
    unused: float
    payg_share: float
    monthly: float
    unserved: float = 0.0
    beyond: float = 0.0
    shortfall: float = 0.0  # expected unserved tasks x the unserved price over the horizon, undiscounted: not cash
    unserved_tasks: float = 0.0  # expected unserved tasks over the horizon


def path_losses(out: Outcome, months: int) -> np.ndarray:
    """Each path's whole cost per month of the horizon: its spend over the horizon plus the committed spend past it
    (the same for every path), over the horizon's months. The loss whose CVaR the plan reports and limits."""
    return (out.spend.sum(axis=1) + out.beyond_total) / months


def figures(out: Outcome, scen: Scenarios, delta: np.ndarray, alpha: float) -> Figures:
    """The plan's figures. Cash (cost per task, monthly spend, P90 of a month) is what is paid: rent, fees, pay-as-used;
    the unserved tasks' price is the shortfall, apart. `pv_cost` (what the solver minimises and plans are compared on)
    and the CVaR (the risk the solver weighs and limits) include the shortfall."""
    prob = scen.probability
    pv_cost = float(prob @ (out.spend @ delta[: scen.months])) + out.beyond_pv(delta)
    pv_cash = float(prob @ (out.cash @ delta[: scen.months])) + out.beyond_pv(delta)
    pv_tasks = float(prob @ (out.served @ delta[: scen.months]))
    weights = np.repeat(prob / scen.months, scen.months)
    spend = out.cash.ravel()
    unused = np.maximum(out.capacity[None, :] - scen.demand, 0.0)
    committed = float(out.capacity.sum())
    demand = float(prob @ scen.demand.sum(axis=1))
    return Figures(
        cost_per_task=pv_cash / pv_tasks if pv_tasks > 0 else None,
        pv_cost=pv_cost,
        p90=weighted_quantile(spend, weights, 0.9),
        cvar=cvar(path_losses(out, scen.months), prob, alpha),
        unused=float(prob @ unused.sum(axis=1)) / committed if committed > 0 else 0.0,
        payg_share=float(prob @ out.payg.sum(axis=1)) / max(float(prob @ out.served.sum(axis=1)), 1e-300),
        monthly=float(prob @ out.cash.mean(axis=1)),
        unserved=float(prob @ out.unserved.sum(axis=1)) / demand if demand > 0 else 0.0,
        beyond=out.beyond_total,
        shortfall=float(prob @ out.shortfall.sum(axis=1)) if out.shortfall is not None else 0.0,
        unserved_tasks=float(prob @ out.unserved.sum(axis=1)),
    )


def plan_lines(
    cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, out: Outcome, scen: Scenarios
) -> list[PlanLine]:
    total = float(scen.probability @ out.served.sum(axis=1)) or 1.0
    lines: list[PlanLine] = []
    for j, (u, n) in enumerate(zip(units, nodes)):
        if n <= 0:
            continue
        cand = cands[u.commit.offer]
        lines.append(
            PlanLine(
                offer=cand.id,
                vendor=cand.vendor,
                role="commit",
                gpus=int(n) * u.commit.node_gpus,
                term_months=u.commit.term_months,
                price=u.commit.price,
                price_unit="gpu_hour",
                start_month=u.first + 1,
                end_month=u.last + 1,
                option=u.commit.option,
                expected_tasks_share=out.by_unit[j] / total,
                term_end_month=u.term_end + 1,
            )
        )
    for i, tasks in sorted(out.by_source.items(), key=lambda kv: cands[kv[0]].id):
        if tasks.max() <= 0:
            continue
        source = cands[i].source
        assert source is not None
        gpus = (
            int(math.ceil(float(tasks.max()) / source.tasks_per_gpu_month - 1e-9))
            if source.tasks_per_gpu_month
            else None
        )
        lines.append(
            PlanLine(
                offer=cands[i].id,
                vendor=cands[i].vendor,
                role="pay_as_used",
                gpus=gpus,
                term_months=None,
                price=source.price,
                price_unit=source.price_unit,
                expected_tasks_share=float(scen.probability @ tasks.sum(axis=1)) / total,
            )
        )
    return lines


def scenario_picks(out: Outcome, scen: Scenarios, delta: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """Low, base and high (the lowest, middle and highest third of sampled paths by total demand, or each explicit
    path), and the worst 10% by cost per task."""
    pv_cost = out.spend @ delta[: scen.months] + out.beyond_pv(delta)
    pv_tasks = out.served @ delta[: scen.months]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_task = np.where(pv_tasks > 0, pv_cost / pv_tasks, np.nan)
    picks: list[tuple[str, np.ndarray]] = []
    if scen.sampled:
        # Thirds of the sampled paths by total demand: each row is a third of the probability, so a
        # reader sees what a low, a middle and a high outcome cost, not one path of 500.
        order = np.argsort(scen.demand.sum(axis=1), kind="stable")
        picks += list(zip(("low", "base", "high"), np.array_split(order, 3)))
    else:
        picks += [(name, np.array([i])) for i, name in enumerate(scen.names)]
    # The worst 10%: the scenarios with the highest cost per task, up to a tenth of the probability.
    ranking = np.argsort(np.nan_to_num(-per_task, nan=np.inf), kind="stable")
    cum = np.cumsum(scen.probability[ranking])
    picks.append(("worst 10%", ranking[: max(1, int(np.searchsorted(cum, 0.1 - 1e-12)) + 1)]))
    return picks


def scenario_rows(out: Outcome, scen: Scenarios, delta: np.ndarray) -> list[ScenarioRow]:
    """The plan's figures in each of `scenario_picks`: cash (cost per task, highest month), and the unserved tasks and
    their price (the shortfall) apart."""
    pv_cost = out.cash @ delta[: scen.months] + out.beyond_pv(delta)
    shortfall = out.shortfall.sum(axis=1) if out.shortfall is not None else np.zeros(scen.count)
    pv_tasks = out.served @ delta[: scen.months]
    committed = out.capacity.sum()
    unused = np.maximum(out.capacity[None, :] - scen.demand, 0.0).sum(axis=1)

    def row(name: str, pick: np.ndarray) -> ScenarioRow:
        w = scen.probability[pick]
        tasks = float(w @ pv_tasks[pick])
        served = float(w @ out.served[pick].sum(axis=1))
        return ScenarioRow(
            name=name,
            probability=float(w.sum()),
            demand_per_month=float(w @ scen.demand[pick].mean(axis=1)) / float(w.sum()),
            cost_per_task=float(w @ pv_cost[pick]) / tasks if tasks > 0 else None,
            unused_share=float(w @ unused[pick]) / (committed * float(w.sum())) if committed > 0 else 0.0,
            pay_as_used_share=float(w @ out.payg[pick].sum(axis=1)) / served if served > 0 else 0.0,
            max_monthly_spend=float(out.cash[pick].max()),
            unserved_share=float(w @ out.unserved[pick].sum(axis=1))
            / max(float(w @ scen.demand[pick].sum(axis=1)), 1e-300),
            unserved_tasks=float(w @ out.unserved[pick].sum(axis=1)) / float(w.sum()),
            shortfall_cost=float(w @ shortfall[pick]) / float(w.sum()),
        )

    return [row(name, pick) for name, pick in scenario_picks(out, scen, delta)]


def bridge_figures(
    cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, out: Outcome, scen: Scenarios
) -> list[Bridge]:
    """For each offer in the plan delivered after month 1: what serves the months before, and what they cost."""
    used = {u.commit.offer for u, n in zip(units, nodes) if n > 0} | {
        i for i, t in out.by_source.items() if t.max() > 0
    }
    lines = []
    prob = scen.probability
    for i in sorted(used, key=lambda i: cands[i].id):
        cand = cands[i]
        if cand.start == 0:
            continue
        before = slice(0, cand.start)
        servers = sorted(
            {cands[u.commit.offer].id for u, n in zip(units, nodes) if n > 0 and u.first < cand.start}
            | {cands[j].id for j, t in out.by_source.items() if t[:, before].max(initial=0) > 0}
        )
        spend = float(prob @ out.cash[:, before].sum(axis=1))
        shortfall = float(prob @ out.shortfall[:, before].sum(axis=1)) if out.shortfall is not None else 0.0
        unserved = float(prob @ out.unserved[:, before].sum(axis=1)) / max(
            float(prob @ scen.demand[:, before].sum(axis=1)), 1e-300
        )
        lines.append(
            Bridge(
                offer=cand.id,
                vendor=cand.vendor,
                delivery_month=cand.start + 1,
                served_by=servers,
                cost=spend,
                unserved_share=unserved,
                shortfall_cost=shortfall,
            )
        )
    return lines


def shortfall_months(
    out: Outcome, scen: Scenarios, delta: np.ndarray, penalty: float, beyond_offers: np.ndarray
) -> list[ShortfallMonth]:
    """Each month of the horizon: the expected demand left unserved and its price (`penalty` a task, apart from the
    cash), the most any scenario leaves, the part beyond what every usable offer together can serve
    (`beyond_offers`, (S, H): solver.shortfall's beyond_may), and the unserved tasks in each scenario row."""
    prob = scen.probability
    picks = scenario_picks(out, scen, delta)
    demand = prob @ scen.demand
    unserved = prob @ out.unserved
    beyond = prob @ np.maximum(np.minimum(beyond_offers, out.unserved), 0.0)
    rows = []
    for m in range(scen.months):
        rows.append(
            ShortfallMonth(
                month=m + 1,
                demand=float(demand[m]),
                unserved_tasks=float(unserved[m]),
                unserved_share=float(unserved[m] / demand[m]) if demand[m] > 0 else 0.0,
                shortfall_cost=float(unserved[m]) * penalty,
                most_unserved_tasks=float(out.unserved[:, m].max(initial=0.0)),
                beyond_offers_tasks=float(beyond[m]),
                by_scenario={
                    name: float(prob[pick] @ out.unserved[pick, m]) / float(prob[pick].sum()) for name, pick in picks
                },
            )
        )
    return rows
