"""Rental price benchmark (procure/analysis/market.py): index levels by method, filters, periods, scope
adjustment, the methodology table and the checks on price observations.

Every expected figure is worked out by hand in the test (or in the comment next to it); the code's own
helpers are never used to compute an expected value.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from procure.analysis.market import Filters, StrataSettings, scope_adjustments
from procure.analysis.market import build_index as stratified_index
from procure.errors import InputError
from procure.io.quotes import Quote, read_quotes
from procure.model.inputs import OPERATING_JOBS, Assumptions, Grade, JobStaffing

NOV, OCT = date(2026, 11, 1), date(2026, 10, 1)


def q(
    day: str,
    price: float,
    kind: str = "transacted",
    term: int = 0,
    grade: str = "A",
    volume: float | None = None,
    gpu: str = "B200",
) -> Quote:
    """One observation; a transacted row trades 100 GPU-hours unless told, an advertised one 0."""
    if volume is None:
        volume = 100.0 if kind == "transacted" else 0.0
    return Quote(
        line=0,
        date=date.fromisoformat(day),
        gpu=gpu,
        price=price,
        kind=kind,
        term_months=term,
        seller="S",
        grade=grade,
        gpu_hours=volume,
    )


# The method tests below work on one pool of quotes (no strata, no minimum, no seller cap), so that each
# level is the method's own arithmetic; the strata have their own tests at the end of the file.
POOLED = StrataSettings(min_quotes=1, seller_cap=1.0, by=())


def build_index(*args, **kwargs):
    kwargs.setdefault("settings", POOLED)
    return stratified_index(*args, **kwargs)


def levels(build) -> dict[date, float | None]:
    return {p.period: p.level for p in build.points}


def counts(build) -> dict[date, int]:
    return {p.period: p.observations for p in build.points}


# --- methods --------------------------------------------------------------------------------------


def test_median_of_an_odd_and_an_even_count():
    quotes = [q("2026-10-02", p) for p in (5.0, 9.0, 4.0)] + [q("2026-11-02", p) for p in (5.0, 9.0, 4.0, 6.0)]
    build = build_index(quotes, "median")
    assert levels(build) == {OCT: pytest.approx(5.0), NOV: pytest.approx(5.5)}  # (5 + 6) / 2
    assert counts(build) == {OCT: 3, NOV: 4}


@pytest.mark.parametrize(
    "prices, expected",
    [
        # 10 prices: floor(10% x 10) = 1 dropped from each end: mean of 2..9 = 5.5 (plain mean 14.5)
        ([100, 1, 2, 3, 4, 5, 6, 7, 8, 9], 5.5),
        # 9 prices: max(10%, 1/9) = one quote from each end, even in a small period: 1 and 100 out,
        # mean of 2..7 and 16 = 43 / 7 (the old rule, floor(0.9) = 0, trimmed nothing: 16)
        ([100, 1, 2, 3, 4, 5, 6, 7, 16], 43 / 7),
        # 19 prices: 10% = 1.9 quotes from each end: 1 and 0.9 of 2 out below, 100 and 0.9 of 18 above:
        # (0.1 x 2 + (3 + ... + 17) + 0.1 x 18) / (0.1 + 15 + 0.1) = 152 / 15.2 = 10
        ([100] + list(range(1, 19)), 10.0),
        # 20 prices: floor(2.0) = 2 each end: 1, 2 and 99, 100 out, mean of 3..18 = 10.5
        ([99, 100] + list(range(1, 19)), 10.5),
    ],
)
def test_trimmed_mean_drops_a_tenth_or_one_quote_from_each_end(prices, expected):
    build = build_index([q("2026-11-03", float(p)) for p in prices], "trimmed-mean")
    assert levels(build) == {NOV: pytest.approx(expected)}
    assert counts(build) == {NOV: len(prices)}


def test_volume_weighted_mean_weights_by_gpu_hours():
    quotes = [
        q("2026-11-02", 4.0, volume=100),
        q("2026-11-03", 5.0, volume=300),
        q("2026-11-04", 8.0, volume=600),
    ]
    build = build_index(quotes, "volume-weighted")
    # (4 x 100 + 5 x 300 + 8 x 600) / 1000 = (400 + 1500 + 4800) / 1000 = 6.7 (plain mean 5.667)
    assert levels(build) == {NOV: pytest.approx(6.7)}


def test_advertised_zero_volume_rows_carry_no_weight_and_a_period_without_volume_has_no_level():
    quotes = [
        q("2026-10-05", 6.0, "advertised"),
        q("2026-10-06", 7.0, "advertised"),
        q("2026-11-02", 20.0, "advertised"),  # zero volume: no weight at all
        q("2026-11-03", 4.0, volume=100),
        q("2026-11-04", 6.0, volume=300),
    ]
    build = build_index(quotes, "volume-weighted", kind="all")
    # October: only advertised rows, no volume to weight by -> no level; November: (400 + 1800) / 400 = 5.5
    assert levels(build) == {OCT: None, NOV: pytest.approx(5.5)}
    assert counts(build) == {OCT: 2, NOV: 3}
    assert any("volume" in note for note in build.notes)
    # the other methods do use the advertised rows
    assert levels(build_index(quotes, "median", kind="all")) == {OCT: pytest.approx(6.5), NOV: pytest.approx(6.0)}


# --- filters --------------------------------------------------------------------------------------


def test_kind_filter():
    quotes = [
        q("2026-11-02", 6.0, "advertised"),
        q("2026-11-03", 7.0, "advertised"),
        q("2026-11-04", 4.0),
        q("2026-11-05", 5.0),
        q("2026-11-06", 9.0),
    ]
    assert levels(build_index(quotes, "median", kind="advertised")) == {NOV: pytest.approx(6.5)}
    assert levels(build_index(quotes, "median", kind="transacted")) == {NOV: pytest.approx(5.0)}
    assert levels(build_index(quotes, "median", kind="all")) == {NOV: pytest.approx(6.0)}
    assert counts(build_index(quotes, "median", kind="advertised")) == {NOV: 2}


# Each term sits on a bucket boundary: 0 and 3 in 0-3, 4 and 12 in 4-12, 13 and 36 in 13-36, 37 in none.
TERM_PRICES = {0: 1.0, 3: 2.0, 4: 10.0, 12: 20.0, 13: 100.0, 36: 200.0, 37: 1000.0}


@pytest.mark.parametrize(
    "bucket, expected, n", [("0-3", 1.5, 2), ("4-12", 15.0, 2), ("13-36", 150.0, 2), (None, 20.0, 7)]
)
def test_term_buckets_include_both_ends(bucket, expected, n):
    quotes = [q("2026-11-02", price, term=term) for term, price in TERM_PRICES.items()]
    build = build_index(quotes, "median", filters=Filters(term=bucket))
    assert levels(build) == {NOV: pytest.approx(expected)}
    assert counts(build) == {NOV: n}


def test_grade_filter():
    quotes = [q("2026-11-02", 4.0, grade="A"), q("2026-11-03", 6.0, grade="A"), q("2026-11-04", 9.0, grade="B")]
    assert levels(build_index(quotes, "median", filters=Filters(grade="A"))) == {NOV: pytest.approx(5.0)}
    assert levels(build_index(quotes, "median", filters=Filters(grade="B"))) == {NOV: pytest.approx(9.0)}
    assert levels(build_index(quotes, "median")) == {NOV: pytest.approx(6.0)}


def test_gpu_filter_defaults_to_b200():
    quotes = [
        q("2026-11-02", 5.0),
        q("2026-11-03", 7.0),
        q("2026-11-04", 2.0, gpu="H100"),
        q("2026-11-05", 2.2, gpu="H100"),
        q("2026-11-06", 2.6, gpu="H100"),
    ]
    b200 = build_index(quotes, "median")
    assert levels(b200) == {NOV: pytest.approx(6.0)} and counts(b200) == {NOV: 2}
    h100 = build_index(quotes, "median", filters=Filters(gpu="H100"))
    assert levels(h100) == {NOV: pytest.approx(2.2)} and counts(h100) == {NOV: 3}


def test_no_observation_passes_the_filters():
    # An empty index would replace a good market/index.csv with a header: refused, nothing to write.
    from procure.errors import InputError

    with pytest.raises(InputError, match="no observation matches the filters .*grade=Z"):
        build_index([q("2026-11-02", 5.0, grade="A")], "median", filters=Filters(grade="Z"))


# --- periods --------------------------------------------------------------------------------------


def test_month_and_week_periods():
    # 2026-10-26 and 2026-11-02 are Mondays; 2026-11-01 is a Sunday, 2026-11-08 a Sunday.
    quotes = [
        q("2026-10-26", 1.0),  # Mon: week of 10-26, October
        q("2026-10-31", 3.0),  # Sat: week of 10-26, October
        q("2026-11-01", 5.0),  # Sun: week of 10-26 (a week starts on Monday), November
        q("2026-11-02", 10.0),  # Mon: week of 11-02, November
        q("2026-11-08", 20.0),  # Sun: week of 11-02, November
        q("2026-11-09", 40.0),  # Mon: week of 11-09, November
    ]
    month = build_index(quotes, "median", period="month")
    assert levels(month) == {OCT: pytest.approx(2.0), NOV: pytest.approx(15.0)}  # (1, 3) and (5, 10, 20, 40)
    assert counts(month) == {OCT: 2, NOV: 4}
    week = build_index(quotes, "median", period="week")
    assert levels(week) == {
        date(2026, 10, 26): pytest.approx(3.0),
        date(2026, 11, 2): pytest.approx(15.0),
        date(2026, 11, 9): pytest.approx(40.0),
    }
    assert counts(week) == {date(2026, 10, 26): 3, date(2026, 11, 2): 2, date(2026, 11, 9): 1}
    assert [p.period for p in week.points] == sorted(p.period for p in week.points)
    assert all(p.period.weekday() == 0 for p in week.points)


def test_points_come_in_date_order_whatever_the_row_order():
    quotes = [q("2026-11-02", 5.0), q("2026-09-02", 3.0), q("2026-10-02", 4.0)]
    assert [p.period for p in build_index(quotes).points] == [date(2026, 9, 1), OCT, NOV]


# --- scope adjustment -----------------------------------------------------------------------------

# Staffing (FTE fixed, per 1000 GPUs); every other job zero. fte_cost_year / 8,760 = 25.
STAFF = {
    "hardware_repair": (1.0, 2.0),
    "monitoring": (0.5, 1.0),
    "serving_stack": (2.0, 4.0),
    "release_validation": (0.4, 2.0),
    "capacity_planning": (0.2, 0.0),
}


def assumptions() -> Assumptions:
    jobs = {
        job: JobStaffing(fte_fixed=STAFF.get(job, (0, 0))[0], fte_per_1000_gpus=STAFF.get(job, (0, 0))[1])
        for job in OPERATING_JOBS
    }
    return Assumptions(fte_cost_year=219000, jobs=jobs)


def grade(grade_id: str, provider_jobs: list[str]) -> Grade:
    return Grade(
        id=grade_id,
        name=grade_id,
        rank=1,
        gpu="B200",
        expect="test",
        requires={"service_kinds": ["managed_cluster"], "provider_jobs": provider_jobs},
    )


def test_scope_adjustment_by_hand():
    grades = [
        grade("MC", ["hardware_repair", "monitoring"]),
        grade("BM", ["hardware_repair"]),
        grade("ALL", list(OPERATING_JOBS)),
        grade("NONE", []),
    ]
    # At 100 GPUs one FTE costs 219,000 / (100 x 8,760) = 0.25 per GPU-hour; FTE per job at 100 GPUs:
    # hardware 1.0 + 0.2 = 1.2, monitoring 0.5 + 0.1 = 0.6, serving 2.0 + 0.4 = 2.4, release 0.4 + 0.2 = 0.6, capacity
    # 0.2.
    found = scope_adjustments(grades, assumptions(), 100)
    assert found["MC"] == pytest.approx((2.4 + 0.6 + 0.2) * 0.25)  # 0.80
    assert found["BM"] == pytest.approx((0.6 + 2.4 + 0.6 + 0.2) * 0.25)  # 0.95
    assert found["ALL"] == pytest.approx(0.0)
    assert found["NONE"] == pytest.approx((1.2 + 0.6 + 2.4 + 0.6 + 0.2) * 0.25)  # 1.25
    # The default fleet is 512 GPUs: for MC, (2 + 4 x 0.512) + (0.4 + 2 x 0.512) + 0.2 = 5.672 FTE
    # x 219,000 / (512 x 8,760).
    default = scope_adjustments(grades, assumptions())
    assert default["MC"] == pytest.approx(5.672 * 219000 / (512 * 8760))
    assert default["BM"] == pytest.approx((0.5 + 1.0 * 0.512 + 5.672) * 219000 / (512 * 8760))


def test_scope_adjustment_uses_builtin_staffing_for_jobs_left_out():
    # Only serving_stack is configured; hardware_repair falls back to the built-in 0.5 + 2.0 per 1000 GPUs.
    # A grade whose provider owns every job but these two leaves exactly them to the buyer.
    a = Assumptions(fte_cost_year=219000, jobs={"serving_stack": JobStaffing(fte_fixed=1.0, fte_per_1000_gpus=0.0)})
    g = grade("G", [j for j in OPERATING_JOBS if j not in ("serving_stack", "hardware_repair")])
    # (1.0 + 0.5 + 2.0 x 0.1) x 0.25 = 0.425
    assert scope_adjustments([g], a, 100)["G"] == pytest.approx(1.7 * 0.25)


def test_scope_adjust_adds_each_grade_s_cost_to_its_prices():
    quotes = [q("2026-11-02", 5.0, grade="A"), q("2026-11-03", 6.0, grade="B"), q("2026-11-04", 4.0, grade="A")]
    adj = {"A": 0.5, "B": 2.0}
    raw = build_index(quotes, "median", adjustments=adj, scope_adjust=False)
    assert levels(raw) == {NOV: pytest.approx(5.0)}
    adjusted = build_index(quotes, "median", adjustments=adj, scope_adjust=True)
    # 5.5, 8.0, 4.5 -> median 5.5; the trimmed mean of three drops one at each end: 5.5
    assert levels(adjusted) == {NOV: pytest.approx(5.5)}
    assert levels(build_index(quotes, "trimmed-mean", adjustments=adj, scope_adjust=True)) == {NOV: pytest.approx(5.5)}
    assert adjusted.scope_adjust is True and adjusted.adjustments == adj


def test_scope_adjust_with_an_unknown_grade_is_an_input_error():
    quotes = [
        q("2026-11-02", 5.0, grade="A"),
        Quote(7, date(2026, 11, 3), "B200", 6.0, "transacted", 0, "S", "MYSTERY", 10.0),
    ]
    with pytest.raises(InputError) as caught:
        build_index(quotes, adjustments={"A": 0.5}, scope_adjust=True, source="q.csv")
    [problem] = caught.value.problems
    assert (problem.file, problem.line) == ("q.csv", 7)
    assert "MYSTERY" in problem.message


def test_scope_adjust_ignores_the_grades_of_rows_the_filters_leave_out():
    quotes = [
        q("2026-11-02", 5.0, grade="A"),
        q("2026-11-03", 7.0, grade="A"),
        q("2026-11-04", 2.0, grade="H100-BM", gpu="H100"),  # not a B200: outside the index, no grade file needed
    ]
    build = build_index(quotes, "median", adjustments={"A": 0.5}, scope_adjust=True)
    assert levels(build) == {NOV: pytest.approx(6.5)}  # (5.5 + 7.5) / 2


# --- methodology table ----------------------------------------------------------------------------

ADJ = {"A": 0.5, "B": 1.0}
# The latest month, November: 4 advertised (no volume) and 6 transacted observations, 10 in all.
NOVEMBER = [
    q("2026-11-02", 6.0, "advertised", grade="A"),
    q("2026-11-03", 7.0, "advertised", grade="B"),
    q("2026-11-04", 6.5, "advertised", grade="A"),
    q("2026-11-05", 9.0, "advertised", grade="B"),
    q("2026-11-06", 5.0, grade="A", volume=100),
    q("2026-11-09", 5.5, grade="B", volume=300),
    q("2026-11-10", 4.5, grade="A", volume=100),
    q("2026-11-11", 6.0, grade="B", volume=500),
    q("2026-11-12", 3.0, grade="A", volume=100),
    q("2026-11-30", 5.0, grade="B", volume=200),
]
# Earlier and filtered-out rows that must not move the table.
OTHERS = [
    q("2026-10-30", 50.0, grade="A", volume=1000),
    q("2026-10-01", 60.0, "advertised", grade="B"),
    q("2026-11-15", 1.0, gpu="H100", grade="A", volume=5000),
]

# By hand (raw; adjusted adds 0.5 to A and 1.0 to B):
# advertised 6.0 6.5 7.0 9.0           -> median 6.75, trimmed (max(10%, 1/4): one out at each end) 13.5 / 2 = 6.75, no
# volume
#   transacted 3.0 4.5 5.0 5.0 5.5 6.0   -> median 5.0, trimmed (one each end) 20 / 4 = 5.0,
#                                           volume-weighted 6,900 / 1,300
#   all (10)                             -> median (5.5 + 6.0) / 2 = 5.75, trimmed (3.0 and 9.0 out) 45.5 / 8 = 5.6875,
#                                           volume-weighted = transacted (advertised rows weigh nothing)
#   adjusted advertised 6.5 7.0 8.0 10.0 -> median 7.5, trimmed 15 / 2 = 7.5
#   adjusted transacted 3.5 5.0 5.5 6.0 6.5 7.0 -> median 5.75, trimmed 23 / 4 = 5.75, volume-weighted
#                                           (6,900 + 0.5 x 300 + 1.0 x 1,000) / 1,300 = 8,050 / 1,300
#   adjusted all: 3.5 5.0 5.5 6.0 6.5 6.5 7.0 7.0 8.0 10.0 -> median 6.5, trimmed 51.5 / 8 = 6.4375
EXPECTED_METHODOLOGY = {
    ("median", "raw"): (6.75, 5.0, 5.75),
    ("median", "adjusted"): (7.5, 5.75, 6.5),
    ("trimmed-mean", "raw"): (6.75, 5.0, 5.6875),
    ("trimmed-mean", "adjusted"): (7.5, 5.75, 6.4375),
    ("volume-weighted", "raw"): (None, 6900 / 1300, 6900 / 1300),
    ("volume-weighted", "adjusted"): (None, 8050 / 1300, 8050 / 1300),
}


def approx_or_none(value):
    return None if value is None else pytest.approx(value)


@pytest.mark.parametrize(
    "method, kind", [("median", "all"), ("volume-weighted", "transacted"), ("trimmed-mean", "advertised")]
)
def test_methodology_table_for_the_latest_period_by_hand(method, kind):
    # The table does not depend on the method and kind chosen for the index itself.
    build = build_index(OTHERS + NOVEMBER, method, kind, adjustments=ADJ, scope_adjust=False)
    assert build.methodology_period == NOV
    table = {(r.method, r.scope): r for r in build.methodology}
    assert set(table) == set(EXPECTED_METHODOLOGY)
    for key, (advertised, transacted, every) in EXPECTED_METHODOLOGY.items():
        row = table[key]
        assert (row.advertised, row.transacted, row.all) == (
            approx_or_none(advertised),
            approx_or_none(transacted),
            approx_or_none(every),
        ), key
        spread = None if advertised is None else advertised - transacted
        assert row.spread == approx_or_none(spread), key


def test_methodology_spreads_by_hand():
    table = {(r.method, r.scope): r.spread for r in build_index(NOVEMBER, adjustments=ADJ).methodology}
    assert table[("median", "raw")] == pytest.approx(1.75)  # 6.75 - 5.0
    assert table[("median", "adjusted")] == pytest.approx(1.75)  # 7.5 - 5.75
    assert table[("trimmed-mean", "raw")] == pytest.approx(6.75 - 5.0)
    assert table[("volume-weighted", "raw")] is None  # advertised rows carry no volume


def test_methodology_index_level_matches_its_cell():
    # The index's own latest level is the table's cell for its method, kind and scope.
    build = build_index(OTHERS + NOVEMBER, "trimmed-mean", "all", adjustments=ADJ, scope_adjust=True)
    assert levels(build)[NOV] == pytest.approx(6.4375)


def test_methodology_follows_the_filters():
    # With the 13-36 term filter only the long-term rows count, and the latest period is theirs.
    quotes = [
        q("2026-10-05", 5.0, "advertised", term=24),
        q("2026-10-06", 4.0, term=24),
        q("2026-11-05", 9.0, term=0),  # on-demand: filtered out, so November is not the latest period
    ]
    build = build_index(quotes, filters=Filters(term="13-36"), adjustments={"A": 0.0})
    assert build.methodology_period == OCT
    median_raw = next(r for r in build.methodology if (r.method, r.scope) == ("median", "raw"))
    assert (median_raw.advertised, median_raw.transacted, median_raw.all, median_raw.spread) == (5.0, 4.0, 4.5, 1.0)


def test_methodology_without_grade_costs_leaves_the_adjusted_cells_empty():
    build = build_index(NOVEMBER, adjustments=None)
    for row in build.methodology:
        if row.scope == "adjusted":
            assert (row.advertised, row.transacted, row.all, row.spread) == (None, None, None, None)
        else:
            assert row.all is not None
    assert any("scope-adjusted" in note for note in build.notes)


# --- reading observations -------------------------------------------------------------------------

HEADER = "date,gpu,price,kind,term_months,seller,grade,gpu_hours"


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "quotes.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_read_quotes_reads_a_good_file(tmp_path):
    path = write(
        tmp_path,
        "# a comment",
        HEADER,
        "2026-11-02,B200,5.25,advertised,0,Ember Nodes,T-BM,0",
        "2026-11-03,B200,4.80,transacted,36,Fjord,T-MC,1200",
    )
    first, second = read_quotes(path, "quotes.csv")
    assert (
        first.line,
        first.date,
        first.gpu,
        first.price,
        first.kind,
        first.term_months,
        first.seller,
        first.grade,
        first.gpu_hours,
    ) == (
        3,
        date(2026, 11, 2),
        "B200",
        5.25,
        "advertised",
        0,
        "Ember Nodes",
        "T-BM",
        0.0,
    )
    assert (second.line, second.term_months, second.gpu_hours) == (4, 36, 1200.0)


def test_every_bad_row_is_reported_with_its_line_number_all_at_once(tmp_path):
    path = write(
        tmp_path,
        "# observations",  # 1
        HEADER,  # 2
        "2026-11-02,B200,5.0,transacted,3,Good,T-MC,10",  # 3 good
        "2026-11-02,B200,5.0,transacted,3,Short,T-MC",  # 4 a column missing
        "2026-11-02,B200,abc,transacted,3,S,T-MC,10",  # 5 price not a number
        "2026-11-02,B200,5.0,offered,3,S,T-MC,10",  # 6 kind
        "2026-11-02,B200,5.0,transacted,-1,S,T-MC,10",  # 7 negative term
        "2026-11-02,B200,5.0,transacted,1.5,S,T-MC,10",  # 8 fractional term
        "2026-11-02,B200,5.0,transacted,3,S,T-MC,0",  # 9 a trade without volume
        "2026-11-02,B200,5.0,transacted,3,,T-MC,10",  # 10 empty seller
        "2026-11-02,B200,5.0,advertised,3,Fine,T-MC,0",  # 11 good: advertised rows may have no volume
    )
    with pytest.raises(InputError) as caught:
        read_quotes(path, "quotes.csv")
    found = {(p.line, p.field) for p in caught.value.problems}
    assert all(p.file == "quotes.csv" for p in caught.value.problems)
    assert sorted(p.line for p in caught.value.problems) == [4, 5, 6, 7, 8, 9, 10]
    assert {
        (5, "price"),
        (6, "kind"),
        (7, "term_months"),
        (8, "term_months"),
        (9, "gpu_hours"),
        (10, "seller"),
    } <= found
    [short] = [p for p in caught.value.problems if p.line == 4]
    assert "8" in short.message and "7" in short.message  # expected 8 values, got 7
    assert "abc" in next(p.message for p in caught.value.problems if p.line == 5)
    assert "offered" in next(p.message for p in caught.value.problems if p.line == 6)


def test_a_missing_header_column_is_reported_on_the_header_line(tmp_path):
    path = write(
        tmp_path, "# c", "date,gpu,price,kind,term_months,seller,grade", "2026-11-02,B200,5.0,transacted,3,S,T-MC"
    )
    with pytest.raises(InputError) as caught:
        read_quotes(path, "quotes.csv")
    [problem] = caught.value.problems
    assert problem.line == 2 and "gpu_hours" in problem.message


@pytest.mark.parametrize(
    "row, field",
    [
        ("2026-13-02,B200,5.0,transacted,3,S,T-MC,10", "date"),
        ("2026-11-02,B200,0,transacted,3,S,T-MC,10", "price"),
        ("2026-11-02,B200,-2,transacted,3,S,T-MC,10", "price"),
        ("2026-11-02,B200,5.0,transacted,x,S,T-MC,10", "term_months"),
        ("2026-11-02,B200,5.0,advertised,3,S,T-MC,-5", "gpu_hours"),
        ("2026-11-02,,5.0,transacted,3,S,T-MC,10", "gpu"),
        ("2026-11-02,B200,5.0,transacted,3,S,,10", "grade"),
    ],
)
def test_other_bad_values(tmp_path, row, field):
    path = write(tmp_path, HEADER, row)
    with pytest.raises(InputError) as caught:
        read_quotes(path, "quotes.csv")
    assert [(p.line, p.field) for p in caught.value.problems] == [(2, field)]


def test_a_file_without_rows_is_an_error(tmp_path):
    with pytest.raises(InputError):
        read_quotes(write(tmp_path, HEADER), "quotes.csv")


# --- strata: the level does not move when only the mix moves ----------------------------------------


def sq(
    day: str,
    price: float,
    seller: str,
    term: int = 0,
    kind: str = "transacted",
    grade: str = "A",
    volume: float = 100.0,
) -> Quote:
    return Quote(
        line=0,
        date=date.fromisoformat(day),
        gpu="B200",
        price=price,
        kind=kind,
        term_months=term,
        seller=seller,
        grade=grade,
        gpu_hours=volume,
    )


def stratum_quotes(day: str, prices: list[float], **where) -> list[Quote]:
    """One quote per price, each from its own seller (so no seller cap binds)."""
    return [sq(day, p, f"seller{i}", **where) for i, p in enumerate(prices)]


def test_two_periods_with_the_same_prices_but_a_different_mix_give_the_same_level():
    # Stratum on-demand (0-3 months): 5.0, 5.2, 5.4 -> median 5.2; stratum 13-36 months: 7.0, 7.2, 7.4 -> 7.2.
    # October has 3 short and 6 long quotes, November 6 short and 3 long: the same prices in every stratum.
    short, long_ = [5.0, 5.2, 5.4], [7.0, 7.2, 7.4]
    october = stratum_quotes("2026-10-02", short) + stratum_quotes("2026-10-03", long_ * 2, term=24)
    november = stratum_quotes("2026-11-02", short * 2) + stratum_quotes("2026-11-03", long_, term=24)
    build = stratified_index(october + november, "median")
    # weights from the base period, October: 3 short and 6 long quotes -> 1/3 and 2/3:
    # 5.2 / 3 + 2 x 7.2 / 3 = 19.6 / 3 = 6.5333; November's link: (1/3 x 5.2/5.2 + 2/3 x 7.2/7.2) = 1
    assert levels(build) == {OCT: pytest.approx(19.6 / 3), NOV: pytest.approx(19.6 / 3)}
    assert all(not p.thin for p in build.points)
    # pooled, the mix moves the level: October's median is 7.0 (5.0 5.2 5.4 7.0 [7.0] 7.2 ...), November's 5.4
    # (5.0 5.0 5.2 5.2 [5.4] 5.4 7.0 ...)
    assert levels(build_index(october + november, "median")) == {OCT: pytest.approx(7.0), NOV: pytest.approx(5.4)}
    assert [(r.term, r.weight) for r in build.strata] == [
        ("0-3", pytest.approx(1 / 3)),
        ("13-36", pytest.approx(2 / 3)),
    ]
    assert build.weights_source == "base period" and build.base_period == OCT
    assert any("fixed-weight average" in rule and "chain-linked" in rule for rule in build.rules)


def test_weights_from_procure_yaml_replace_the_sample_shares():
    quotes = stratum_quotes("2026-11-02", [5.0, 5.2, 5.4]) + stratum_quotes("2026-11-03", [7.0, 7.2, 7.4], term=24)
    settings = StrataSettings(weights={("0-3", "transacted", "A"): 3.0, ("13-36", "transacted", "A"): 1.0})
    build = stratified_index(quotes, "median", settings=settings)
    # 0.75 x 5.2 + 0.25 x 7.2 = 5.7
    assert levels(build) == {NOV: pytest.approx(5.7)}
    assert build.weights_source == "procure.yaml"
    # a weight for a stratum that has no quotes (a misspelt grade) is named, not silently used
    typo = StrataSettings(weights={("0-3", "transacted", "A"): 3.0, ("13-36", "transacted", "a"): 1.0})
    notes = " ".join(stratified_index(quotes, "median", settings=typo).notes)
    assert "13-36 / transacted / a" in notes and "left out: 13-36 / transacted / A" in notes


def test_no_seller_carries_more_than_the_cap_in_a_stratum():
    # One seller quotes 9.0 four times, two others 5.0 and 6.0 once, equal volumes. Volume-weighted without a cap:
    # (4 x 9 + 5 + 6) / 6 = 7.833. With a 50% cap the big seller's 4/6 falls to 1/2 and the other two share the
    # other half in proportion (1/4 each): 0.5 x 9 + 0.25 x 5 + 0.25 x 6 = 7.25.
    quotes = [sq("2026-11-02", 9.0, "big") for _ in range(4)] + [
        sq("2026-11-03", 5.0, "small1"),
        sq("2026-11-04", 6.0, "small2"),
    ]
    capped = stratified_index(quotes, "volume-weighted", settings=StrataSettings(seller_cap=0.5))
    assert levels(capped) == {NOV: pytest.approx(7.25)}
    uncapped = stratified_index(quotes, "volume-weighted", settings=StrataSettings(seller_cap=1.0))
    assert levels(uncapped) == {NOV: pytest.approx(47 / 6)}


def test_with_too_few_sellers_for_the_cap_each_seller_gets_an_equal_share():
    # two sellers and a 40% cap (2 x 0.4 < 1): equal shares; the median of 3.0 (half) and 5.0, 5.0, 5.0 (half)
    # falls between them: (3.0 + 5.0) / 2 = 4.0
    quotes = [sq("2026-11-02", 3.0, "one")] + [sq("2026-11-03", 5.0, "two") for _ in range(3)]
    assert levels(stratified_index(quotes, "median", settings=StrataSettings(seller_cap=0.4))) == {
        NOV: pytest.approx(4.0)
    }


def test_a_thin_stratum_carries_its_last_level_forward_and_is_flagged():
    # October: three quotes, median 5.2. November: one quote at 9.0, fewer than the minimum of 3: the level is
    # October's 5.2 carried forward, flagged, never 9.0 from a single quote.
    quotes = stratum_quotes("2026-10-02", [5.0, 5.2, 5.4]) + [sq("2026-11-02", 9.0, "lone")]
    build = stratified_index(quotes, "median")
    assert levels(build) == {OCT: pytest.approx(5.2), NOV: pytest.approx(5.2)}
    november = build.points[1]
    assert (november.thin, november.carried, november.strata_own, november.strata_carried) == (True, True, 0, 1)
    assert build.strata[0].status.startswith("carried forward from 2026-10-01")
    assert any("thin strata" in n for n in build.notes)


def test_a_stratum_without_any_level_yet_is_left_out_and_the_weights_rescaled():
    # November: short stratum 5.0 5.2 5.4 (own), long stratum one quote (thin, no earlier level): the level is the
    # short stratum's 5.2 alone, flagged
    quotes = stratum_quotes("2026-11-02", [5.0, 5.2, 5.4]) + [sq("2026-11-03", 8.0, "x", term=24)]
    build = stratified_index(quotes, "median")
    assert levels(build) == {NOV: pytest.approx(5.2)}
    assert build.points[0].strata_missing == 1 and build.points[0].thin


def test_trimming_trims_a_period_of_five():
    # five equal-weight prices: max(10%, 1/5) = one whole quote from each end: (2 + 3 + 4) / 3 = 3
    quotes = stratum_quotes("2026-11-02", [1.0, 2.0, 3.0, 4.0, 100.0])
    assert levels(stratified_index(quotes, "trimmed-mean")) == {NOV: pytest.approx(3.0)}


# --- chain-linked: adding quotes never revises a published month ------------------------------------

SEP = date(2026, 9, 1)


def three_months() -> list[Quote]:
    """Two strata over September-November, four quotes each a month, each from its own seller.

    on-demand (0-3):  Sep 5.0 5.2 5.4 5.6 (median 5.3), Oct 5.2 5.4 5.6 5.8 (5.5), Nov 5.4 5.6 5.8 6.0 (5.7)
    long (13-36):     Sep 7.0 7.2 7.4 7.6 (7.3),        Oct 6.8 7.0 7.2 7.4 (7.1), Nov 6.6 6.8 7.0 7.2 (6.9)
    """
    out = []
    for day, short, long_ in (
        ("2026-09-02", [5.0, 5.2, 5.4, 5.6], [7.0, 7.2, 7.4, 7.6]),
        ("2026-10-02", [5.2, 5.4, 5.6, 5.8], [6.8, 7.0, 7.2, 7.4]),
        ("2026-11-02", [5.4, 5.6, 5.8, 6.0], [6.6, 6.8, 7.0, 7.2]),
    ):
        out += stratum_quotes(day, short) + stratum_quotes(day, long_, term=24)
    return out


# By hand: base period September, 4 + 4 quotes -> weights 1/2 each.
# Sep: (5.3 + 7.3) / 2 = 6.3
# Oct: 6.3 x (5.5/5.3 + 7.1/7.3) / 2 = 6.3 x (1.0377358 + 0.9726027) / 2 = 6.3 x 1.0051693 = 6.3325664
# Nov: Oct x (5.7/5.5 + 6.9/7.1) / 2 = 6.3325664 x (1.0363636 + 0.9718310) / 2 = 6.3325664 x 1.0040973 = 6.3585128
CHAIN = {
    SEP: 6.3,
    OCT: 6.3 * (5.5 / 5.3 + 7.1 / 7.3) / 2,
    NOV: 6.3 * (5.5 / 5.3 + 7.1 / 7.3) / 2 * (5.7 / 5.5 + 6.9 / 7.1) / 2,
}


def test_the_index_chains_the_strata_price_changes_with_base_period_weights():
    build = stratified_index(three_months(), "median")
    assert levels(build) == {k: pytest.approx(v) for k, v in CHAIN.items()}
    assert levels(build)[NOV] == pytest.approx(6.3585128, abs=1e-6)


def test_twenty_quotes_at_a_stratum_s_median_leave_the_index_unmoved_and_history_unrevised():
    before = levels(stratified_index(three_months(), "median"))
    # 20 November quotes at the on-demand stratum's own median, 5.7, from 20 new sellers: the stratum's median
    # stays 5.7 (5.4 5.6 [5.7 x 20] 5.8 6.0), the weights are September's, so November's link and every level
    # are those computed by hand above
    more = three_months() + [sq("2026-11-20", 5.7, f"new{i}") for i in range(20)]
    after = levels(stratified_index(more, "median"))
    assert after == {k: pytest.approx(v, abs=1e-12) for k, v in CHAIN.items()}
    assert (after[SEP], after[OCT]) == (before[SEP], before[OCT])  # history unrevised, to the last bit
    assert after[NOV] == pytest.approx(
        before[NOV], abs=1e-12
    )  # (5.6 + 5.8) / 2 before, 5.7 after: the same to rounding
    # the old construction (weights: each stratum's share of the whole sample, 32 on-demand and 12 long quotes
    # after the addition) moves November to (32 x 5.7 + 12 x 6.9) / 44 = 6.027 and September to
    # (32 x 5.3 + 12 x 7.3) / 44 = 5.845: the mix alone would have revised history
    assert (32 * 5.3 + 12 * 7.3) / 44 != pytest.approx(CHAIN[SEP], abs=0.01)
    # removing November's long quotes leaves September and October as published (November carries the long
    # stratum forward: its link is (5.7/5.5 + 1) / 2)
    fewer = [x for x in three_months() if not (x.date.month == 11 and x.term_months == 24)]
    cut = levels(stratified_index(fewer, "median"))
    assert (cut[SEP], cut[OCT]) == (pytest.approx(CHAIN[SEP]), pytest.approx(CHAIN[OCT]))
    assert cut[NOV] == pytest.approx(CHAIN[OCT] * (5.7 / 5.5 + 1.0) / 2)


def test_a_new_stratum_enters_the_next_link_not_the_level():
    # A third stratum (advertised, 4-12 months) first quoted in November at 9.0: with procure.yaml weights 1/1/1
    # it has no October level to compare with, so November moves only by the two old strata: the level is
    # CHAIN[NOV] computed with weights 1/2 each, not pulled towards 9.0
    quotes = three_months() + stratum_quotes("2026-11-05", [9.0, 9.0, 9.0], term=6, kind="advertised")
    weights = {("0-3", "transacted", "A"): 1.0, ("13-36", "transacted", "A"): 1.0, ("4-12", "advertised", "A"): 1.0}
    build = stratified_index(quotes, "median", settings=StrataSettings(weights=weights))
    assert levels(build)[NOV] == pytest.approx(CHAIN[NOV])


def test_a_base_period_from_procure_yaml_fixes_the_weights():
    # base October: 4 + 4 quotes as well -> 1/2 each, the same chain; a base in December (no quotes) leaves no level
    build = stratified_index(three_months(), "median", settings=StrataSettings(base=date(2026, 10, 15)))
    assert build.base_period == OCT and levels(build)[NOV] == pytest.approx(CHAIN[NOV])
    empty = stratified_index(three_months(), "median", settings=StrataSettings(base=date(2026, 12, 1)))
    assert all(p.level is None for p in empty.points)
    assert any("no quotes in the base period 2026-12-01" in n for n in empty.notes)


def test_a_spliced_reading_is_flagged_with_its_level_jump_and_the_chain_continues_from_it():
    from procure.analysis.market import Reading

    # October's level from the quotes is CHAIN[OCT] = 6.3326; a hand-entered reading of 5.30 replaces it
    reading = Reading(date(2026, 10, 20), 5.30, "Silicon Data SDB200RT, entered by hand")
    build = stratified_index(three_months(), "median", settings=StrataSettings(readings=(reading,)))
    found = {p.period: p for p in build.points}
    assert (
        found[OCT].level == pytest.approx(5.30) and found[OCT].spliced and found[OCT].source.startswith("Silicon Data")
    )
    assert found[OCT].spliced_from == pytest.approx(CHAIN[OCT])
    assert not found[SEP].spliced and found[SEP].source == "quotes"
    # November chains on from 5.30 by its own link (5.7/5.5 + 6.9/7.1) / 2
    assert found[NOV].level == pytest.approx(5.30 * (5.7 / 5.5 + 6.9 / 7.1) / 2)
    # the jump in words: 6.33 -> 5.30, -1.03, (5.30 / 6.3326 - 1) = -16.3%
    [words] = build.splices
    assert "2026-10-01: 5.30 is a reading from Silicon Data SDB200RT, entered by hand" in words
    assert "from 6.33 to 5.30 (-1.03, -16.3%)" in words
    assert words in build.notes
    # the methodology table still shows what the quotes give
    median_raw = next(r for r in build.methodology if (r.method, r.scope) == ("median", "raw"))
    assert median_raw.all == pytest.approx(CHAIN[NOV])
