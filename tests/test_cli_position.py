"""`procure position` on tests/data/rated in every format, and its refusals.

Hand figures as of 2026-11-29 (acceptable offers; availability = SLA x reliability factor):
- bravo: 3.95 per GPU-hour over 1,080 x 0.99 (SLA) x 0.97 (unrated: the stated haircut) x 0.98 (the eight
  operating jobs bare metal leaves with us, 0.98^(1/8) each) x 0.9 x 0.8 successful tasks
- alpha: 4.75 over 1,080 x 0.995 x 1.0 (score 100) x 0.72
- delta: 4.95 (4.20 rent) over 1,080 x 0.995 x 0.995 (score 80) x 0.72
- echo:  5.75 (5.00 rent) over 1,080 x 0.995 x 0.97 (no evidence: the stated haircut) x 0.72
- each x the means of the availability and utilization factors at the point (0.996667 x 0.983333)
Market: Rival A 0.0050 (06-30) then 0.0058 (10-31); Rival B 0.0070 (10-31); ours 0.0065 (06-30), 0.0060 (10-31).

The position placed with a given cost or offer, and the CSV and Markdown documents, are rendered in process from the
analysis; the JSON of one run, the table, the output file and the refusals through the command.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import date

import pytest
from clihelp import AS_OF, run
from pointmeans import DELIVERY_MEAN

# each over its successful tasks x the means of the availability and utilization factors at the point
# (tests/pointmeans.py)
BRAVO = 3.95 / (1080 * 0.99 * 0.97 * 0.98 * 0.9 * 0.8 * DELIVERY_MEAN)  # 0.0053977 / 0.980056 = 0.0055075
ALPHA = 4.75 / (1080 * 0.995 * 1.0 * 0.9 * 0.8 * DELIVERY_MEAN)
DELTA = 4.95 / (1080 * 0.995 * 0.995 * 0.9 * 0.8 * DELIVERY_MEAN)
ECHO = 5.75 / (1080 * 0.995 * 0.97 * 0.9 * 0.8 * DELIVERY_MEAN)  # 0.0076615 / 0.980056 = 0.0078174
# cheapest first: bravo 0.00551, Rival A 0.0058, us 0.0060, alpha 0.00626, delta 0.00656, Rival B 0.0070, echo 0.00782
CURVE = ["bravo", "Rival A", "us", "alpha", "delta", "Rival B", "echo"]


def position(data_dir, *args):
    return run("position", "-w", data_dir / "rated", "--as-of", AS_OF, *args)


def placed(data_dir, fmt: str, current: float | None = None, offer: str | None = None) -> str:
    """`procure position [--current X | --offer ID] -f fmt` rendered in process from the analysis's position
    (procure/analysis/usecases/plans.py positioning, procure/render/position.py)."""
    from procure.analysis.usecases import positioning
    from procure.render.position import position_text

    found = positioning(data_dir / "rated", date.fromisoformat(AS_OF), current, offer)
    return position_text(found.position, fmt)


def test_json_with_our_latest_recorded_cost(data_dir):
    result = position(data_dir, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    pos = json.loads(result.stdout)
    assert pos["label"] == "our recorded cost on 2026-10-31"
    assert pos["cost_per_task"] == 0.0060
    assert pos["as_of"] == AS_OF
    assert [p["name"] for p in pos["curve"]] == CURVE
    costs = {p["name"]: p["cost_per_task"] for p in pos["curve"]}
    assert costs["bravo"] == pytest.approx(BRAVO, rel=1e-12)
    assert costs["alpha"] == pytest.approx(ALPHA, rel=1e-12)
    assert costs["delta"] == pytest.approx(DELTA, rel=1e-12)
    assert costs["echo"] == pytest.approx(ECHO, rel=1e-12)
    assert costs["Rival A"] == 0.0058 and costs["Rival B"] == 0.0070
    assert pos["rank"] == 3 and pos["of"] == 7
    assert pos["cheapest"]["name"] == "bravo"
    assert pos["gap"] == pytest.approx(0.0060 - BRAVO, rel=1e-12)
    assert (pos["cost_per_1000_tasks"], pos["gap_per_1000_tasks"]) == pytest.approx(
        (6.0, (0.0060 - BRAVO) * 1000), rel=1e-12
    )  # beside them, per 1,000 tasks
    assert pos["gap_share"] == pytest.approx(0.0060 / BRAVO - 1, rel=1e-12)
    assert [p["cost_per_task"] for p in pos["history"]["us"]] == [0.0065, 0.0060]
    [change] = pos["changes"]  # Rival B has a single point: nothing to compare
    assert change["competitor"] == "Rival A"
    assert change["sentence"] == (
        "We went from 6.50 to 6.00 per 1,000 tasks (-8%, improved) while Rival A went from 5.00 to 5.80 (+16%): "
        "we were and still are the more expensive producer."
    )


def test_json_with_a_given_cost(data_dir):
    pos = json.loads(placed(data_dir, "json", current=0.0056))
    assert pos["label"] == "the cost per task given"
    assert pos["rank"] == 2  # only bravo (0.00551) is cheaper than 0.0056
    assert pos["gap"] == pytest.approx(0.0056 - BRAVO, rel=1e-12)
    assert [p["name"] for p in pos["curve"]][:3] == ["bravo", "us", "Rival A"]
    us = next(p for p in pos["curve"] if p["kind"] == "us")
    assert us["date"] == AS_OF


def test_json_with_an_offer(data_dir):
    pos = json.loads(placed(data_dir, "json", offer="delta"))
    assert pos["label"] == "offer delta"
    assert pos["cost_per_task"] == pytest.approx(DELTA, rel=1e-12)
    assert pos["rank"] == 4  # bravo, Rival A and alpha are cheaper
    assert pos["gap"] == pytest.approx(DELTA - BRAVO, rel=1e-12)


def test_table(data_dir):
    result = position(data_dir)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "Cost position" in lines[0]
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in lines if line.startswith("│")]
    assert [r[1] for r in rows] == ["bravo", "Rival A", "US", "alpha", "delta", "Rival B", "echo"]
    assert rows[2] == ["3", "US", "us", "our cost", "6.00", "2026-10-31"]
    text = " ".join(result.stdout.split())
    assert (
        "At 6.00 USD per 1,000 successful tasks (our recorded cost on 2026-10-31), we rank 3 of 7 costs on the cost "
        "curve; "
        f"the cheapest is bravo at {BRAVO * 1000:.2f}, and we cost {0.006 / BRAVO - 1:.0%} more."
    ) in text


def test_csv(data_dir):
    rows = list(csv.DictReader(io.StringIO(placed(data_dir, "csv"))))
    assert list(rows[0]) == ["rank", "name", "kind", "cost_per_task", "date"]
    assert [r["name"] for r in rows] == CURVE
    assert [int(r["rank"]) for r in rows] == list(range(1, 8))
    assert float(rows[0]["cost_per_task"]) == pytest.approx(BRAVO, rel=1e-12)
    assert rows[2] == {"rank": "3", "name": "us", "kind": "us", "cost_per_task": "0.006", "date": "2026-10-31"}


def test_markdown(data_dir):
    text = placed(data_dir, "markdown")
    assert text.startswith("# Cost position\n")
    assert "| 3 | US | us | our cost | 6.00 | 2026-10-31 |" in text
    assert "we rank 3 of 7 costs on the cost curve" in text
    assert "we were and still are the more expensive producer." in text


def test_out_writes_the_file(data_dir, tmp_path):
    target = tmp_path / "deep" / "position.csv"
    result = position(data_dir, "-f", "csv", "--out", target)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert target.read_text().startswith("rank,name,kind,cost_per_task,date\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--current", "0.006", "--current-offer", "alpha"), "position: give --current or --offer, not both"),
        (("--offer", "zulu"), "offers/: no offer with id 'zulu' (known: alpha, bravo, charlie, delta, echo)"),
        (("--current", "0"), "--current: must be greater than 0 (got 0)"),
        (("--current", "-1"), "--current: must be greater than 0 (got -1)"),
    ],
)
def test_bad_input_exits_2_with_one_line(data_dir, args, message):
    result = position(data_dir, *args)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.splitlines() == [message, "1 problem found; nothing was written."]


def test_not_a_number_is_a_usage_error(data_dir):
    result = position(data_dir, "--current", "cheap")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_an_offer_failing_a_gate_is_said_to_fail_before_it_is_called_cheapest(data_dir):
    """charlie (rated workspace) has the lowest cost per task of all but fails the security gate."""
    pos = json.loads(position(data_dir, "--offer", "charlie", "-f", "json").stdout)
    assert pos["rank"] == 1
    assert pos["gate_failures"] and pos["gate_failures"][0].startswith("security:")
    assert pos["sentences"][0].startswith("Offer charlie fails a gate (security:")
    assert "not an acceptable offer" in pos["sentences"][0]
    assert pos["sentences"][1].startswith("Were it acceptable,")
    table = position(data_dir, "--offer", "charlie").stdout
    assert table.index("fails a gate") < table.index("Cost position")  # said before the table
    markdown = position(data_dir, "--offer", "charlie", "-f", "markdown").stdout
    assert markdown.index("fails a gate") < markdown.index("| # |")


def test_an_acceptable_offer_has_no_gate_failures(data_dir):
    pos = json.loads(placed(data_dir, "json", offer="delta"))
    assert pos["gate_failures"] == [] and pos["sentences"][0].startswith("At ")
