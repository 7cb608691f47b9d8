"""The commands' use cases (procure/analysis/usecases.py): each loads, checks, evaluates and decides, never prints,
reports progress through the callback it is given, and refuses what the command refuses, in the same words."""

import contextlib
from datetime import date
from pathlib import Path

import pytest

from procure.analysis import usecases
from procure.errors import InputError

REAL = Path(__file__).parent / "data" / "real_offers"  # public offers, as_of 2026-11-30, no demand: and no horizon:
DAY = date(2026, 11, 30)


def test_comparison_reports_each_stage_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    asked: list[tuple[str, bool]] = []
    advanced: list[tuple[int, int]] = []

    @contextlib.contextmanager
    def progress(label: str, shown: bool):  # type: ignore[no-untyped-def]
        asked.append((label, shown))
        yield lambda done, total: advanced.append((done, total))

    found = usecases.comparison(REAL, DAY, monte_carlo=(200, 3), progress=progress)
    # Monte Carlo is worth a bar; the plan is not solved without demand: (real_offers has none)
    assert asked == [("Monte Carlo", True), ("the purchase plan", False)]
    assert advanced and advanced[-1][0] == advanced[-1][1]  # the draws reach their total
    assert found.purchase is None and found.evaluation.as_of == DAY
    assert found.horizon_flows is None and found.sensitivity is None  # only asked for by the workbook
    assert capsys.readouterr() == ("", "")


def test_comparison_workbook_sheets_default_to_36_months() -> None:
    # neither --horizon nor horizon.months: the workbook's horizon sheet is over 36 months
    found = usecases.comparison(REAL, DAY, workbook=True)
    assert found.horizon_flows is not None and found.horizon_flows.horizon_months == 36
    assert found.sensitivity is not None


def test_an_unknown_offer_is_told_before_anything_is_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    import procure.analysis.evaluate as evaluate

    def never(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("evaluated before the ids were checked")

    monkeypatch.setattr(evaluate, "evaluate_with_inputs", never)
    with pytest.raises(InputError) as raised:
        usecases.comparison(REAL, DAY, offers=["no-such-offer"])
    assert "no offer with id 'no-such-offer'" in str(raised.value.problems[0])


def test_ranking_by_the_horizon_needs_one() -> None:
    with pytest.raises(InputError) as raised:
        usecases.comparison(REAL, DAY, rank_by_horizon=True)
    assert raised.value.problems[0].file == "--rank-by"
    assert usecases.comparison(REAL, DAY, horizon=12, rank_by_horizon=True).evaluation.horizon_months == 12


def test_cash_flows_refuse_one_offer_with_a_ranking() -> None:
    offer = next(p.stem for p in sorted((REAL / "offers").glob("*.yaml")))
    with pytest.raises(InputError) as raised:
        usecases.cash_flows(REAL, DAY, None, offer, 3)
    assert raised.value.problems[0].file == "--top"
    assert usecases.cash_flows(REAL, DAY, None, None, None).evaluation.horizon_months == 36


def test_what_if_checks_its_options_in_order() -> None:
    with pytest.raises(InputError) as raised:  # --top without --price-to-win
        usecases.what_if(REAL, DAY, None, usecases.Asked(), False, 2)
    assert "add --price-to-win" in raised.value.problems[0].message
    with pytest.raises(InputError) as raised:  # a change beside --price-to-win
        usecases.what_if(REAL, DAY, None, usecases.Asked(monthly=5.0), True, None)
    assert raised.value.problems[0].field == "--price-to-win"
    with pytest.raises(InputError) as raised:  # a share above 1
        usecases.what_if(REAL, DAY, "any", usecases.Asked(availability=2.0), False, None)
    assert raised.value.problems[0].file == "--availability"
    found = usecases.what_if(REAL, DAY, None, usecases.Asked(), True, None)
    assert found.whatif is None and found.as_of == DAY
    assert [r.id for r in found.price_to_win] == [o.id for o in found.evaluation.ranked]


def test_sensitivity_follows_the_top_three_by_default() -> None:
    found = usecases.sensitivities(REAL, DAY, None, None, None)
    assert found.followed == [o.id for o in found.evaluation.ranked][:3]
