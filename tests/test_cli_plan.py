"""`procure plan`: formats, --out, --frontier, and the example workspace's plan. The plan's JSON, CSV and Markdown
are rendered in process from the analysis; the table, the output file and the reports through the commands."""

from __future__ import annotations

import csv
import io
import json
from datetime import date
from pathlib import Path

import pytest
from clihelp import run
from planws import config, offer, write

ROOT = Path(__file__).resolve().parent.parent
AS_OF = "2026-12-01"


@pytest.fixture
def newsvendor(tmp_path):
    return write(
        tmp_path / "ws",
        config(),
        [
            offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0, vendor="=Commit Co"),
            offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
        ],
    )


def planned(ws: Path, fmt: str, frontier: bool = False) -> str:
    """`procure plan [--frontier] --format fmt` rendered in process from the analysis's plan
    (procure/analysis/usecases/plans.py planning, procure/render/plan.py plan_text)."""
    from procure.analysis.usecases import planning
    from procure.render.plan import plan_text

    return plan_text(planning(ws, date.fromisoformat(AS_OF), frontier).plan, fmt)


def ok(result) -> str:
    assert result.exit_code == 0, (result.exit_code, repr(result.exception), (result.stdout + result.stderr)[-2000:])
    return result.stdout


def test_json_carries_the_contract_names(newsvendor):
    data = json.loads(planned(newsvendor, "json"))
    assert {
        "plan",
        "expected_cost_per_task",
        "p90_monthly_spend",
        "cvar",
        "expected_unused_share",
        "single_best",
        "scenarios",
    } <= set(data)
    assert set(data["single_best"]) >= {"offer", "expected_cost_per_task"}
    line = data["plan"][0]
    assert {"offer", "vendor", "role", "gpus", "term_months", "price"} <= set(line)
    assert {ln["role"] for ln in data["plan"]} == {"commit", "pay_as_used"}
    assert (
        data["solver"]["time_limit_s"] == 600
        and data["solver"]["node_limit"] == 5000
        and data["solver"]["mip_gap"] == 0.0
        and data["solver"]["status"] == "optimal"
    )


def test_json_is_the_same_bytes_twice(newsvendor):
    assert planned(newsvendor, "json") == planned(newsvendor, "json")


def test_table_states_plan_saving_and_solver(newsvendor):
    text = ok(run("plan", "--as-of", AS_OF, "-w", newsvendor))
    assert "Procurement plan" in text and "Demand scenarios" in text
    assert "Best single offer (on the same scenarios): commit" in text and "saves" in text and "per 1,000 tasks" in text
    assert "gap" in text and "after 5,000 nodes; time backstop 600 s" in text


def test_csv_lines_are_spreadsheet_safe(newsvendor):
    rows = list(csv.reader(io.StringIO(planned(newsvendor, "csv"))))
    assert rows[0][:6] == ["offer", "vendor", "role", "gpus", "term_months", "start_month"]
    commit = next(r for r in rows[1:] if r[2] == "commit")
    assert commit[1] == "'=Commit Co" and commit[3] == "100"


def test_markdown_and_frontier(newsvendor):
    text = planned(newsvendor, "markdown", frontier=True)
    assert text.startswith("# Procurement plan") and "## Efficient frontier" in text and "## Demand scenarios" in text


def test_out_writes_the_file_and_creates_folders(newsvendor, tmp_path):
    target = tmp_path / "reports" / "deep" / "plan.json"
    result = run("plan", "--format", "json", "--out", target, "--as-of", AS_OF, "-w", newsvendor)
    assert ok(result) == "" and json.loads(target.read_text())["plan"]


def test_the_example_plan_beats_the_best_single_offer():
    data = json.loads(planned(ROOT, "json"))
    assert data["demand"] == {
        "months": 24,
        "start": 150000000.0,
        "growth": 0.02,
        "volatility": 0.3,
        "scenarios": 500,
        "seed": 7,
        "sampled": True,
    }
    assert data["expected_cost_per_task"] < data["single_best"]["expected_cost_per_task"]
    assert data["saving_per_task"] > 0
    offers = {line["offer"] for line in data["plan"]}
    assert len(offers) >= 2  # a portfolio, within the 70% vendor share
    assert "quarry-b200-mc" in data["excluded"] and "saltmarsh-b200-ms" in data["excluded"]
    assert [r["name"] for r in data["scenarios"]] == ["low", "base", "high", "worst 10%"]


def test_comparison_report_has_the_plan_section(newsvendor, tmp_path):
    target = tmp_path / "cmp.html"
    result = run("report", "-f", "html", "--as-of", AS_OF, "-w", newsvendor, "--out", target)
    assert result.exit_code == 0, result.stderr
    html = target.read_text()
    section = html[html.index('id="plan"') :]
    assert "Procurement plan" in section and "Demand scenarios" in section and "worst 10%" in section
    assert "4.32" in section  # the expected cost per 1,000 tasks of the newsvendor plan, 700 / (150 x 1,080) x 1,000
    # the frontier is drawn when asked for; without --frontier the chapter says how to get it, and solves nothing for it
    assert "plan-frontier" not in html and "<code>procure report --frontier</code> draws it here" in section


def test_the_report_draws_the_frontier_when_asked_for(newsvendor, tmp_path):
    target = tmp_path / "cmp.html"
    ok(run("report", "-f", "html", "--frontier", "--as-of", AS_OF, "-w", newsvendor, "--out", target))
    section = target.read_text()[target.read_text().index('id="plan"') :]
    figure = section[section.index("<figure>") : section.index("Efficient frontier: the lowest expected cost")]
    assert "<svg" in figure and "plan-frontier" in figure and "procure report --frontier" not in section
    # the frontier the chart draws is the one `procure plan --frontier` lists: from the risk-neutral plan (4.32 per
    # 1,000
    # tasks, as above) to the least-CVaR one
    listed = json.loads(ok(run("plan", "--frontier", "--format", "json", "--as-of", AS_OF, "-w", newsvendor)))[
        "frontier"
    ]
    assert len(listed) >= 2 and listed[0]["expected_cost_per_task"] * 1000 == pytest.approx(4.32, abs=0.005)


def test_the_board_memo_refuses_the_frontier(newsvendor, tmp_path):
    result = run("report", "--board", "--frontier", "--as-of", AS_OF, "-w", newsvendor, "--out", tmp_path / "b.pdf")
    assert result.exit_code == 2 and "--frontier" in result.stderr and "board memo has no charts" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "b.pdf").exists()


def test_no_plan_section_without_demand(data_dir, shared_report):
    assert 'id="plan"' not in shared_report(data_dir / "basic", fmt="html", as_of=AS_OF).read_text()


def test_an_impossible_plan_leaves_a_note_in_the_report(tmp_path):
    ws = write(
        tmp_path / "ws",
        config(plan={"max_vendor_share": 0.7}),
        [
            offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0, vendor="Solo"),
            offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}, vendor="Solo"),
        ],
    )
    target = tmp_path / "cmp.html"
    assert run("report", "-f", "html", "--as-of", AS_OF, "-w", ws, "--out", target).exit_code == 0
    assert "Procurement plan: not available" in target.read_text() and "at least two vendors" in target.read_text()


def test_vendor_text_prints_literally(tmp_path):
    ws = write(
        tmp_path / "ws",
        config(),
        [
            offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0, vendor="[red]Evil[/red] | <b>Co</b>"),
            offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
        ],
    )
    target = tmp_path / "plan.txt"  # a file is 200 columns wide whatever the terminal
    ok(run("plan", "--as-of", AS_OF, "-w", ws, "--out", target))
    assert "[red]Evil[/red]" in target.read_text()
    markdown = ok(run("plan", "--format", "markdown", "--as-of", AS_OF, "-w", ws))
    from procure.render.formats import markdown_text  # the one escaping every Markdown output uses

    assert markdown_text("[red]Evil[/red] | <b>Co</b>") in markdown and "<b>" not in markdown
