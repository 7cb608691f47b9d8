"""`procure index build`: formats, the methodology table, the CSV as an index, and bad input.

tests/data/market_ws/market/quotes.csv (B200 unless said; scope adjustment at index.scope_gpus = 100:
T-MC + 0.80, T-BM + 0.95 per GPU-hour, see tests/test_market.py):

    October   6.00 adv T-BM term 0 | 5.00 trans T-MC term 12, 100 h | 5.40 trans T-BM term 1, 300 h
    November  6.20 adv T-BM term 0 | 5.80 adv T-MC term 24 | 4.80 trans T-MC term 24, 200 h
              | 5.20 trans T-BM term 6, 600 h | (H100 2.10 trans T-BM term 3, 1,000 h)

Medians: October 5.40 (3 rows), November (5.20 + 5.80) / 2 = 5.50 (4 rows).
"""

from __future__ import annotations

import csv
import io
import json
from datetime import date
from pathlib import Path

import pytest
from clihelp import AS_OF, run
from refusals import refused

from procure.io.workspace import read_price_series

HEADER = "date,gpu,price,kind,term_months,seller,grade,gpu_hours"


@pytest.fixture
def ws(data_dir):
    return data_dir / "market_ws"


@pytest.fixture
def quotes(ws):
    return ws / "market" / "quotes.csv"


def build(quotes, ws, *args):
    result = run("index", "build", quotes, "--workspace", ws, *args)
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


def built(quotes: Path, ws: Path, *args: str, fmt: str = "csv") -> str:
    """What `procure index build QUOTES -w WS ARGS --format FMT` writes, computed in process: the use case given the
    options as asked (--method, --kind, --term, --grade, --gpu, --period and the flag --scope-adjust) and the index in
    its words (procure/render/market.py)."""
    from procure.analysis.usecases.market import IndexAsked, index_build
    from procure.render.market import index_text

    flags = {"--scope-adjust": "scope_adjust"}
    asked, rest = {}, list(args)
    while rest:
        option = rest.pop(0)
        if option in flags:
            asked[flags[option]] = True
        else:
            asked[option.removeprefix("--")] = rest.pop(0)
    return index_text(index_build(quotes, ws, IndexAsked(**asked)).build, fmt)


def index_refused(quotes: Path, ws: Path, *needles: str, **asked: str) -> str:
    """`procure index build QUOTES -w WS` refused at its use case, in process, with each needle in its problems (the
    command's exit 2 with nothing written: test_bad_rows_are_all_reported_with_file_and_line_and_nothing_is_written)."""
    from procure.analysis.usecases.market import IndexAsked, index_build

    return refused(lambda: index_build(quotes, ws, IndexAsked(**asked)), *needles)


def csv_rows(text: str) -> list[tuple[str, float, int]]:
    reader = csv.reader(io.StringIO(text))
    assert next(reader) == ["period", "level", "observations"]
    return [(period, float(level), int(n)) for period, level, n in reader]


# --- formats --------------------------------------------------------------------------------------


def test_csv_is_the_default_with_the_methodology_on_stderr(quotes, ws):
    result = build(quotes, ws)
    assert result.stdout == "period,level,observations\n2026-10-01,5.4000,3\n2026-11-01,5.5000,4\n"
    # Methodology on standard error: the November levels by hand (see tests/test_market.py for the method).
    err = result.stderr
    assert "Methodology" in err and "2026-11-01" in err
    for figure in ("6.000", "5.000", "5.500", "1.000", "6.875", "5.875", "6.375", "5.100", "6.013"):
        assert figure in err, figure
    for method in ("median", "trimmed-mean", "volume-weighted"):
        assert method in err


def test_table_shows_the_index_and_the_methodology(quotes, ws):
    out = build(quotes, ws, "--format", "table").stdout
    assert "2026-10-01" in out and "5.400" in out and "5.500" in out
    assert "Methodology" in out and "6.875" in out and "Spread" in out


def test_markdown_shows_the_index_and_the_methodology(quotes, ws):
    out = built(quotes, ws, fmt="markdown")
    assert "| 2026-10-01 | 5.400 | 3 |" in out
    assert "| 2026-11-01 | 5.500 | 4 |" in out
    assert "| median | raw | 6.000 | 5.000 | 5.500 | 1.000 |" in out
    assert "| median | adjusted | 6.875 | 5.875 | 6.375 | 1.000 |" in out
    assert "| volume-weighted | raw | — | 5.100 | 5.100 | — |" in out


def test_json_carries_the_points_and_the_methodology(quotes, ws):
    data = json.loads(built(quotes, ws, fmt="json"))
    assert [(p["period"], p["level"], p["observations"]) for p in data["points"]] == [
        ("2026-10-01", pytest.approx(5.4), 3),
        ("2026-11-01", pytest.approx(5.5), 4),
    ]
    assert data["methodology_period"] == "2026-11-01"
    rows = {(r["method"], r["scope"]): r for r in data["methodology"]}
    assert len(rows) == 6
    vw = rows[("volume-weighted", "raw")]
    # (4.80 x 200 + 5.20 x 600) / 800 = 5.10; advertised rows have no volume
    assert (vw["advertised"], vw["transacted"], vw["all"], vw["spread"]) == (
        None,
        pytest.approx(5.1),
        pytest.approx(5.1),
        None,
    )
    vwa = rows[("volume-weighted", "adjusted")]
    # (5.60 x 200 + 6.15 x 600) / 800 = 6.0125
    assert vwa["transacted"] == pytest.approx(6.0125)
    med = rows[("median", "adjusted")]
    # advertised 7.15 (T-BM) and 6.60 (T-MC) -> 6.875; transacted 5.60 and 6.15 -> 5.875
    assert (med["advertised"], med["transacted"], med["all"], med["spread"]) == (
        pytest.approx(6.875),
        pytest.approx(5.875),
        pytest.approx(6.375),
        pytest.approx(1.0),
    )
    assert data["adjustments"] == {
        "T-BM": pytest.approx(0.95),
        "T-MC": pytest.approx(0.80),
        "T-MS": pytest.approx(0.15),
        "T-OWN": pytest.approx(1.25),
    }


@pytest.mark.parametrize(
    "args, expected",
    [
        # transacted, volume-weighted: October (5.00 x 100 + 5.40 x 300) / 400 = 5.30; November 5.10
        (("--method", "volume-weighted", "--kind", "transacted"), [("2026-10-01", 5.3, 2), ("2026-11-01", 5.1, 2)]),
        (("--kind", "advertised"), [("2026-10-01", 6.0, 1), ("2026-11-01", 6.0, 2)]),
        # a small period still loses one quote at each end (max(10%, 1/n) of the weight): 5.00 [5.40] 6.00 -> 5.40;
        # 4.80 [5.20 5.80] 6.20 -> 5.50
        (
            (
                "--method",
                "trimmed-mean",
            ),
            [("2026-10-01", 5.4, 3), ("2026-11-01", 5.5, 4)],
        ),
        # 13-36 months with scope adjustment: 5.80 + 0.80 and 4.80 + 0.80 -> median 6.10
        (("--term", "13-36", "--scope-adjust"), [("2026-11-01", 6.1, 2)]),
        (("--term", "0-3"), [("2026-10-01", 5.7, 2), ("2026-11-01", 6.2, 1)]),
        (("--term", "4-12"), [("2026-10-01", 5.0, 1), ("2026-11-01", 5.2, 1)]),
        (("--grade", "T-BM"), [("2026-10-01", 5.7, 2), ("2026-11-01", 5.7, 2)]),
        (("--gpu", "H100"), [("2026-11-01", 2.1, 1)]),
        # weeks start on Monday: 2026-10-20 is a Tuesday, 2026-11-02 and 11-03 share a week
        (
            ("--period", "week"),
            [
                ("2026-10-05", 6.0, 1),
                ("2026-10-12", 5.0, 1),
                ("2026-10-19", 5.4, 1),
                ("2026-11-02", 6.0, 2),
                ("2026-11-09", 4.8, 1),
                ("2026-11-16", 5.2, 1),
            ],
        ),
    ],
)
def test_options(quotes, ws, args, expected):
    rows = csv_rows(built(quotes, ws, *args))
    assert rows == [(p, pytest.approx(level, abs=5e-5), n) for p, level, n in expected]


def test_out_writes_the_csv_and_keeps_stdout_empty(quotes, ws, tmp_path):
    target = tmp_path / "sub" / "index.csv"
    result = build(quotes, ws, "--out", target)
    assert result.stdout == ""
    assert target.read_text(encoding="utf-8") == "period,level,observations\n2026-10-01,5.4000,3\n2026-11-01,5.5000,4\n"
    assert "Methodology" in result.stderr


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_out_with_other_formats(quotes, ws, tmp_path, fmt):
    target = tmp_path / f"index.{fmt}"
    result = build(quotes, ws, "--format", fmt, "--out", target)
    assert result.stdout == ""
    text = target.read_text(encoding="utf-8")
    assert "2026-11-01" in text and ("Methodology" in text or "methodology" in text)


# --- the CSV as an index --------------------------------------------------------------------------


def test_the_csv_reads_back_as_an_index(quotes, ws, tmp_path):
    target = tmp_path / "built.csv"
    build(quotes, ws, "--out", target)
    levels, problems = read_price_series(target, "built.csv")
    assert problems == []
    assert [(p.date, p.price) for p in levels] == [(date(2026, 10, 1), 5.4), (date(2026, 11, 1), 5.5)]


def test_a_volume_weighted_csv_leaves_out_periods_without_a_level_and_still_reads_back(ws, tmp_path):
    quotes = tmp_path / "q.csv"
    quotes.write_text(
        HEADER + "\n"
        "2026-10-05,B200,6.00,advertised,0,Ember,T-BM,0\n"
        "2026-11-02,B200,6.20,advertised,0,Ember,T-BM,0\n"
        "2026-11-09,B200,4.80,transacted,24,Fjord,T-MC,200\n",
        encoding="utf-8",
    )
    target = tmp_path / "vw.csv"
    result = build(quotes, ws, "--method", "volume-weighted", "--out", target)
    assert "volume" in result.stderr  # the note on periods without volume
    levels, problems = read_price_series(target, "vw.csv")
    assert problems == []
    assert [(p.date, p.price) for p in levels] == [(date(2026, 11, 1), 4.8)]


def test_the_csv_serves_as_index_for_hedge(quotes, ws, tmp_path):
    target = tmp_path / "built.csv"
    build(quotes, ws, "--out", target)
    result = run(
        "hedge", "--workspace", ws, "--offer", "indexed", "--index", target, "--as-of", AS_OF, "--format", "json"
    )
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    assert (plan["index_date"], plan["index_level"]) == ("2026-11-01", pytest.approx(5.5))
    assert [s["index_level"] for s in plan["stress"]] == [pytest.approx(5.5 * (1 + m)) for m in (-0.4, -0.2, 0.2, 0.4)]


def test_the_csv_serves_as_market_index_csv(quotes, ws, workspace_copy):
    copy = workspace_copy("market_ws")
    build(quotes, ws, "--out", copy / "market" / "index.csv", "--replace")
    validated = run("validate", "--workspace", copy, "--as-of", AS_OF)
    assert validated.exit_code == 0, validated.stderr
    assert "2 index levels" in validated.stdout
    hedged = run("hedge", "--workspace", copy, "--offer", "indexed", "--as-of", AS_OF, "--format", "json")
    assert hedged.exit_code == 0, hedged.stderr
    assert json.loads(hedged.stdout)["index_level"] == pytest.approx(5.5)


# --- bad input ------------------------------------------------------------------------------------


def test_bad_rows_are_all_reported_with_file_and_line_and_nothing_is_written(ws, tmp_path):
    quotes = tmp_path / "bad.csv"
    quotes.write_text(
        "# bad observations\n"  # 1
        + HEADER
        + "\n"  # 2
        "2026-11-02,B200,5.0,transacted,3,Good,T-MC,10\n"  # 3
        "2026-11-02,B200,5.0,transacted,3,Short,T-MC\n"  # 4 a column missing
        "2026-11-02,B200,abc,transacted,3,S,T-MC,10\n"  # 5
        "2026-11-02,B200,5.0,quoted,3,S,T-MC,10\n"  # 6
        "2026-11-02,B200,5.0,transacted,-3,S,T-MC,10\n"  # 7
        "2026-11-02,B200,5.0,transacted,2.5,S,T-MC,10\n"  # 8
        "2026-11-02,B200,5.0,transacted,3,S,T-MC,0\n"  # 9
        "2026-11-02,B200,5.0,transacted,3,,T-MC,10\n",  # 10
        encoding="utf-8",
    )
    target = tmp_path / "out.csv"
    result = run("index", "build", quotes, "--workspace", ws, "--out", target)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stdout == ""
    assert not target.exists()
    lines = result.stderr.splitlines()
    for number, field in [
        (4, ""),
        (5, "price"),
        (6, "kind"),
        (7, "term_months"),
        (8, "term_months"),
        (9, "gpu_hours"),
        (10, "seller"),
    ]:
        assert any(line.startswith(f"{quotes}:{number}: {field}") for line in lines), (number, result.stderr)
    assert not any(line.startswith(f"{quotes}:3:") for line in lines)
    assert "7 problems found; nothing was written." in result.stderr


def test_a_missing_column_in_the_header(ws, tmp_path):
    quotes = tmp_path / "q.csv"
    quotes.write_text(
        "date,gpu,price,kind,term_months,seller,grade\n2026-11-02,B200,5.0,transacted,3,S,T-MC\n", encoding="utf-8"
    )
    index_refused(quotes, ws, f"{quotes}:1:", "gpu_hours")


def test_a_missing_quotes_file(ws, tmp_path):
    result = run("index", "build", tmp_path / "nope.csv", "--workspace", ws)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr + result.stdout


def test_scope_adjust_with_a_grade_without_a_file(ws, tmp_path):
    quotes = tmp_path / "q.csv"
    quotes.write_text(
        HEADER + "\n2026-11-02,B200,5.0,transacted,3,S,T-MC,10\n2026-11-03,B200,6.0,transacted,3,S,T-XX,10\n",
        encoding="utf-8",
    )
    target = tmp_path / "out.csv"
    result = run("index", "build", quotes, "--workspace", ws, "--scope-adjust", "--out", target)
    assert result.exit_code == 2
    assert f"{quotes}:3: grade:" in result.stderr and "T-XX" in result.stderr
    assert not target.exists()
    # without --scope-adjust the same file builds (the adjusted methodology cells stay empty)
    plain = build(quotes, ws)
    assert csv_rows(plain.stdout) == [("2026-11-01", 5.5, 2)]


@pytest.mark.parametrize("args", [("--method", "mean"), ("--kind", "quoted"), ("--term", "1-2"), ("--period", "day")])
def test_bad_option_values_are_usage_errors(quotes, ws, args):
    result = run("index", "build", quotes, "--workspace", ws, *args)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr + result.stdout


def test_the_example_workspace_builds():
    # The example workspace at the repository root: a year of observations, every method, with scope adjustment.
    root = Path(__file__).resolve().parent.parent
    quotes = root / "market" / "quotes.csv"
    if not quotes.is_file():
        pytest.skip("no example quotes")
    for method in ("median", "trimmed-mean", "volume-weighted"):
        result = run("index", "build", quotes, "--workspace", root, "--method", method, "--scope-adjust")
        assert result.exit_code == 0, result.stderr
        assert len(csv_rows(result.stdout)) >= 11  # a first month whose strata are all thin has no level


def test_a_built_index_can_replace_the_workspace_index(workspace_copy):
    # The built index is meant to serve as market/index.csv: writing it there is allowed with
    # --replace, while other outputs never replace a workspace input.
    root = workspace_copy("market_ws")
    target = root / "market" / "index.csv"
    before = target.read_bytes()
    unasked = run("index", "build", root / "market" / "quotes.csv", "-w", root, "--out", target)
    assert unasked.exit_code == 2 and "--replace" not in unasked.stdout and target.read_bytes() == before
    result = run("index", "build", root / "market" / "quotes.csv", "-w", root, "--out", target, "--replace")
    assert result.exit_code == 0, result.stderr
    assert target.read_text().startswith("period,level,observations\n")
    assert run("validate", "-w", root, "--as-of", AS_OF).exit_code == 0
    refused = run("compare", "-w", root, "--as-of", AS_OF, "-f", "csv", "--out", target)
    assert refused.exit_code == 2 and "is an input of the workspace" in refused.stderr


def test_scope_adjust_works_before_any_offer_validates(workspace_copy):
    # An index-linked offer needs market/index.csv; the index is what `index build` makes. Without it the
    # workspace does not validate, yet the build (which needs only procure.yaml and the grades) works, and
    # its output makes the workspace whole.
    root = workspace_copy("market_ws")
    (root / "market" / "index.csv").unlink()
    assert run("validate", "-w", root).exit_code == 2
    target = root / "market" / "index.csv"
    result = run("index", "build", root / "market" / "quotes.csv", "-w", root, "--scope-adjust", "--out", target)
    assert result.exit_code == 0, result.stderr
    # November, adjusted (T-BM + 0.95, T-MC + 0.80): 7.15, 6.60, 5.60, 6.15 -> median (6.15 + 6.60) / 2 = 6.375
    assert "2026-11-01,6.3750,4" in target.read_text()
    assert run("validate", "-w", root).exit_code == 0


def test_a_spliced_reading_is_shown_as_such_with_its_level_jump(quotes, workspace_copy):
    # November's median from the quotes is 5.50 (module docstring); a reading of 4.40 entered by hand replaces it:
    # a jump of -1.10, 4.40 / 5.50 - 1 = -20.0%. The CSV says so in a comment line and still reads back.
    root = workspace_copy("market_ws")
    yaml = root / "procure.yaml"
    yaml.write_text(
        yaml.read_text().replace(
            "  seller_cap: 1.0\n",
            "  seller_cap: 1.0\n  readings:\n    - {date: 2026-11-15, level: 4.40, source: broker sheet entered by "
            "hand}\n",
        )
    )
    result = build(quotes, root)
    assert result.stdout.splitlines()[-2:] == ["2026-10-01,5.4000,3", "2026-11-01,4.4000,4"]
    assert result.stdout.startswith("# spliced: 2026-11-01: 4.40 is a reading from broker sheet entered by hand")
    err = " ".join(result.stderr.split())
    assert "from 5.50 to 4.40 (-1.10, -20.0%)" in err
    table = " ".join(build(quotes, root, "--format", "table").stdout.split())
    assert "4.400 (spliced: broker sheet entered by hand; quotes 5.50)" in table
    data = json.loads(build(quotes, root, "--format", "json").stdout)
    november = data["points"][-1]
    assert (november["spliced"], november["spliced_from"], november["level"]) == (
        True,
        pytest.approx(5.5),
        pytest.approx(4.4),
    )
    target = root / "market" / "built.csv"
    build(quotes, root, "--out", target)
    levels, problems = read_price_series(target, "built.csv")
    assert not problems and [(x.date, x.price) for x in levels] == [(date(2026, 10, 1), 5.4), (date(2026, 11, 1), 4.4)]


def test_the_report_s_benchmark_chapter_names_a_spliced_reading(data_dir):
    """The comparison report's benchmark chapter says which level was spliced in and the jump (HTML, no PDF)."""
    from procure.analysis.evaluate import evaluate
    from procure.analysis.market import Reading, StrataSettings, build_index
    from procure.analysis.report import ReportExtras
    from procure.io.quotes import read_quotes
    from procure.io.workspace import load_workspace
    from procure.render.documents import render_html

    ws = load_workspace(data_dir / "market_ws")
    ev = evaluate(ws, date(2026, 11, 29))
    quotes = read_quotes(data_dir / "market_ws" / "market" / "quotes.csv", "market/quotes.csv")
    settings = StrataSettings(
        min_quotes=1,
        seller_cap=1.0,
        by=(),
        readings=(Reading(date(2026, 11, 15), 4.40, "broker sheet entered by hand"),),
    )
    benchmark = build_index(quotes, settings=settings)
    charts = dict.fromkeys(
        (
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
        ),
        "",
    )  # text only: no charts drawn
    html = " ".join(render_html(ev, "comparison", charts=charts, extras=ReportExtras(benchmark=benchmark)).split())
    assert "Spliced readings, not built from the quotes:" in html
    # November: the quotes' median 5.50 (module docstring), the reading 4.40: -1.10, -20.0%
    assert (
        "2026-11-01: 4.40 is a reading from broker sheet entered by hand" in html
        and "from 5.50 to 4.40 (-1.10, -20.0%)" in html
    )


def test_two_readings_on_one_date_are_refused_with_their_line(quotes, workspace_copy, tmp_path):
    root = workspace_copy("market_ws")
    yaml = root / "procure.yaml"
    yaml.write_text(
        yaml.read_text().replace(
            "  seller_cap: 1.0\n",
            "  seller_cap: 1.0\n  readings:\n    - {date: 2026-11-15, level: 4.40, source: a}\n    - {date: "
            "2026-11-15, level: 4.50, source: b}\n",
        )
    )
    index_refused(quotes, root, "procure.yaml", "index.readings[1].date", "a second reading on 2026-11-15")


def _index_settings(root, text):
    yaml = root / "procure.yaml"
    yaml.write_text(yaml.read_text().replace("  seller_cap: 1.0\n", "  seller_cap: 1.0\n" + text))
    return yaml


def test_a_base_period_without_quotes_is_refused_not_written_as_an_empty_index(quotes, workspace_copy, tmp_path):
    # The quotes run October to November 2026 (module docstring): a base period in 2030 weights no stratum.
    root = workspace_copy("market_ws")
    _index_settings(root, "  base_period: 2030-01-01\n")  # line 50 of procure.yaml (after seller_cap on 49)
    index_refused(
        quotes,
        root,
        "procure.yaml:50: index.base_period: no quotes in the base period 2030-01-01 (the quotes run from 2026-10-01 "
        "to 2026-11-01)",
    )


def test_a_base_period_with_fixed_weights_is_refused(quotes, workspace_copy, tmp_path):
    root = workspace_copy("market_ws")
    _index_settings(
        root, "  base_period: 2026-10-01\n  weights: [{term: 0-3, kind: advertised, grade: all, weight: 1}]\n"
    )
    index_refused(
        quotes,
        root,
        "procure.yaml:50: index.base_period: the weights are fixed by index.weights: give index.weights or "
        "index.base_period, not both",
    )


def test_two_readings_in_one_month_and_a_reading_before_the_quotes_are_refused(quotes, workspace_copy, tmp_path):
    # Only one level per period: 2026-11-02 and 2026-11-20 are both November; 2026-01-15 precedes October's quotes.
    root = workspace_copy("market_ws")
    _index_settings(
        root,
        "  readings:\n    - {date: 2026-11-02, level: 4.40, source: a}\n    - {date: 2026-11-20, level: 4.50, source: "
        "b}\n    - {date: 2026-01-15, level: 4.50, source: c}\n",
    )
    index_refused(
        quotes,
        root,
        "procure.yaml:52: index.readings[1].date: 2026-11-20 is in the same month (2026-11-01) as the reading on "
        "2026-11-02",
        "procure.yaml:53: index.readings[2].date: 2026-01-15 is before the first month of quotes (2026-10-01)",
    )
    # Weekly, the two November readings are in different weeks: only the early one is refused.
    weekly = index_refused(quotes, root, "index.readings[2].date", period="week")
    assert "2026-11-20 is in the same" not in weekly


def test_fixed_weights_for_no_stratum_of_the_quotes_are_refused(quotes, workspace_copy, tmp_path):
    # market_ws pools every quote (index.strata: []): its one stratum is all / all / all, so a weight
    # for 0-3 / advertised / all weights nothing and no period would have a level.
    root = workspace_copy("market_ws")
    _index_settings(root, "  weights: [{term: 0-3, kind: advertised, grade: all, weight: 1}]\n")
    index_refused(
        quotes,
        root,
        "procure.yaml:50: index.weights: no stratum with a weight has quotes in the selection (weights for: 0-3 / "
        "advertised / all)",
    )
