"""`procure actuals import --prometheus URL`: the range queries run against a real Prometheus server
(Debian's `prometheus` package, started here on 127.0.0.1, its storage backfilled with `promtool tsdb
create-blocks-from openmetrics`), and the figures equal the file import of the same samples. Expected
figures are worked out by hand in the comments."""

from __future__ import annotations

import http.server
import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procure.cli import app
from procure.io import prometheus_api
from procure.io.actuals import read_metrics_csv

runner = CliRunner()
START = datetime(2026, 9, 30, tzinfo=UTC).timestamp()  # two days of one-minute samples, across September's end
MINUTES = 2 * 24 * 60
RESET_AT = 720  # the server restarted at 2026-09-30 12:00: its counters count from zero


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def samples() -> dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[float, float]]]:
    """The series a vLLM server exports, one sample a minute: tokens +100 a minute (after the restart
    50 + 100 a minute from zero), 3 requests served a minute, 1 aborted an hour, and per minute 4 first
    tokens: 1 within 0.1 s, 2 more within 0.5 s and 1 within 1 s."""
    out: dict = {}

    def add(name: str, labels: dict[str, str], value) -> None:  # type: ignore[no-untyped-def]
        out[(name, tuple(sorted({"model_name": "m", **labels}.items())))] = [
            (START + 60 * i, float(value(i))) for i in range(MINUTES)
        ]

    add("vllm:generation_tokens_total", {}, lambda i: 100 * i if i < RESET_AT else 50 + 100 * (i - RESET_AT))
    add("vllm:request_success_total", {"finished_reason": "stop"}, lambda i: 3 * i)
    add("vllm:request_success_total", {"finished_reason": "abort"}, lambda i: i // 60)
    for le, per_minute in (("0.1", 1), ("0.5", 3), ("1.0", 4), ("+Inf", 4)):
        add("vllm:time_to_first_token_seconds_bucket", {"le": le}, lambda i, k=per_minute: k * i)
    return out


def openmetrics(data: dict) -> str:
    lines = []
    for (name, labels), values in data.items():
        inner = ",".join(f'{k}="{v}"' for k, v in labels)
        lines += [f"{name}{{{inner}}} {v:g} {t:.0f}" for t, v in values]
    return "\n".join(lines) + "\n# EOF\n"


def range_json(data: dict) -> str:
    result = [
        {"metric": {"__name__": name, **dict(labels)}, "values": [[t, f"{v:g}"] for t, v in values]}
        for (name, labels), values in data.items()
    ]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def prometheus_url(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A Prometheus server on 127.0.0.1 whose storage holds samples(), backfilled by promtool."""
    if not (shutil.which("prometheus") and shutil.which("promtool")):
        pytest.skip(
            "the prometheus and promtool commands are not installed (apt-get install prometheus; make install does it)"
        )
    folder = tmp_path_factory.mktemp("prometheus")
    (folder / "samples.om").write_text(openmetrics(samples()))
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(folder / "samples.om"), str(folder / "data")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (folder / "prometheus.yml").write_text("scrape_configs: []\n")
    port = free_port()
    log = open(folder / "prometheus.log", "wb")
    server = subprocess.Popen(
        [
            "prometheus",
            f"--config.file={folder / 'prometheus.yml'}",
            f"--storage.tsdb.path={folder / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--storage.tsdb.retention.time=100y",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("Prometheus did not start: " + (folder / "prometheus.log").read_text()[-2000:])
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.mark.slow
def test_the_live_import_equals_the_file_import_of_the_same_samples(
    prometheus_url, workspace_copy, tmp_path, monkeypatch
):
    monkeypatch.setattr(
        prometheus_api, "MAX_POINTS", 500
    )  # each month in several queries: their edges lose and repeat no sample
    live = workspace_copy("basic")
    result = run(
        "actuals",
        "import",
        "--prometheus",
        prometheus_url,
        "--since",
        "2026-09-30",
        "--until",
        "2026-10-02",
        "--offer",
        "alpha",
        "-w",
        live,
    )
    assert result.exit_code == 0, result.output
    assert "counter reset at 2026-09-30 12:00:00Z" in result.output
    filed = tmp_path / "filed"
    shutil.copytree(live.parent / "basic", filed, ignore=shutil.ignore_patterns("actuals"))
    (tmp_path / "range.json").write_text(range_json(samples()))
    assert run("actuals", "import", tmp_path / "range.json", "--offer", "alpha", "-w", filed).exit_code == 0

    def rows(ws: Path) -> list[str]:
        return [
            line
            for line in (ws / "actuals" / "alpha" / "metrics.csv").read_text().splitlines()
            if not line.startswith("#")
        ]

    assert rows(live) == rows(filed)
    months = read_metrics_csv(live / "actuals" / "alpha" / "metrics.csv", "metrics.csv", [])
    sep, oct_ = months["2026-09"], months["2026-10"]
    # a step (earlier, later] lies in its month, the one ending 2026-10-01 00:00 in September:
    # September has the 1,440 steps to 10-01 00:00, 1,439 adding 100 and the restart's 50: 143,950
    assert sep.output_tokens == 143_950
    # October the 1,439 steps from 10-01 00:00 to 10-01 23:59: 143,900
    assert oct_.output_tokens == 143_900
    # served 3 x 1,440 = 4,320 and 3 x 1,439 = 4,317; aborted once an hour: steps 60..1,440 are 24, 1,500..2,820 are 23
    assert (sep.requests_ok, sep.requests_failed, oct_.requests_ok, oct_.requests_failed) == (4320, 24, 4317, 23)
    # TTFT per minute 1 / 2 / 1 / 0 in the buckets: P50 rank 2 of 4 is half way through (0.1, 0.5]: 0.3;
    # P90 rank 3.6 is 0.6 through (0.5, 1.0]: 0.8; P99 rank 3.96: 0.5 + 0.5 x 0.96 = 0.98
    for month in (sep, oct_):
        assert month.ttft == {0.5: pytest.approx(0.3), 0.9: pytest.approx(0.8), 0.99: pytest.approx(0.98)}
    # covered: 1,440 one-minute steps of September's 30 days, 1,439 of October's 31
    assert sep.coverage == pytest.approx(1 / 30)
    assert oct_.coverage == pytest.approx(1439 * 60 / (31 * 86400))
    assert (sep.resets, oct_.resets) == (1, 0)


class _Stub(http.server.BaseHTTPRequestHandler):
    """A server that refuses (or answers what the test sets), and records the requests' headers."""

    status = 401
    body = b'{"status":"error","errorType":"unauthorized","error":"bad token"}'
    delay = 0.0
    seen: list[dict[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        type(self).seen.append(dict(self.headers))
        time.sleep(self.delay)
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet: the slow answer meets a client that gave up (the timeout test) and fails to write; socketserver
        would print that to standard error, which the next command's captured output then holds."""


@pytest.fixture
def stub():  # type: ignore[no-untyped-def]
    server = _Server(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Stub.seen = []
    yield server, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_refusing_server_is_one_line_with_its_url_and_status_and_nothing_is_written(stub, workspace_copy, tmp_path):
    server, url = stub
    ws = workspace_copy("basic")
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    result = run(
        "actuals",
        "import",
        "--prometheus",
        url,
        "--since",
        "2026-11-01",
        "--until",
        "2026-11-02",
        "--bearer-token-file",
        token,
        "--offer",
        "alpha",
        "-w",
        ws,
    )
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == f"{url}/api/v1/query_range: HTTP 401 Unauthorized: bad token"
    assert _Stub.seen[0]["Authorization"] == "Bearer s3cret-token"  # the file's token, its line break dropped
    assert "s3cret" not in result.output
    assert not (ws / "actuals").exists()


def test_an_unreachable_server_and_a_wrong_answer_name_the_url(stub, workspace_copy, tmp_path, monkeypatch):
    server, url = stub
    ws = workspace_copy("basic")
    closed = f"http://127.0.0.1:{free_port()}"
    result = run(
        "actuals",
        "import",
        "--prometheus",
        closed,
        "--since",
        "2026-11-01",
        "--until",
        "2026-11-02",
        "--offer",
        "alpha",
        "-w",
        ws,
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.startswith(f"{closed}/api/v1/query_range: no HTTP status: cannot connect")
    monkeypatch.setattr(_Stub, "status", 200)
    monkeypatch.setattr(_Stub, "body", b'{"status":"success","data":{"resultType":"vector","result":[]}}')
    wrong = run(
        "actuals",
        "import",
        "--prometheus",
        url,
        "--since",
        "2026-11-01",
        "--until",
        "2026-11-02",
        "--offer",
        "alpha",
        "-w",
        ws,
    )
    assert wrong.exit_code == 2
    assert f"{url}/api/v1/query_range?query=" in wrong.output and 'data.resultType: must be "matrix"' in wrong.output
    monkeypatch.setattr(_Stub, "body", b'{"status":"success","data":{"resultType":"matrix","result":[]}}')
    empty = run(
        "actuals",
        "import",
        "--prometheus",
        url,
        "--since",
        "2026-11-01",
        "--until",
        "2026-11-02",
        "--offer",
        "alpha",
        "-w",
        ws,
    )
    assert (
        empty.exit_code == 2
        and empty.output.startswith(f"{url}/api/v1/query_range?query=")
        and "no samples of" in empty.output
    )
    assert (
        "procure-prometheus-" not in empty.output and ".json" not in empty.output
    )  # the temporary files are not shown
    assert not (ws / "actuals").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--prometheus", "prom.example:9090", "--since", "2026-11-01"], "--prometheus: must be the server's address"),
        (["--prometheus", "http://127.0.0.1:1"], "--since: with --prometheus, the first day to read"),
        (["--since", "2026-11-01"], "--since: reads a Prometheus server: give --prometheus URL"),
        (
            ["--prometheus", "http://127.0.0.1:1", "--since", "2026-11-02", "--until", "2026-11-01"],
            "--until: must be after --since (2026-11-02)",
        ),
        (
            ["--prometheus", "http://127.0.0.1:1", "--since", "2026-11-01", "--bearer-token-file", "no-such-token"],
            "no-such-token: cannot read file",
        ),
    ],
)
def test_wrong_options_are_named(workspace_copy, args, message):
    ws = workspace_copy("basic")
    result = run("actuals", "import", *args, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_the_queries_cover_each_month_in_pieces_on_the_steps(tmp_path, monkeypatch):
    monkeypatch.setattr(prometheus_api, "MAX_POINTS", 1000)
    until = datetime(2026, 10, 2, tzinfo=UTC)
    queries = prometheus_api.plan_queries(
        "http://p:9090", ["a_total", "b_bucket"], datetime(2026, 9, 30).date(), until, 60, tmp_path
    )
    from urllib.parse import parse_qs, urlsplit

    spans = [(int(q["start"][0]), int(q["end"][0])) for q in (parse_qs(urlsplit(x.url).query) for x in queries)]
    # 1,440 steps in September's last day: 1,000 + 440; October's first day the same
    assert [(e - s) // 60 + 1 for s, e in spans] == [1000, 440, 1000, 440]
    assert spans[0][0] == START and spans[-1][1] == until.timestamp() - 60
    assert all(b[0] == a[1] + 60 for a, b in zip(spans, spans[1:]))  # no step lost or read twice
    assert [q.month for q in queries] == ["2026-09", "2026-09", "2026-10", "2026-10"]
    assert parse_qs(urlsplit(queries[0].url).query)["query"] == ['{__name__=~"a_total|b_bucket"}']


def test_a_slow_server_times_out_and_an_unverified_certificate_is_refused(stub, workspace_copy, tmp_path, monkeypatch):
    server, url = stub
    ws = workspace_copy("basic")
    monkeypatch.setattr(_Stub, "delay", 2.0)
    slow = run(
        "actuals",
        "import",
        "--prometheus",
        url,
        "--since",
        "2026-11-01",
        "--until",
        "2026-11-02",
        "--timeout",
        "0.3",
        "--offer",
        "alpha",
        "-w",
        ws,
    )
    assert (
        slow.exit_code == 2
        and slow.output.splitlines()[0]
        == f"{url}/api/v1/query_range: no HTTP status: no answer within 0.3 s (--timeout)"
    )
    monkeypatch.setattr(_Stub, "delay", 0.0)
    _Stub.seen = []
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed: no self-signed certificate to refuse")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(tmp_path / "key.pem"),
            "-out",
            str(tmp_path / "cert.pem"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    tls = _Server(("127.0.0.1", 0), _Stub)
    tls.socket = context.wrap_socket(tls.socket, server_side=True)
    threading.Thread(target=tls.serve_forever, daemon=True).start()
    try:
        address = f"https://127.0.0.1:{tls.server_address[1]}"
        refused = run(
            "actuals",
            "import",
            "--prometheus",
            address,
            "--since",
            "2026-11-01",
            "--until",
            "2026-11-02",
            "--offer",
            "alpha",
            "-w",
            ws,
        )
        assert refused.exit_code == 2
        assert refused.output.startswith(f"{address}/api/v1/query_range: no HTTP status: TLS certificate not verified")
        assert _Stub.seen == []  # nothing was asked of a server whose certificate failed
    finally:
        tls.shutdown()
        tls.server_close()
    assert not (ws / "actuals").exists()
