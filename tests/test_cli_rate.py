"""`procure rate` on tests/data/rated in every format, and its refusals.

tests/data/rated (basic plus operator evidence): alpha answers every checklist item (score 100),
delta misses lifecycle and orchestration (100 - 10 - 10 = 80), charlie fails both critical items,
echo is managed with no evidence, bravo is bare metal. Rated peers without a critical failure:
alpha (percentile 1 -> platinum) and delta (0 -> bronze).

The CSV and Markdown ratings and repeatable JSON are rendered in process from the evaluation; one JSON run, the
table, the output file and the refusals through the command.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import date

import pytest
from clihelp import AS_OF, run

CATEGORIES = [
    "security",
    "lifecycle",
    "orchestration",
    "storage",
    "networking",
    "reliability",
    "monitoring",
    "pricing",
    "partnerships",
    "availability",
]
# charlie by hand: security 1 of 7 (fabric_tenant_isolation, from its service terms) x 0.15;
# lifecycle 4 of 4 x 0.10; reliability 1 of 6 (node replacement 24 h <= 24) x 0.15; pricing 3 of 3 x 0.06
CHARLIE = 0.15 * 100 / 7 + 0.10 * 100 + 0.15 * 100 / 6 + 0.06 * 100  # 20.64


def rate(data_dir, *args):
    return run("rate", "-w", data_dir / "rated", "--as-of", AS_OF, *args)


def rated(data_dir, fmt: str) -> str:
    """`procure rate -f fmt` rendered in process from the evaluation (procure/analysis/usecases/compare.py
    evaluation, procure/render/ranking.py rating_text)."""
    from procure.analysis.usecases import evaluation
    from procure.render.ranking import rating_text

    return rating_text(evaluation(data_dir / "rated", date.fromisoformat(AS_OF)).evaluation, fmt)


def test_json_records(data_dir):
    result = rate(data_dir, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    payload = json.loads(result.stdout)
    assert set(payload) == {
        "schema_version",
        "tool",
        "command",
        "as_of",
        "inputs",
        "method",
        "offers",
    }  # the envelope, then the rating
    assert "weighted mean" in payload["method"] and "Underperform" in payload["method"]
    offers = payload["offers"]
    # rated by score, highest first, then the rest by id
    assert [o["id"] for o in offers] == ["alpha", "delta", "charlie", "bravo", "echo"]
    by_id = {o["id"]: o for o in offers}
    for record in offers:
        assert {"id", "tier", "score", "categories"} <= set(record)
        assert record["tier"] is None or record["tier"] == record["tier"].lower()
    assert [by_id[i]["tier"] for i in ("alpha", "delta", "charlie", "bravo", "echo")] == [
        "platinum",
        "bronze",
        "underperform",
        None,
        None,
    ]
    assert by_id["alpha"]["score"] == pytest.approx(100.0)
    assert by_id["delta"]["score"] == pytest.approx(80.0)
    assert by_id["charlie"]["score"] == pytest.approx(CHARLIE)
    assert by_id["bravo"]["score"] is None and by_id["echo"]["score"] is None
    assert list(by_id["alpha"]["categories"]) == CATEGORIES
    assert by_id["delta"]["categories"] == pytest.approx(
        {c: (0.0 if c in ("lifecycle", "orchestration") else 100.0) for c in CATEGORIES}
    )
    assert by_id["charlie"]["categories"]["security"] == pytest.approx(100 / 7)
    assert by_id["charlie"]["categories"]["reliability"] == pytest.approx(100 / 6)
    assert by_id["bravo"]["categories"] == {} and by_id["echo"]["categories"] == {}
    assert by_id["bravo"]["note"] == "not rated: no operator evidence"  # bare metal: no checklist score, no tier
    assert by_id["echo"]["note"] == "not rated: no operator evidence"
    # reliability factor: bands [[85, 1.0], [70, 0.995], [55, 0.99], [40, 0.98], [0, 0.95]] on the operational score
    # (delta: security 100 x 0.15 + lifecycle 0 x 0.10 + reliability 100 x 0.15 + monitoring 100 x 0.12 over 0.52 =
    # 80.8),
    # the stated unrated haircut 0.97 (echo, and bravo: bare metal with no published tier), critical failure the lowest
    # band 0.95
    assert {i: by_id[i]["reliability_factor"] for i in by_id} == {
        "alpha": 1.0,
        "delta": 0.995,
        "charlie": 0.95,
        "bravo": 0.97,
        "echo": 0.97,
    }
    assert {i: by_id[i]["reliability_source"] for i in by_id} == {
        "alpha": "checklist",
        "delta": "checklist",
        "charlie": "checklist",
        "bravo": "unrated",
        "echo": "unrated",
    }
    assert by_id["charlie"]["critical_failures"] == [
        "security.soc2_type2 or security.iso27001: not met",
        "monitoring.tenant_isolated: not met",
    ]
    assert [(by_id[i]["published_tier"], by_id[i]["disagrees"]) for i in ("alpha", "delta", "charlie")] == [
        ("gold", True),
        ("bronze", False),
        ("silver", True),
    ]
    assert (
        by_id["alpha"]["percentile"] == 1.0
        and by_id["delta"]["percentile"] == 0.0
        and by_id["charlie"]["percentile"] is None
    )


def test_json_is_byte_identical_across_runs(data_dir):
    assert rated(data_dir, "json") == rated(data_dir, "json")


def test_table(data_dir):
    result = rate(data_dir)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "Operator ratings" in lines[0]

    def row(offer_id: str) -> list[str]:
        line = next(line for line in lines if line.startswith(f"│ {offer_id} "))
        return [cell.strip() for cell in line.strip("│").split("│")]

    assert row("alpha")[2:6] == ["100.0", "Platinum", "Gold (differs)", "1"]
    assert row("delta")[2:6] == ["80.0", "Bronze", "Bronze", "0.995"]
    assert row("charlie")[2:4] == ["20.6", "Underperform"]
    assert row("bravo")[2] == "—" and row("bravo")[3].startswith("not rated")
    assert row("echo")[5] == "0.97"
    assert "reliability factor on SLA availability comes from the absolute operational score" in " ".join(
        result.stdout.split()
    )


def test_csv(data_dir):
    rows = list(csv.DictReader(io.StringIO(rated(data_dir, "csv"))))
    assert [r["id"] for r in rows] == ["alpha", "delta", "charlie", "bravo", "echo"]
    by_id = {r["id"]: r for r in rows}
    assert float(by_id["delta"]["score"]) == pytest.approx(80.0)
    assert float(by_id["charlie"]["score"]) == pytest.approx(CHARLIE)
    assert [by_id[i]["tier"] for i in by_id] == ["platinum", "bronze", "underperform", "", ""]
    assert by_id["bravo"]["rated"] == "false" and by_id["bravo"]["score"] == "" and by_id["bravo"]["security"] == ""
    assert float(by_id["delta"]["lifecycle"]) == 0.0 and float(by_id["delta"]["security"]) == 100.0
    assert float(by_id["echo"]["reliability_factor"]) == 0.97  # unrated: the stated haircut
    assert by_id["alpha"]["disagrees"] == "true" and by_id["delta"]["disagrees"] == "false"


def test_markdown(data_dir):
    text = rated(data_dir, "markdown")
    assert text.startswith("# Operator ratings\n")
    assert "| alpha | Alpha Cloud | 100.0 | Platinum | Gold (differs) | 1 |" in text
    assert "| delta | Delta Cloud | 80.0 | Bronze | Bronze | 0.995 |" in text
    assert "| echo | Echo Cloud | — | not rated: no operator evidence | — | 0.97 |" in text


def test_out_writes_the_file(data_dir, tmp_path):
    target = tmp_path / "new" / "rate.json"
    result = rate(data_dir, "-f", "json", "--out", target)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert json.loads(target.read_text())["offers"][0]["id"] == "alpha"


def test_bad_evidence_exits_2_with_one_line_per_problem(workspace_copy):
    ws = workspace_copy("rated")
    delta = ws / "offers" / "delta.yaml"
    delta.write_text(delta.read_text().replace("read_gb_s_per_gpu: 2.0", "read_gb_s_per_gpu: fast"))
    line = next(
        i for i, text in enumerate(delta.read_text().splitlines(), start=1) if "read_gb_s_per_gpu: fast" in text
    )
    result = run("rate", "-w", ws, "--as-of", AS_OF, "-f", "json")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"offers/delta.yaml:{line}: operator.evidence.storage.read_gb_s_per_gpu: must be a number of at least 0 (got "
        "'fast')",
        "1 problem found; nothing was written.",
    ]


def test_bad_format_and_date_exit_2(data_dir):
    for args in (("-f", "xml"), ("--as-of", "yesterday")):
        result = run("rate", "-w", data_dir / "rated", *args)
        assert result.exit_code == 2
        assert "Traceback" not in result.stderr and result.stdout == ""
