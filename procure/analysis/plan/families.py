"""The rows and bounds of the variable families a vendor share rule and CVaR add to the mixed-integer program
(docs/plan.md, "The method"), written by `program.build_model` after the rows every plan has."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from procure.analysis.plan.program import Coefficients, Frame, Model


def family_bounds(f: Frame, co: Coefficients, model: Model, delta: np.ndarray, money: float, tasks: float) -> None:
    """The bounds, whole numbers and objective of the families a vendor share and CVaR add (their rows are written
    with the other constraints): each vendor's switch is 0 or 1; a tail path's serving at most the source's room and
    share of the path's demand; the CVaR threshold free; the CVaR at plan.cvar_weight, at most plan.cvar_limit."""
    scen, H, P = f.scen, f.H, f.P
    if f.share_rows:
        model.ub[f.layout["w"]] = 1
        model.integrality[f.layout["w"]] = 1
    if not f.risk.active:
        return
    t_path, t_month = np.repeat(f.risk_paths, H), np.tile(np.arange(H), f.T)
    if P:
        model.ub[f.layout["zt"]] = np.concatenate(
            [np.minimum(co.room_month[p, t_month], f.frac[p] * scen.demand[t_path, t_month] / tasks) for p in range(P)]
        )
    model.lb[f.start("eta")] = -np.inf
    model.c[f.start("cv")] = f.risk.weight * float(delta[:H].sum())
    if f.risk.limit is not None:
        model.ub[f.start("cv")] = f.risk.limit / money


def vendor_share_rows(f: Frame, co: Coefficients, model: Model) -> None:
    """(g) the vendor share of expected capacity (tasks): committed capacity over the horizon plus expected
    pay-as-used tasks, each vendor's at most plan.max_vendor_share of the whole."""
    units, sources, cands, vendors, J, P = f.units, f.sources, f.cands, f.vendors, f.J, f.P
    n0, z0, e0 = f.start("n"), f.start("z"), f.start("e")
    rr = np.concatenate([np.repeat(np.arange(P), J), np.arange(P)])
    cc = np.concatenate([z0 + np.arange(P * J), e0 + np.arange(P)])
    vv = np.concatenate([-np.tile(f.bands.weight, P), np.ones(P)])
    model.add(rr, cc, vv, P, 0.0, 0.0, "expected pay-as-used tasks")
    vendor_of = {v: i for i, v in enumerate(vendors)}
    share = f.policy.max_vendor_share
    x0, t = f.start("x"), f.start("x") + len(vendors)
    # x_v = the vendor's expected capacity (each commitment and source in one row: sparse), t = sum of x_v,
    # and x_v <= share x t: nonzeros grow with offers, not offers x vendors.
    # The rule governs what the plan adds: a held contract (contract.signed) is outside it.
    added = [j2 for j2, u in enumerate(units) if not u.held]
    rr2 = (
        [vendor_of[cands[units[j2].commit.offer].vendor] for j2 in added]
        + [vendor_of[cands[s.offer].vendor] for s in sources]
        + list(range(len(vendors)))
    )
    cc2 = [n0 + j2 for j2 in added] + [e0 + p for p in range(P)] + [x0 + v for v in range(len(vendors))]
    vv2 = [-float(co.unit_month_tasks[j2].sum()) for j2 in added] + [-1.0] * P + [1.0] * len(vendors)
    model.add(np.array(rr2), np.array(cc2), np.array(vv2), len(vendors), 0.0, 0.0, "expected capacity by vendor")
    model.add(
        np.zeros(len(vendors) + 1, dtype=np.int64),
        np.array([t] + [x0 + v for v in range(len(vendors))]),
        np.array([1.0] + [-1.0] * len(vendors)),
        1,
        0.0,
        0.0,
        "expected capacity",
    )
    v_idx = np.arange(len(vendors))
    model.add(
        np.concatenate([v_idx, v_idx]),
        np.concatenate([x0 + v_idx, np.full(len(vendors), t)]),
        np.concatenate([np.ones(len(vendors)), np.full(len(vendors), -share)]),
        len(vendors),
        -np.inf,
        0.0,
        "max_vendor_share",
    )
    _vendor_switch_rows(f, model)


def _vendor_switch_rows(f: Frame, model: Model) -> None:
    """(g') a yes/no switch per vendor: every commitment switch and pay-as-used block of the vendor's offers at most
    its switch, and at least two vendors switched on.

    The switches cost nothing (each can always be on), so the integer plans and the relaxation's bound are
    unchanged; they give the solver one variable to branch on that takes a vendor out of the plan whole, where the
    share rule otherwise leaves it a fraction of many switches. On the benchmark (50 offers, 20 vendors) this cuts
    the solve from 17-21 s to 11-14 s of CPU at the same plan."""
    units, sources, cands, vendors, fee_sources, J = f.units, f.sources, f.cands, f.vendors, f.fee_sources, f.J
    b0, a0, z0, e0, w0 = f.start("b"), f.start("a"), f.start("z"), f.start("e"), f.start("w")
    ub = model.ub
    vendor_of = {v: i for i, v in enumerate(vendors)}
    v_idx = np.arange(len(vendors))
    rr, cc, vv = [], [], []
    for j2, u in enumerate(units):
        if u.held:
            continue
        rr += [len(rr) // 2] * 2
        cc += [b0 + j2, w0 + vendor_of[cands[u.commit.offer].vendor]]
        vv += [1.0, -1.0]
    for q, p in enumerate(fee_sources):
        for k in sorted(set(f.a_index[q].ravel().tolist())):  # np.unique's order; np.unique imports numpy.ma
            rr += [len(rr) // 2] * 2
            cc += [a0 + int(k), w0 + vendor_of[cands[sources[p].offer].vendor]]
            vv += [1.0, -1.0]
    for p, src in enumerate(sources):
        if p not in fee_sources:  # expected tasks at most the source's room in every band while its vendor is on
            rr += [len(rr) // 2] * 2
            cc += [e0 + p, w0 + vendor_of[cands[src.offer].vendor]]
            vv += [1.0, -float(f.bands.weight @ ub[z0 + p * J : z0 + (p + 1) * J])]
    model.add(
        np.array(rr, dtype=np.int64),
        np.array(cc, dtype=np.int64),
        np.array(vv),
        len(rr) // 2,
        -np.inf,
        0.0,
        "vendor switched on",
    )
    model.add(
        np.zeros(len(vendors), dtype=np.int64),
        w0 + v_idx,
        np.ones(len(vendors)),
        1,
        2.0,
        np.inf,
        "two vendors at least",
    )


def commitment_spend_row(f: Frame, co: Coefficients, model: Model) -> None:
    """(h) CVaR of each path's whole cost (Rockafellar-Uryasev) starts from what every path pays alike: k = the
    commitments and their fees over the whole term, undiscounted (past the horizon too)."""
    units, U, F, H = f.units, f.U, f.F, f.H
    k0, n0, b0, g0 = f.start("k"), f.start("n"), f.start("b"), f.start("g")
    rr, cc, vv = [np.zeros(1, dtype=np.int64)], [np.array([k0])], [np.ones(1)]
    if U:
        rr += [np.zeros(U, dtype=np.int64), np.zeros(U, dtype=np.int64)]
        cc += [n0 + np.arange(U), b0 + np.arange(U)]
        fee_months = np.array(
            [u.charged_months() if co.on_switch[j] else u.charged_months(u.last + 1) for j, u in enumerate(units)],
            dtype=float,
        )
        vv += [
            -co.unit_cost * np.array([u.charged_months() for u in units], dtype=float),
            -co.fixed[co.unit_offer] * fee_months,
        ]
    if F:
        rr.append(np.zeros(F * H, dtype=np.int64))
        cc.append(g0 + np.arange(F * H))
        vv.append(-np.repeat(co.fixed[f.fee_cands], H))
    model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), 1, 0.0, 0.0, "commitment spend")


def tail_rows(f: Frame, co: Coefficients, model: Model, tasks: float) -> None:
    """(i) each path the CVaR sees served in every month by its own variables, within the same rooms and shares as
    the bands, so that its loss is its whole path's cost."""
    P, T, H, spots, risk_paths, scen = f.P, f.T, f.H, f.spots, f.risk_paths, f.scen
    cap0, a0, zt0 = f.start("cap"), f.start("a"), f.start("zt")
    tm = np.arange(T * H)  # (t, m) flattened
    t_path, t_month = np.repeat(risk_paths, H), np.tile(np.arange(H), T)
    rr = [tm] + [tm for _ in range(P)]
    cc = [cap0 + t_month] + [zt0 + p * T * H + tm for p in range(P)]
    vv = [np.ones(T * H)] + [np.ones(T * H) for _ in range(P)]
    if f.penalty is not None:
        ut0 = f.start("ut")
        rr.append(tm)
        cc.append(ut0 + tm)
        vv.append(np.ones(T * H))
    model.add(
        np.concatenate(rr),
        np.concatenate(cc),
        np.concatenate(vv),
        T * H,
        scen.demand[t_path, t_month] / tasks,
        np.inf,
        "tail path served",
    )
    if len(spots) > 1:
        model.add(
            np.tile(tm, len(spots)),
            np.concatenate([zt0 + p * T * H + tm for p in spots]),
            np.ones(len(spots) * T * H),
            T * H,
            -np.inf,
            f.spot_share * scen.demand[t_path, t_month] / tasks,
            "tail spot share",
        )
    for q, p in enumerate(f.fee_sources):
        bound = np.minimum(co.room_month[p, t_month], f.frac[p] * scen.demand[t_path, t_month] / tasks)
        model.add(
            np.concatenate([tm, tm]),
            np.concatenate([zt0 + p * T * H + tm, a0 + f.a_index[q, t_month]]),
            np.concatenate([np.ones(T * H), -bound]),
            T * H,
            -np.inf,
            0.0,
            "tail pay-as-used in use",
        )


def cvar_rows(f: Frame, co: Coefficients, model: Model, delta: np.ndarray, money: float, tasks: float) -> None:
    """(j) xi_t >= loss_t - eta, loss_t = (k + sum_m sum_p price_p zt_ptm (+ penalty ut_tm)) / H, and (k)
    cv = eta + sum_t p_t xi_t / (1 - alpha): the CVaR in the objective at plan.cvar_weight, at most plan.cvar_limit."""
    P, T, H, penalty = f.P, f.T, f.H, f.penalty
    k0, eta, xi0, cv, zt0 = (f.start(k) for k in ("k", "eta", "xi", "cv", "zt"))
    tm = np.arange(T * H)
    tt = np.arange(T)
    rr = [tt, tt, tt] + [np.repeat(tt, H) for _ in range(P)]
    cc = [xi0 + tt, np.full(T, k0), np.full(T, eta)] + [zt0 + p * T * H + tm for p in range(P)]
    vv = [np.ones(T), np.full(T, -1.0 / H), np.ones(T)] + [np.full(T * H, -co.price[p] / H) for p in range(P)]
    if penalty is not None:
        rr.append(np.repeat(tt, H))
        cc.append(f.start("ut") + tm)
        vv.append(np.full(T * H, -penalty * tasks / money / H))
    model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), T, 0.0, np.inf, "CVaR excess")
    tail_w = f.scen.probability[f.risk_paths] / (1 - f.policy.cvar_alpha)
    model.add(
        np.zeros(T + 2, dtype=np.int64),
        np.concatenate([[cv, eta], xi0 + tt]),
        np.concatenate([[1.0, -1.0], -tail_w]),
        1,
        0.0,
        0.0,
        "CVaR definition",
    )
