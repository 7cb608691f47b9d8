"""`procure hedge` on tests/data/market_ws (as of 2026-11-29; hedge.offer: fixed; 6 months; ladder 50% of
months 1-3 and 25% of months 4-6 in contracts of 730 GPU-hours). `fixed` has 10 GPUs at 4.00 for 2 months,
so months 3-6 float at 7,300 GPU-hours each; the hedge ratio comes from market/rent.csv against
market/index.csv (one level a month, Oct 2025 - Nov 2026; the December rows are after as_of).
"""

from __future__ import annotations

import csv
import io
import json
import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from clihelp import AS_OF, run
from refusals import refused, validate

MOVES = [-0.4, -0.2, 0.2, 0.4]


@pytest.fixture
def ws(data_dir):
    return data_dir / "market_ws"


def series(path: Path) -> tuple[list[date], np.ndarray]:
    """date, price rows on or before as_of, read with the csv module (not procure's reader)."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    rows = [(date.fromisoformat(d), float(p)) for d, p in csv.reader(lines[1:])]
    rows = [(d, p) for d, p in rows if d <= date.fromisoformat(AS_OF)]
    return [d for d, _ in rows], np.array([p for _, p in rows])


def expected_regression(ws: Path) -> dict[str, float]:
    index_dates, f = series(ws / "market" / "index.csv")
    rent_dates, s = series(ws / "market" / "rent.csv")
    # one level per month in both files, the same months
    assert [(d.year, d.month) for d in index_dates] == [(d.year, d.month) for d in rent_dates]
    df, ds = np.diff(f), np.diff(s)
    h, a = np.polyfit(df, ds, 1)
    rho = float(np.corrcoef(df, ds)[0, 1])
    # the slope's standard error and 95% interval by scipy's linregress (t at n - 2 degrees of freedom)
    from scipy import stats

    fit = stats.linregress(df, ds)
    half = float(stats.t.ppf(0.975, len(df) - 2)) * fit.stderr
    recommended = h if abs(h - 1) > half else 1.0  # 1 unless the interval leaves 1 out
    return {
        "h_star": h,
        "h_star_se": fit.stderr,
        "h_star_ci95": (h - half, h + half),
        "hedge_ratio": recommended,
        "rho": rho,
        "r2": rho * rho,
        "basis_volatility": float(np.std(ds - (h * df + a), ddof=1)),
        "changes": len(df),
    }


def plan_of(ws: Path, offer: str | None = None, rent: Path | None = None) -> dict:
    """The hedge's document as `procure hedge --format json` writes it under its envelope: the analysis's plan in its
    JSON words (procure/render/hedge.py), computed in process."""
    from procure.analysis.usecases.hedge import hedging
    from procure.render.hedge import hedge_text

    return json.loads(hedge_text(hedging(ws, date.fromisoformat(AS_OF), offer, None, rent).plan, "json"))


def hedge_refused(ws: Path, *needles: str, index: Path | None = None, rent: Path | None = None) -> str:
    """`procure hedge -w WS --as-of AS_OF [--index FILE] [--rent FILE]` refused at its use case, in process: the
    problems, one line each (the command's exit 2 with nothing written:
    test_bad_rows_of_an_index_file_with_their_lines)."""
    from procure.analysis.usecases.hedge import hedging

    return refused(lambda: hedging(ws, date.fromisoformat(AS_OF), None, index, rent), *needles)


def hedged_text(ws: Path, fmt: str) -> str:
    """The hedge in `fmt` (csv, markdown) as the command writes it, rendered in process."""
    from procure.analysis.usecases.hedge import hedging
    from procure.render.hedge import hedge_text

    return hedge_text(hedging(ws, date.fromisoformat(AS_OF)).plan, fmt)


def hedge(ws, *args):
    result = run("hedge", "--workspace", ws, "--as-of", AS_OF, *args)
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


# --- formats --------------------------------------------------------------------------------------


def test_json_top_level_figures_match_numpy(ws):
    plan = plan_of(ws)
    expected = expected_regression(ws)
    for name in ("h_star", "h_star_se", "hedge_ratio", "rho", "r2", "basis_volatility"):
        assert plan[name] == pytest.approx(expected[name], rel=1e-9), name
    assert plan["h_star_ci95"] == pytest.approx(list(expected["h_star_ci95"]), rel=1e-9)
    assert plan["hedge_ratio_rule"].startswith("hedge ratio 1 unless")
    assert plan["regression"]["changes"] == expected["changes"] == 13
    assert plan["regression"]["insufficient_history"] is False
    assert plan["offer"] == "fixed"
    assert (plan["index_date"], plan["index_level"]) == ("2026-11-27", 5.0)
    assert {"exposure", "ladder", "stress", "limits", "notes"} <= set(plan)


def test_json_ladder_and_stress_by_hand(ws):
    plan = plan_of(ws)
    h = expected_regression(ws)["hedge_ratio"]
    assert [(e["month"], e["floating"]) for e in plan["exposure"]] == [(m, m > 2) for m in range(1, 7)]
    assert plan["floating_gpu_hours"] == pytest.approx(4 * 7300)
    first = math.floor(0.5 * h * 7300 / 730 + 0.5)  # month 3 only floats in 1-3
    second = math.floor(0.25 * h * 21900 / 730 + 0.5)
    assert [(r["months"], r["contracts"], r["hedged_gpu_hours"]) for r in plan["ladder"]] == [
        ("1-3", first, first * 730),
        ("4-6", second, second * 730),
    ]
    hedged = (first + second) * 730
    for row, move in zip(plan["stress"], MOVES):
        unhedged = 4 * 7300 * (4.00 + h * 5.0 * move)  # renewals at basis: 4.00 + h x index change
        assert row["index_move"] == pytest.approx(move)
        assert row["unhedged"] == pytest.approx(unhedged)
        assert row["hedge_payoff"] == pytest.approx(hedged * 5.0 * move)
        assert row["hedged"] == pytest.approx(unhedged - hedged * 5.0 * move)


def test_table(ws):
    out = hedge(ws, "--notes").stdout  # the limits and the fit in full (the default screen folds them)
    assert "Fixed Compute (fixed)" in out
    assert "Ladder" in out and "Stress" in out and "Limits" in out
    assert "failed deployment" in out and "customer pay" in out
    assert f"h* = {expected_regression(ws)['h_star']:.3f}" in out
    assert f"Recommended hedge ratio {expected_regression(ws)['hedge_ratio']:.3f}" in out


def test_markdown(ws):
    out = hedged_text(ws, "markdown")
    assert out.startswith("# Hedging recommendation")
    assert "## Ladder" in out and "## Stress" in out and "## Limits" in out
    assert "| -40% |" in out and "| +40% |" in out


def test_csv_is_the_ladder(ws):
    out = hedged_text(ws, "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["months"] for r in rows] == ["1-3", "4-6"]
    h = expected_regression(ws)["hedge_ratio"]
    assert float(rows[0]["hedge_ratio"]) == pytest.approx(h, rel=1e-9)
    assert float(rows[0]["notional_gpu_hours"]) == pytest.approx(0.5 * h * 7300)
    assert float(rows[1]["notional_gpu_hours"]) == pytest.approx(0.25 * h * 21900)
    assert float(rows[1]["exposed_gpu_hours"]) == 21900


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
def test_out_writes_the_file_and_keeps_stdout_empty(ws, tmp_path, fmt):
    target = tmp_path / "deep" / f"hedge.{fmt}"
    result = hedge(ws, "--format", fmt, "--out", target)
    assert result.stdout == ""
    assert target.is_file() and target.stat().st_size > 0
    if fmt == "json":
        assert "hedge_ratio" in json.loads(target.read_text(encoding="utf-8"))


def test_json_is_the_same_bytes_on_every_run(ws):
    assert hedged_text(ws, "json") == hedged_text(ws, "json")


# --- which offer, which rent ----------------------------------------------------------------------


def test_an_index_linked_offer_ignores_market_rent_and_claims_no_fit(ws):
    plan = plan_of(ws, "indexed")
    assert plan["hedge_ratio"] == 1.0 and plan["h_star"] is None and plan["r2"] is None
    assert plan["regression"]["source"] == "none"
    assert any("by contract" in n for n in plan["notes"])
    # months 1-4 index-linked (floor 4.00, cap 6.00 on index + 0.50), 5-6 renewal keeping spread, floor and cap
    unhedged = [14600 * 6 * linked for linked in (4.0, 4.5, 6.0, 6.0)]
    assert [row["unhedged"] for row in plan["stress"]] == [pytest.approx(u) for u in unhedged]


def test_an_index_linked_offer_with_an_explicit_rent(ws):
    plan = plan_of(ws, "indexed", ws / "market" / "rent.csv")
    assert plan["h_star"] == pytest.approx(expected_regression(ws)["h_star"], rel=1e-9)
    assert plan["hedge_ratio"] == pytest.approx(expected_regression(ws)["hedge_ratio"], rel=1e-9)


def test_the_default_offer_is_the_recommended_one_without_hedge_offer(workspace_copy):
    copy = workspace_copy("market_ws")
    config = copy / "procure.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("  offer: fixed\n", ""), encoding="utf-8")
    from procure.analysis.usecases.compare import comparison

    recommended = comparison(copy, date.fromisoformat(AS_OF)).evaluation.summary.recommended
    plan = plan_of(copy)
    assert plan["offer"] == recommended == "owned"
    assert plan["floating_gpu_hours"] == 0
    assert any("nothing to hedge" in n for n in plan["notes"])


@pytest.mark.parametrize("offer", ["owned", "tokens"])
def test_owned_and_per_token_offers_have_nothing_to_hedge(ws, offer):
    plan = plan_of(ws, offer)
    assert plan["floating_gpu_hours"] == 0
    assert all(r["contracts"] == 0 for r in plan["ladder"])


def test_insufficient_history_is_flagged(ws, tmp_path):
    short = tmp_path / "rent.csv"
    short.write_text(
        "date,price\n2026-08-31,6.30\n2026-09-30,6.02\n2026-10-31,5.88\n2026-11-27,5.83\n", encoding="utf-8"
    )
    plan = plan_of(ws, rent=short)
    assert plan["regression"]["changes"] == 3 and plan["regression"]["insufficient_history"] is True
    assert any("insufficient history" in n for n in plan["notes"])


# --- bad input ------------------------------------------------------------------------------------


def failed(result, *expected: str) -> None:
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stdout == ""
    for text in expected:
        assert text in result.stderr, (text, result.stderr)
    assert "nothing was written" in result.stderr


def test_an_unknown_offer(ws, tmp_path):
    target = tmp_path / "plan.json"
    failed(
        run("hedge", "--workspace", ws, "--as-of", AS_OF, "--offer", "nope", "--format", "json", "--out", target),
        "no offer with id 'nope'",
    )
    assert not target.exists()


def test_a_rent_history_given_for_the_plans_hedge_is_refused_not_ignored(tmp_path):
    """The example recommends its purchase plan, hedged at ratio 1 with no rent fitted: a rent history asked for
    there is said to be unusable (exit 2, nothing written), and used when the hedge is one offer's."""
    from conftest import ROOT

    target = tmp_path / "hedge.json"
    rent = ROOT / "market" / "rent.csv"
    failed(
        run("hedge", "--workspace", ROOT, "--as-of", AS_OF, "--rent", rent, "--format", "json", "--out", target),
        "--rent: the recommendation is the purchase plan",
        "--offer ID",
    )
    assert not target.exists()
    plan = json.loads(run("hedge", "--workspace", ROOT, "--as-of", AS_OF, "--format", "json").stdout)
    assert plan["offer"] == "plan" and plan["hedge_ratio"] == 1
    one = run("hedge", "-w", ROOT, "--as-of", AS_OF, "--offer", "corvid-b200-idx", "--rent", rent, "-f", "json")
    assert one.exit_code == 0 and json.loads(one.stdout)["h_star"] is not None


def test_a_workspace_without_an_index(workspace_copy, tmp_path):
    copy = workspace_copy("market_ws")
    (copy / "market" / "index.csv").unlink()
    (copy / "offers" / "indexed.yaml").unlink()  # which needs the index to be priced at all
    target = tmp_path / "plan.md"
    failed(
        run("hedge", "--workspace", copy, "--as-of", AS_OF, "--format", "markdown", "--out", target),
        "market/index.csv",
        "2026-11-29",
    )
    assert not target.exists()


def test_an_index_file_that_does_not_exist(ws, tmp_path):
    target = tmp_path / "plan.json"
    failed(
        run("hedge", "--workspace", ws, "--as-of", AS_OF, "--index", tmp_path / "nope.csv", "--out", target), "nope.csv"
    )
    assert not target.exists()


def test_an_index_with_no_level_before_the_as_of_date(ws, tmp_path):
    index = tmp_path / "future.csv"
    index.write_text("date,price\n2026-12-31,5.00\n2027-01-31,5.10\n", encoding="utf-8")
    hedge_refused(ws, "2026-11-29", index=index)


def test_bad_rows_of_an_index_file_with_their_lines(ws, tmp_path):
    index = tmp_path / "index.csv"
    index.write_text(
        "# comment\ndate,price\n2026-09-30,5.2\n2026-10-31,abc\n2026-13-01,5.0\n2026-11-27,-1\n2026-09-30,5.3\n",
        encoding="utf-8",
    )
    target = tmp_path / "plan.json"
    result = run("hedge", "--workspace", ws, "--as-of", AS_OF, "--index", index, "--out", target)
    failed(result, f"{index}:4: price", f"{index}:5: date", f"{index}:6: price", f"{index}:7: date")
    assert not target.exists()


def test_bad_rows_of_a_rent_file_with_their_lines(ws, tmp_path):
    rent = tmp_path / "rent.csv"
    rent.write_text("date,price\n2026-09-30,6.0\n2026-10-31,six\n2026-11-27\n", encoding="utf-8")
    hedge_refused(ws, f"{rent}:3: price", f"{rent}:4:", rent=rent)


def test_bad_rows_of_the_workspace_rent_file(workspace_copy):
    copy = workspace_copy("market_ws")
    with (copy / "market" / "rent.csv").open("a", encoding="utf-8") as handle:
        handle.write("2027-01-31,n/a\n")  # line 18
    hedge_refused(copy, "market/rent.csv:18: price")


def test_a_bad_as_of_date(ws):
    result = run("hedge", "--workspace", ws, "--as-of", "2026-11-31")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr + result.stdout


def test_nothing_to_hedge_is_said_in_words(ws):
    out = " ".join(hedge(ws, "--offer", "owned").stdout.split())
    assert "Nothing to hedge: the offer pays no GPU-hour rent" in out
    assert "Ladder" not in out and "Stress" not in out
    plan = json.loads(hedge(ws, "--offer", "owned", "--format", "json").stdout)
    assert plan["nothing_to_hedge"] and plan["ladder"] == [] and plan["stress"] == []


def test_a_mistyped_hedge_offer_is_named_at_its_line_by_validate_and_hedge(workspace_copy):
    # hedge.offer: fixd (market_ws has "fixed", line 54): once validate passed it and hedge blamed an
    # --offer option the user never gave.
    copy = workspace_copy("market_ws")
    config = copy / "procure.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("  offer: fixed\n", "  offer: fixd\n"), encoding="utf-8"
    )
    needle = "procure.yaml:54: hedge.offer: no offer with id 'fixd'; did you mean 'fixed'?"
    for problems in (refused(validate(copy, AS_OF), needle), hedge_refused(copy, needle)):
        assert "--offer" not in problems


@pytest.mark.parametrize(
    "text, field, message",
    [
        ("  contract: {gpu_hours: -5}\n", "hedge.contract.gpu_hours", "must be greater than 0"),
        (
            "  contract: {gpu_hours: 100}\n",
            "hedge.contract.gpu_hours",
            "100 differs from hedge.contract_gpu_hours (730): give the contract size once",
        ),
        ("  contract: {confirmed: [size]}\n", "hedge.contract.confirmed[0]", "must be one of"),
        ("  basis_prior: {correlation: 1.5}\n", "hedge.basis_prior.correlation", "must be at most 1 (got 1.5)"),
    ],
)
def test_bad_contract_terms_are_refused_with_file_line_and_field(workspace_copy, text, field, message):
    ws = workspace_copy("market_ws")
    path = ws / "procure.yaml"
    before = path.read_text()
    after = before.replace("  offer: fixed\n", "  offer: fixed\n" + text)
    path.write_text(after)
    line = after.splitlines().index(text.rstrip("\n")) + 1
    hedge_refused(ws, f"procure.yaml:{line}: {field}: {message}")


def test_hedge_states_the_contracts_it_recommends_buying(tmp_path):
    """The number a board approves is printed, not left to be added up from the ladder: each bucket's contracts
    are its notional GPU-hours over the contract's size, rounded to whole contracts."""
    import json as _json
    import re as _re

    from clihelp import AS_OF, run

    ws = tmp_path / "ws"
    assert run("init", ws, "--example").exit_code == 0
    doc = _json.loads(run("hedge", "--format", "json", "--as-of", AS_OF, "-w", ws).stdout)
    size = doc["contract_gpu_hours"]
    buckets = [(r["months"], int(r["notional_gpu_hours"] / size + 0.5)) for r in doc["ladder"]]
    total = sum(n for _, n in buckets)
    assert total > 0
    for format in ("table", "markdown"):
        text = run("hedge", "--format", format, "--as-of", AS_OF, "-w", ws).stdout
        found = _re.search(r"Recommended: buy ([\d,]+) contracts of ([\d,]+) GPU-hours", text)
        assert found, text[:600]
        assert int(found.group(1).replace(",", "")) == total
        assert float(found.group(2).replace(",", "")) == size
        for months, count in buckets:
            if count:
                assert f"{count:,} for months {months}" in text
