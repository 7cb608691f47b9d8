"""`procure evaluate`: the one-line summary, and the warning about offers that expire within 14 days.

In tests/data/history_base bravo is valid until 2026-12-31; the others until 2027-06-30.
"""

from __future__ import annotations

import json

import pytest
from clihelp import run
from pointmeans import DELIVERY_MEAN

# history_base's alpha: 4.00 per GPU-hour over 300 x 3.6 x 0.995 SLA x 0.9 x 0.8 = 773.712 successful tasks, x the means
# of the availability and utilization factors at the point (tests/test_history.py): 5.28 per 1,000 tasks
ALPHA_PER_1000 = 4.00 / (773.712 * DELIVERY_MEAN) * 1000


@pytest.fixture
def ws(workspace_copy):
    return workspace_copy("history_base")


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def test_offer_expiring_in_ten_days_is_warned_about_on_stderr(ws):
    result = run("evaluate", "-w", ws, "--as-of", "2026-12-21")
    assert result.exit_code == 0
    assert warnings(result.stderr) == ["warning: bravo expires in 10 days (valid until 2026-12-31)"]
    assert (
        result.stdout
        == f"as of 2026-12-21: 3 of 4 offers acceptable; top: alpha at {ALPHA_PER_1000:.2f} USD per 1,000 successful "
        "tasks\n"
    )


def test_the_warning_stays_off_json_output(ws):
    result = run("evaluate", "-w", ws, "--as-of", "2026-12-21", "--format", "json")
    assert warnings(result.stderr) == ["warning: bravo expires in 10 days (valid until 2026-12-31)"]
    ev = json.loads(result.stdout)
    bravo = next(o for o in ev["offers"] if o["id"] == "bravo")
    assert bravo["notes"][-1] == "expires in 10 days (valid until 2026-12-31)"
    assert bravo["notes"][0].startswith(
        "unrated: availability unverified"
    )  # bare metal with no tier: a note, not a warning
    assert bravo["acceptable"] is True  # still valid: a warning, not a gate


@pytest.mark.parametrize(
    ("as_of", "expected"),
    [
        ("2026-11-29", []),  # 32 days left
        ("2026-12-16", []),  # 15 days
        ("2026-12-17", ["warning: bravo expires in 14 days (valid until 2026-12-31)"]),
        ("2026-12-30", ["warning: bravo expires in 1 day (valid until 2026-12-31)"]),
        ("2026-12-31", ["warning: bravo expires in 0 days (valid until 2026-12-31)"]),  # its last valid day
        ("2027-01-01", []),  # expired: a failed gate, not a warning
    ],
)
def test_warning_window_is_fourteen_days(ws, as_of, expected):
    result = run("evaluate", "-w", ws, "--as-of", as_of)
    assert result.exit_code == 0
    assert warnings(result.stderr) == expected


def test_expired_offer_is_not_acceptable(ws):
    result = run("evaluate", "-w", ws, "--as-of", "2027-01-01", "--format", "json")
    bravo = next(o for o in json.loads(result.stdout)["offers"] if o["id"] == "bravo")
    assert (bravo["acceptable"], bravo["rank"], bravo["reasons"]) == (
        False,
        None,
        ["expired on 2026-12-31 (as of 2027-01-01)"],
    )


def test_evaluate_out_writes_the_summary_to_a_file(ws, tmp_path):
    target = tmp_path / "out" / "summary.txt"
    result = run("evaluate", "-w", ws, "--as-of", "2026-11-29", "--out", target)
    assert result.exit_code == 0
    assert result.stdout == ""
    assert (
        target.read_text(encoding="utf-8")
        == f"as of 2026-11-29: 3 of 4 offers acceptable; top: alpha at {ALPHA_PER_1000:.2f} USD per 1,000 successful "
        "tasks\n"
    )
