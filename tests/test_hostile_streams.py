"""Hostile evidence files: readers that stream, stay linear, and name every bad value.

Each test reproduces one attack: telemetry stamped past 9999 or before 1970 (also in a snapshot's
file name), a guidellm start_time of 1e20, a Statuspage "components": 5, a NaN in the second of two
snapshots, 200,000 series with an unknown label, latency buckets le="NaN" and le="-1", a trial
throughput of 1e300, millions of samples of metrics nobody asked for, 40,000 incidents open at
once, and an xlsx row whose one cell sits at column XFD. Every one: exit 2, the file, where in it
and the field, nothing written; or, for sizes within the limits, a bounded time and memory.
`procure actuals import` is run in process at its use case (tests/importhelp.py) but where what the
command itself prints is the point: the first hundred problems and the count, and a failed write.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from clihelp import assert_error, run
from importhelp import run as imported
from refusals import refused, validate

from procure.errors import Problem
from procure.io import query_range as qr
from procure.io import telemetry as tm

DATA = Path(__file__).parent / "data"
TOKENS = "vllm:generation_tokens_total"


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def range_file(folder: Path, result: list[dict], name: str = "range.json") -> Path:
    path = folder / name
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    return path


def tokens(values: list[list], **labels: str) -> dict:
    return {"metric": {"__name__": TOKENS, "model_name": "m", **labels}, "values": values}


def snapshot(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"# TYPE {TOKENS} counter\n" + body)
    return path


def nothing_written(ws: Path) -> None:
    assert not (ws / "actuals").exists()


def import_refused(result, *needles: str) -> str:  # type: ignore[no-untyped-def]
    """An import at its use case refused (exit 2 at the command line) with each needle in its problems."""
    assert result.exit_code == 2, result.output[-2000:]
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr[-2000:])
    return result.stderr


# --- times past 9999 or before 1970: named, not an internal error -------------------------------


@pytest.mark.parametrize(
    "stamp", [1e13, 253402300800.0, -62135596801.0, -1.0]
)  # year 318857, 10000-01-01, before year 1, 1969
def test_a_query_range_time_outside_the_calendar_is_a_named_error(workspace_copy, tmp_path, stamp):
    ws = workspace_copy("basic")
    path = range_file(tmp_path, [tokens([[at("2026-11-01T00:00:00"), "1"], [stamp, "2"]])])
    import_refused(
        imported("actuals", "import", path, "--offer", "alpha", "-w", ws),
        f"{path}: data.result[0].values[1]:",
        "between 1970-01-01 and 9999-11-30",
    )
    nothing_written(ws)


def test_a_snapshot_sample_stamped_past_9999_is_a_named_error(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    path = snapshot(tmp_path, "metrics.prom", f'{TOKENS}{{model_name="m"}} 100 {int(1e13 * 1000)}\n')
    import_refused(
        imported("actuals", "import", path, "--offer", "alpha", "-w", ws),
        str(path),
        "timestamp must be between 1970-01-01 and 9999-11-30",
    )
    nothing_written(ws)


@pytest.mark.parametrize(
    "name", ["9999-12-31T23:59:59Z.prom", "0000-01-01T00:00:00Z.prom", "1969-12-31T23:59:59Z.prom"]
)
def test_a_snapshot_file_named_outside_the_calendar_is_a_named_error(workspace_copy, tmp_path, name):
    ws = workspace_copy("basic")
    path = snapshot(tmp_path, name, f'{TOKENS}{{model_name="m"}} 100\n')
    import_refused(
        imported("actuals", "import", path, "--offer", "alpha", "-w", ws),
        str(path),
        "the time in the file name",
        "between 1970-01-01 and 9999-11-30",
    )
    nothing_written(ws)


def test_a_guidellm_start_time_of_1e20_is_a_named_error(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    data = json.loads((DATA / "trials" / "guidellm_benchmarks_stripped.json").read_text())
    data["benchmarks"][0]["start_time"] = 1e20
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(data))
    assert_error(
        run("perf", "import", path, "--gpus", "8", "--name", "trial-x", "-w", ws),
        str(path),
        "benchmarks[0].start_time",
        "before the year 10000",
    )
    assert not (ws / "performance" / "trial-x.csv").exists()


@pytest.mark.parametrize(
    "key, value", [("components", 5), ("components", "api"), ("incident_updates", {"status": "resolved"})]
)
def test_a_statuspage_field_that_is_not_a_list_is_named_by_import_and_by_validate(workspace_copy, tmp_path, key, value):
    ws = workspace_copy("basic")
    incident = {
        "id": "x1",
        "name": "outage",
        "impact": "major",
        "started_at": "2026-07-01T00:00:00Z",
        "resolved_at": "2026-07-01T01:00:00Z",
        key: value,
    }
    path = tmp_path / "incidents.json"
    path.write_text(json.dumps({"incidents": [incident]}))
    import_refused(
        imported("actuals", "import", path, "--offer", "alpha", "-w", ws),
        str(path),
        f"incidents[0].{key}",
        "must be a list",
    )
    nothing_written(ws)
    # the same file placed in actuals/ by hand: validate names it too (it used to fail inside validate)
    (ws / "actuals" / "alpha").mkdir(parents=True)
    (ws / "actuals" / "alpha" / "incidents.json").write_text(path.read_text())
    refused(validate(ws), "actuals/alpha/incidents.json", f"incidents[0].{key}", "must be a list")


# --- where a problem is, and how many lines it takes ----------------------------------------------


def test_a_nan_in_the_second_snapshot_is_reported_against_that_file(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    first = snapshot(tmp_path, "2026-11-01T00:00:00Z.prom", f'{TOKENS}{{model_name="m"}} 100\n')
    second = snapshot(tmp_path, "2026-11-01T00:01:00Z.prom", f'{TOKENS}{{model_name="m"}} NaN\n')
    stderr = import_refused(
        imported("actuals", "import", first, second, "--offer", "alpha", "-w", ws),
        f"{second}: ",
        "finite number",
        "2026-11-01 00:01:00Z",
    )
    assert f"{first}: " not in stderr
    nothing_written(ws)


def test_an_actuals_write_that_fails_names_no_out_option(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    (ws / "actuals").mkdir()
    (ws / "actuals" / "alpha").write_text("a file where the offer's folder goes")
    path = snapshot(tmp_path, "2026-11-01T00:00:00Z.prom", f'{TOKENS}{{model_name="m"}} 100\n')
    later = snapshot(tmp_path, "2026-11-01T00:01:00Z.prom", f'{TOKENS}{{model_name="m"}} 160\n')
    result = run("actuals", "import", path, later, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "--out" not in result.stderr  # no --out was given
    assert "actuals/alpha" in result.stderr


@pytest.mark.parametrize(
    "count", [2_000, pytest.param(200_000, marks=pytest.mark.slow)]
)  # the attack's 200,000: a minute in prometheus-client's parser
def test_two_hundred_thousand_series_with_an_unknown_label_take_one_line(workspace_copy, tmp_path, count):
    ws = workspace_copy("basic")
    body = "".join(f'{TOKENS}{{model_name="m",region="r{i}"}} {i}\n' for i in range(count))
    path = snapshot(tmp_path, "2026-11-01T00:00:00Z.prom", body)
    stderr = import_refused(
        imported("actuals", "import", path, "--offer", "alpha", "-w", ws),
        "unknown label region",
        f"and {count - 1:,} other series",
    )
    assert len(stderr.splitlines()) == 1  # the one problem (the command adds the count line)
    nothing_written(ws)


# --- imports never write what the loader refuses ---------------------------------------------------


@pytest.mark.parametrize("bound", ["NaN", "-1"])
def test_a_latency_bucket_bound_of_nan_or_below_zero_is_refused_and_nothing_written(workspace_copy, tmp_path, bound):
    ws = workspace_copy("basic")
    name = "vllm:time_to_first_token_seconds_bucket"
    buckets = [
        {
            "metric": {"__name__": name, "model_name": "m", "le": le},
            "values": [[at("2026-11-01T00:00:00"), "0"], [at("2026-11-01T00:01:00"), "10"]],
        }
        for le in (bound, "+Inf")
    ]
    path = range_file(tmp_path, buckets)
    import_refused(
        imported("actuals", "import", path, "--offer", "alpha", "-w", ws),
        str(path),
        "le:",
        f'got le="{bound}"',
        "at least 0, or +Inf",
    )
    nothing_written(ws)
    validate(ws)()  # every command still works


def test_a_trial_throughput_of_1e300_is_refused_and_every_command_still_works(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    data = json.loads((DATA / "trials" / "vllm_bench_serve_conc32.json").read_text())
    data["output_throughput"] = 1e300
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    assert_error(
        run("perf", "import", path, "--gpus", "8", "--name", "trial-huge", "-w", ws),
        str(path),
        "output_throughput",
        "implausibly large",
    )
    assert not (ws / "performance" / "trial-huge.csv").exists()
    assert run("validate", "-w", ws).exit_code == 0


def test_a_curve_the_loader_would_refuse_is_never_written(tmp_path):
    # The last guard of every perf import: the files about to be written, read with the loader's reader.
    from procure.errors import InputError
    from procure.io.workspace import check_curves_to_write

    with pytest.raises(InputError) as caught:
        check_curves_to_write(tmp_path, {"huge.csv": "interactivity,output_tok_s_gpu\n30,1.25e299\n"})
    (problem,) = caught.value.problems
    assert (problem.file, problem.line, problem.field) == (str(tmp_path / "huge.csv"), 2, "output_tok_s_gpu")
    assert "implausibly large" in problem.message and "nothing was written" in problem.message
    check_curves_to_write(tmp_path, {"fine.csv": "interactivity,output_tok_s_gpu\n30,1250\n"})  # no error


# --- readers that stream and stay linear -----------------------------------------------------------


def test_a_snapshot_of_unrelated_samples_is_read_in_bounded_memory(tmp_path, monkeypatch):
    # 300,000 samples of a metric nobody asked for (about 13 MB) around one wanted sample. Read a
    # block of 1 MB at a time, the reader's peak is a few blocks, not the file parsed (the whole
    # file through prometheus-client took about 20 times its size).
    monkeypatch.setattr(tm, "BLOCK_BYTES", 1024 * 1024)
    path = tmp_path / "2026-11-01T00:00:00Z.prom"
    with path.open("w") as out:
        out.write("# TYPE node_cpu_seconds_total counter\n")
        for i in range(150_000):
            out.write(f'node_cpu_seconds_total{{cpu="{i}",mode="idle"}} {i}.5\n')
        out.write(f'# TYPE {TOKENS} counter\n{TOKENS}{{model_name="m"}} 42\n')
        for i in range(150_000):
            out.write(f'node_memory_bytes{{node="{i}"}} {i}\n')
    size = path.stat().st_size
    problems: list[Problem] = []
    tracemalloc.start()
    try:
        series = tm.read_text_snapshot(path, "snap", {TOKENS}, problems)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problems == [] and [(s.name, list(s.values)) for s in series] == [(TOKENS, [42.0])]
    assert peak < 5 * 1024 * 1024 < size / 2, (peak, size)


def test_a_query_range_of_many_unrelated_series_builds_only_the_wanted_one(tmp_path):
    # 30,000 series of another metric and one wanted: the walk steps over the others' samples, so
    # the peak stays near the text itself (json.loads of it all took about 12 times its size).
    path = tmp_path / "range.json"
    with path.open("w") as out:
        out.write('{"status":"success","data":{"resultType":"matrix","result":[')
        for i in range(30_000):
            out.write(
                '{"metric":{"__name__":"node_cpu_seconds_total","cpu":"%d"},"values":[[1793491200,"%d"],[1793491260,"%d"]]},'
                % (i, i, i + 1)
            )
        out.write(
            '{"metric":{"__name__":"%s","model_name":"m"},"values":[[1793491200,"0"],[1793491260,"60"]]}]}}' % TOKENS
        )
    size = path.stat().st_size
    problems: list[Problem] = []
    tracemalloc.start()
    try:
        series = qr.read_query_range(path, "range", {TOKENS}, problems)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problems == []
    (found,) = series
    assert (
        found.name == TOKENS and list(found.values) == [0.0, 60.0] and list(found.times) == [1793491200.0, 1793491260.0]
    )
    assert peak < 3 * size, (peak, size)


def test_a_query_range_in_another_layout_is_still_read_whole():
    # The documentation's own example (pretty-printed, "values" after "metric"): read item by item.
    problems: list[Problem] = []
    series = qr.read_query_range(
        DATA / "actuals" / "prometheus_api_range_example.json", "example.json", {"up"}, problems
    )
    assert problems == [] and [s.label("job") for s in series] == ["prometheus", "node"]


def unrelated_range(path: Path, series: int, wanted_at: int) -> None:
    """A query_range file of `series` series of another metric in Prometheus' own layout, the one
    wanted series (tokens 0 then 60) after the first `wanted_at` of them."""
    with path.open("w") as out:
        out.write('{"status":"success","data":{"resultType":"matrix","result":[')
        for i in range(series):
            if i == wanted_at:
                out.write(
                    '{"metric":{"__name__":"%s","model_name":"m"},"values":[[1793491200,"0"],[1793491260,"60"]]},'
                    % TOKENS
                )
            out.write(
                '{"metric":{"__name__":"node_cpu_seconds_total","cpu":"%d"},"values":[[1793491200,"%d"],[1793491260,"%d"]]}%s'
                % (i, i, i + 1, "," if i < series - 1 else "")
            )
        out.write("]}}")


@pytest.mark.slow  # about 15 s: 60 MB generated, then read in a subprocess
def test_a_large_query_range_of_unrelated_series_imports_in_bounded_memory(tmp_path):
    # 500,000 series of another metric (about 60 MB) around the one wanted. Read whole, the text
    # alone is 60 MB and decoding it twice that; read a block at a time, the reader's peak resident
    # set above what the process held before is a few MB whatever the file's size: under 40 MB.
    import subprocess
    import sys

    path = tmp_path / "range.json"
    unrelated_range(path, 500_000, 250_000)
    assert path.stat().st_size > 55_000_000
    script = (
        "import json, resource, sys\n"
        "from pathlib import Path\n"
        "import numpy, pandas\n"
        "from procure.io import query_range as qr\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "problems = []\n"
        f"series = qr.read_query_range(Path(sys.argv[1]), 'range', {{{TOKENS!r}}}, problems)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(json.dumps({'kib': after - before, 'problems': [str(p) for p in problems], 'series': [[s.name, "
        "list(map(float, s.values))] for s in series]}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=Path(__file__).parent.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["problems"] == [] and found["series"] == [[TOKENS, [0.0, 60.0]]]
    assert found["kib"] < 40 * 1024, found["kib"]  # ru_maxrss is in KiB on Linux


@pytest.mark.parametrize("block", [7, 64, 4096])
def test_a_query_range_read_in_any_block_size_gives_the_same_series_and_problems(tmp_path, monkeypatch, block):
    # Blocks that cut every series, label and number: the same series (a duplicate, a series in
    # another key order, a NaN sample, one without __name__) and the same problems as in one read.
    result = [
        {
            "metric": {"__name__": "node_cpu_seconds_total", "cpu": "0"},
            "values": [[1793491200, "1"], [1793491260, "2"]],
        },
        tokens([[1793491200, "0"], [1793491260, "60"]]),
        {"values": [[1793491200, "5"]], "metric": {"__name__": TOKENS, "model_name": "n"}},
        tokens([[1793491200, "0"]]),
        tokens([[1793491200, "NaN"]], model_name="z"),
        {"metric": {"model_name": "z"}, "values": []},
    ]
    for indent in (None, 2):
        path = tmp_path / f"range-{indent}.json"
        path.write_text(
            json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}, indent=indent)
        )
        problems: list[Problem] = []
        monkeypatch.setattr(qr, "RANGE_BLOCK_BYTES", block)
        series = qr.read_query_range(path, "range", {TOKENS}, problems)
        shown = [(s.label("model_name"), list(s.times), [str(v) for v in s.values]) for s in series]
        assert shown == [
            ("m", [1793491200.0, 1793491260.0], ["0.0", "60.0"]),
            ("n", [1793491200.0], ["5.0"]),
            ("z", [1793491200.0], ["nan"]),
        ]
        assert [(p.field, p.message[:25]) for p in problems] == [
            ("data.result[3]", "duplicate series vllm:gen"),
            ("data.result[5].metric", "has no __name__: query th"),
        ]


def test_malformed_json_in_a_query_range_is_named_by_its_own_line(workspace_copy, tmp_path, monkeypatch):
    # One series per line; line 1 opens the list, so series 30,000 is line 30,001. Without its comma,
    # the next series, on line 30,002, is where a delimiter was expected (json.loads names that line
    # too); a key without ":" after the list, on line 40,004, is named there.
    monkeypatch.setattr(qr, "RANGE_BLOCK_BYTES", 4096)
    lines = ['{"status":"success","data":{"resultType":"matrix","result":[']
    lines += [
        '{"metric":{"__name__":"node_cpu_seconds_total","cpu":"%d"},"values":[[1793491200,"1"]]},' % i
        for i in range(40_000)
    ]
    lines[30_000] = lines[30_000].rstrip(",")
    path = tmp_path / "range.json"
    path.write_text("\n".join(lines) + "\n" + json.dumps(tokens([[1793491200, "0"]])) + "]}}")
    ws = workspace_copy("basic")
    import_refused(
        imported("actuals", "import", path, "--offer", "alpha", "-w", ws),
        f"{path}:30002: malformed JSON: Expecting ',' delimiter",
    )
    nothing_written(ws)
    lines[30_000] += ","
    path.write_text("\n".join(lines) + "\n" + json.dumps(tokens([[1793491200, "0"]])) + ']},\n\n"status" "x"}')
    import_refused(
        imported("actuals", "import", path, "--offer", "alpha", "-w", ws),
        f"{path}:40004: malformed JSON: Expecting ':' delimiter",
    )
    nothing_written(ws)


def test_a_query_range_whose_text_outside_the_result_is_too_long_is_refused(tmp_path, monkeypatch):
    # The reader holds what lies outside data.result whole: past its bound (16 MB; 1,000 characters
    # here) a file of 5,000 characters of warnings is refused, not read into memory.
    from procure.errors import InputError

    monkeypatch.setattr(qr, "MAX_ENVELOPE_CHARS", 1_000)
    monkeypatch.setattr(qr, "RANGE_BLOCK_BYTES", 256)
    path = tmp_path / "range.json"
    path.write_text(
        json.dumps(
            {
                "status": "success",
                "warnings": ["x" * 5_000],
                "data": {"resultType": "matrix", "result": [tokens([[1793491200, "0"]])]},
            }
        )
    )
    with pytest.raises(InputError) as caught:
        qr.read_query_range(path, "range.json", {TOKENS}, [])
    (problem,) = caught.value.problems
    assert problem.file == "range.json" and "over 1,000 characters before data.result" in problem.message


def test_forty_thousand_incidents_open_at_once_are_checked_in_one_sweep(tmp_path):
    # 40,000 rows all open together on distinct components: no overlap, and every row used to be
    # compared with every open one (over 10 minutes); one sweep takes a few seconds.
    from procure.io.incidents import read_incidents

    start = datetime(2026, 1, 1, tzinfo=UTC)
    path = tmp_path / "incidents.csv"
    rows = [
        f"{(start + timedelta(minutes=i)).isoformat()},{(start + timedelta(days=300)).isoformat()},major,c{i}"
        for i in range(40_000)
    ]
    path.write_text("start,end,impact,components\n" + "\n".join(rows) + "\n")
    began = time.perf_counter()
    assert len(read_incidents(path)) == 40_000
    assert time.perf_counter() - began < 60


def test_the_sweep_finds_the_overlaps_the_pairwise_check_found(tmp_path):
    from procure.errors import InputError
    from procure.io.incidents import read_incidents

    path = tmp_path / "incidents.csv"
    path.write_text(
        "start,end,impact,components\n"
        "2026-07-01T00:00:00Z,2026-07-01T05:00:00Z,major,api\n"  # line 2
        "2026-07-01T01:00:00Z,2026-07-01T02:00:00Z,major,web\n"  # 3: another component, no overlap
        "2026-07-01T03:00:00Z,2026-07-01T04:00:00Z,minor,API;db\n"  # 4: inside line 2 on api (any case)
        "2026-07-02T00:00:00Z,,critical,db\n"  # 5: open, never ends
        "2026-07-03T00:00:00Z,2026-07-03T01:00:00Z,major,\n"  # 6: whole service, inside the open line 5
        "2026-07-04T00:00:00Z,2026-07-04T01:00:00Z,major,web\n"  # 7: inside line 6? no, 6 ended; not db: fine
    )
    with pytest.raises(InputError) as caught:
        read_incidents(path)
    found = [(p.line, p.message) for p in caught.value.problems]
    assert found == [
        (4, "overlaps the incident on line 2 on a shared component: merge them into one row"),
        (6, "overlaps the incident on line 5 on a shared component: merge them into one row"),
    ]


def test_an_xlsx_cell_at_column_xfd_is_refused_before_openpyxl_fills_the_row(tmp_path):
    # One cell at XFD in each of 500 rows: openpyxl would first build 16,384 cells a row (8 M in all).
    import zipfile

    import openpyxl

    from procure.errors import InputError
    from procure.io.importers import read_sheet

    book = openpyxl.Workbook()
    book.active["A1"] = "id"
    base = tmp_path / "base.xlsx"
    book.save(base)
    rows = "".join(
        f'<row r="{i}"><c r="A{i}" t="inlineStr"><is><t>x</t></is></c><c r="XFD{i}"/></row>' for i in range(1, 501)
    )
    path = tmp_path / "wide.xlsx"
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            data = source.read(name)
            if name == "xl/worksheets/sheet1.xml":
                text = data.decode()
                data = (
                    text[: text.index("<sheetData>")]
                    + f"<sheetData>{rows}</sheetData>"
                    + text[text.index("</sheetData>") + len("</sheetData>") :]
                ).encode()
            target.writestr(name, data)
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            read_sheet(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    (problem,) = caught.value.problems
    assert problem.line == 1 and "too many columns" in problem.message
    assert peak < 20 * 1024 * 1024, peak


def test_an_xlsx_row_of_eight_million_empty_cells_is_refused_in_a_second(workspace_copy, tmp_path):
    # The attack: one row of 8,000,000 empty <c/> cells (32 MB of XML, within the 32 MB a part may
    # expand to), padded with 400 kB of random hex so that it compresses only about 150 times and
    # passes the zip-bomb ratio: a file of about 250 kB. Refused at the row's 501st cell, before openpyxl builds the
    # row: exit 2, file, row, cell and sheet named, nothing written.
    import os
    import zipfile

    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "offers"
    book.active["A1"] = "id"
    base = tmp_path / "base.xlsx"
    book.save(base)
    row = f'<row r="1" spans="{os.urandom(200_000).hex()}">' + "<c/>" * 8_000_000 + "</row>"
    path = tmp_path / "empty-cells.xlsx"
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            data = source.read(name)
            if name == "xl/worksheets/sheet1.xml":
                text = data.decode()
                data = (
                    text[: text.index("<sheetData>")]
                    + f"<sheetData>{row}</sheetData>"
                    + text[text.index("</sheetData>") + len("</sheetData>") :]
                ).encode()
            target.writestr(name, data)
    assert path.stat().st_size < 400_000
    ws = workspace_copy("basic")
    before = sorted(p.name for p in (ws / "offers").iterdir())
    started = time.perf_counter()
    tracemalloc.start()
    try:
        result = run("import", path, "-w", ws)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    seconds = time.perf_counter() - started
    assert_error(
        result, f"{path}:1: too many columns (over 500, at cell SG1 of sheet 'offers'"
    )  # SG: column 501 = 19 x 26 + 7
    assert sorted(p.name for p in (ws / "offers").iterdir()) == before
    assert seconds < 10 and peak < 20 * 1024 * 1024, (seconds, peak)  # openpyxl building the row: 8-12 s and 751 MB


def test_many_problems_print_the_first_hundred_and_the_count(workspace_copy, tmp_path):
    # 300 duplicate series in one snapshot are 300 problems: 100 lines, then how many more, then the count.
    ws = workspace_copy("basic")
    body = "".join(f'{TOKENS}{{model_name="m{i}"}} 1\n{TOKENS}{{model_name="m{i}"}} 2\n' for i in range(300))
    path = snapshot(tmp_path, "2026-11-01T00:00:00Z.prom", body)
    stderr = assert_error(
        run("actuals", "import", path, "--offer", "alpha", "-w", ws),
        "... and 200 more problems, not shown",
        "300 problems found; nothing was written.",
    )
    assert len(stderr.splitlines()) == 102
    nothing_written(ws)
