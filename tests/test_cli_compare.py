"""`procure compare` on tests/data/basic: the ranking's CSV and Markdown, repeatable JSON and expired offers are
rendered in process from the analysis; the table, one JSON run, the output file and the refusals through the
command."""

import csv
import io
import json
from datetime import date

from clihelp import AS_OF, run

from procure.analysis.record import METRIC_KEYS


def ranked(data_dir, fmt: str, as_of: str = AS_OF) -> str:
    """`procure compare -w tests/data/basic -f fmt` rendered in process from the analysis's evaluation
    (procure/analysis/usecases/compare.py comparison, procure/render/ranking.py ranking_text)."""
    from procure.analysis.usecases import comparison
    from procure.render.ranking import ranking_text

    ev = comparison(data_dir / "basic", date.fromisoformat(as_of)).evaluation
    return ranking_text(ev.model_copy(update={"command": "compare"}), fmt)


def test_table_ranks_acceptable_offers_and_shows_reasons(data_dir):
    result = run("compare", "-w", data_dir / "basic", "--as-of", AS_OF)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    bravo = next(line for line in lines if "bravo" in line)
    charlie = next(line for line in lines if "charlie" in line)
    assert bravo.split("│")[1].strip() == "1"
    assert lines.index(bravo) < lines.index(next(line for line in lines if "alpha" in line)) < lines.index(charlie)
    assert "no SOC 2 Type II or ISO 27001 attestation" in charlie


def test_json_follows_the_design_names(data_dir):
    result = run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, "--format", "json")
    assert result.exit_code == 0
    ev = json.loads(result.stdout)  # stdout carries only the JSON
    assert {"schema_version", "as_of", "workload", "offers"} <= ev.keys()
    assert ev["as_of"] == AS_OF
    assert [o["id"] for o in ev["offers"]] == ["bravo", "alpha", "charlie"]
    for offer in ev["offers"]:
        assert {"id", "vendor", "grade", "acceptable", "rank", "reasons", "metrics"} <= offer.keys()
        assert set(METRIC_KEYS) <= offer["metrics"].keys()
    assert [o["rank"] for o in ev["offers"]] == [1, 2, None]
    # alpha by hand: 4.00 rent + 87,600 / (100 x 12 x 730) = 0.10 fees + serving staff (2 + 4 x 0.1) FTE
    # x 219,000 / (100 x 8,760) = 0.60 + software 0.05 = 4.75 per GPU-hour; 300 tok/s x 3,600 / 1,000
    # x (0.995 x 0.97) x 0.9 x 0.8 successful tasks per GPU-hour, availability and utilization each x the mean of its
    # factor at the point (tests/pointmeans.py)
    from pointmeans import DELIVERY_MEAN

    alpha = ev["offers"][1]["metrics"]
    assert alpha["full"] == __import__("pytest").approx(4.75)
    assert alpha["point_cost_per_task"] == __import__("pytest").approx(
        4.75 / (1080 * 0.995 * 0.97 * 0.9 * 0.8 * DELIVERY_MEAN)
    )


def test_json_is_byte_identical_across_runs(data_dir):
    assert ranked(data_dir, "json") == ranked(data_dir, "json")


def test_csv_has_numbers_and_reasons(data_dir):
    rows = list(csv.DictReader(io.StringIO(ranked(data_dir, "csv"))))
    assert [r["id"] for r in rows] == ["bravo", "alpha", "charlie"]
    assert float(rows[1]["full"]) == __import__("pytest").approx(4.75)
    assert rows[2]["rank"] == "" and "attestation" in rows[2]["reasons"]


def test_markdown_escapes_and_lists_rejections(data_dir):
    text = ranked(data_dir, "markdown")
    assert text.startswith("# Offer comparison")
    assert "## Not acceptable" in text and "`charlie`" in text
    assert "**Lowest cost per successful task:** Bravo Metal (`bravo`)" in text


def test_out_creates_folders_and_keeps_stdout_clean(data_dir, tmp_path):
    target = tmp_path / "new" / "deeper" / "cmp.json"
    result = run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, "-f", "json", "--out", target)
    assert result.exit_code == 0
    assert result.stdout == ""
    assert json.loads(target.read_text())["offers"][0]["id"] == "bravo"


def test_as_of_after_validity_expires_every_offer(data_dir):
    offers = json.loads(ranked(data_dir, "json", "2027-07-01"))["offers"]
    assert all(not o["acceptable"] for o in offers)
    assert all("expired on 2027-06-30" in " ".join(o["reasons"]) for o in offers)


def test_bad_date_and_missing_workspace_exit_2(tmp_path):
    assert run("compare", "--as-of", "2026-13-01").exit_code == 2
    result = run("compare", "-w", tmp_path)
    assert result.exit_code == 2
    assert "no procure.yaml here" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
