"""Incident histories: Statuspage incidents.json and the incident CSV, with the availability they leave."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from procure.analysis.incidents import availability, downtime
from procure.errors import InputError
from procure.io.incidents import Incident, read_incidents

DATA = Path(__file__).parent / "data" / "incidents"
UTC = UTC


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def test_real_statuspage_sample_reads_start_end_impact_components():
    [incident] = read_incidents(DATA / "discord_incidents.json")
    # Discord's page: started 13:14:17.737-08:00, resolved 13:37:37.388-08:00 (21:14:17.737Z - 21:37:37.388Z).
    assert incident.start == datetime(2022, 2, 15, 21, 14, 17, 737000, tzinfo=UTC)
    assert incident.end == datetime(2022, 2, 15, 21, 37, 37, 388000, tzinfo=UTC)
    assert incident.impact == "minor"
    assert incident.components == ("API",)
    assert incident.name == "Messaging issues"
    # 23 min 19.651 s of a minor incident: not down time by default, down time when minor is counted.
    day = (at("2022-02-15T00:00:00Z"), at("2022-02-16T00:00:00Z"))
    assert availability([incident], *day) == 1.0
    assert availability([incident], *day, impacts=("minor", "major", "critical")) == pytest.approx(1 - 1399.651 / 86400)


def test_csv_history_availability_by_hand():
    incidents = read_incidents(DATA / "serving_history.csv")
    assert [i.impact for i in incidents] == ["major", "minor", "critical", "major"]
    march = (at("2026-03-01T00:00:00Z"), at("2026-04-01T00:00:00Z"))  # 44,640 minutes
    # major 90 min + critical 60 min (whole service) + major 30 min (embeddings); minor not counted.
    assert downtime(incidents, *march) == timedelta(minutes=180)
    assert availability(incidents, *march) == pytest.approx(1 - 180 / 44640)  # 0.995968
    # Only chat completions: its 90 min and the whole-service 60 min.
    assert availability(incidents, *march, components=["chat completions"]) == pytest.approx(1 - 150 / 44640)
    # Counting the minor incident too.
    assert availability(incidents, *march, impacts=("minor", "major", "critical")) == pytest.approx(1 - 225 / 44640)


def test_overlapping_incidents_of_a_page_count_once_and_open_ones_run_to_the_window_end():
    one = Incident(at("2026-03-01T10:00:00Z"), at("2026-03-01T12:00:00Z"), "major", ("a",))
    two = Incident(at("2026-03-01T11:00:00Z"), at("2026-03-01T13:00:00Z"), "critical", ("b",))
    still_open = Incident(at("2026-03-01T23:00:00Z"), None, "major")
    day = (at("2026-03-01T00:00:00Z"), at("2026-03-02T00:00:00Z"))
    # 10:00-13:00 merged (3 h) + 23:00-24:00 (1 h) = 4 h of 24.
    assert availability([one, two, still_open], *day) == pytest.approx(1 - 4 / 24)
    # A window that cuts an incident counts only its part.
    assert availability([one], at("2026-03-01T11:30:00Z"), at("2026-03-01T12:30:00Z")) == pytest.approx(0.5)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def messages(path: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        read_incidents(path)
    return [str(p) for p in caught.value.problems]


def test_csv_errors_are_located_and_all_reported(tmp_path):
    path = write(
        tmp_path,
        "h.csv",
        "start,end,impact,components\n"
        "2026-03-02T10:00:00Z,2026-03-02T09:00:00Z,major,api\n"  # line 2: end before start
        "2026-03-03T10:00:00Z,2026-03-03T11:00:00Z,outage,api\n"  # line 3: unknown impact
        "2026-03-04T10:00:00,2026-03-04T11:00:00Z,major,api\n"  # line 4: no zone
        "2026-03-05T10:00:00Z,2026-03-05T12:00:00Z,major,api;web\n"
        "2026-03-05T11:00:00Z,2026-03-05T11:30:00Z,minor,web\n",  # line 6: overlaps line 5 on web
    )
    found = messages(path)
    assert any(m.startswith(f"{path}:2: end: ends before it starts") for m in found)
    assert any(
        m.startswith(
            f"{path}:3: impact: unknown impact 'outage' (expected one of: none, minor, major, critical, maintenance)"
        )
        for m in found
    )
    assert any(m.startswith(f"{path}:4: start: needs a time zone") for m in found)
    assert any(m.startswith(f"{path}:6: start: overlaps the incident on line 5") for m in found)
    assert len(found) == 4


def test_csv_rows_on_different_components_may_overlap(tmp_path):
    path = write(
        tmp_path,
        "h.csv",
        "start,end,impact,components\n2026-03-05T10:00:00Z,2026-03-05T12:00:00Z,major,api\n2026-03-05T11:00:00Z,2026-03-05T11:30:00Z,major,web\n",
    )
    assert len(read_incidents(path)) == 2


def test_statuspage_errors_name_the_field(tmp_path):
    data = {
        "incidents": [
            {
                "id": "x",
                "impact": "severe",
                "started_at": "2026-03-01T10:00:00Z",
                "resolved_at": "2026-03-01T11:00:00Z",
            },
            {"id": "y", "impact": "major", "started_at": "2026-03-01T10:00:00Z", "resolved_at": "2026-03-01T09:00:00Z"},
            {"id": "z", "impact": "major", "created_at": "yesterday"},
        ]
    }
    path = write(tmp_path, "incidents.json", json.dumps(data))
    found = messages(path)
    assert found[0].startswith(f"{path}: incidents[0].impact: unknown impact 'severe'")
    assert found[1].startswith(f"{path}: incidents[1].resolved_at: ends before it starts")
    assert found[2].startswith(f"{path}: incidents[2].created_at: must be an ISO 8601 time")


def test_statuspage_end_from_the_resolved_update_when_resolved_at_is_missing(tmp_path):
    data = {
        "incidents": [
            {
                "id": "x",
                "impact": "critical",
                "created_at": "2026-03-01T10:00:00Z",
                "incident_updates": [
                    {"status": "investigating", "created_at": "2026-03-01T10:00:00Z"},
                    {"status": "resolved", "created_at": "2026-03-01T10:30:00Z"},
                ],
            }
        ]
    }
    [incident] = read_incidents(write(tmp_path, "incidents.json", json.dumps(data)))
    assert incident.end == at("2026-03-01T10:30:00Z")


def test_not_a_statuspage_file(tmp_path):
    assert "an object with an `incidents` list" in messages(write(tmp_path, "x.json", '{"page": {}}'))[0]
    assert "malformed JSON" in messages(write(tmp_path, "y.json", "{"))[0]
    assert (
        "a Statuspage incidents.json (.json) or a CSV of incidents (.csv)" in messages(write(tmp_path, "z.txt", ""))[0]
    )
