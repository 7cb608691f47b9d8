"""The mixed-integer program (docs/plan.md, "The method": variables, constraints, objective), its size checked before
it is built, and the units of money and tasks the solver works in."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from procure.analysis.plan.bands import Bands, initial_bands
from procure.analysis.plan.candidates import Candidate, Source, Unit, term_units
from procure.analysis.plan.discount import pv_months
from procure.errors import InputError, Problem
from procure.model.demand import Scenarios
from procure.model.inputs import PlanConfig


@dataclass
class Model:
    c: np.ndarray
    rows: list[np.ndarray]
    cols: list[np.ndarray]
    vals: list[np.ndarray]
    row_lb: list[float | np.ndarray]
    row_ub: list[float | np.ndarray]
    lb: np.ndarray
    ub: np.ndarray
    integrality: np.ndarray
    nrows: int
    layout: dict[str, slice]
    units: list[Unit]
    sources: list[Source]
    row_names: list[tuple[int, str]] = field(default_factory=list)  # (first row, constraint name)
    bands: Bands | None = None
    tail: np.ndarray | None = None
    a_index: np.ndarray | None = None  # (fee sources, months) -> switch variable within layout["a"]

    def add(self, r: np.ndarray, c: np.ndarray, v: np.ndarray, count: int, lb: float | np.ndarray, ub: float | np.ndarray, name: str) -> int:
        first = self.nrows
        self.rows.append(np.asarray(r, dtype=np.int64) + first)
        self.cols.append(np.asarray(c, dtype=np.int64))
        self.vals.append(np.asarray(v, dtype=float))
        self.row_lb.append(np.broadcast_to(np.asarray(lb, dtype=float), (count,)))
        self.row_ub.append(np.broadcast_to(np.asarray(ub, dtype=float), (count,)))
        self.row_names.append((first, name))
        self.nrows += count
        return first

    def matrix(self):  # type: ignore[no-untyped-def]
        from scipy.sparse import csr_array

        r = np.concatenate(self.rows) if self.rows else np.empty(0, dtype=np.int64)
        c = np.concatenate(self.cols) if self.cols else np.empty(0, dtype=np.int64)
        v = np.concatenate(self.vals) if self.vals else np.empty(0)
        return csr_array((v, (r, c)), shape=(self.nrows, len(self.c))), np.concatenate(self.row_lb), np.concatenate(self.row_ub)

    @property
    def nonzeros(self) -> int:
        return int(sum(len(v) for v in self.vals))


@dataclass(frozen=True)
class Risk:
    """How the model treats CVaR: off, weighted in the objective, or limited."""

    weight: float = 0.0
    limit: float | None = None

    @property
    def active(self) -> bool:
        return self.weight > 0 or self.limit is not None


# The most nonzeros a plan's program may have. HiGHS needs about 1.5 kB of memory a nonzero (measured:
# 600,420 nonzeros, 120 months x 1,000 levels x 2 offers with a penalty, peaked at 1.08 GB and took
# 38 s), so this is about 1.5 GB; 120 months x 10,000 levels ended in std::bad_alloc after 40 s.
MAX_NONZEROS = 1_000_000


def model_size(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, risk: Risk) -> int:
    """The nonzeros of the program `build_model` would write first, counted from its dimensions before anything
    is built: the rows of every band dominate (bands x pay-as-used sources; with CVaR, tail paths x months x
    sources). Every plan prices unserved demand (plan.unserved_penalty_per_task or its default)."""
    H = scen.months
    J = (min(scen.count, policy.levels) + (1 if scen.count > policy.levels else 0)) * H
    P = sum(1 for c in cands if c.source is not None)
    Q = sum(1 for c in cands if c.source is not None and c.fixed_monthly > 0)
    units = term_units(cands, H)
    unit_months = sum(u.last - u.first + 1 for u in units)
    total = H + 5 * unit_months + J * (2 + P) + 2 * Q * J + 6 * len(units) + 3 * Q * H + 2 * unit_months
    if policy.max_vendor_share < 1:
        total += P * J + 3 * P + 3 * len(cands) + 2 * (len(units) + Q * H + P) + len(cands)  # with the vendor switches
    spots = sum(1 for c in cands if c.source is not None and c.source.spot)
    if spots > 1:
        total += spots * J
    if risk.active:
        T = min(scen.count, max(1, math.ceil(1.2 * (1 - policy.cvar_alpha) * scen.count)))
        total += 3 * len(units) + Q * H + T * H * (2 + 2 * P + 2 * Q) + 3 * T + (spots * T * H if spots > 1 else 0)
    return total


def check_size(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, risk: Risk) -> None:
    """Refuse, before building it, a program too large for memory; name the settings that size it."""
    size = model_size(cands, scen, policy, risk)
    if size <= MAX_NONZEROS:
        return
    levels = min(scen.count, policy.levels)
    sources = sum(1 for c in cands if c.source is not None)
    lower = (["plan.levels" + (f" ({policy.levels})" if policy.levels <= scen.count else "")] if scen.count > 2 else []) + (
        [f"demand.scenarios ({scen.count})"] if scen.sampled and scen.count <= policy.levels else []
    ) + [f"demand.months ({scen.months})"]
    raise InputError([Problem(
        "procure.yaml", None, "plan.levels" if policy.levels <= scen.count else ("demand.scenarios" if scen.sampled else "demand.months"),
        f"the plan's program would have about {size:,} nonzeros ({levels:,} demand levels x {scen.months} months x {sources} pay-as-used offers"
        + (", a penalty" if policy.unserved_penalty_per_task is not None else "") + (", CVaR" if risk.active else "")
        + f"), over the {MAX_NONZEROS:,} the solver can take in about 1.5 GB; lower " + ", ".join(lower),
    )])


def build_model(
    cands: list[Candidate], scen: Scenarios, policy: PlanConfig, delta: np.ndarray, risk: Risk, money: float, tasks: float,
    penalty: float | None = None, bands: Bands | None = None, tail: np.ndarray | None = None,
) -> Model:
    """Assemble the MILP. Money in units of `money`, tasks in units of `tasks` (for the solver's numerics).

    `bands`: the demand levels the expected cost sees (default `initial_bands`); `tail`: the paths the CVaR sees
    (default every path), each with its own serving variables so that CVaR is taken on whole paths."""
    if penalty is None:
        penalty = policy.unserved_penalty_per_task
    if bands is None:
        bands = initial_bands(scen, policy.levels)
    S, H = scen.demand.shape
    J = len(bands)
    units = term_units(cands, H)
    sources = [c.source for c in cands if c.source is not None]
    U, P, I = len(units), len(sources), len(cands)
    # Spot or preemptible capacity serves at most plan.max_spot_share of the demand of each band (and of each tail
    # path-month): each spot source on its bounds, several together in one row per band (spot_rows).
    frac = np.array([s.share_limit for s in sources], dtype=float)
    spots = [p for p, s in enumerate(sources) if s.spot]
    spot_share = min((float(frac[p]) for p in spots), default=1.0)
    avail = np.array([c.available(H) for c in cands]).reshape(I, H)
    fee_sources = [p for p, src in enumerate(sources) if cands[src.offer].fixed_monthly > 0]
    # Fees in the months an offer holds capacity: on its commitment switches (one covers a month at most), or, for an
    # offer whose pay-as-used source also carries them, on g_im >= either switch.
    fee_cands = [sources[p].offer for p in fee_sources]
    F, Q = len(fee_cands), len(fee_sources)
    # A source with fixed fees is switched on (its fees paid) in blocks of its offer's minimum term from delivery.
    a_index = np.zeros((Q, H), dtype=np.int64)
    blocks = 0
    for q, p in enumerate(fee_sources):
        first_month = cands[sources[p].offer].start
        term = max(1, sources[p].term_months)
        for first in range(first_month, H, term):
            a_index[q, first : first + term] = blocks
            blocks += 1
        a_index[q, :first_month] = a_index[q, first_month]
    band_demand = bands.demand / tasks
    band_month = bands.month
    risk_paths = (np.arange(S) if tail is None else np.asarray(tail, dtype=np.int64)) if risk.active else np.zeros(0, dtype=np.int64)
    T = len(risk_paths)

    layout: dict[str, slice] = {}
    unit_month_count = [u.last - u.first + 1 for u in units]
    sizes: list[tuple[str, int]] = [("n", U), ("b", U), ("g", F * H), ("a", blocks), ("cap", H), ("y", sum(unit_month_count)), ("z", P * J)]
    if penalty is not None:
        sizes.append(("u", J))
    vendors = sorted({c.vendor for c in cands})
    share_rows = policy.max_vendor_share < 1 and len(vendors) > 1
    if share_rows:
        sizes += [("e", P), ("x", len(vendors) + 1), ("w", len(vendors))]
    if risk.active:
        sizes += [("k", 1), ("eta", 1), ("xi", T), ("cv", 1), ("zt", P * T * H)]
        if penalty is not None:
            sizes.append(("ut", T * H))
    start = 0
    for name, size in sizes:
        layout[name] = slice(start, start + size)
        start += size
    nvar = start
    c = np.zeros(nvar)
    lb = np.zeros(nvar)
    ub = np.full(nvar, np.inf)
    integrality = np.zeros(nvar, dtype=np.uint8)
    model = Model(c, [], [], [], [], [], lb, ub, integrality, 0, layout, units, sources)
    model.bands = bands
    model.a_index = a_index
    model.tail = risk_paths

    n0, b0, g0, a0, cap0, z0 = (layout[k].start for k in ("n", "b", "g", "a", "cap", "z"))
    fixed = np.array([cand.fixed_monthly for cand in cands]) / money
    unit_cost = np.array([u.commit.cost_node_month for u in units]) / money
    unit_tasks = np.array([u.commit.tasks_node_month for u in units]) / tasks
    unit_offer = np.array([u.commit.offer for u in units], dtype=np.int64)
    # A commitment costs its whole term, past the horizon too; its offer's fixed fees past the horizon ride on its switch.
    unit_pv = np.array([pv_months(delta, u.first, u.term_end) for u in units])
    unit_beyond_pv = np.array([pv_months(delta, u.last + 1, u.term_end) for u in units])
    c[layout["n"]] = unit_cost * unit_pv
    on_switch = np.array([u.commit.offer not in fee_cands for u in units], dtype=bool)
    c[layout["b"]] = fixed[unit_offer] * np.where(on_switch, unit_pv, unit_beyond_pv) if U else 0.0
    # committed tasks of one node in each month it covers (prorated in the delivery month)
    unit_month_tasks = [unit_tasks[j] * avail[u.commit.offer, u.first : u.last + 1] for j, u in enumerate(units)]
    # No more nodes than the highest demand in the unit's months can use (at least the minimum): a tight bound
    # makes the relaxation charge fixed costs and minimums nearly in full, which is what makes the solve fast.
    peak = scen.demand.max(axis=0)
    useful = np.array([
        max(u.commit.min_nodes, min(u.commit.max_nodes, math.ceil(float(peak[u.first : u.last + 1].max()) / u.commit.tasks_node_month - 1e-9)))
        if u.commit.tasks_node_month > 0 else u.commit.max_nodes
        for u in units
    ], dtype=float)
    ub[layout["n"]] = useful
    integrality[layout["n"]] = 1
    ub[layout["b"]] = 1
    integrality[layout["b"]] = 1
    ub[layout["g"]] = 1
    ub[layout["a"]] = 1
    integrality[layout["a"]] = 1
    c[layout["g"]] = (fixed[fee_cands][:, None] * delta[None, :H]).ravel() if F else 0.0

    # z[p, j]: tasks served by source p in band j; at most the source's room in the band's month (0 before delivery).
    price = np.array([s.price_per_task for s in sources]) * tasks / money
    room_month = np.array([
        np.where(avail[src.offer] > 0, np.minimum(src.cap_month * np.where(avail[src.offer] > 0, avail[src.offer], 1.0) / tasks, float(scen.demand.max()) / tasks), 0.0)
        for src in sources
    ]).reshape(P, H)
    bw = bands.weight * delta[band_month]
    c[layout["z"]] = (price[:, None] * bw[None, :]).ravel()
    ub[layout["z"]] = (np.minimum(room_month[:, band_month], frac[:, None] * band_demand[None, :])).ravel() if P else 0.0
    if penalty is not None:
        c[layout["u"]] = penalty * tasks / money * bw

    # (a) committed capacity per month: cap_m - sum(tasks per node x n_u over the units covering m) = 0
    # y_um: the capacity of unit u in month m that can be used, at most its nodes' tasks and at most the month's highest
    # demand while it is in use (y_um <= peak_m b_u): capacity above the peak is never used, so a large minimum
    # commitment cannot be bought by the relaxation as a sliver at a sliver of its fees (the same integer plans).
    y0 = layout["y"].start
    y_first = np.concatenate([[0], np.cumsum(unit_month_count)])[:-1].astype(np.int64) if U else np.zeros(0, dtype=np.int64)
    r_list, c_list, v_list = [np.arange(H)], [cap0 + np.arange(H)], [np.ones(H)]
    for j, u in enumerate(units):
        r_list.append(np.arange(u.first, u.last + 1))
        c_list.append(y0 + y_first[j] + np.arange(unit_month_count[j]))
        v_list.append(-np.ones(unit_month_count[j]))
    model.add(np.concatenate(r_list), np.concatenate(c_list), np.concatenate(v_list), H, 0.0, 0.0, "committed capacity")
    if U:
        Y = int(sum(unit_month_count))
        ry = np.arange(Y)
        y_unit = np.repeat(np.arange(U), unit_month_count)
        y_month = np.concatenate([np.arange(u.first, u.last + 1) for u in units])
        model.add(np.concatenate([ry, ry]), np.concatenate([y0 + ry, n0 + y_unit]), np.concatenate([np.ones(Y), -np.concatenate(unit_month_tasks)]), Y, -np.inf, 0.0, "usable committed capacity")
        model.add(np.concatenate([ry, ry]), np.concatenate([y0 + ry, b0 + y_unit]), np.concatenate([np.ones(Y), -peak[y_month] / tasks]), Y, -np.inf, 0.0, "capacity up to the peak")

    # (b) every band served: cap_m + sum_p z_pj (+ u_j) >= D_j
    jj = np.arange(J)
    r_list = [jj] + [jj for _ in range(P)]
    c_list = [cap0 + band_month] + [z0 + p * J + jj for p in range(P)]
    v_list = [np.ones(J)] + [np.ones(J) for _ in range(P)]
    if penalty is not None:
        r_list.append(jj)
        c_list.append(layout["u"].start + jj)
        v_list.append(np.ones(J))
    model.add(np.concatenate(r_list), np.concatenate(c_list), np.concatenate(v_list), J, band_demand, np.inf, "demand served")

    if penalty is None:
        # (b') the worst scenario of each month fits in the committed capacity plus the room of the pay-as-used sources
        # (a source with fixed fees counts only in the months it is switched on)
        worst = scen.demand.max(axis=0) / tasks
        rr, cc, vv, rhs = [np.arange(H)], [cap0 + np.arange(H)], [np.ones(H)], worst.copy()
        rooms = [np.minimum(room_month[p], frac[p] * worst) for p in range(P)]
        if len(spots) > 1:
            together = sum(rooms[p] for p in spots)
            scale = np.where(together > 0, np.minimum(1.0, spot_share * worst / np.where(together > 0, together, 1.0)), 1.0)
            for p in spots:
                rooms[p] = rooms[p] * scale
        for p, src in enumerate(sources):
            room = rooms[p]
            if p in fee_sources:
                q = fee_sources.index(p)
                rr.append(np.arange(H))
                cc.append(a0 + a_index[q])
                vv.append(room)
            else:
                rhs = rhs - room
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), H, rhs, np.inf, "worst scenario served")
    if U:
        j = np.arange(U)
        # (c) a commitment in use lies between its minimum and maximum nodes
        model.add(np.concatenate([j, j]), np.concatenate([n0 + j, b0 + j]), np.concatenate([np.ones(U), -useful]), U, -np.inf, 0.0, "maximum nodes")
        model.add(np.concatenate([j, j]), np.concatenate([n0 + j, b0 + j]), np.concatenate([np.ones(U), -np.array([u.commit.min_nodes for u in units], dtype=float)]), U, 0.0, np.inf, "minimum commitment")
        # (d) one commitment (base terms or one option) per offer per month
        rr, cc = [], []
        for j2, u in enumerate(units):
            months = np.arange(u.first, u.last + 1)
            rr.append(u.commit.offer * H + months)
            cc.append(np.full(len(months), b0 + j2))
        model.add(np.concatenate(rr), np.concatenate(cc), np.ones(sum(len(x) for x in rr)), I * H, -np.inf, 1.0, "one option per offer")
    if F:
        # (e) fees when used: g_im >= the offer's commitment switch covering month m, and >= its source's switch a_m
        slot = {i: f for f, i in enumerate(fee_cands)}
        rr, cc, vv = [np.arange(F * H)], [g0 + np.arange(F * H)], [np.ones(F * H)]
        for j2, u in enumerate(units):
            if u.commit.offer in slot:
                months = np.arange(u.first, u.last + 1)
                rr.append(slot[u.commit.offer] * H + months)
                cc.append(np.full(len(months), b0 + j2))
                vv.append(-np.ones(len(months)))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), F * H, 0.0, np.inf, "fees while holding capacity")
        if Q:
            rows = np.arange(Q * H)
            gcols = np.concatenate([g0 + slot[sources[p].offer] * H + np.arange(H) for p in fee_sources])
            model.add(np.concatenate([rows, rows]), np.concatenate([gcols, a0 + a_index.ravel()]), np.concatenate([np.ones(Q * H), -np.ones(Q * H)]), Q * H, 0.0, np.inf, "fees while used")
    if Q:
        # (f) a pay-as-used source with fixed fees serves only in the months it is switched on: z_pj <= min(room, D_j) a_pm
        rr, cc, vv = [], [], []
        for q, p in enumerate(fee_sources):
            bound = np.minimum(room_month[p, band_month], frac[p] * band_demand)
            rows = q * J + jj
            rr += [rows, rows]
            cc += [z0 + p * J + jj, a0 + a_index[q, band_month]]
            vv += [np.ones(J), -bound]
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), Q * J, -np.inf, 0.0, "pay-as-used offer in use")
    if len(spots) > 1:
        # (f') spot sources together serve at most plan.max_spot_share of each band's demand
        model.add(np.tile(jj, len(spots)), np.concatenate([z0 + p * J + jj for p in spots]), np.ones(len(spots) * J), J, -np.inf, spot_share * band_demand, "spot share")
    if share_rows:
        # (g) vendor share of expected capacity (tasks): committed capacity over the horizon plus expected pay-as-used tasks
        e0 = layout["e"].start
        rr = np.concatenate([np.repeat(np.arange(P), J), np.arange(P)])
        cc = np.concatenate([z0 + np.arange(P * J), e0 + np.arange(P)])
        vv = np.concatenate([-np.tile(bands.weight, P), np.ones(P)])
        model.add(rr, cc, vv, P, 0.0, 0.0, "expected pay-as-used tasks")
        vendor_of = {v: i for i, v in enumerate(vendors)}
        share = policy.max_vendor_share
        x0, t = layout["x"].start, layout["x"].start + len(vendors)
        # x_v = the vendor's expected capacity (each commitment and source in one row: sparse), t = sum of x_v,
        # and x_v <= share x t: nonzeros grow with offers, not offers x vendors.
        rr2 = [vendor_of[cands[u.commit.offer].vendor] for u in units] + [vendor_of[cands[s.offer].vendor] for s in sources] + list(range(len(vendors)))
        cc2 = [n0 + j2 for j2 in range(U)] + [e0 + p for p in range(P)] + [x0 + v for v in range(len(vendors))]
        vv2 = [-float(unit_month_tasks[j2].sum()) for j2 in range(U)] + [-1.0] * P + [1.0] * len(vendors)
        model.add(np.array(rr2), np.array(cc2), np.array(vv2), len(vendors), 0.0, 0.0, "expected capacity by vendor")
        model.add(np.zeros(len(vendors) + 1, dtype=np.int64), np.array([t] + [x0 + v for v in range(len(vendors))]), np.array([1.0] + [-1.0] * len(vendors)), 1, 0.0, 0.0, "expected capacity")
        v_idx = np.arange(len(vendors))
        model.add(np.concatenate([v_idx, v_idx]), np.concatenate([x0 + v_idx, np.full(len(vendors), t)]), np.concatenate([np.ones(len(vendors)), np.full(len(vendors), -share)]), len(vendors), -np.inf, 0.0, "max_vendor_share")
        # (g') a yes/no switch per vendor: every commitment switch and pay-as-used block of the vendor's offers at most
        # its switch, and at least two vendors switched on. The switches cost nothing (each can always be on), so the
        # integer plans and the relaxation's bound are unchanged; they give the solver one variable to branch on that
        # takes a vendor out of the plan whole, where the share rule otherwise leaves it a fraction of many switches.
        # On the benchmark (50 offers, 20 vendors) this cuts the solve from 17-21 s to 11-14 s of CPU at the same plan.
        w0 = layout["w"].start
        ub[layout["w"]] = 1
        integrality[layout["w"]] = 1
        rr, cc, vv = [], [], []
        for j2, u in enumerate(units):
            rr += [len(rr) // 2] * 2
            cc += [b0 + j2, w0 + vendor_of[cands[u.commit.offer].vendor]]
            vv += [1.0, -1.0]
        for q, p in enumerate(fee_sources):
            for k in np.unique(a_index[q]):
                rr += [len(rr) // 2] * 2
                cc += [a0 + int(k), w0 + vendor_of[cands[sources[p].offer].vendor]]
                vv += [1.0, -1.0]
        for p, src in enumerate(sources):
            if p not in fee_sources:  # expected tasks at most the source's room in every band while its vendor is on
                rr += [len(rr) // 2] * 2
                cc += [e0 + p, w0 + vendor_of[cands[src.offer].vendor]]
                vv += [1.0, -float(bands.weight @ ub[z0 + p * J : z0 + (p + 1) * J])]
        model.add(np.array(rr, dtype=np.int64), np.array(cc, dtype=np.int64), np.array(vv), len(rr) // 2, -np.inf, 0.0, "vendor switched on")
        model.add(np.zeros(len(vendors), dtype=np.int64), w0 + v_idx, np.ones(len(vendors)), 1, 2.0, np.inf, "two vendors at least")
    if risk.active:
        # CVaR of each path's whole cost (Rockafellar-Uryasev): a path's loss is its spend over the horizon plus the
        # committed spend past it, per month of the horizon; each path in `tail` is served by its own variables.
        k0, eta, xi0, cv, zt0 = (layout[k].start for k in ("k", "eta", "xi", "cv", "zt"))
        lb[eta] = -np.inf
        # (h) k = commitments and fees over the whole term, undiscounted: sum cost_u x term months x n_u + fees
        rr, cc, vv = [np.zeros(1, dtype=np.int64)], [np.array([k0])], [np.ones(1)]
        if U:
            rr += [np.zeros(U, dtype=np.int64), np.zeros(U, dtype=np.int64)]
            cc += [n0 + np.arange(U), b0 + np.arange(U)]
            fee_months = np.array([u.term_end - u.first + 1 if on_switch[j] else u.beyond for j, u in enumerate(units)], dtype=float)
            vv += [-unit_cost * np.array([u.term_end - u.first + 1 for u in units], dtype=float), -fixed[unit_offer] * fee_months]
        if F:
            rr.append(np.zeros(F * H, dtype=np.int64))
            cc.append(g0 + np.arange(F * H))
            vv.append(-np.repeat(fixed[fee_cands], H))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), 1, 0.0, 0.0, "commitment spend")
        tm = np.arange(T * H)  # (t, m) flattened
        t_path, t_month = np.repeat(risk_paths, H), np.tile(np.arange(H), T)
        # (i) each tail path served in every month
        rr = [tm] + [tm for _ in range(P)]
        cc = [cap0 + t_month] + [zt0 + p * T * H + tm for p in range(P)]
        vv = [np.ones(T * H)] + [np.ones(T * H) for _ in range(P)]
        if penalty is not None:
            ut0 = layout["ut"].start
            rr.append(tm)
            cc.append(ut0 + tm)
            vv.append(np.ones(T * H))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), T * H, scen.demand[t_path, t_month] / tasks, np.inf, "tail path served")
        if P:
            ub[layout["zt"]] = np.concatenate([np.minimum(room_month[p, t_month], frac[p] * scen.demand[t_path, t_month] / tasks) for p in range(P)])
        if len(spots) > 1:
            model.add(np.tile(tm, len(spots)), np.concatenate([zt0 + p * T * H + tm for p in spots]), np.ones(len(spots) * T * H), T * H, -np.inf, spot_share * scen.demand[t_path, t_month] / tasks, "tail spot share")
        for q, p in enumerate(fee_sources):
            bound = np.minimum(room_month[p, t_month], frac[p] * scen.demand[t_path, t_month] / tasks)
            model.add(np.concatenate([tm, tm]), np.concatenate([zt0 + p * T * H + tm, a0 + a_index[q, t_month]]), np.concatenate([np.ones(T * H), -bound]), T * H, -np.inf, 0.0, "tail pay-as-used in use")
        # (j) xi_t >= loss_t - eta, loss_t = (k + sum_m sum_p price_p zt_ptm (+ penalty ut_tm)) / H
        tt = np.arange(T)
        rr = [tt, tt, tt] + [np.repeat(tt, H) for _ in range(P)]
        cc = [xi0 + tt, np.full(T, k0), np.full(T, eta)] + [zt0 + p * T * H + tm for p in range(P)]
        vv = [np.ones(T), np.full(T, -1.0 / H), np.ones(T)] + [np.full(T * H, -price[p] / H) for p in range(P)]
        if penalty is not None:
            rr.append(np.repeat(tt, H))
            cc.append(layout["ut"].start + tm)
            vv.append(np.full(T * H, -penalty * tasks / money / H))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), T, 0.0, np.inf, "CVaR excess")
        # (k) cv = eta + sum_t p_t xi_t / (1 - alpha)
        tail_w = scen.probability[risk_paths] / (1 - policy.cvar_alpha)
        model.add(np.zeros(T + 2, dtype=np.int64), np.concatenate([[cv, eta], xi0 + tt]), np.concatenate([[1.0, -1.0], -tail_w]), 1, 0.0, 0.0, "CVaR definition")
        c[cv] = risk.weight * float(delta[:H].sum())
        if risk.limit is not None:
            ub[cv] = risk.limit / money
    return model


def solver_scales(cands: list[Candidate], scen: Scenarios) -> tuple[float, float]:
    tasks = float(scen.demand.mean()) or 1.0
    prices = [s.price_per_task for c in cands if (s := c.source) is not None] + [
        cm.cost_node_month / cm.tasks_node_month for c in cands for cm in c.commits if cm.tasks_node_month > 0
    ]
    price = float(np.median(prices)) if prices else 1.0
    return max(tasks * price, 1e-9), tasks
