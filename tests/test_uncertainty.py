"""Monte Carlo ranges and one-at-a-time sensitivity (procure/analysis/uncertainty.py).

Two fixture workspaces, both as of 2026-11-29:

- tests/data/uncertainty_tornado: no demand (fill 1), no staff, no serving software, SLA 1.0 and unrated
  operators at 1.0, so that every offer's cost per task = rent / (250 tok/s x 3,600 / 1,000 tokens x
  success 1.0 x utilization 0.5) = rent / 450:
      floaty   index-linked, index 3.00 (the level on or before as-of) + 0.30, floor 2.40, cap 4.50
               -> 3.30 / 450 = 0.0073333 (vendor claim)
      anchor   3.60 / 450 = 0.008 (measured)
      floaty2  index-linked, 3.00 + 1.20 = 4.20 / 450 = 0.0093333 (vendor claim)
      euro     5.00 EUR x 1.08 = 5.40 / 450 = 0.012 (measured)
      dear     7.20 / 450 = 0.016: anchor at twice the price (measured)
      leaky    2.00 / 450 = 0.0044444, the cheapest, but not acceptable (monitoring not isolated)
  Its procure.yaml: throughput measured 0.8/1/1, vendor claim 0.9/1/1; utilization 0.8/1/1.2; staff
  0.9/1/1.25; index 0.5/1/1.5; fx uniform 0.95-1.05; availability 1/1/1.
- tests/data/uncertainty_zero: every kind of offer and price basis, with a demand; every factor has
  zero width.

Expected values are worked out by hand (in the comments) or by a second method (the triangular's CDF,
its mean and variance), never by calling the function under test for the expected value.
"""

from __future__ import annotations

import dataclasses
import math
import re
from datetime import date
from pathlib import Path

import numpy as np
import pytest

import procure.analysis.uncertainty as unc
from procure.analysis.evaluate import MonteCarlo, evaluate, evaluate_with_inputs, gates_of
from procure.analysis.sensitivity import sensitivity, top_offer_positions
from procure.analysis.uncertainty import draw_factors, monte_carlo, point_throughput_factor
from procure.errors import InputError
from procure.io.workspace import load_workspace
from procure.model.inputs import Distribution, OfferUncertainty, UncertaintyConfig

AS_OF = date(2026, 11, 29)
TASKS_PER_GPU_HOUR = 250 * 3600 / 1000 * 1.0 * 1.0 * 0.5  # 450 in uncertainty_tornado


def tri(low: float, mode: float, high: float) -> Distribution:
    return Distribution(triangular=(float(low), float(mode), float(high)))


def uni(low: float, high: float) -> Distribution:
    return Distribution(uniform=(float(low), float(high)))


ONE = tri(1, 1, 1)


def fixed_config(**changes) -> UncertaintyConfig:
    """Every factor exactly 1 except those given."""
    settings = {
        "throughput": {"measured": ONE, "vendor_claim": ONE, "reference": ONE},
        "availability": ONE,
        "utilization": ONE,
        "fte_cost": ONE,
        "index": ONE,
        "fx": ONE,
        "production": ONE,
        "demand": ONE,
        "stack": ONE,
    }
    settings.update(changes)
    return UncertaintyConfig(**settings)


def simulate(root: Path, config: UncertaintyConfig, draws: int = 2000, seed: int = 1):
    """(ranges by offer id, costs (draws, n), column by offer id, the deterministic evaluation)."""
    ev, inputs = evaluate_with_inputs(load_workspace(root), AS_OF)
    acceptable = np.array([ev.offer(o.id).acceptable for o in inputs.offers], dtype=bool)
    ranges, costs = monte_carlo(
        inputs.columns, inputs.model, inputs.offers, inputs.currencies, ev.currency, acceptable, config, draws, seed
    )
    ids = [o.id for o in inputs.offers]
    return dict(zip(ids, ranges)), costs, {offer_id: i for i, offer_id in enumerate(ids)}, ev


def factors(root: Path, config: UncertaintyConfig, draws: int, seed: int):
    """The draws monte_carlo makes for root's offers with this config and seed."""
    _, inputs = evaluate_with_inputs(load_workspace(root), AS_OF)
    return draw_factors(inputs.offers, inputs.currencies, config, draws, seed)


def set_uncertainty(root: Path, text: str) -> None:
    """Replace the uncertainty section of root/procure.yaml (the last section) with `text`."""
    path = root / "procure.yaml"
    head = path.read_text().split("\nuncertainty:", 1)[0]
    path.write_text(head + "\n" + text)


def edit(path: Path, old: str, new: str) -> int:
    """Replace `old` (once) with `new`; returns the 1-based line number where `new` starts."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    at = text.index(old)
    path.write_text(text.replace(old, new))
    return text[:at].count("\n") + 1


def run_sensitivity(root: Path, top_n: int, as_of: date = AS_OF):
    ws = load_workspace(root)
    ev, inputs = evaluate_with_inputs(ws, as_of)
    top = top_offer_positions([o.id for o in ev.ranked], inputs.offers, top_n)
    return sensitivity(
        inputs.columns,
        inputs.model,
        inputs.offers,
        inputs.currencies,
        ev.currency,
        top,
        ws.config.uncertainty,
        gates_of(ev, inputs, ws.config),
    )


@pytest.fixture
def tornado(data_dir) -> Path:
    return data_dir / "uncertainty_tornado"


@pytest.fixture
def zero(data_dir) -> Path:
    return data_dir / "uncertainty_zero"


@pytest.fixture
def mixed(workspace_copy) -> Path:
    """uncertainty_zero with its uncertainty section removed: the default distributions. Its availability minimum goes
    from 0.94 to 0.93: bravo's 94.11% is 93.80% at the mean of the default availability factor (x 0.996667) and 93.17%
    in its lowest draw, so its five offers stay acceptable."""
    root = workspace_copy("uncertainty_zero")
    path = root / "procure.yaml"
    text = path.read_text().split("\nuncertainty:", 1)[0] + "\n"
    assert "  min_availability: 0.94 " in text
    path.write_text(text.replace("  min_availability: 0.94 ", "  min_availability: 0.93 "))
    return root


def triangular_cdf(x: np.ndarray, a: float, c: float, b: float) -> np.ndarray:
    """The triangular CDF, low a, mode c, high b (the textbook formula)."""
    x = np.asarray(x, dtype=float)
    below = (x - a) ** 2 / ((b - a) * (c - a)) if c > a else np.zeros_like(x)
    above = 1 - (b - x) ** 2 / ((b - a) * (b - c)) if b > c else np.ones_like(x)
    return np.where(x <= a, 0.0, np.where(x >= b, 1.0, np.where(x <= c, below, above)))


# --- the sampled distributions (a second method: moments and the empirical CDF) -------------------


def test_sampled_triangular_mean_variance_and_cdf(tornado):
    ws = load_workspace(tornado)
    offers = ws.offers
    a, c, b = 0.75, 0.9, 1.0
    config = fixed_config(
        throughput={"measured": tri(a, c, b), "vendor_claim": tri(a, c, b), "reference": ONE},
        utilization=tri(0.85, 1.0, 1.1),
    )
    draws = 20000
    drawn = draw_factors(offers, ["USD"] * len(offers), config, draws, seed=11)
    sample = drawn.throughput[:, 0]
    # mean (a + b + c) / 3; variance (a^2 + b^2 + c^2 - ab - ac - bc) / 18
    mean = (a + b + c) / 3
    variance = (a * a + b * b + c * c - a * b - a * c - b * c) / 18
    standard_error = math.sqrt(variance / draws)
    assert abs(sample.mean() - mean) < 5 * standard_error
    assert sample.var() == pytest.approx(variance, rel=0.05)
    for x in (0.8, 0.85, 0.9, 0.95):
        assert (sample <= x).mean() == pytest.approx(float(triangular_cdf(x, a, c, b)), abs=0.015)
    # the common utilization factor: mean (0.85 + 1.0 + 1.1) / 3
    assert drawn.utilization.mean() == pytest.approx((0.85 + 1.0 + 1.1) / 3, abs=0.002)


# --- determinism -----------------------------------------------------------------------------------


def test_same_seed_same_factors_different_seed_different(tornado):
    ws = load_workspace(tornado)
    currencies = [o.pricing.currency or "USD" for o in ws.offers]
    first = draw_factors(ws.offers, currencies, ws.config.uncertainty, 2000, seed=7)
    again = unc._draw(ws.offers, currencies, ws.config.uncertainty, 2000, seed=7)  # drawn again, not the kept set
    other = draw_factors(ws.offers, currencies, ws.config.uncertainty, 2000, seed=8)
    for name in ("throughput", "availability", "utilization", "fte_cost", "index", "fx"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name
    for name in ("throughput", "utilization", "fte_cost", "index", "fx"):  # availability is 1/1/1 here
        assert not np.array_equal(getattr(first, name), getattr(other, name)), name


def test_the_same_draws_are_kept_read_only_and_drawn_again_when_what_they_come_from_changes(tornado, monkeypatch):
    """draw_factors keeps a set of draws per process under what it is drawn from: asked again (a report's what-if
    cases evaluate the workspace again), the same set comes back, its arrays read-only; a price change leaves the draws
    alone, a change to an offer's distribution draws them again, as a fresh draw gives them."""
    monkeypatch.setattr(unc, "_kept_draws", type(unc._kept_draws)())
    ws = load_workspace(tornado)
    currencies = [o.pricing.currency or "USD" for o in ws.offers]
    config = ws.config.uncertainty
    first = draw_factors(ws.offers, currencies, config, 500, seed=7)
    assert draw_factors(ws.offers, currencies, config, 500, seed=7) is first
    with pytest.raises(ValueError, match="read-only"):
        first.throughput[0, 0] = 2.0
    dearer = [o.model_copy(update={"pricing": o.pricing.model_copy(update={"price": 99.0})}) for o in ws.offers]
    assert draw_factors(dearer, currencies, config, 500, seed=7) is first
    own = config.model_copy(
        update={"offers": {ws.offers[0].id: OfferUncertainty(availability=Distribution(triangular=(0.9, 0.95, 1.0)))}}
    )
    moved = draw_factors(ws.offers, currencies, own, 500, seed=7)
    assert moved is not first and not np.array_equal(moved.availability, first.availability)
    fresh = unc._draw(ws.offers, currencies, own, 500, seed=7)
    for name in ("throughput", "availability", "utilization", "fte_cost", "index", "fx"):
        assert np.array_equal(getattr(moved, name), getattr(fresh, name)), name


def test_same_seed_same_costs_different_seed_different(tornado):
    config = load_workspace(tornado).config.uncertainty
    ranges, costs, _, _ = simulate(tornado, config, 3000, seed=21)
    ranges2, costs2, _, _ = simulate(tornado, config, 3000, seed=21)
    ranges3, costs3, _, _ = simulate(tornado, config, 3000, seed=22)
    assert np.array_equal(costs, costs2)
    assert ranges == ranges2
    assert not np.array_equal(costs, costs3)
    assert ranges != ranges3


def test_evaluation_json_is_identical_for_the_same_seed(tornado):
    ws = load_workspace(tornado)
    first = evaluate(ws, AS_OF, MonteCarlo(draws=2500, seed=4)).to_json()
    second = evaluate(load_workspace(tornado), AS_OF, MonteCarlo(draws=2500, seed=4)).to_json()
    other = evaluate(load_workspace(tornado), AS_OF, MonteCarlo(draws=2500, seed=5)).to_json()
    assert first == second
    assert first != other


def test_chunking_does_not_change_the_numbers(tornado, monkeypatch):
    config = load_workspace(tornado).config.uncertainty
    _, whole, _, _ = simulate(tornado, config, 2500, seed=2)
    monkeypatch.setattr(unc, "CHUNK_DRAWS", 7)
    _, chunked, _, _ = simulate(tornado, config, 2500, seed=2)
    assert np.array_equal(whole, chunked)


def test_defaults_come_from_procure_yaml_and_the_request_overrides_them(tornado):
    ev = evaluate(load_workspace(tornado), AS_OF, MonteCarlo())
    assert (ev.uncertainty.draws, ev.uncertainty.seed) == (2000, 3)
    ev = evaluate(load_workspace(tornado), AS_OF, MonteCarlo(draws=3000, seed=0))
    assert (ev.uncertainty.draws, ev.uncertainty.seed) == (3000, 0)
    assert "3,000 draws, seed 0" in ev.uncertainty.method
    assert evaluate(load_workspace(tornado), AS_OF).uncertainty is None


# --- ranges and the probability of being cheapest ---------------------------------------------------


@pytest.mark.parametrize("workspace", ["tornado", "mixed"])
def test_percentiles_are_ordered_for_every_offer(workspace, request):
    root = request.getfixturevalue(workspace)
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=5000, seed=9))
    for record in ev.offers:
        u = record.uncertainty
        assert u is not None, record.id
        assert u.p10 is not None and u.p50 is not None and u.p90 is not None, record.id
        assert u.p10 <= u.p50 <= u.p90, record.id


def test_offers_with_uncertain_inputs_have_a_real_range(tornado):
    ev = evaluate(load_workspace(tornado), AS_OF, MonteCarlo(draws=5000, seed=9))
    for record in ev.offers:
        assert record.uncertainty.p10 < record.uncertainty.p90, record.id


@pytest.mark.parametrize("workspace", ["tornado", "mixed"])
def test_probabilities_of_being_cheapest_sum_to_one_among_acceptable_offers(workspace, request):
    root = request.getfixturevalue(workspace)
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=5000, seed=9))
    acceptable = [r for r in ev.offers if r.acceptable]
    rejected = [r for r in ev.offers if not r.acceptable]
    assert acceptable and rejected
    assert sum(r.uncertainty.prob_cheapest for r in acceptable) == pytest.approx(1.0, abs=1e-12)
    assert all(0.0 <= r.uncertainty.prob_cheapest <= 1.0 for r in acceptable)
    assert all(r.uncertainty.prob_cheapest is None for r in rejected)


def test_a_cheaper_offer_that_fails_a_gate_never_takes_the_win(tornado):
    # leaky costs 2.00 / 450 = 0.0044 as stated: below every acceptable offer in most draws, but it
    # fails the security gate, so the wins go to floaty and anchor only.
    ev = evaluate(load_workspace(tornado), AS_OF, MonteCarlo(draws=5000, seed=9))
    assert ev.offer("leaky").uncertainty.prob_cheapest is None
    assert ev.offer("leaky").uncertainty.p50 < ev.offer("floaty").uncertainty.p50
    assert ev.offer("floaty").uncertainty.prob_cheapest + ev.offer("anchor").uncertainty.prob_cheapest == pytest.approx(
        1.0, abs=1e-12
    )


def test_zero_width_distributions_give_back_the_evaluated_cost_exactly(zero):
    ev = evaluate(load_workspace(zero), AS_OF, MonteCarlo())
    kinds = {r.pricing_basis for r in ev.offers}
    assert kinds >= {"gpu_hour", "index", "owned", "per_token"}
    assert any(r.currency != ev.currency for r in ev.offers)  # the EUR offer
    assert any(r.metrics["fill"] is not None and r.metrics["fill"] < 1 for r in ev.offers)  # partly idle
    for record in ev.offers:
        cost = record.metrics["cost_per_task"]
        assert cost is not None, record.id
        assert record.uncertainty.p50 == cost, record.id
        assert record.uncertainty.p10 == cost, record.id
        assert record.uncertainty.p90 == cost, record.id
    # every draw is the evaluation, so the leader is cheapest in every draw
    ranked = ev.ranked
    assert ranked[0].uncertainty.prob_cheapest == 1.0
    assert all(r.uncertainty.prob_cheapest == 0.0 for r in ranked[1:])


def test_a_dominated_offer_is_never_cheapest(tornado):
    # dear is anchor at twice the price (7.20 against 3.60), with the same distributions. Utilization and
    # staff are common, availability is 1/1/1; only the throughput factors (0.8 - 1.0 each, drawn offer
    # by offer) differ, so dear / anchor = 2 x t_anchor / t_dear lies in [2 x 0.8, 2 / 0.8] = [1.6, 2.5]:
    # even dear's best draw is worse than anchor's worst.
    config = load_workspace(tornado).config.uncertainty
    ranges, costs, at, _ = simulate(tornado, config, 5000, seed=13)
    ratio = costs[:, at["dear"]] / costs[:, at["anchor"]]
    assert ratio.min() >= 1.6 - 1e-12 and ratio.max() <= 2.5 + 1e-12
    assert ranges["dear"].prob_cheapest == 0.0
    assert ranges["anchor"].prob_cheapest > 0.0
    # through the pipeline too
    ev = evaluate(load_workspace(tornado), AS_OF, MonteCarlo(draws=5000, seed=13))
    assert ev.offer("dear").uncertainty.prob_cheapest == 0.0


def test_the_probability_of_being_cheapest_matches_a_quadrature(tornado):
    # Only throughput varies, independently: anchor t_a ~ triangular 0.8/1/1, floaty t_f ~ 0.9/1/1.
    # floaty is cheaper when 3.30 / t_f < 3.60 / t_a, i.e. t_a < (12/11) t_f, so
    # P(floaty cheapest) = integral of F_a(min(1, 12 x / 11)) f_f(x) dx, with F_a(y) = (y - 0.8)^2 / 0.04
    # and f_f(x) = 2 (x - 0.9) / 0.01 on [0.9, 1]: worked out here by the midpoint rule.
    edges = np.linspace(0.9, 1.0, 200001)
    x = (edges[:-1] + edges[1:]) / 2
    y = np.minimum(1.0, 12 * x / 11)
    expected = float(np.sum((y - 0.8) ** 2 / 0.04 * 2 * (x - 0.9) / 0.01) * (edges[1] - edges[0]))
    assert 0.99 < expected < 1.0
    config = fixed_config(
        throughput={"measured": tri(0.8, 1.0, 1.0), "vendor_claim": tri(0.9, 1.0, 1.0), "reference": ONE}
    )
    ranges, _, _, _ = simulate(tornado, config, 20000, seed=3)
    assert ranges["floaty"].prob_cheapest == pytest.approx(expected, abs=0.003)
    assert ranges["floaty"].prob_cheapest + ranges["anchor"].prob_cheapest == pytest.approx(1.0, abs=1e-12)
    assert ranges["anchor"].prob_cheapest > 0


# --- common and independent draws ------------------------------------------------------------------


def test_factor_shapes_common_and_per_offer(tornado):
    ws = load_workspace(tornado)
    offers = ws.offers
    n = len(offers)
    config = fixed_config(
        throughput={"measured": tri(0.8, 0.9, 1.0), "vendor_claim": tri(0.8, 0.9, 1.0), "reference": ONE},
        availability=tri(0.9, 0.95, 1.0),
        utilization=tri(0.8, 1.0, 1.2),
        fte_cost=tri(0.9, 1.0, 1.25),
        index=tri(0.5, 1.0, 1.5),
    )
    f = draw_factors(offers, ["USD"] * n, config, 4000, seed=17)
    assert f.throughput.shape == (4000, n) and f.availability.shape == (4000, n)
    for name in ("utilization", "fte_cost", "index"):
        assert getattr(f, name).shape == (4000, 1), name  # one draw for all offers
    # per offer: the columns differ and are nearly uncorrelated
    for block in (f.throughput, f.availability):
        for i in range(1, n):
            assert not np.array_equal(block[:, 0], block[:, i])
            assert abs(np.corrcoef(block[:, 0], block[:, i])[0, 1]) < 0.08


def test_utilization_is_common_to_all_offers(tornado):
    # Only utilization varies: every offer's cost is rent / (900 x 0.5 x u) with the same u in a draw,
    # so dear is exactly twice anchor and euro (5.40) exactly 1.5 anchor in every draw.
    config = fixed_config(utilization=tri(0.8, 1.0, 1.2))
    _, costs, at, _ = simulate(tornado, config, 3000, seed=5)
    anchor, dear, euro = costs[:, at["anchor"]], costs[:, at["dear"]], costs[:, at["euro"]]
    assert dear == pytest.approx(2 * anchor, rel=1e-12)
    assert euro == pytest.approx(1.5 * anchor, rel=1e-12)
    # and the draw is the factor: utilization 0.5 x u in [0.4, 0.6] -> anchor in [3.6 / 540, 3.6 / 360]
    assert anchor.min() >= 3.6 / 540 - 1e-15 and anchor.max() <= 3.6 / 360 + 1e-15
    assert anchor.std() > 0


def test_utilization_above_one_is_capped(tornado):
    # 0.5 x 2.5 = 1.25 -> 1: anchor 3.60 / (900 x 1) = 0.004
    config = fixed_config(utilization=tri(2.5, 2.5, 2.5))
    ranges, _, _, _ = simulate(tornado, config, 2000, seed=5)
    assert ranges["anchor"].p50 == pytest.approx(3.6 / 900, rel=1e-12)


def test_throughput_is_drawn_offer_by_offer(tornado):
    # Only throughput varies: dear / anchor = 2 x t_anchor / t_dear. With a common draw it would be 2
    # in every draw; independent draws spread it over [1.6, 2.5] and reach near both ends.
    config = fixed_config(throughput={"measured": tri(0.8, 1.0, 1.0), "vendor_claim": ONE, "reference": ONE})
    _, costs, at, _ = simulate(tornado, config, 5000, seed=6)
    ratio = costs[:, at["dear"]] / costs[:, at["anchor"]]
    assert ratio.min() < 1.7 and ratio.max() > 2.3
    assert abs(np.corrcoef(costs[:, at["dear"]], costs[:, at["anchor"]])[0, 1]) < 0.08
    # the vendor-claim offers did not move
    assert (costs[:, at["floaty"]] == costs[0, at["floaty"]]).all()


def test_staff_cost_is_common_to_all_offers(zero):
    # Only the staff cost varies, by f (the one draw for all offers): each offer's cost per task is its
    # evaluated cost plus its staff cost per task x (f - 1), the staff being linear in the engineer's cost.
    config = fixed_config(fte_cost=tri(0.5, 1.0, 2.0))
    _, costs, at, ev = simulate(zero, config, 3000, seed=8)
    f = factors(zero, config, 3000, seed=8).fte_cost[:, 0]
    moved = 0
    for offer_id, i in at.items():
        metrics = ev.offer(offer_id).metrics
        expected = metrics["cost_per_task"] + metrics["ops_per_task"] * (f - 1)
        assert costs[:, i] == pytest.approx(expected, rel=1e-9), offer_id
        moved += metrics["ops_per_task"] > 0
    assert moved >= 4  # alpha, bravo, charlie, owned and the per-token offer carry staff


def test_the_index_is_common_to_index_linked_offers_and_moves_their_cost(tornado):
    # Only the index varies, by f: floaty rent = clamp(3.00 f + 0.30, 2.40, 4.50), floaty2 rent = 3.00 f +
    # 1.20 (no floor or cap), the same f for both in a draw; fixed-price anchor does not move.
    config = fixed_config(index=tri(0.5, 1.0, 1.5))
    ranges, costs, at, ev = simulate(tornado, config, 20000, seed=10)
    f = factors(tornado, config, 20000, seed=10).index[:, 0]
    assert costs[:, at["floaty"]] == pytest.approx(np.clip(3.0 * f + 0.30, 2.40, 4.50) / 450, rel=1e-12)
    assert costs[:, at["floaty2"]] == pytest.approx((3.0 * f + 1.20) / 450, rel=1e-12)
    assert (costs[:, at["anchor"]] == costs[0, at["anchor"]]).all()
    assert costs[0, at["anchor"]] == pytest.approx(3.6 / 450, rel=1e-12)
    # Percentiles by hand: the triangular 0.5 / 1 / 1.5 has P10 = 0.5 + sqrt(0.1 x 1 x 0.5) = 0.7236,
    # P50 = 1, P90 = 1.5 - sqrt(0.05) = 1.2764; inside floaty's floor (f 0.7) and cap (f 1.4).
    q10, q50, q90 = 0.5 + math.sqrt(0.05), 1.0, 1.5 - math.sqrt(0.05)
    assert ranges["floaty"].p10 == pytest.approx((3 * q10 + 0.30) / 450, rel=5e-3)
    assert ranges["floaty"].p50 == pytest.approx((3 * q50 + 0.30) / 450, rel=5e-3)
    assert ranges["floaty"].p90 == pytest.approx((3 * q90 + 0.30) / 450, rel=5e-3)
    assert ranges["anchor"].p10 == ranges["anchor"].p90


@pytest.mark.parametrize(
    ("factor", "rent"),
    [
        (1.2, 3.0 * 1.2 + 0.30),  # 3.90
        (0.6, 2.40),  # 2.10 is under the floor
        (1.45, 4.50),  # 4.65 is over the cap
    ],
)
def test_an_index_linked_offer_follows_a_fixed_index_factor_within_floor_and_cap(workspace_copy, factor, rent):
    root = workspace_copy("uncertainty_tornado")
    set_uncertainty(
        root,
        "uncertainty:\n"
        "  throughput:\n"
        "    measured: {triangular: [1.0, 1.0, 1.0]}\n"
        "    vendor_claim: {triangular: [1.0, 1.0, 1.0]}\n"
        "  availability: {triangular: [1.0, 1.0, 1.0]}\n"
        "  utilization: {triangular: [1.0, 1.0, 1.0]}\n"
        "  fte_cost: {triangular: [1.0, 1.0, 1.0]}\n"
        f"  index: {{triangular: [{factor}, {factor}, {factor}]}}\n"
        "  fx: {uniform: [1.0, 1.0]}\n"
        "  production: {triangular: [1.0, 1.0, 1.0]}\n"
        "  stack: {triangular: [1.0, 1.0, 1.0]}\n"
        "  demand: {triangular: [1.0, 1.0, 1.0]}\n",
    )
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=2000, seed=1))
    assert ev.offer("floaty").uncertainty.p50 == pytest.approx(rent / 450, rel=1e-12)
    assert ev.offer("floaty").uncertainty.p10 == pytest.approx(rent / 450, rel=1e-12)
    assert ev.offer("anchor").uncertainty.p50 == ev.offer("anchor").metrics["cost_per_task"]


def with_more_currencies(workspace_copy) -> Path:
    """uncertainty_tornado plus euro2 (6.00 EUR = 6.48) and pound (4.00 GBP x 1.25 = 5.00)."""
    root = workspace_copy("uncertainty_tornado")
    euro = (root / "offers" / "euro.yaml").read_text()
    (root / "offers" / "euro2.yaml").write_text(
        euro.replace("id: euro", "id: euro2").replace("gpu_hour: 5.00", "gpu_hour: 6.00")
    )
    (root / "offers" / "pound.yaml").write_text(
        euro.replace("id: euro", "id: pound")
        .replace("currency: EUR", "currency: GBP")
        .replace("gpu_hour: 5.00", "gpu_hour: 4.00")
    )
    edit(root / "procure.yaml", "fx: {EUR: 1.08}", "fx: {EUR: 1.08, GBP: 1.25}")
    return root


def test_each_exchange_rate_is_one_draw_common_to_its_offers(workspace_copy):
    # Only fx varies (uniform 0.9 - 1.1). euro and euro2 share the EUR draw g: euro = 5.40 g / 450 and
    # euro2 = 6.48 g / 450, so euro2 / euro = 1.2 in every draw. pound has its own GBP draw h: pound /
    # euro = 5.00 h / (5.40 g) spreads. USD offers never move.
    root = with_more_currencies(workspace_copy)
    ranges, costs, at, ev = simulate(root, fixed_config(fx=uni(0.9, 1.1)), 5000, seed=12)
    euro, euro2, pound = costs[:, at["euro"]], costs[:, at["euro2"]], costs[:, at["pound"]]
    assert euro2 / euro == pytest.approx(np.full(5000, 1.2), rel=1e-12)
    assert np.std(pound / euro) > 0.02
    assert abs(np.corrcoef(pound, euro)[0, 1]) < 0.08
    # USD offers never move: every draw at the stated throughput (this config's factors are all 1),
    # anchor 3.60 / 450 = 0.008 in each (the evaluation itself reads measured throughput at its mean)
    for offer_id in ("anchor", "floaty", "floaty2", "dear", "leaky"):
        assert (costs[:, at[offer_id]] == costs[0, at[offer_id]]).all(), offer_id
    assert costs[0, at["anchor"]] == pytest.approx(3.6 / 450, rel=1e-12)
    # quantiles of a uniform 0.9 - 1.1 by hand: P10 0.92, P50 1.0, P90 1.08; the range stays inside
    assert ranges["euro"].p10 == pytest.approx(5.40 * 0.92 / 450, rel=2e-3)
    assert ranges["euro"].p50 == pytest.approx(5.40 * 1.00 / 450, rel=2e-3)
    assert ranges["euro"].p90 == pytest.approx(5.40 * 1.08 / 450, rel=2e-3)
    assert pound.min() >= 5.00 * 0.9 / 450 * (1 - 1e-12) and pound.max() <= 5.00 * 1.1 / 450 * (1 + 1e-12)


def test_a_foreign_currency_sensitivity_row_per_currency(workspace_copy):
    # euro (5.40) and euro2 (6.48) in the top offers once floaty, anchor, floaty2 are out of the way:
    # follow the top six. Every input but the one moved is at its expected value: the measured
    # throughput factor 0.8 / 1 / 1 at its mean 2.8 / 3, so 450 x 2.8 / 3 = 420 successful tasks per
    # dollar-unit; the EUR row moves euro by 5.40 x 0.1 / 420 and euro2 by 6.48 x 0.1 / 420.
    root = with_more_currencies(workspace_copy)
    result = run_sensitivity(root, 7)
    rows = {r.input: r for r in result.rows}
    assert "exchange rate EUR" in rows and "exchange rate GBP" in rows and "exchange rate USD" not in rows
    eur = rows["exchange rate EUR"]
    assert (eur.low, eur.high) == (0.95, 1.05)
    assert eur.costs_low["euro"] == pytest.approx(5.40 * 0.95 / 420, rel=1e-12)
    assert eur.costs_high["euro2"] == pytest.approx(6.48 * 1.05 / 420, rel=1e-12)
    assert eur.costs_low["pound"] == pytest.approx(5.00 / 420, rel=1e-12)
    assert eur.swing == pytest.approx(6.48 * 0.1 / 420, rel=1e-12) and eur.swing_offer == "euro2"
    gbp = rows["exchange rate GBP"]
    assert gbp.swing == pytest.approx(5.00 * 0.1 / 420, rel=1e-12) and gbp.swing_offer == "pound"


# --- per-offer overrides ---------------------------------------------------------------------------


def test_per_offer_overrides_replace_the_source_distribution(tornado):
    # anchor's throughput fixed at 0.5 -> 3.60 / 225 = 0.016; dear, also measured, keeps 1.0 -> 0.016;
    # floaty's availability fixed at 0.9 -> 3.30 / 405.
    config = fixed_config(
        offers={
            "anchor": OfferUncertainty(throughput=tri(0.5, 0.5, 0.5)),
            "floaty": OfferUncertainty(availability=tri(0.9, 0.9, 0.9)),
        }
    )
    ranges, _, _, _ = simulate(tornado, config, 2000, seed=2)
    assert ranges["anchor"].p50 == pytest.approx(3.6 / 225, rel=1e-12)
    assert ranges["dear"].p50 == pytest.approx(7.2 / 450, rel=1e-12)
    assert ranges["floaty"].p50 == pytest.approx(3.3 / 405, rel=1e-12)
    assert ranges["floaty2"].p50 == pytest.approx(4.2 / 450, rel=1e-12)


def test_per_offer_override_draws_stay_in_their_own_range(tornado):
    config = fixed_config(
        throughput={"measured": tri(0.8, 1.0, 1.0), "vendor_claim": ONE, "reference": ONE},
        offers={"anchor": OfferUncertainty(throughput=tri(0.6, 0.7, 0.8))},
    )
    ws = load_workspace(tornado)
    ids = [o.id for o in ws.offers]
    f = draw_factors(ws.offers, ["USD"] * len(ids), config, 4000, seed=3).throughput
    anchor, dear = f[:, ids.index("anchor")], f[:, ids.index("dear")]
    assert anchor.min() >= 0.6 and anchor.max() <= 0.8 and anchor.mean() == pytest.approx(0.7, abs=0.005)
    assert dear.min() >= 0.8 and dear.max() <= 1.0 and dear.mean() == pytest.approx(2.8 / 3, abs=0.005)


def test_per_offer_override_from_procure_yaml(workspace_copy):
    # an override in procure.yaml: anchor's throughput 0.5 / 0.5 / 0.5, utilization fixed at 1:
    # anchor 3.60 / (450 x 0.5) = 0.016 in every draw
    root = workspace_copy("uncertainty_tornado")
    path = root / "procure.yaml"
    path.write_text(path.read_text() + "  offers:\n    anchor: {throughput: {triangular: [0.5, 0.5, 0.5]}}\n")
    edit(path, "utilization: {triangular: [0.8, 1.0, 1.2]}", "utilization: {triangular: [1.0, 1.0, 1.0]}")
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=2000, seed=1))
    u = ev.offer("anchor").uncertainty
    assert u.p10 == pytest.approx(3.6 / 225, rel=1e-12) and u.p90 == pytest.approx(3.6 / 225, rel=1e-12)
    assert ev.offer("dear").uncertainty.p10 < ev.offer("dear").uncertainty.p90  # dear keeps measured 0.8/1/1


# --- one-at-a-time sensitivity ---------------------------------------------------------------------


def test_tornado_for_the_two_leaders_by_hand(tornado):
    # The baseline is the point evaluation: each throughput at its factor's mean, anchor (measured
    # 0.8 / 1 / 1) 450 x 2.8 / 3 = 420, floaty (vendor claim 0.9 / 1 / 1) 450 x 2.9 / 3 = 435:
    # floaty 3.30 / 435 = 0.007586, anchor 3.60 / 420 = 0.008571. One input at a time:
    #   index 0.5 / 1.5:  floaty clamp(1.50 + 0.30, 2.40, 4.50) = 2.40 -> 0.005517; clamp(4.50 + 0.30) = 4.50
    #                     -> 0.010345 (above anchor's 0.008571: the leader changes); swing 2.1 / 435 (floaty)
    #   utilization 0.8 / 1.2 (0.4 / 0.6): anchor 3.60 / 336 = 0.010714 and 3.60 / 504 = 0.007143, swing
    #                     0.003571; floaty 3.30 / 348 - 3.30 / 522 = 0.003161 is smaller
    #   throughput anchor 0.8 / 1.0: 3.60 / 360 = 0.01 and 0.008, swing 0.002; floaty still leads
    #   throughput floaty 0.9 / 1.0: 3.30 / 405 = 0.008148 (still below anchor's 0.008571: no flip)
    #                     and 0.007333, swing 0.000815
    #   availability 1/1/1, the EUR rate (euro is not a top offer), staff (there is none): no swing
    result = run_sensitivity(tornado, 2)
    assert result.offers == ["floaty", "anchor"]
    assert result.baseline == pytest.approx({"floaty": 3.3 / 435, "anchor": 3.6 / 420}, rel=1e-12)
    rows = {r.input: r for r in result.rows}
    assert [r.input for r in result.rows] == [
        "index level",
        "utilization",
        "throughput: anchor",
        "throughput: floaty",
        "availability (every offer)",
        "staff cost",
    ]
    assert "exchange rate EUR" not in rows  # euro is not a top offer: its rate cannot move them
    index = rows["index level"]
    assert (index.low, index.high) == (0.5, 1.5)
    assert index.costs_low == pytest.approx({"floaty": 2.4 / 435, "anchor": 3.6 / 420}, rel=1e-12)
    assert index.costs_high == pytest.approx({"floaty": 4.5 / 435, "anchor": 3.6 / 420}, rel=1e-12)
    assert index.swing == pytest.approx(2.1 / 435, rel=1e-12) and index.swing_offer == "floaty"
    assert (index.leader_low, index.leader_high, index.flips) == ("floaty", "anchor", True)

    utilization = rows["utilization"]
    assert (utilization.low, utilization.high) == (0.8, 1.2)
    assert utilization.costs_low == pytest.approx({"floaty": 3.3 / 348, "anchor": 3.6 / 336}, rel=1e-12)
    assert utilization.costs_high == pytest.approx({"floaty": 3.3 / 522, "anchor": 3.6 / 504}, rel=1e-12)
    assert utilization.swing == pytest.approx(3.6 / 336 - 3.6 / 504, rel=1e-12) and utilization.swing_offer == "anchor"
    assert (utilization.leader_low, utilization.leader_high, utilization.flips) == ("floaty", "floaty", False)

    anchor = rows["throughput: anchor"]
    assert (anchor.low, anchor.high) == (0.8, 1.0)
    assert anchor.costs_low["anchor"] == pytest.approx(3.6 / 360, rel=1e-12)
    assert anchor.swing == pytest.approx(3.6 / 360 - 3.6 / 450, rel=1e-12) and anchor.swing_offer == "anchor"
    assert (anchor.leader_low, anchor.leader_high, anchor.flips) == ("floaty", "floaty", False)

    floaty = rows["throughput: floaty"]
    assert (floaty.low, floaty.high) == (0.9, 1.0)
    assert floaty.costs_low["floaty"] == pytest.approx(3.3 / 405, rel=1e-12)
    assert floaty.swing == pytest.approx(3.3 / 405 - 3.3 / 450, rel=1e-12) and floaty.swing_offer == "floaty"
    assert (floaty.leader_low, floaty.leader_high, floaty.flips) == ("floaty", "floaty", False)

    for name in ("availability (every offer)", "staff cost"):
        row = rows[name]
        assert row.swing is None and row.swing_offer is None, name
        assert row.costs_low == pytest.approx(result.baseline, rel=1e-12) and row.costs_high == pytest.approx(
            result.baseline, rel=1e-12
        )
        assert (row.leader_low, row.leader_high, row.flips) == ("floaty", "floaty", False), name


def test_tornado_for_three_offers_flips_without_a_new_leader(tornado):
    # With floaty2 (3.00 + 1.20 = 4.20, a vendor claim read at 435 -> 0.009655) in the top three:
    #   index: floaty2 2.70 / 435 and 5.70 / 435, swing 3.0 / 435 = 0.006897 > floaty's 2.1 / 435
    #   utilization: floaty2 4.20 / 348 - 4.20 / 522 = 0.004023, the largest swing of the three
    #   throughput anchor low: 0.01 > floaty2's 0.009655: the order changes, floaty still leads
    #   throughput floaty2 0.9: 4.20 / 405 = 0.010370, swing 0.001037, order unchanged
    result = run_sensitivity(tornado, 3)
    assert result.offers == ["floaty", "anchor", "floaty2"]
    assert [r.input for r in result.rows][:5] == [
        "index level",
        "utilization",
        "throughput: anchor",
        "throughput: floaty2",
        "throughput: floaty",
    ]
    rows = {r.input: r for r in result.rows}
    assert (
        rows["index level"].swing == pytest.approx(3.0 / 435, rel=1e-12)
        and rows["index level"].swing_offer == "floaty2"
    )
    assert (
        rows["utilization"].swing == pytest.approx(4.2 / 348 - 4.2 / 522, rel=1e-12)
        and rows["utilization"].swing_offer == "floaty2"
    )
    anchor = rows["throughput: anchor"]
    assert (anchor.leader_low, anchor.leader_high, anchor.flips) == ("floaty", "floaty", True)
    floaty2 = rows["throughput: floaty2"]
    assert floaty2.swing == pytest.approx(4.2 / 405 - 4.2 / 450, rel=1e-12)
    assert (floaty2.leader_low, floaty2.leader_high, floaty2.flips) == ("floaty", "floaty", False)


def test_tornado_rows_are_sorted_by_swing_on_a_mixed_workspace(mixed):
    result = run_sensitivity(mixed, 5)
    assert len(result.offers) == 5
    swings = [r.swing or 0.0 for r in result.rows]
    assert swings == sorted(swings, reverse=True)
    # every row's swing is the largest |high - low| among the top offers
    for row in result.rows:
        changes = [
            abs(row.costs_high[o] - row.costs_low[o])
            for o in result.offers
            if row.costs_low[o] is not None and row.costs_high[o] is not None
        ]
        if row.swing is None:
            assert max(changes) == 0
        else:
            assert row.swing == pytest.approx(max(changes), rel=1e-12)
            assert row.swing == pytest.approx(
                abs(row.costs_high[row.swing_offer] - row.costs_low[row.swing_offer]), rel=1e-12
            )


def test_sensitivity_baseline_is_the_evaluated_cost(mixed):
    ev = evaluate(load_workspace(mixed), AS_OF)
    result = run_sensitivity(mixed, 4)
    assert result.offers == [r.id for r in ev.ranked[:4]]
    for offer_id, cost in result.baseline.items():  # the cost at the typical inputs, from which each input moves
        assert cost == pytest.approx(ev.offer(offer_id).metrics["point_cost_per_task"], rel=1e-12)


def test_sensitivity_uses_the_index_on_the_as_of_date(tornado):
    # On 2026-12-01 the index is 9.99: floaty at its cap 4.50 -> 4.50 / 435 (its claim read at its
    # mean 2.9 / 3), above anchor's 3.60 / 420: anchor leads.
    result = run_sensitivity(tornado, 2, date(2026, 12, 1))
    assert result.offers == ["anchor", "floaty"]
    assert result.baseline["floaty"] == pytest.approx(4.5 / 435, rel=1e-12)


# --- validation of distributions in procure.yaml ----------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        (
            "utilization: {triangular: [0.8, 1.0, 1.2]}",
            "utilization: {triangular: [0.8, 1.3, 1.2]}",
            "uncertainty.utilization",
            "needs 0 < low <= mode <= high (got 0.8, 1.3, 1.2)",
        ),
        (
            "vendor_claim: {triangular: [0.9, 1.0, 1.0]}",
            "vendor_claim: {triangular: [0.9, 0.8, 1.0]}",
            "uncertainty.throughput.vendor_claim",
            "needs 0 < low <= mode <= high (got 0.9, 0.8, 1)",
        ),
        (
            "fx: {uniform: [0.95, 1.05]}",
            "fx: {uniform: [1.05, 0.95]}",
            "uncertainty.fx",
            "needs 0 < low <= mode <= high (got 1.05, 1, 0.95)",
        ),
        (
            "fte_cost: {triangular: [0.9, 1.0, 1.25]}",
            "fte_cost: {triangular: [0.0, 1.0, 1.25]}",
            "uncertainty.fte_cost",
            "needs 0 < low <= mode <= high (got 0, 1, 1.25)",
        ),
        (
            "index: {triangular: [0.5, 1.0, 1.5]}",
            "index: {triangular: [0.5, 1.0, 1.5], uniform: [0.5, 1.5]}",
            "uncertainty.index",
            "give exactly one of triangular: [low, mode, high] or uniform: [low, high]",
        ),
        (
            "availability: {triangular: [1.0, 1.0, 1.0]}",
            "availability: {}",
            "uncertainty.availability",
            "give exactly one of triangular: [low, mode, high] or uniform: [low, high]",
        ),
    ],
)
def test_bad_distributions_are_located(workspace_copy, old, new, field, message):
    root = workspace_copy("uncertainty_tornado")
    line = edit(root / "procure.yaml", old, new)
    with pytest.raises(InputError) as caught:
        load_workspace(root)
    assert [str(p) for p in caught.value.problems] == [f"procure.yaml:{line}: {field}: {message}"]


def test_a_bad_per_offer_override_is_located(workspace_copy):
    root = workspace_copy("uncertainty_tornado")
    path = root / "procure.yaml"
    text = path.read_text()
    path.write_text(text + "  offers:\n    anchor:\n      throughput: {triangular: [1.0, 0.5, 0.8]}\n")
    line = text.count("\n") + 3
    with pytest.raises(InputError) as caught:
        load_workspace(root)
    assert [str(p) for p in caught.value.problems] == [
        f"procure.yaml:{line}: uncertainty.offers.anchor.throughput: needs 0 < low <= mode <= high (got 1, 0.5, 0.8)"
    ]


def test_every_bad_distribution_is_reported_at_once(workspace_copy):
    root = workspace_copy("uncertainty_tornado")
    path = root / "procure.yaml"
    first = edit(path, "utilization: {triangular: [0.8, 1.0, 1.2]}", "utilization: {triangular: [1.2, 1.0, 0.8]}")
    second = edit(path, "index: {triangular: [0.5, 1.0, 1.5]}", "index: {}")
    with pytest.raises(InputError) as caught:
        load_workspace(root)
    found = sorted((p.line, p.field) for p in caught.value.problems)
    assert found == [(first, "uncertainty.utilization"), (second, "uncertainty.index")]
    assert all(p.file == "procure.yaml" for p in caught.value.problems)


def test_problem_lines_read_file_line_field(workspace_copy):
    root = workspace_copy("uncertainty_tornado")
    edit(
        root / "procure.yaml",
        "utilization: {triangular: [0.8, 1.0, 1.2]}",
        "utilization: {triangular: [0.8, 1.3, 1.2]}",
    )
    with pytest.raises(InputError) as caught:
        load_workspace(root)
    assert re.fullmatch(r"procure\.yaml:\d+: uncertainty\.utilization: .+", str(caught.value))


def test_draws_below_the_minimum_in_procure_yaml_are_located(workspace_copy):
    root = workspace_copy("uncertainty_tornado")
    line = edit(root / "procure.yaml", "  draws: 2000", "  draws: 50")
    with pytest.raises(InputError) as caught:
        load_workspace(root)
    assert [(p.file, p.line, p.field) for p in caught.value.problems] == [("procure.yaml", line, "uncertainty.draws")]


def test_a_negative_seed_in_procure_yaml_is_a_located_input_error(workspace_copy):
    root = workspace_copy("uncertainty_tornado")
    line = edit(root / "procure.yaml", "  seed: 3", "  seed: -1")
    with pytest.raises(InputError) as caught:
        load_workspace(root)
    assert [(p.file, p.line, p.field) for p in caught.value.problems] == [("procure.yaml", line, "uncertainty.seed")]


def test_an_offer_without_a_cost_has_no_range(workspace_copy):
    # slow's fastest point is 50 tok/s per user, below the 100 the workload needs: no throughput, no
    # cost in any draw; it is not acceptable (latency gate), so no probability either.
    root = workspace_copy("uncertainty_tornado")
    anchor = (root / "offers" / "anchor.yaml").read_text()
    (root / "offers" / "slow.yaml").write_text(
        anchor.replace("id: anchor", "id: slow").replace(
            "points: [[50, 400], [100, 250], [150, 100]]", "points: [[50, 400]]"
        )
    )
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=2000, seed=1))
    slow = ev.offer("slow")
    assert not slow.acceptable and slow.metrics["cost_per_task"] is None
    assert (slow.uncertainty.p10, slow.uncertainty.p50, slow.uncertainty.p90, slow.uncertainty.prob_cheapest) == (
        None,
        None,
        None,
        None,
    )
    assert sum(r.uncertainty.prob_cheapest for r in ev.ranked) == pytest.approx(1.0, abs=1e-12)


ZERO_WIDTH = """uncertainty:
  throughput:
    measured: {triangular: [1.0, 1.0, 1.0]}
    vendor_claim: {triangular: [1.0, 1.0, 1.0]}
    reference: {triangular: [1.0, 1.0, 1.0]}
  availability: {triangular: [1.0, 1.0, 1.0]}
  utilization: {triangular: [1.0, 1.0, 1.0]}
  fte_cost: {triangular: [1.0, 1.0, 1.0]}
  index: {triangular: [1.0, 1.0, 1.0]}
  fx: {uniform: [1.0, 1.0]}
  production: {triangular: [1.0, 1.0, 1.0]}
  stack: {triangular: [1.0, 1.0, 1.0]}
  demand: {triangular: [1.0, 1.0, 1.0]}
  readings: false
"""


@pytest.mark.parametrize("name", ["example", "uncertainty_tornado"])
def test_zero_width_is_exact_on_other_workspaces(name, tmp_path, workspace_copy):
    # the example workspace at the repository root (rated operators, every fee kind, discounts,
    # prepayment, EUR offers) and the tornado case without demand
    if name == "example":
        import shutil

        source = Path(__file__).resolve().parent.parent
        root = tmp_path / "example"
        for folder in ("offers", "grades", "performance", "market"):
            shutil.copytree(source / folder, root / folder)
        shutil.copy(source / "procure.yaml", root / "procure.yaml")
    else:
        root = workspace_copy(name)
    path = root / "procure.yaml"
    path.write_text(path.read_text().split("\nuncertainty:", 1)[0].rstrip("\n") + "\n" + ZERO_WIDTH)
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=2000, seed=7))
    costed = [r for r in ev.offers if r.metrics["cost_per_task"] is not None]
    assert len(costed) >= 5
    for record in costed:
        assert record.uncertainty.p50 == record.metrics["cost_per_task"], record.id
        assert record.uncertainty.p10 == record.uncertainty.p90 == record.uncertainty.p50, record.id


# --- correlated draws ---------------------------------------------------------------------------------


def with_curve_twins(workspace_copy, price_ratio: float = 1.03) -> Path:
    """uncertainty_tornado plus twin1 and twin2: anchor's terms on the reference curve test-curve
    (300 tok/s at 100), twin2 `price_ratio` dearer (3.60 x 1.03 = 3.708)."""
    root = workspace_copy("uncertainty_tornado")
    anchor = (root / "offers" / "anchor.yaml").read_text()
    on_curve = anchor.replace(
        "  points: [[50, 400], [100, 250], [150, 100]]\n  points_source: measured\n", "  reference: test-curve\n"
    )
    (root / "offers" / "twin1.yaml").write_text(on_curve.replace("id: anchor", "id: twin1"))
    (root / "offers" / "twin2.yaml").write_text(
        on_curve.replace("id: anchor", "id: twin2").replace("gpu_hour: 3.60", f"gpu_hour: {3.60 * price_ratio:.4f}")
    )
    return root


def test_offers_on_the_same_curve_share_one_throughput_draw(workspace_copy):
    root = with_curve_twins(workspace_copy)
    config = fixed_config(
        throughput={"measured": tri(0.8, 0.9, 1.0), "vendor_claim": tri(0.8, 0.9, 1.0), "reference": tri(0.7, 0.9, 1.1)}
    )
    offers = load_workspace(root).offers
    f = draw_factors(offers, ["USD"] * len(offers), config, 3000, seed=4)
    at = {o.id: i for i, o in enumerate(offers)}
    # the twins on test-curve move together, draw for draw; offers with their own points do not
    assert np.array_equal(f.throughput[:, at["twin1"]], f.throughput[:, at["twin2"]])
    assert abs(np.corrcoef(f.throughput[:, at["anchor"]], f.throughput[:, at["dear"]])[0, 1]) < 0.08
    # the curve's factor has the reference width: triangular 0.7/0.9/1.1, mean (0.7 + 0.9 + 1.1) / 3 = 0.9
    assert f.throughput[:, at["twin1"]].min() >= 0.7 and f.throughput[:, at["twin1"]].max() <= 1.1
    assert f.throughput[:, at["twin1"]].mean() == pytest.approx(0.9, abs=0.01)


def test_the_dearer_of_two_offers_three_percent_apart_on_one_curve_is_never_cheapest(workspace_copy):
    # Every input varies at its default width; the twins share the curve, the production factor and
    # every market draw, and differ only in availability (0.99-1.0 each, at most a 1.01 ratio < 1.03).
    root = with_curve_twins(workspace_copy)
    set_uncertainty(root, "uncertainty:\n  draws: 5000\n  seed: 9\n")
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=5000, seed=9))
    assert ev.offer("twin2").uncertainty.prob_cheapest == 0.0
    assert ev.offer("twin1").uncertainty.prob_cheapest > 0.0


def test_one_benchmark_to_production_factor_for_every_gpu_hour_offer(tornado):
    # Only the production factor varies: every GPU-hour offer's throughput moves by the same p in a draw,
    # so dear stays exactly twice anchor and both scale by 1 / p; the range is 3.6 / 450 / p for p in [0.8, 1].
    config = fixed_config(production=tri(0.8, 0.9, 1.0))
    _, costs, at, _ = simulate(tornado, config, 3000, seed=12)
    anchor, dear = costs[:, at["anchor"]], costs[:, at["dear"]]
    assert dear == pytest.approx(2 * anchor, rel=1e-12)
    assert anchor.min() >= 3.6 / 450 - 1e-15 and anchor.max() <= 3.6 / 450 / 0.8 + 1e-15
    # the median of 1 / p: p's median for triangular(0.8, 0.9, 1.0) is 0.9 (symmetric)
    assert np.median(anchor) == pytest.approx(3.6 / 450 / 0.9, rel=0.01)


def test_per_token_offers_are_not_moved_by_the_production_factor(zero):
    ev0, inputs = evaluate_with_inputs(load_workspace(zero), AS_OF)
    acceptable = np.array([ev0.offer(o.id).acceptable for o in inputs.offers], dtype=bool)
    _, costs = monte_carlo(
        inputs.columns,
        inputs.model,
        inputs.offers,
        inputs.currencies,
        ev0.currency,
        acceptable,
        fixed_config(production=tri(0.8, 0.9, 1.0)),
        500,
        3,
    )
    at = {o.id: i for i, o in enumerate(inputs.offers)}
    assert (costs[:, at["tokens"]] == ev0.offer("tokens").metrics["cost_per_task"]).all()


@pytest.mark.parametrize("factor", [0.5, 1.3])
def test_a_demand_factor_reaches_the_cost_through_the_demand_fit(workspace_copy, factor):
    # Second method: the deterministic evaluation with tasks_per_month x factor in procure.yaml. Less demand
    # idles committed GPUs (fill < 1), more bills more of them: every offer's cost follows the demand fit.
    root = workspace_copy("uncertainty_zero")
    config = load_workspace(root).config.uncertainty.model_copy(update={"demand": tri(factor, factor, factor)})
    ev0, inputs = evaluate_with_inputs(load_workspace(root), AS_OF)
    acceptable = np.array([ev0.offer(o.id).acceptable for o in inputs.offers], dtype=bool)
    ranges, _ = monte_carlo(
        inputs.columns, inputs.model, inputs.offers, inputs.currencies, ev0.currency, acceptable, config, 200, 1
    )
    edit(root / "procure.yaml", "  tasks_per_month: 40000000\n", f"  tasks_per_month: {40_000_000 * factor:.0f}\n")
    moved = evaluate(load_workspace(root), AS_OF)
    for offer, found in zip(inputs.offers, ranges):
        expected = moved.offer(offer.id).metrics["cost_per_task"]
        if expected is not None:
            assert found.p50 == pytest.approx(expected, rel=1e-12), offer.id
    # and the demand fit did move something: at half the demand some offer's fill falls below 1
    if factor < 1:
        assert any(
            (moved.offer(o.id).metrics["fill"] or 1) < (ev0.offer(o.id).metrics["fill"] or 1) for o in inputs.offers
        )


def test_points_source_sets_the_width_of_the_throughput_draw(workspace_copy):
    # an offer's own points labelled `reference` (copied from a public curve) draw from the reference width
    root = workspace_copy("uncertainty_tornado")
    edit(root / "offers" / "anchor.yaml", "  points_source: measured\n", "  points_source: reference\n")
    config = fixed_config(
        throughput={
            "measured": tri(0.99, 1.0, 1.01),
            "vendor_claim": tri(0.75, 0.9, 1.0),
            "reference": tri(0.5, 0.6, 0.7),
        }
    )
    offers = load_workspace(root).offers
    f = draw_factors(offers, ["USD"] * len(offers), config, 2000, seed=2)
    at = {o.id: i for i, o in enumerate(offers)}
    assert 0.5 <= f.throughput[:, at["anchor"]].min() and f.throughput[:, at["anchor"]].max() <= 0.7
    assert 0.99 <= f.throughput[:, at["dear"]].min() and f.throughput[:, at["dear"]].max() <= 1.01  # measured
    assert 0.75 <= f.throughput[:, at["floaty"]].min() and f.throughput[:, at["floaty"]].max() <= 1.0  # vendor claim


def test_sensitivity_rows_for_demand_and_the_production_factor(workspace_copy):
    # Second method for the demand row: the deterministic evaluation with tasks_per_month x 0.5 and x 1.5.
    root = workspace_copy("uncertainty_zero")
    edit(
        root / "procure.yaml", "  demand: {triangular: [1.0, 1.0, 1.0]}\n", "  demand: {triangular: [0.5, 1.0, 1.5]}\n"
    )
    edit(
        root / "procure.yaml",
        "  production: {triangular: [1.0, 1.0, 1.0]}\n",
        "  production: {triangular: [0.8, 0.9, 1.0]}\n",
    )
    result = run_sensitivity(root, 3)
    rows = {r.input: r for r in result.rows}
    assert "demand" in rows and "benchmark to production (every GPU-hour offer)" in rows
    import shutil

    # each end is the cost at the typical inputs with the one input moved

    for end, factor in (("low", 0.5), ("high", 1.5)):
        moved = root.parent / end
        shutil.copytree(root, moved)
        edit(moved / "procure.yaml", "  tasks_per_month: 40000000\n", f"  tasks_per_month: {40_000_000 * factor:.0f}\n")
        ev = evaluate(load_workspace(moved), AS_OF)
        costs = rows["demand"].costs_low if end == "low" else rows["demand"].costs_high
        for offer_id, cost in costs.items():
            assert cost == pytest.approx(ev.offer(offer_id).metrics["point_cost_per_task"], rel=1e-12), (end, offer_id)


# --- gates in every draw ---------------------------------------------------------------------------


def knife_edge(workspace_copy) -> Path:
    """The tornado case with only availability drawn, triangular 0.99 / 1 / 1, against a 0.99 minimum:
    floaty (3.30, the cheapest) has an SLA of 0.995 and passes the point's gate by 0.5%; anchor (3.60)
    has 1.0 and passes in every draw. Every other factor is fixed at 1."""
    root = workspace_copy("uncertainty_tornado")
    path = root / "procure.yaml"
    edit(path, "  min_availability: 0.9\n", "  min_availability: 0.99\n")
    text = path.read_text().split("\nuncertainty:", 1)[0]
    one = "{triangular: [1.0, 1.0, 1.0]}"
    path.write_text(
        text
        + f"\nuncertainty:\n  throughput: {{measured: {one}, vendor_claim: {one}, reference: {one}}}\n  availability: "
        f"{{triangular: [0.99, 1.0, 1.0]}}\n"
        f"  utilization: {one}\n  fte_cost: {one}\n  index: {one}\n  fx: {one}\n  production: {one}\n  stack: {one}\n  "
        f"demand: {one}\n"
    )
    floaty = root / "offers" / "floaty.yaml"
    floaty.write_text(floaty.read_text().replace("availability: 1.0", "availability: 0.995"))
    return root


def test_a_gate_on_a_knife_edge_fails_in_its_share_of_draws(workspace_copy):
    # floaty's expected availability 0.995 x f fails the 0.99 minimum when f < 0.99 / 0.995 = 0.994975;
    # for a triangular 0.99 / 1 / 1 (mode at the top), P(f < x) = (x - 0.99)^2 / (0.01 x 0.01), so
    # P(fails) = (0.004975 / 0.01)^2 = 0.2475. When floaty passes it is the cheapest (its cost per task,
    # 3.30 / (450 x 0.995 f), stays below 3.30 / (450 x 0.99) = 0.00741 < anchor's 3.60 / (450 f') >= 0.008),
    # and anchor never fails (1.0 x f >= 0.99): P(floaty cheapest) = 1 - 0.2475 = 0.7525, anchor the rest.
    root = knife_edge(workspace_copy)
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=40000, seed=11))
    floaty, anchor = ev.offer("floaty"), ev.offer("anchor")
    assert floaty.acceptable and ev.summary.recommended == "floaty"  # the point passes: 0.995 >= 0.99
    expected = (0.99 / 0.995 - 0.99) ** 2 / (0.01 * 0.01)
    assert expected == pytest.approx(0.2475, abs=1e-4)
    assert floaty.uncertainty.prob_fails_gate == pytest.approx(expected, abs=0.01)
    assert floaty.uncertainty.fails_by_gate == {
        "availability": pytest.approx(floaty.uncertainty.prob_fails_gate, abs=1e-12)
    }
    assert floaty.uncertainty.prob_cheapest == pytest.approx(1 - expected, abs=0.01)
    assert anchor.uncertainty.prob_fails_gate == 0.0 and anchor.uncertainty.fails_by_gate == {}
    assert anchor.uncertainty.prob_cheapest == pytest.approx(expected, abs=0.01)
    assert "re-applies the availability and capacity gates" in ev.uncertainty.method


def test_sensitivity_reports_the_knife_edge_gate_as_a_flip(workspace_copy):
    # availability x0.99 (the factor's low end): floaty 0.995 x 0.99 = 0.98505 < 0.99 fails, so anchor
    # leads at 3.60 / (450 x 0.99) = 0.0080808; at x1 nothing fails and floaty leads at 3.30 / (450 x 0.995)
    root = knife_edge(workspace_copy)
    result = run_sensitivity(root, 2)
    row = next(r for r in result.rows if r.input == "availability (every offer)")
    assert row.fails_low == {"floaty": ["availability"]} and row.fails_high == {}
    assert (row.leader_low, row.leader_high, row.flips) == ("anchor", "floaty", True)
    assert row.leader_cost_low == pytest.approx(3.6 / (450 * 0.99), rel=1e-12)
    assert row.leader_cost_high == pytest.approx(3.3 / (450 * 0.995), rel=1e-12)
    from procure.render.sensitivity import sensitivity_rows

    _, rows = sensitivity_rows(result, "USD")
    shown = next(r for r in rows if r[0] == "availability (every offer)")
    assert shown[3] == "floaty fails availability; anchor 8.08 leads"  # 3,600 / (450 x 0.99) per 1,000 tasks


REPORT_CHARTS = (
    "benchmark",
    "breakdown",
    "cash",
    "cost_curve",
    "football",
    "hedge",
    "plan_frontier",
    "position",
    "ranges",
    "responsibilities",
    "throughput",
    "tornado",
)


def test_the_reports_name_a_leader_whose_acceptance_hangs_on_a_margin_under_one_standard_deviation(workspace_copy):
    """floaty at an SLA of 0.994 (reliability factor 1) against the 0.99 minimum. Its availability is drawn as 0.994 x
    f,
    f triangular 0.99 / 1 / 1 (mean 2.99 / 3, variance (0.99^2 + 1 + 1 - 0.99 - 0.99 - 1) / 18 = 0.0001 / 18); the point
    and the gate read it at the mean of its draws, 0.994 x 2.99 / 3 = 0.990687: a margin of 0.000687, under its sd
    0.994 x 0.0023570 = 0.0023429, so the leader is on a knife edge. It fails when f < 0.99 / 0.994 = 0.995976,
    P = ((0.995976 - 0.99) / 0.01)^2 = 0.3571 of the draws: it passes in 64.3%, above policy.gate_confidence 50% (still
    acceptable) and under 90% (a named risk). (At 0.999 the margin, 0.99567 - 0.99 = 0.0057, is over two standard
    deviations: no note.) Checked on the report data and the HTML, no PDF rendered."""
    from procure.analysis.memo import memo_figures
    from procure.analysis.report import ReportExtras
    from procure.render.board import board_memo
    from procure.render.documents import render_html

    root = knife_edge(workspace_copy)
    floaty = root / "offers" / "floaty.yaml"
    floaty.write_text(floaty.read_text().replace("availability: 0.995", "availability: 0.999"))
    quiet = evaluate(load_workspace(root), AS_OF)
    assert quiet.summary.recommended == "floaty" and quiet.summary.knife_edges == []
    floaty.write_text(floaty.read_text().replace("availability: 0.999", "availability: 0.994"))
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=20000, seed=3))
    assert ev.summary.recommended == "floaty"
    [edge] = ev.summary.knife_edges
    value = 0.994 * (0.99 + 1 + 1) / 3
    sd = 0.994 * math.sqrt(0.0001 / 18)
    assert (edge.gate, edge.value, edge.requirement) == ("availability", pytest.approx(value), 0.99)
    assert (edge.margin, edge.sd) == (pytest.approx(value - 0.99), pytest.approx(sd))
    expected_fails = ((0.99 / 0.994 - 0.99) / 0.01) ** 2
    assert expected_fails == pytest.approx(0.3571, abs=1e-4)
    assert ev.offer("floaty").uncertainty.prob_fails_gate == pytest.approx(expected_fails, abs=0.01)
    words = (
        "Floaty Compute passes the availability minimum by 0.07 points (99.07% against 99.00%), less than one "
        "standard deviation of its own availability (0.23 points): its acceptance hangs on that margin"
    )
    assert edge.words == words
    figures = memo_figures(ev, [], None, None, "")
    memo = board_memo(ev, figures)
    assert memo.knife_edge.startswith(f"Knife edge: {words} (it fails a gate in 36% of the draws). Named risk: ")
    # and the gate passed in fewer than 90% of the draws is a named risk: 1 - 0.3571 = 64.3% of them pass
    [risk] = ev.summary.gate_risks
    assert risk.gate == "availability" and risk.probability == pytest.approx(1 - expected_fails, abs=0.015)
    assert memo.knife_edge.endswith(f"Named risk: {risk.words}.")
    charts = dict.fromkeys(REPORT_CHARTS, "")
    for kind in ("comparison", "board"):
        html = " ".join(render_html(ev, kind, charts=charts, extras=ReportExtras(memo=figures)).split())
        assert words in html and "36% of the draws" in html, kind


def test_the_headline_lies_inside_its_own_p10_p90_on_the_example():
    # The point evaluation reads every throughput at the mean of the draws' factors (a reference curve:
    # 0.95 x benchmark to production (0.85 + 0.95 + 1.0) / 3 = 0.886667), so the figure the ranking uses
    # is the one the draws are spread around: the example's leader lies in its own [P10, P90].
    root = Path(__file__).resolve().parent.parent
    ev = evaluate(load_workspace(root), AS_OF, MonteCarlo(draws=4000, seed=7))
    leader = ev.ranked[0]
    assert leader.uncertainty.p10 <= leader.metrics["cost_per_task"] <= leader.uncertainty.p90
    assert leader.uncertainty.p10 < leader.metrics["cost_per_task"] < leader.uncertainty.p50 * 1.05


# --- correlated draws: availability per operator, throughput per serving stack -----------------------


def _with(offer, **changes):
    performance = changes.pop("stack", None)
    found = offer.model_copy(update=changes)
    if performance is not None:
        found = found.model_copy(update={"performance": offer.performance.model_copy(update={"stack": performance})})
    return found


def test_two_offers_of_one_operator_share_the_availability_draw(tornado):
    offers = load_workspace(tornado).offers
    anchor = next(o for o in offers if o.id == "anchor")
    dear = next(o for o in offers if o.id == "dear")
    # a second Anchor Cloud offer (one fleet, one operations team) and Dear Cloud, another operator
    second = _with(anchor, id="anchor-second", vendor="  anchor   cloud ")
    config = fixed_config(availability=tri(0.95, 0.99, 1.0))
    f = draw_factors([anchor, second, dear], ["USD"] * 3, config, 4000, seed=5)
    assert np.array_equal(f.availability[:, 0], f.availability[:, 1])  # the same draw, draw for draw
    assert abs(np.corrcoef(f.availability[:, 0], f.availability[:, 2])[0, 1]) < 0.06  # another operator: its own
    # a per-offer override gives an offer its own draw again
    own = config.model_copy(update={"offers": {"anchor-second": OfferUncertainty(availability=tri(0.95, 0.99, 1.0))}})
    g = draw_factors([anchor, second, dear], ["USD"] * 3, own, 4000, seed=5)
    assert abs(np.corrcoef(g.availability[:, 0], g.availability[:, 1])[0, 1]) < 0.06


def test_throughput_is_a_shared_stack_factor_times_each_offer_s_residual(tornado):
    offers = load_workspace(tornado).offers
    anchor = _with(next(o for o in offers if o.id == "anchor"), stack="vLLM 0.11")
    dear = _with(next(o for o in offers if o.id == "dear"), stack="vllm  0.11")
    euro = _with(next(o for o in offers if o.id == "euro"), stack="sglang")
    # stack S and residual R each triangular 0.9 / 1.0 / 1.1 (mean 1, variance v = (0.81 + 1.21 + 1 - 0.99 - 0.9
    # - 1.1) / 18 = 0.03 / 18), independent. Two offers on one stack: Cov(S R1, S R2) = E[S^2] - 1 = v and
    # Var(S R) = E[S^2] E[R^2] - 1 = (1 + v)^2 - 1 = 2v + v^2, so their correlation is 1 / (2 + v) = 0.4996;
    # the ratio of their factors is R1 / R2, whatever S drew. Offers on different stacks: uncorrelated.
    wide = tri(0.9, 1.0, 1.1)
    config = fixed_config(throughput={"measured": wide, "vendor_claim": wide, "reference": wide}, stack=wide)
    f = draw_factors([anchor, dear, euro], ["USD"] * 3, config, 20000, seed=8)
    v = 0.03 / 18
    assert np.corrcoef(f.throughput[:, 0], f.throughput[:, 1])[0, 1] == pytest.approx(1 / (2 + v), abs=0.03)
    assert abs(np.corrcoef(f.throughput[:, 0], f.throughput[:, 2])[0, 1]) < 0.03
    assert f.throughput[:, 0].var() == pytest.approx(2 * v + v * v, rel=0.06)
    # the point evaluation reads at the mean of every factor: residual x stack x production = 1 x 1 x 1 here
    assert point_throughput_factor(anchor, config) == pytest.approx(1.0)


def test_sensitivity_moves_every_offer_on_a_serving_stack_together(tornado, tmp_path):
    """The draws share one throughput factor per serving stack, so the tornado has a row per stack a top offer runs
    on: anchor and dear on "vLLM 0.11" (named twice with other spacing and case), euro on "sglang". With no demand
    stated the cost per task moves as 1 / throughput: at the stack's low end 0.9 (mean (0.9 + 1 + 1.1) / 3 = 1) both
    vLLM offers cost base / 0.9 and base / 1.1 at its high end, and every other offer keeps its baseline."""
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(tornado, root)
    edit(root / "procure.yaml", "  stack: {triangular: [1.0, 1.0, 1.0]}", "  stack: {triangular: [0.9, 1.0, 1.1]}")
    for offer, stack in (("anchor", "vLLM 0.11"), ("dear", "vllm  0.11"), ("euro", "sglang")):
        edit(root / "offers" / f"{offer}.yaml", "performance:\n", f"performance:\n  stack: {stack}\n")
    result = run_sensitivity(root, 6)
    rows = {r.input: r for r in result.rows}
    assert {"serving stack: vLLM 0.11", "serving stack: sglang"} <= set(rows)
    assert not [name for name in rows if name.startswith("serving stack: floaty")]  # alone on a stack it does not name
    vllm = rows["serving stack: vLLM 0.11"]
    assert (vllm.low, vllm.high) == (0.9, 1.1)
    for offer in result.offers:
        base = result.baseline[offer]
        moved = offer in ("anchor", "dear")
        assert vllm.costs_low[offer] == pytest.approx(base / 0.9 if moved else base, rel=1e-12)
        assert vllm.costs_high[offer] == pytest.approx(base / 1.1 if moved else base, rel=1e-12)
    sglang = rows["serving stack: sglang"]
    assert sglang.costs_low["euro"] == pytest.approx(result.baseline["euro"] / 0.9, rel=1e-12)
    assert sglang.costs_low["anchor"] == pytest.approx(result.baseline["anchor"], rel=1e-12)


def test_draws_and_gate_odds_do_not_depend_on_the_block_of_rows_they_are_computed_in(monkeypatch):
    """A large workspace's draws are scaled, and its gates counted, a block of rows at a time (a factor over 10,000
    offers is 800 MB whole): blocks of one row give, bit for bit, the draws and gates' odds of one block of all rows."""
    from conftest import ROOT

    ws = load_workspace(ROOT)
    currencies = [o.pricing.currency or "USD" for o in ws.offers]
    config = ws.config.uncertainty
    assert config.stack.bounds[0] != config.stack.bounds[2]  # the shared stack factor is drawn here
    # the gates' odds over 600 draws, not the example's 10,000
    config = config.model_copy(update={"draws": 600})
    ws = dataclasses.replace(ws, config=ws.config.model_copy(update={"uncertainty": config}))
    gaps = np.linspace(0.0, 0.3, len(ws.offers))  # and every reading gap's spread
    drawn, odds = {}, {}
    for values in (1, 10**9):
        monkeypatch.setattr(unc, "BLOCK_VALUES", values)
        monkeypatch.setattr(unc, "_kept_draws", type(unc._kept_draws)())
        assert len(unc._row_blocks(600, len(ws.offers))) == (600 if values == 1 else 1)
        drawn[values] = unc._draw(ws.offers, currencies, config, 600, seed=7, gaps=gaps)
        ev = evaluate(ws, date(2026, 11, 29))
        odds[values] = [r.model_dump_json() for r in ev.offers]  # each gate with the share of draws it passes in
    for name in ("throughput", "availability"):
        assert np.array_equal(getattr(drawn[1], name), getattr(drawn[10**9], name)), name
    assert odds[1] == odds[10**9] and any('"probability":0.' in r for r in odds[1])
