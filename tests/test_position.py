"""Cost position (procure/analysis/position.py): our cost per task on one curve with the acceptable offers and
the competitors, and our history against theirs (improving is not the same as getting ahead).

Hand figures for tests/data/basic as of 2026-11-29 (acceptable: bravo, alpha):
- bravo: 3.00 EUR x 1.1 + 0.60 staff + 0.05 software = 3.95 per GPU-hour over
  300 tok/s x 3,600 / 1,000 x (0.99 SLA x 0.97 unrated haircut x 0.98 for the eight operating jobs
  left to us) x 0.9 x 0.8 successful tasks;
- alpha: 4.75 per GPU-hour over 1,080 x (0.995 x 0.97 unrated) x 0.9 x 0.8;
- both: availability and utilization each x the mean of its factor at the point (0.996667 x 0.983333).
"""

from __future__ import annotations

import shutil
from datetime import date

import pytest
from clihelp import run
from pointmeans import DELIVERY_MEAN, fixed_at_means

from procure.analysis.evaluate import evaluate
from procure.analysis.position import CurvePoint, compare_histories, position
from procure.errors import InputError
from procure.io.workspace import load_workspace
from procure.model.inputs import CompetitorPoint, MarketConfig, OwnPoint

AS_OF = date(2026, 11, 29)
JUNE, OCTOBER = date(2026, 6, 30), date(2026, 10, 31)
# availability and utilization each x the mean of its factor at the point (DELIVERY_MEAN = 0.996667 x 0.983333)
BRAVO = 3.95 / (1080 * 0.99 * 0.97 * 0.98 * 0.9 * 0.8 * DELIVERY_MEAN)  # 0.0053977 / 0.980056 = 0.0055075
ALPHA = 4.75 / (1080 * 0.995 * 0.97 * 0.9 * 0.8 * DELIVERY_MEAN)  # 0.0063291 / 0.980056 = 0.0064579


@pytest.fixture(scope="module")
def ev(data_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("position") / "basic"
    shutil.copytree(data_dir / "basic", root)
    return evaluate(load_workspace(fixed_at_means(root)), AS_OF)


def test_hand_figures_match_the_evaluation(ev):
    assert ev.offer("bravo").metrics["cost_per_task"] == pytest.approx(BRAVO, rel=1e-12)
    assert ev.offer("alpha").metrics["cost_per_task"] == pytest.approx(ALPHA, rel=1e-12)


def market(own=(), **competitors) -> MarketConfig:
    """market(own=[(10, JUNE), (8, OCTOBER)], Rival=[(12, JUNE), (6, OCTOBER)])"""
    return MarketConfig(
        own=[OwnPoint(cost_per_task=c, date=d) for c, d in own],
        competitors=[
            CompetitorPoint(name=name.replace("_", " "), cost_per_task=c, date=d)
            for name, points in competitors.items()
            for c, d in points
        ],
    )


# --- improving is not getting ahead ---------------------------------------------------------------


def test_we_improve_but_a_competitor_improves_more(ev):
    pos = position(ev, market(own=[(10, JUNE), (8, OCTOBER)], Rival=[(12, JUNE), (6, OCTOBER)]))
    assert pos.cost_per_task == 8 and pos.label == "our recorded cost on 2026-10-31"
    [change] = pos.changes
    assert (change.ours_from, change.ours_to, change.theirs_from, change.theirs_to) == (10, 8, 12, 6)
    assert change.we_were_cheaper is True and change.we_are_cheaper is False
    assert "we improved and are now the more expensive producer" in change.sentence
    assert change.sentence == (
        "We went from 10000.00 to 8000.00 per 1,000 tasks (-20%, improved) while Rival went from 12000.00 to 6000.00 "
        "(-50%): "
        "we improved and are now the more expensive producer."
    )
    assert change.sentence in pos.sentences


def test_the_flip_with_the_current_figure_given(ev):
    # our history holds only June's 10; --current 8 is placed as of the evaluation date
    pos = position(ev, market(own=[(10, JUNE)], Rival=[(12, JUNE), (6, OCTOBER)]), current=8)
    assert [p.cost_per_task for p in pos.history["us"]] == [10, 8]
    assert pos.history["us"][-1].date == AS_OF
    assert "we improved and are now the more expensive producer" in pos.changes[0].sentence


def test_we_improve_while_a_competitor_gets_worse(ev):
    pos = position(ev, market(own=[(10, JUNE), (8, OCTOBER)], Rival=[(6, JUNE), (12, OCTOBER)]))
    [change] = pos.changes
    assert change.we_were_cheaper is False and change.we_are_cheaper is True
    assert "we were the more expensive producer and are now the cheaper one" in change.sentence


@pytest.mark.parametrize(
    ("ours", "theirs", "outcome"),
    [
        ((10, 8), (12, 9), "we were and still are the cheaper producer"),
        ((10, 8), (7, 6), "we were and still are the more expensive producer"),
        ((8, 10), (9, 9.5), "we were the cheaper producer and are now the more expensive one"),
        ((10, 8), (12, 6), "we improved and are now the more expensive producer"),
        ((10, 8), (6, 12), "we were the more expensive producer and are now the cheaper one"),
    ],
)
def test_compare_histories_outcomes(ours, theirs, outcome):
    def points(name, kind, values):
        return [CurvePoint(name=name, kind=kind, cost_per_task=v, date=d) for v, d in zip(values, (JUNE, OCTOBER))]

    change = compare_histories(points("us", "us", ours), points("Rival", "competitor", theirs), "Rival")
    assert change.sentence.endswith(f": {outcome}.")


def test_no_history_comparison_with_a_single_point(ev):
    pos = position(ev, market(Rival=[(0.005, OCTOBER)]), current=0.006)
    assert pos.changes == []
    assert len(pos.sentences) == 1


# --- rank and gap on a constructed curve ------------------------------------------------------------

RIVALS = {"Rival_A": [(0.0050, JUNE), (0.0058, OCTOBER)], "Rival_B": [(0.0070, OCTOBER)]}


def test_rank_and_gap_for_a_given_cost(ev):
    pos = position(ev, market(**RIVALS), current=0.006)
    # the curve: each acceptable offer, each competitor's latest point, and us
    # bravo 0.005236 < Rival A 0.0058 < us 0.006 < alpha 0.006329 < Rival B 0.0070
    assert [p.name for p in pos.curve] == ["bravo", "Rival A", "us", "alpha", "Rival B"]
    assert [p.kind for p in pos.curve] == ["offer", "competitor", "us", "offer", "competitor"]
    assert pos.rank == 3 and pos.of == 5
    assert pos.cheapest.name == "bravo"
    assert pos.gap == pytest.approx(0.006 - BRAVO, rel=1e-12)
    assert pos.gap_share == pytest.approx((0.006 - BRAVO) / BRAVO, rel=1e-12)
    assert pos.label == "the cost per task given"
    assert pos.sentences[0] == (
        f"At 6.00 USD per 1,000 successful tasks (the cost per task given), we rank 3 of 5 costs on the cost curve; "
        f"the cheapest is bravo at {BRAVO * 1000:.2f}, and we cost {(0.006 - BRAVO) / BRAVO:.0%} more."
    )


def test_rank_and_gap_for_an_offer(ev):
    pos = position(ev, market(**RIVALS), current_offer="alpha")
    assert pos.cost_per_task == pytest.approx(ALPHA, rel=1e-12)
    assert pos.label == "offer alpha"
    assert pos.rank == 3  # bravo and Rival A (0.0058) are cheaper than alpha's 0.006329
    assert pos.cheapest.name == "bravo"
    assert pos.gap == pytest.approx(ALPHA - BRAVO, rel=1e-12)
    assert pos.gap_share == pytest.approx(ALPHA / BRAVO - 1, rel=1e-12)


def test_cheapest_of_all(ev):
    pos = position(ev, market(**RIVALS), current=0.004)
    assert pos.rank == 1 and pos.gap == 0 and pos.gap_share == 0
    assert pos.cheapest.kind == "us"
    assert pos.curve[0].kind == "us"
    assert pos.sentences[0].endswith("we rank 1 of 5 costs on the cost curve and are the cheapest.")


def test_latest_recorded_cost_is_used_without_flags(ev):
    pos = position(ev, market(own=[(0.0065, JUNE), (0.0060, OCTOBER)], **RIVALS))
    assert pos.cost_per_task == 0.0060
    assert pos.label == "our recorded cost on 2026-10-31"
    assert pos.rank == 3 and pos.of == 5
    assert pos.gap == pytest.approx(0.0060 - BRAVO, rel=1e-12)
    us = next(p for p in pos.curve if p.kind == "us")
    assert us.date == OCTOBER
    # our history against Rival A: 0.0065 -> 0.0060 vs 0.0050 -> 0.0058
    [change] = pos.changes
    assert change.competitor == "Rival A"
    assert change.sentence.endswith("we were and still are the more expensive producer.")


def test_recommended_offer_without_any_figure(ev):
    pos = position(ev, market(**RIVALS))
    assert pos.label == "the recommended offer bravo"
    assert pos.cost_per_task == pytest.approx(BRAVO, rel=1e-12)
    assert pos.rank == 1


# --- refusals ---------------------------------------------------------------------------------------


def test_position_refuses_both_figures(ev):
    with pytest.raises(InputError, match="not both"):
        position(ev, market(**RIVALS), current=0.006, current_offer="alpha")


def test_position_refuses_an_unknown_offer(ev):
    with pytest.raises(InputError, match="no offer with id 'zulu'"):
        position(ev, market(**RIVALS), current_offer="zulu")


@pytest.mark.parametrize("value", [0.0, -0.001])
def test_position_refuses_a_non_positive_cost(ev, value):
    with pytest.raises(InputError, match="must be greater than 0"):
        position(ev, market(**RIVALS), current=value)


def test_nothing_to_place_is_refused(data_dir):
    # no figure given, no recorded history, no recommended offer
    evaluation = evaluate(load_workspace(data_dir / "basic"), date(2027, 7, 1))  # every offer expired
    assert evaluation.ranked == []
    with pytest.raises(InputError, match="no cost per task to place"):
        position(evaluation, MarketConfig())


def cli_problem_lines(result) -> list[str]:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    return [line for line in result.stderr.splitlines() if line and not line.endswith("nothing was written.")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--current", "0.006", "--current-offer", "alpha"), "position: give --current or --offer, not both"),
        (("--current-offer", "zulu"), "offers/: no offer with id 'zulu' (known: alpha, bravo, charlie, delta, echo)"),
        (("--current", "0"), "--current: must be greater than 0 (got 0)"),
        (("--current", "-0.5"), "--current: must be greater than 0 (got -0.5)"),
    ],
)
def test_cli_errors_exit_2(data_dir, args, message):
    result = run("position", "-w", data_dir / "rated", "--as-of", "2026-11-29", *args)
    assert cli_problem_lines(result) == [message]


# --- known problems -------------------------------------------------------------------------------


def test_position_as_of_a_date_uses_only_points_known_by_then(data_dir):
    ws = load_workspace(
        data_dir / "rated"
    )  # own: 0.0065 on 06-30, 0.0060 on 10-31; Rival A 0.0050 on 06-30, 0.0058 on 10-31
    early = evaluate(ws, date(2026, 9, 1))
    pos = position(early, ws.config.market)
    assert pos.cost_per_task == 0.0065 and pos.label == "our recorded cost on 2026-06-30"
    assert all(p.date <= date(2026, 9, 1) for p in pos.curve)


def test_a_competitors_price_is_labelled_and_not_ranked_as_a_cost(ev):
    """Our cost 0.0060 sits between bravo (0.0053977) and alpha (0.0063291); a rival's public price of 0.0050 is
    below it but is what the rival charges, not what it costs: we rank 2 of 3 costs, and the price is said apart."""
    cfg = MarketConfig(competitors=[CompetitorPoint(name="Rival P", cost_per_task=0.0050, date=AS_OF, figure="price")])
    pos = position(ev, cfg, current=0.0060)
    assert (pos.rank, pos.cheapest.name) == (2, "bravo")
    assert "we rank 2 of 3 costs" in pos.sentences[0]
    assert "Rival P charges 5.00 per 1,000 tasks (a price to its customers, not its cost)" in pos.sentences[1]
    rival = next(p for p in pos.curve if p.name == "Rival P")
    assert rival.figure == "price"
    later = compare_histories(
        [
            CurvePoint(name="us", kind="us", cost_per_task=0.008, date=JUNE),
            CurvePoint(name="us", kind="us", cost_per_task=0.006, date=AS_OF),
        ],
        [
            CurvePoint(name="Rival P", kind="competitor", cost_per_task=0.007, date=JUNE, figure="price"),
            CurvePoint(name="Rival P", kind="competitor", cost_per_task=0.007, date=AS_OF, figure="price"),
        ],
        "Rival P",
        "price",
    )
    assert later.sentence.endswith("our cost was above its price and is now below it.")
