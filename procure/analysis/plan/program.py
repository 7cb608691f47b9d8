"""The mixed-integer program (docs/plan.md, "The method": variables, constraints, objective), its size checked before
it is built, and the units of money and tasks the solver works in."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from procure.analysis.plan import families
from procure.analysis.plan.bands import Bands, initial_bands
from procure.analysis.plan.candidates import Candidate, Source, Unit, term_units
from procure.analysis.plan.discount import pv_shares
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
    rows_added: int  # rows written so far (`nrows` writes every row first)
    layout: dict[str, slice]
    units: list[Unit]
    sources: list[Source]
    row_names: list[tuple[int, str]] = field(default_factory=list)  # (first row, constraint name)
    bands: Bands | None = None
    tail: np.ndarray | None = None
    a_index: np.ndarray | None = None  # (fee sources, months) -> switch variable within layout["a"]
    # The constraint rows, written when first needed (`matrix`, `nrows`, `nonzeros`): a solution read back from the
    # solve cache needs only the variables, their bounds and the objective, which `build_model` writes at once.
    pending: Callable[[], None] | None = None

    def constraints(self) -> None:
        """Write the constraint rows, once."""
        write, self.pending = self.pending, None
        if write is not None:
            write()

    @property
    def nrows(self) -> int:
        self.constraints()
        return self.rows_added

    def add(
        self,
        r: np.ndarray,
        c: np.ndarray,
        v: np.ndarray,
        count: int,
        lb: float | np.ndarray,
        ub: float | np.ndarray,
        name: str,
    ) -> int:
        first = self.rows_added
        self.rows.append(np.asarray(r, dtype=np.int64) + first)
        self.cols.append(np.asarray(c, dtype=np.int64))
        self.vals.append(np.asarray(v, dtype=float))
        self.row_lb.append(np.broadcast_to(np.asarray(lb, dtype=float), (count,)))
        self.row_ub.append(np.broadcast_to(np.asarray(ub, dtype=float), (count,)))
        self.row_names.append((first, name))
        self.rows_added += count
        return first

    def matrix(self):  # type: ignore[no-untyped-def]
        from scipy.sparse import csr_array

        self.constraints()
        r = np.concatenate(self.rows) if self.rows else np.empty(0, dtype=np.int64)
        c = np.concatenate(self.cols) if self.cols else np.empty(0, dtype=np.int64)
        v = np.concatenate(self.vals) if self.vals else np.empty(0)
        return (
            csr_array((v, (r, c)), shape=(self.nrows, len(self.c))),
            np.concatenate(self.row_lb),
            np.concatenate(self.row_ub),
        )

    @property
    def nonzeros(self) -> int:
        self.constraints()
        return int(sum(len(v) for v in self.vals))


@dataclass(frozen=True)
class Risk:
    """How the model treats CVaR: off, weighted in the objective, or limited."""

    weight: float = 0.0
    limit: float | None = None

    @property
    def active(self) -> bool:
        return self.weight > 0 or self.limit is not None


@dataclass(frozen=True)
class Setting:
    """What a plan's program is built from besides its offers (`build_model`): the demand scenarios, the plan's
    settings, each month's discount factor, how CVaR counts, the units of money and tasks the solver works in, and the
    price of an unserved task (None: plan.unserved_penalty_per_task)."""

    scen: Scenarios
    policy: PlanConfig
    delta: np.ndarray
    risk: Risk
    money: float
    tasks: float
    penalty: float | None = None


# The most nonzeros a plan's program may have. HiGHS needs about 1.5 kB of memory a nonzero (measured:
# 600,420 nonzeros, 120 months x 1,000 levels x 2 offers with a penalty, peaked at 1.08 GB and took
# 38 s), so this is about 1.5 GB; 120 months x 10,000 levels ended in std::bad_alloc after 40 s.
MAX_NONZEROS = 1_000_000
# The most nonzeros of the linear relaxation over every offer that a shortlist is chosen from (no whole numbers: no
# branch-and-bound tree, no cut pool). Measured: `procure plan` on 10,000 generated offers (benchmarks/synthetic.py;
# 2,812 usable, a relaxation of about 1,760,000 nonzeros) peaked at 3.3 GB for the whole process, so this is about
# 4 GB.
RELAXATION_MAX_NONZEROS = 2_000_000


def model_size(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, risk: Risk) -> int:
    """The nonzeros of the program `build_model` would write first, counted from its dimensions before anything
    is built: the rows of every band dominate (bands x pay-as-used sources; with CVaR, tail paths x months x
    sources). Every plan prices unserved demand (plan.unserved_penalty_per_task or the market default)."""
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


def check_size(
    cands: list[Candidate], scen: Scenarios, policy: PlanConfig, risk: Risk, limit: int = MAX_NONZEROS
) -> None:
    """Refuse, before building it, a program too large for memory; name the settings that size it. `limit`: the most
    nonzeros (RELAXATION_MAX_NONZEROS for a linear relaxation)."""
    size = model_size(cands, scen, policy, risk)
    if size <= limit:
        return
    levels = min(scen.count, policy.levels)
    sources = sum(1 for c in cands if c.source is not None)
    lower = (
        (["plan.levels" + (f" ({policy.levels})" if policy.levels <= scen.count else "")] if scen.count > 2 else [])
        + ([f"demand.scenarios ({scen.count})"] if scen.sampled and scen.count <= policy.levels else [])
        + [f"demand.months ({scen.months})"]
    )
    raise InputError(
        [
            Problem(
                "procure.yaml",
                None,
                "plan.levels"
                if policy.levels <= scen.count
                else ("demand.scenarios" if scen.sampled else "demand.months"),
                f"the plan's program would have about {size:,} nonzeros ({levels:,} demand levels x {scen.months} "
                f"months x {sources} pay-as-used offers"
                + (", a penalty" if policy.unserved_penalty_per_task is not None else "")
                + (", CVaR" if risk.active else "")
                + f"), over the {limit:,} the solver can take in about "
                + ("1.5 GB" if limit == MAX_NONZEROS else "4 GB")
                + "; lower "
                + ", ".join(lower),
            )
        ]
    )


def build_model(
    cands: list[Candidate], setting: Setting, bands: Bands | None = None, tail: np.ndarray | None = None
) -> Model:
    """Assemble the MILP. Money in units of `setting.money`, tasks in units of `setting.tasks` (for the solver's
    numerics).

    `bands`: the demand levels the expected cost sees (default `initial_bands`); `tail`: the paths the CVaR sees
    (default every path), each with its own serving variables so that CVaR is taken on whole paths.

    In the steps of docs/plan.md, "The method": the variables and where each lies, their costs and bounds (the
    objective), then the constraints, always in this order (among equally good plans, which one the solver
    returns depends on the order of its columns and rows). The constraints are written when first needed
    (`Model.constraints`): a plan read back from the solve cache never needs them."""
    scen, policy, delta, risk = setting.scen, setting.policy, setting.delta, setting.risk
    money, tasks, penalty = setting.money, setting.tasks, setting.penalty
    if penalty is None:
        penalty = policy.unserved_penalty_per_task
    if bands is None:
        bands = initial_bands(scen, policy.levels)
    f = _frame(cands, scen, policy, risk, penalty, bands, tail, tasks)
    co = _coefficients(f, delta, money, tasks)
    model = _objective_and_bounds(f, co, delta, money, tasks)
    families.family_bounds(f, co, model, delta, money, tasks)

    def constraints() -> None:
        _capacity_rows(f, co, model, tasks)
        _demand_rows(f, co, model, tasks)
        _commitment_rows(f, co, model)
        _fee_rows(f, co, model)
        if f.share_rows:
            families.vendor_share_rows(f, co, model)
        if risk.active:
            families.commitment_spend_row(f, co, model)
            families.tail_rows(f, co, model, tasks)
            families.cvar_rows(f, co, model, delta, money, tasks)

    model.pending = constraints
    return model


@dataclass
class Frame:
    """The program's shape, shared by the steps of `build_model`: the commitment blocks and pay-as-used sources,
    the fee switches of sources with fixed fees, the bands and tail paths it sees, and where each family of
    variables lies (`layout`, `nvar` in all)."""

    cands: list[Candidate]
    scen: Scenarios
    policy: PlanConfig
    risk: Risk
    penalty: float | None
    bands: Bands
    units: list[Unit]
    sources: list[Source]
    frac: np.ndarray  # (P,) the most of a band's demand each source may serve
    spots: list[int]  # the spot sources
    spot_share: float  # the most of a band's demand spot sources serve together
    avail: np.ndarray  # (I, H) the share of each month each offer's capacity exists
    fee_sources: list[int]  # sources whose offer has fixed fees
    fee_cands: list[int]  # their offers
    a_index: np.ndarray  # (fee sources, months) -> switch variable within layout["a"]
    blocks: int
    band_demand: np.ndarray  # (J,) in units of tasks
    band_month: np.ndarray
    risk_paths: np.ndarray  # the paths the CVaR sees (none without CVaR)
    unit_month_count: list[int]
    vendors: list[str]
    share_rows: bool  # a vendor share rule binds
    layout: dict[str, slice]
    nvar: int

    @property
    def H(self) -> int:
        return int(self.scen.demand.shape[1])

    @property
    def J(self) -> int:
        return len(self.bands)

    @property
    def U(self) -> int:
        return len(self.units)

    @property
    def P(self) -> int:
        return len(self.sources)

    @property
    def F(self) -> int:
        return len(self.fee_cands)

    @property
    def Q(self) -> int:
        return len(self.fee_sources)

    @property
    def T(self) -> int:
        return len(self.risk_paths)

    def start(self, name: str) -> int:
        return self.layout[name].start


def _frame(
    cands: list[Candidate],
    scen: Scenarios,
    policy: PlanConfig,
    risk: Risk,
    penalty: float | None,
    bands: Bands,
    tail: np.ndarray | None,
    tasks: float,
) -> Frame:
    """The variables (docs/plan.md, "Variables"): commitment blocks from each offer's delivery, pay-as-used sources,
    the switches of sources with fixed fees, and the families a penalty, a vendor share and CVaR add, laid out one
    after another."""
    S, H = scen.demand.shape
    units = term_units(cands, H)
    sources = [c.source for c in cands if c.source is not None]
    U, P, n_cands = len(units), len(sources), len(cands)
    # Spot or preemptible capacity serves at most plan.max_spot_share of the demand of each band (and of each tail
    # path-month): each spot source on its bounds, several together in one row per band (spot_rows).
    frac = np.array([s.share_limit for s in sources], dtype=float)
    spots = [p for p, s in enumerate(sources) if s.spot]
    spot_share = min((float(frac[p]) for p in spots), default=1.0)
    avail = np.array([c.available(H) for c in cands]).reshape(n_cands, H)
    fee_sources, fee_cands, a_index, blocks = _fee_switches(cands, sources, H)
    F = len(fee_cands)
    J = len(bands)
    risk_paths = (
        (np.arange(S) if tail is None else np.asarray(tail, dtype=np.int64))
        if risk.active
        else np.zeros(0, dtype=np.int64)
    )
    T = len(risk_paths)

    unit_month_count = [u.last - u.first + 1 for u in units]
    sizes: list[tuple[str, int]] = [
        ("n", U),
        ("b", U),
        ("g", F * H),
        ("a", blocks),
        ("cap", H),
        ("y", sum(unit_month_count)),
        ("z", P * J),
    ]
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
    layout, start = _lay_out(sizes)
    return Frame(
        cands,
        scen,
        policy,
        risk,
        penalty,
        bands,
        units,
        sources,
        frac,
        spots,
        spot_share,
        avail,
        fee_sources,
        fee_cands,
        a_index,
        blocks,
        bands.demand / tasks,
        bands.month,
        risk_paths,
        unit_month_count,
        vendors,
        share_rows,
        layout,
        start,
    )


def _fee_switches(
    cands: list[Candidate], sources: list[Source], H: int
) -> tuple[list[int], list[int], np.ndarray, int]:
    """The pay-as-used sources with fixed fees, their offers, and the switch (within layout["a"]) covering each of
    their months, with the number of switches.

    Fees in the months an offer holds capacity: on its commitment switches (one covers a month at most), or, for an
    offer whose pay-as-used source also carries them, on g_im >= either switch. A source with fixed fees is switched
    on (its fees paid) in blocks of its offer's minimum term from delivery."""
    fee_sources = [p for p, src in enumerate(sources) if cands[src.offer].fixed_monthly > 0]
    fee_cands = [sources[p].offer for p in fee_sources]
    a_index = np.zeros((len(fee_sources), H), dtype=np.int64)
    blocks = 0
    for q, p in enumerate(fee_sources):
        first_month = cands[sources[p].offer].start
        term = max(1, sources[p].term_months)
        for first in range(first_month, H, term):
            a_index[q, first : first + term] = blocks
            blocks += 1
        a_index[q, :first_month] = a_index[q, first_month]
    return fee_sources, fee_cands, a_index, blocks


def _lay_out(sizes: list[tuple[str, int]]) -> tuple[dict[str, slice], int]:
    """Each family of variables after the one before it: where each lies, and the number of variables in all."""
    layout: dict[str, slice] = {}
    start = 0
    for name, size in sizes:
        layout[name] = slice(start, start + size)
        start += size
    return layout, start


@dataclass
class Coefficients:
    """What each commitment block and each pay-as-used source costs and can serve, in the solver's units."""

    fixed: np.ndarray  # (n_cands,) each offer's fixed fees a month
    unit_cost: np.ndarray  # (U,) a node-month of each block
    unit_offer: np.ndarray  # (U,) its offer
    on_switch: (
        np.ndarray
    )  # (U,) its offer's fees ride on the block's switch (the offer has no source that carries them)
    unit_month_tasks: list[np.ndarray]  # committed tasks of one node in each month the block covers
    peak: np.ndarray  # (H,) the highest demand of each month
    useful: np.ndarray  # (U,) the most nodes the block's peak demand can use
    price: np.ndarray  # (P,) each source's price per task
    room_month: np.ndarray  # (P, H) each source's room a month (0 before delivery)
    bw: np.ndarray  # (J,) each band's probability, discounted


def useful_nodes(u: Unit, peak: np.ndarray) -> int:
    """The most nodes of a block that the highest demand of its months (`peak`, by month) can use, at least its
    minimum: more nodes than that serve nothing more."""
    c = u.commit
    if not c.tasks_node_month > 0:
        return c.max_nodes
    most = math.ceil(float(peak[u.first : u.last + 1].max()) / c.tasks_node_month - 1e-9)
    return max(c.min_nodes, min(c.max_nodes, most))


def _coefficients(f: Frame, delta: np.ndarray, money: float, tasks: float) -> Coefficients:
    """Costs and capacities from the cost model (docs/plan.md, "Costs"), scaled to the solver's units."""
    cands, units, sources, scen, H, P = f.cands, f.units, f.sources, f.scen, f.H, f.P
    fixed = np.array([cand.fixed_monthly for cand in cands]) / money
    unit_cost = np.array([u.cost_node_month for u in units]) / money
    unit_tasks = np.array([u.commit.tasks_node_month for u in units]) / tasks
    unit_offer = np.array([u.commit.offer for u in units], dtype=np.int64)
    on_switch = np.array([u.commit.offer not in f.fee_cands for u in units], dtype=bool)
    # committed tasks of one node in each month it covers (prorated in the delivery month)
    unit_month_tasks = [
        unit_tasks[j] * u.available(cands[u.commit.offer], H)[u.first : u.last + 1] for j, u in enumerate(units)
    ]
    # No more nodes than the highest demand in the unit's months can use (at least the minimum): a tight bound
    # makes the relaxation charge fixed costs and minimums nearly in full, which is what makes the solve fast.
    peak = scen.demand.max(axis=0)
    useful = np.array([useful_nodes(u, peak) for u in units], dtype=float)
    price = np.array([s.price_per_task for s in sources]) * tasks / money
    avail = f.avail
    room_month = np.array(
        [
            np.where(
                avail[src.offer] > 0,
                np.minimum(
                    src.cap_month * np.where(avail[src.offer] > 0, avail[src.offer], 1.0) / tasks,
                    float(scen.demand.max()) / tasks,
                ),
                0.0,
            )
            for src in sources
        ]
    ).reshape(P, H)
    bw = f.bands.weight * delta[f.band_month]
    return Coefficients(fixed, unit_cost, unit_offer, on_switch, unit_month_tasks, peak, useful, price, room_month, bw)


def _objective_and_bounds(f: Frame, co: Coefficients, delta: np.ndarray, money: float, tasks: float) -> Model:
    """The objective (docs/plan.md, "Objective") and each variable's bounds and integrality: a commitment costs its
    whole term, past the horizon too; fees ride on the switches; pay-as-used and unserved tasks at each band's
    discounted probability."""
    layout, units, H, U, F, P = f.layout, f.units, f.H, f.U, f.F, f.P
    c = np.zeros(f.nvar)
    lb = np.zeros(f.nvar)
    ub = np.full(f.nvar, np.inf)
    integrality = np.zeros(f.nvar, dtype=np.uint8)
    model = Model(c, [], [], [], [], [], lb, ub, integrality, 0, layout, units, f.sources)
    model.bands = f.bands
    model.a_index = f.a_index
    model.tail = f.risk_paths
    # A commitment costs its whole term, past the horizon too; its offer's fixed fees past the horizon ride on its
    # switch.
    unit_pv = np.array([pv_shares(delta, u.first, u.shares()) for u in units])
    unit_beyond_pv = np.array([pv_shares(delta, u.last + 1, u.shares()[u.last + 1 - u.first :]) for u in units])
    c[layout["n"]] = co.unit_cost * unit_pv
    c[layout["b"]] = co.fixed[co.unit_offer] * np.where(co.on_switch, unit_pv, unit_beyond_pv) if U else 0.0
    ub[layout["n"]] = co.useful
    integrality[layout["n"]] = 1
    ub[layout["b"]] = 1
    integrality[layout["b"]] = 1
    # A held contract (contract.signed) is in the plan whatever it costs: its one node of every GPU held is fixed.
    held = np.array([u.held for u in units], dtype=bool)
    if held.any():
        lb[f.start("n") + np.flatnonzero(held)] = 1
        ub[f.start("n") + np.flatnonzero(held)] = 1
        lb[f.start("b") + np.flatnonzero(held)] = 1
    ub[layout["g"]] = 1
    ub[layout["a"]] = 1
    integrality[layout["a"]] = 1
    c[layout["g"]] = (co.fixed[f.fee_cands][:, None] * delta[None, :H]).ravel() if F else 0.0
    # z[p, j]: tasks served by source p in band j; at most the source's room in the band's month (0 before delivery).
    c[layout["z"]] = (co.price[:, None] * co.bw[None, :]).ravel()
    ub[layout["z"]] = (
        (np.minimum(co.room_month[:, f.band_month], f.frac[:, None] * f.band_demand[None, :])).ravel() if P else 0.0
    )
    if f.penalty is not None:
        c[layout["u"]] = f.penalty * tasks / money * co.bw
    return model


def _capacity_rows(f: Frame, co: Coefficients, model: Model, tasks: float) -> None:
    """(a) committed capacity per month: cap_m - sum(tasks per node x n_u over the units covering m) = 0.

    y_um: the capacity of unit u in month m that can be used, at most its nodes' tasks and at most the month's highest
    demand while it is in use (y_um <= peak_m b_u): capacity above the peak is never used, so a large minimum
    commitment cannot be bought by the relaxation as a sliver at a sliver of its fees (the same integer plans).
    Held contracts (contract.signed: one node, fixed) serve first: a unit the plan adds can use at most the peak
    left over them, y_um <= max(0, peak_m - held_m) b_u (any plan's capacity can be moved onto what is held, so
    this too removes no plan; on the example it raises the relaxation's bound 0.16% and halves the second solve)."""
    units, unit_month_count, H, U = f.units, f.unit_month_count, f.H, f.U
    n0, b0, cap0, y0 = f.start("n"), f.start("b"), f.start("cap"), f.start("y")
    y_first = (
        np.concatenate([[0], np.cumsum(unit_month_count)])[:-1].astype(np.int64) if U else np.zeros(0, dtype=np.int64)
    )
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
        model.add(
            np.concatenate([ry, ry]),
            np.concatenate([y0 + ry, n0 + y_unit]),
            np.concatenate([np.ones(Y), -np.concatenate(co.unit_month_tasks)]),
            Y,
            -np.inf,
            0.0,
            "usable committed capacity",
        )
        held = np.zeros(H)
        for j, u in enumerate(units):
            if u.held:
                held[u.first : u.last + 1] += co.unit_month_tasks[j]
        peak = co.peak / tasks
        added = np.array([not u.held for u in units], dtype=bool)[y_unit]
        left = np.where(added, np.maximum(0.0, peak[y_month] - held[y_month]), peak[y_month])
        model.add(
            np.concatenate([ry, ry]),
            np.concatenate([y0 + ry, b0 + y_unit]),
            np.concatenate([np.ones(Y), -left]),
            Y,
            -np.inf,
            0.0,
            "capacity up to the peak",
        )


def _demand_rows(f: Frame, co: Coefficients, model: Model, tasks: float) -> None:
    """(b) every band served: cap_m + sum_p z_pj (+ u_j) >= D_j; without an unserved price, (b') the worst scenario of
    each month within the committed capacity and the room of the pay-as-used sources."""
    J, P, H, band_month, penalty = f.J, f.P, f.H, f.band_month, f.penalty
    cap0, z0, a0 = f.start("cap"), f.start("z"), f.start("a")
    jj = np.arange(J)
    r_list = [jj] + [jj for _ in range(P)]
    c_list = [cap0 + band_month] + [z0 + p * J + jj for p in range(P)]
    v_list = [np.ones(J)] + [np.ones(J) for _ in range(P)]
    if penalty is not None:
        r_list.append(jj)
        c_list.append(f.start("u") + jj)
        v_list.append(np.ones(J))
    model.add(
        np.concatenate(r_list),
        np.concatenate(c_list),
        np.concatenate(v_list),
        J,
        f.band_demand,
        np.inf,
        "demand served",
    )

    if penalty is None:
        # (b') the worst scenario of each month fits in the committed capacity plus the room of the pay-as-used sources
        # (a source with fixed fees counts only in the months it is switched on)
        worst = f.scen.demand.max(axis=0) / tasks
        rr, cc, vv, rhs = [np.arange(H)], [cap0 + np.arange(H)], [np.ones(H)], worst.copy()
        rooms = [np.minimum(co.room_month[p], f.frac[p] * worst) for p in range(P)]
        if len(f.spots) > 1:
            together = sum(rooms[p] for p in f.spots)
            scale = np.where(
                together > 0, np.minimum(1.0, f.spot_share * worst / np.where(together > 0, together, 1.0)), 1.0
            )
            for p in f.spots:
                rooms[p] = rooms[p] * scale
        for p in range(len(f.sources)):
            room = rooms[p]
            if p in f.fee_sources:
                q = f.fee_sources.index(p)
                rr.append(np.arange(H))
                cc.append(a0 + f.a_index[q])
                vv.append(room)
            else:
                rhs = rhs - room
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), H, rhs, np.inf, "worst scenario served")


def _commitment_rows(f: Frame, co: Coefficients, model: Model) -> None:
    """(c) a commitment in use lies between its minimum and maximum nodes; (d) one commitment (base terms or one
    option) per offer per month."""
    units, U, H = f.units, f.U, f.H
    if not U:
        return
    n0, b0 = f.start("n"), f.start("b")
    j = np.arange(U)
    model.add(
        np.concatenate([j, j]),
        np.concatenate([n0 + j, b0 + j]),
        np.concatenate([np.ones(U), -co.useful]),
        U,
        -np.inf,
        0.0,
        "maximum nodes",
    )
    model.add(
        np.concatenate([j, j]),
        np.concatenate([n0 + j, b0 + j]),
        np.concatenate([np.ones(U), -np.array([u.commit.min_nodes for u in units], dtype=float)]),
        U,
        0.0,
        np.inf,
        "minimum commitment",
    )
    rr, cc, vv = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
    for j2, u in enumerate(units):
        if u.held:
            continue  # what we hold runs beside what we add to the same offer
        months = np.arange(u.first, u.last + 1)
        rr.append(u.commit.offer * H + months)
        cc.append(np.full(len(months), b0 + j2))
        # by the share of the month each block holds: a term and its renewal meet within a month (calendar terms)
        vv.append(u.shares()[: len(months)])
    model.add(
        np.concatenate(rr),
        np.concatenate(cc),
        np.concatenate(vv),
        len(f.cands) * H,
        -np.inf,
        1.0,
        "one option per offer",
    )


def _fee_rows(f: Frame, co: Coefficients, model: Model) -> None:
    """(e) fees while an offer holds capacity or its source is switched on; (f) a source with fixed fees serves only
    when switched on; (f') spot sources together at most plan.max_spot_share of each band's demand."""
    units, sources, fee_sources, a_index, H, J, F, Q = f.units, f.sources, f.fee_sources, f.a_index, f.H, f.J, f.F, f.Q
    b0, g0, a0, z0 = f.start("b"), f.start("g"), f.start("a"), f.start("z")
    jj = np.arange(J)
    if F:
        # (e) fees when used: g_im >= the offer's commitment switch covering month m, and >= its source's switch a_m
        slot = {i: k for k, i in enumerate(f.fee_cands)}
        rr, cc, vv = [np.arange(F * H)], [g0 + np.arange(F * H)], [np.ones(F * H)]
        for j2, u in enumerate(units):
            if u.commit.offer in slot:
                months = np.arange(u.first, u.last + 1)
                rr.append(slot[u.commit.offer] * H + months)
                cc.append(np.full(len(months), b0 + j2))
                vv.append(-np.ones(len(months)))
        model.add(
            np.concatenate(rr),
            np.concatenate(cc),
            np.concatenate(vv),
            F * H,
            0.0,
            np.inf,
            "fees while holding capacity",
        )
        if Q:
            rows = np.arange(Q * H)
            gcols = np.concatenate([g0 + slot[sources[p].offer] * H + np.arange(H) for p in fee_sources])
            model.add(
                np.concatenate([rows, rows]),
                np.concatenate([gcols, a0 + a_index.ravel()]),
                np.concatenate([np.ones(Q * H), -np.ones(Q * H)]),
                Q * H,
                0.0,
                np.inf,
                "fees while used",
            )
    if Q:
        # (f) a pay-as-used source with fixed fees serves only in the months it is switched on: z_pj <= min(room, D_j)
        # a_pm
        rr, cc, vv = [], [], []
        for q, p in enumerate(fee_sources):
            bound = np.minimum(co.room_month[p, f.band_month], f.frac[p] * f.band_demand)
            rows = q * J + jj
            rr += [rows, rows]
            cc += [z0 + p * J + jj, a0 + a_index[q, f.band_month]]
            vv += [np.ones(J), -bound]
        model.add(
            np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), Q * J, -np.inf, 0.0, "pay-as-used offer in use"
        )
    if len(f.spots) > 1:
        # (f') spot sources together serve at most plan.max_spot_share of each band's demand
        model.add(
            np.tile(jj, len(f.spots)),
            np.concatenate([z0 + p * J + jj for p in f.spots]),
            np.ones(len(f.spots) * J),
            J,
            -np.inf,
            f.spot_share * f.band_demand,
            "spot share",
        )


def solver_scales(cands: list[Candidate], scen: Scenarios) -> tuple[float, float]:
    tasks = float(scen.demand.mean()) or 1.0
    prices = [s.price_per_task for c in cands if (s := c.source) is not None] + [
        cm.cost_node_month / cm.tasks_node_month for c in cands for cm in c.commits if cm.tasks_node_month > 0
    ]
    price = _median(prices) if prices else 1.0
    return max(tasks * price, 1e-9), tasks


def _median(values: list[float]) -> float:
    """NumPy's median of a list, the same number ((a + b) / 2 of the middle two), without np.median, whose
    first call imports numpy.ma (a daily command's start-up, docs/speed.md)."""
    ordered = sorted(values)
    if any(math.isnan(v) for v in ordered):
        return math.nan
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2
