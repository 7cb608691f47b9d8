"""`actuals import --prometheus URL` against servers that answer what no Prometheus does, and options no one
means: each one sentence naming the URL or the option, exit 2, nothing written, no temporary file left. The
servers run on 127.0.0.1 only, answer a bounded number of connections and stop by themselves."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from clihelp import run

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


class RawServer:
    """Answers each of at most `connections` connections with `answer` (bytes) after reading the request, then
    closes; gives up accepting after `lifetime` seconds."""

    def __init__(self, answer: bytes, connections: int = 3, lifetime: float = 20.0, hold: float = 0.0):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.answer, self.left, self.hold = answer, connections, hold
        self.stop_at = time.monotonic() + lifetime
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.left > 0 and time.monotonic() < self.stop_at:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.left -= 1
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(65536)
                    conn.sendall(self.answer)
                    end = time.monotonic() + self.hold
                    while time.monotonic() < min(end, self.stop_at):
                        time.sleep(0.05)
                except OSError:
                    pass
        self.sock.close()

    def close(self) -> None:
        self.left = 0
        self.thread.join(5)


@pytest.fixture
def ws(workspace_copy, tmp_path, monkeypatch):
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return workspace_copy("basic"), folder


def live(ws, url: str, *more: object):
    root, _ = ws
    args = ["actuals", "import", "--prometheus", url, "--since", "2026-11-01", "--until", "2026-11-02"]
    return run(*args, *more, "--offer", "alpha", "-w", root)


def assert_refused(result, ws, message: str) -> None:
    root, tmp = ws
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output and "internal error" not in result.output.lower()
    assert message in result.output, result.output
    assert not (root / "actuals").exists()
    assert list(tmp.iterdir()) == []  # no answer left behind


@pytest.mark.parametrize(
    "answer, message",
    [
        (
            HEAD + b"".join(b"X-%d: y\r\n" % i for i in range(150)) + b"\r\n{}",
            "the answer is not valid HTTP: more than 100 header lines",
        ),
        (
            HEAD + b"X-Long: " + b"y" * 70_000 + b"\r\n\r\n{}",
            "the answer is not valid HTTP: a status or header line longer than 65,536 bytes",
        ),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "the answer is not HTTP: its first line is not an HTTP status line"),
        (HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nbroken\r\n", "the answer broke off before its end"),
        (HEAD + b'Content-Length: 1000\r\n\r\n{"status":', "the answer broke off before its end"),
    ],
    ids=["101-headers", "64k-header", "not-http", "broken-chunk", "short-body"],
)
def test_an_answer_that_is_not_valid_http_is_one_line_naming_the_url(ws, answer, message):
    server = RawServer(answer)
    try:
        result = live(ws, server.url)
    finally:
        server.close()
    assert_refused(result, ws, f"{server.url}/api/v1/query_range: {message}")


def test_one_deadline_bounds_the_whole_answer_not_each_read(ws):
    # a server that sends a byte of its body every 0.2 s never leaves a read waiting 1 s: before, --timeout 1 bounded
    # each read and the answer took as long as the server liked
    body = b'{"status":"success","data":{"resultType":"matrix","result":[]}}' + b" " * 100

    class Trickle(RawServer):
        def _serve(self) -> None:
            while self.left > 0 and time.monotonic() < self.stop_at:
                try:
                    conn, _ = self.sock.accept()
                except (TimeoutError, OSError):
                    continue
                self.left -= 1
                with conn:
                    try:
                        conn.recv(65536)
                        conn.sendall(HEAD + b"Content-Length: %d\r\n\r\n" % len(body))
                        for byte in body:
                            if time.monotonic() > self.stop_at:
                                break
                            conn.sendall(bytes([byte]))
                            time.sleep(0.2)
                    except OSError:
                        pass
            self.sock.close()

    server = Trickle(b"", connections=1, lifetime=10)
    started = time.monotonic()
    try:
        result = live(ws, server.url, "--timeout", "1")
    finally:
        server.close()
    assert time.monotonic() - started < 8
    assert_refused(result, ws, f"{server.url}/api/v1/query_range: the answer was not complete within 1 s (--timeout)")


def test_the_answers_together_are_held_to_one_size_limit(ws, monkeypatch):
    from procure.io import prometheus_api

    monkeypatch.setattr(prometheus_api, "MAX_TOTAL_BYTES", 1000)
    server = RawServer(HEAD + b"Content-Length: 5000\r\n\r\n" + b" " * 5000)
    try:
        result = live(ws, server.url)
    finally:
        server.close()
    assert_refused(result, ws, "the answers come to more than 1,000 bytes in all: give a shorter range")


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--timeout", "inf", "--timeout: must be more than 0 and at most 86,400 seconds (got inf)"),
        ("--timeout", "1e308", "--timeout: must be more than 0 and at most 86,400 seconds (got 1e+308)"),
        ("--timeout", "nan", "--timeout: must be more than 0 and at most 86,400 seconds (got nan)"),
        ("--step", "99999999999", "--step: must be from 1 second to 2,678,400 (31 days) (got 99999999999)"),
    ],
)
def test_options_no_one_means_are_named(ws, option, value, message):
    assert_refused(live(ws, "http://127.0.0.1:1", option, value), ws, message)


def test_a_step_longer_than_the_range_reads_nothing_and_says_so(ws):
    result = live(ws, "http://127.0.0.1:1", "--step", "2000000")
    assert_refused(result, ws, "--step: no step of 2,000,000 s falls between --since and --until")


@pytest.mark.parametrize(
    "url, message",
    [
        ("http://[::1", "--prometheus: is not an address (Invalid IPv6 URL)"),
        ("http://127.0.0.1:1/\x07x", "--prometheus: holds U+0007 at character 20"),
        ("http://127.0.0.1:99999", "--prometheus: is not an address (Port out of range 0-65535)"),
    ],
    ids=["ipv6", "control", "port"],
)
def test_an_address_that_is_not_one_is_named(ws, url, message):
    assert_refused(live(ws, url), ws, message)


def test_a_token_with_a_character_http_cannot_send_is_refused(ws, tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cr\u00e9t-\u20ac\n", encoding="utf-8")
    result = live(ws, "http://127.0.0.1:1", "--bearer-token-file", token)
    assert_refused(result, ws, f"{token}: must hold one bearer token: printable ASCII characters without spaces")
    assert "s3cr" not in result.output


def test_sigterm_during_the_download_leaves_no_temporary_file(ws, tmp_path):
    # the first answer is kept in TMPDIR, the second never ends: SIGTERM then unwinds and removes the folder
    root, tmp = ws
    body = b'{"status":"success","data":{"resultType":"matrix","result":[]}}'
    first = HEAD + b"Content-Length: %d\r\n\r\n" % len(body) + body
    server = RawServer(first, connections=1, lifetime=30)
    stall = RawServer(HEAD + b"Content-Length: 100\r\n\r\n{", connections=1, lifetime=30, hold=30)
    script = (
        "import sys\n"
        "from procure.io import prometheus_api as p\n"
        "real = p.fetch\n"
        "def fetch(query, token, budget):\n"
        f"    url = {stall.url!r} if query.path.name.endswith('002.json') else {server.url!r}\n"
        "    real(p.Query(url + query.url[query.url.index('/api'):], query.path, query.month), token, budget)\n"
        "    print('fetched', flush=True)\n"
        "p.fetch = fetch\n"
        "from procure.cli import main\n"
        "sys.argv = ['procure'] + sys.argv[1:]\n"
        "main()\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp)}
    # two days: two queries with MAX_POINTS steps of 60 s is 1 query a day at --step 9 (9,600 steps a day)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            script,
            "actuals",
            "import",
            "--prometheus",
            server.url,
            "--since",
            "2026-11-01",
            "--until",
            "2026-11-03",
            "--step",
            "9",
            "--timeout",
            "60",
            "--offer",
            "alpha",
            "-w",
            str(root),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "fetched"
        deadline = time.monotonic() + 10
        while not list(tmp.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp.iterdir())  # the first answer is on disk, the second being read
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        server.close()
        stall.close()
    assert proc.returncode == 128 + signal.SIGTERM
    assert list(tmp.iterdir()) == []
    assert not (root / "actuals").exists()
