"""Serving metrics read live from a Prometheus server: the range queries whose answers `actuals import` reads.

The server's HTTP API (prometheus.io/docs/prometheus/latest/querying/api, "Range queries"):
`GET /api/v1/query_range?query=...&start=...&end=...&step=...` answers `{"status": "success", "data":
{"resultType": "matrix", "result": [...]}}`, the layout procure/io/telemetry.py reads from a file. One
query asks for the raw series procure reads (the counters and the histograms' `_bucket` series, by
`{__name__=~"..."}`, so that every series keeps its name), month by month from --since, each month in
pieces of at most MAX_POINTS steps: Prometheus refuses a query of more than 11,000 points per series
("exceeded maximum resolution of 11,000 points per timeseries", prometheus/prometheus web/api/v1/api.go).

At each step Prometheus answers the latest sample at or before it (within its lookback of 5 minutes),
so with the step equal to the scrape interval and the steps on the scrape times the answers are the
scraped samples; a coarser step reads fewer of them (a counter's increase is the same unless it was
reset between two steps; the coverage and gaps are those of the steps).

Each answer is streamed as received to a temporary file and read by the file import's own reader, so the
statistics and the errors are the same; a problem in one names the query's URL. The connection: HTTPS
certificates verified (the system's CAs, or SSL_CERT_FILE), a bearer token read from a file sent in
`Authorization`, redirects refused (the token goes to the named server only). One deadline (--timeout)
bounds the whole download, every connection, header and read of every answer, and one size limit
(MAX_TOTAL_BYTES) all the answers together. A server that cannot be reached, answers other than 200 or
answers something that is not HTTP (a bad status line, too many or too long headers, a broken chunk) is one
line naming the URL, exit 2, and nothing is written; the temporary files go on every way out, a SIGTERM or
SIGHUP included.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from procure.errors import InputError, Problem

MAX_POINTS = 10_000  # steps per query: below Prometheus' limit of 11,000 points per series
MAX_ANSWER_BYTES = 500 * 1024 * 1024  # as a query_range file (procure/io/telemetry.py)
MAX_TOTAL_BYTES = MAX_ANSWER_BYTES  # every answer of one import together
MAX_TOKEN_BYTES = 64 * 1024
MAX_TIMEOUT_S = 86_400.0  # a day: a longer --timeout is a typo (1e308, inf)
MAX_STEP_S = 31 * 86_400  # a month: every query reads at least one step


@dataclass(frozen=True)
class Query:
    """One range query: its URL (shown in messages) and the file its answer is saved to."""

    url: str
    path: Path
    month: str


def _option(option: str, message: str) -> InputError:
    return InputError([Problem(option, None, "", message)])


def base_url(raw: str) -> str:
    """The server's address, http(s)://host[:port][/prefix], without a trailing slash."""
    at = next((i for i, c in enumerate(raw.strip()) if ord(c) <= 32 or ord(c) >= 127), None)
    if at is not None:
        raise _option(
            "--prometheus",
            f"holds U+{ord(raw.strip()[at]):04X} at character {at + 1}: an address is printable ASCII without spaces "
            "(percent-encode anything else)",
        )
    try:
        parts = urlsplit(raw.strip())
        parts.port  # noqa: B018  (raises ValueError for a port out of range or not a number)
    except ValueError as exc:
        raise _option("--prometheus", f"is not an address ({exc}): like https://prometheus.example:9090") from None
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise InputError(
            [
                Problem(
                    "--prometheus",
                    None,
                    "",
                    f"must be the server's address, like https://prometheus.example:9090 (got {raw[:80]!r})",
                )
            ]
        )
    return raw.strip().rstrip("/")


def read_token(path: Path | None) -> str | None:
    """The bearer token, the file's text without surrounding white space (never echoed)."""
    if path is None:
        return None
    from procure.io.yamlsafe import read_text

    token = read_text(Path(path), str(path), MAX_TOKEN_BYTES).strip()
    if not token or any(not 33 <= ord(c) <= 126 for c in token):  # RFC 6750: a token is ASCII
        raise InputError(
            [Problem(str(path), None, "", "must hold one bearer token: printable ASCII characters without spaces")]
        )
    return token


def selector(names: list[str]) -> str:
    """`{__name__=~"a|b"}`: the raw series by name (a PromQL regular expression, anchored, RE2 syntax)."""
    return '{__name__=~"' + "|".join(re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\\\1", n) for n in sorted(set(names))) + '"}'


def plan_queries(url: str, names: list[str], since: date, until: datetime, step_s: int, folder: Path) -> list[Query]:
    """The range queries month by month from `since` (00:00 UTC) to `until` (not included), each of at
    most MAX_POINTS steps on multiples of the step (so that the steps fall on the scrape times)."""
    from procure.io.telemetry import month_of, month_starts

    start = datetime(since.year, since.month, since.day, tzinfo=UTC).timestamp()
    end = until.timestamp()
    if end <= start:
        raise InputError([Problem("--until", None, "", f"must be after --since ({since.isoformat()})")])
    edges = [max(start, min(end, e)) for e in month_starts(start, end - 1)]
    query = selector(names)
    out: list[Query] = []
    for low, high in zip(edges, edges[1:]):
        first = -(-low // step_s) * step_s  # the first multiple of the step in [low, high)
        while first < high:
            last = min(first + (MAX_POINTS - 1) * step_s, high - 1)
            last -= (last - first) % step_s
            params = urlencode({"query": query, "start": f"{first:.0f}", "end": f"{last:.0f}", "step": f"{step_s}s"})
            month = month_of(first)
            out.append(
                Query(
                    f"{url}/api/v1/query_range?{params}",
                    folder / f"{urlsplit(url).netloc.replace(':', '-')} {month} {len(out) + 1:03d}.json",
                    month,
                )
            )
            first = last + step_s
    return out


class Budget:
    """What the whole download may still take: the time to its deadline and the bytes to its size limit."""

    def __init__(self, timeout_s: float, total_bytes: int | None = None) -> None:
        import time

        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.total_bytes = MAX_TOTAL_BYTES if total_bytes is None else total_bytes
        self.left_bytes = self.total_bytes

    def seconds(self) -> float:
        """The time left; TimeoutError when none is."""
        import time

        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return left

    def take(self, size: int) -> None:
        self.left_bytes -= size
        if self.left_bytes < 0:
            raise _TooLarge


class _TooLarge(Exception):
    pass


def _connection(query: Query, budget: Budget):  # type: ignore[no-untyped-def]
    import http.client
    import ssl

    parts = urlsplit(query.url)
    if parts.scheme == "https":
        return http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=budget.seconds(), context=ssl.create_default_context()
        )
    return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=budget.seconds())


def _http_problem(exc: BaseException) -> str:
    """An answer that is not valid HTTP, in words."""
    import http.client

    if isinstance(exc, http.client.LineTooLong):
        return "the answer is not valid HTTP: a status or header line longer than 65,536 bytes"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without an answer"
    if isinstance(exc, http.client.BadStatusLine):
        return "the answer is not HTTP: its first line is not an HTTP status line"
    if isinstance(exc, http.client.IncompleteRead):
        return "the answer broke off before its end (a broken chunk or a short body)"
    if "headers" in str(exc):
        return "the answer is not valid HTTP: more than 100 header lines"
    return f"the answer is not valid HTTP ({str(exc)[:100]})"


def fetch(query: Query, token: str | None, budget: Budget | float) -> None:
    """Stream one answer to query.path within the download's budget; an unreachable, refusing or broken server is
    one located line."""
    import http.client
    import ssl

    if not isinstance(budget, Budget):
        budget = Budget(float(budget))
    shown = query.url.split("?")[0]
    parts = urlsplit(query.url)
    target = parts.path + ("?" + parts.query if parts.query else "")
    headers = {"Accept": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    status = None
    connection = None
    watchdog = None
    expired = threading.Event()

    def refused(why: str) -> InputError:
        return InputError([Problem(shown, None, "", why)])

    try:
        connection = _connection(query, budget)
        connection.request("GET", target, headers=headers)
        # a server that trickles its status and headers a byte at a time never lets one read time out: at the
        # deadline the socket is shut, whatever is being read
        watchdog = threading.Timer(budget.seconds(), _expire, (connection, expired))
        watchdog.daemon = True
        watchdog.start()
        if connection.sock is not None:
            connection.sock.settimeout(budget.seconds())
        answer = connection.getresponse()
        status = answer.status
        if status != 200:
            redirect = " (redirects are not followed)" if 300 <= status < 400 else ""
            raise refused(f"HTTP {status} {answer.reason}{redirect}{_server_error(answer)}")
        with open(query.path, "wb") as out:
            while True:
                if connection.sock is not None:
                    connection.sock.settimeout(budget.seconds())
                chunk = answer.read1(1 << 16)  # one read of the socket at most: each bounded by the time left
                if not chunk:
                    break
                budget.take(len(chunk))
                out.write(chunk)
            if expired.is_set():
                raise TimeoutError
            if answer.length:  # the server closed before the Content-Length it announced
                raise http.client.IncompleteRead(b"", answer.length)
    except InputError:
        raise
    except _TooLarge:
        raise refused(
            f"the answers come to more than {budget.total_bytes:,} bytes in all: give a shorter range (--since, "
            "--until) or a coarser --step"
        ) from None
    except Exception as exc:
        if isinstance(exc, TimeoutError) or expired.is_set():
            why = "no answer" if status is None else "the answer was not complete"
            lead = "no HTTP status: " if status is None else ""
            raise refused(f"{lead}{why} within {budget.timeout_s:g} s (--timeout)") from None
        if isinstance(exc, ssl.SSLCertVerificationError):
            raise refused(f"no HTTP status: TLS certificate not verified ({exc.verify_message})") from None
        if isinstance(exc, ssl.SSLError):
            raise refused(f"no HTTP status: TLS failed ({exc.reason or exc})") from None
        if isinstance(exc, http.client.HTTPException):
            raise refused(_http_problem(exc)) from None
        if isinstance(exc, OSError):
            if status is None:
                raise refused(f"no HTTP status: cannot connect ({exc.strerror or exc})") from None
            raise refused(f"the answer broke off ({exc.strerror or exc})") from None
        raise
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if connection is not None:
            connection.close()


def _expire(connection: object, expired: threading.Event) -> None:
    """The deadline has passed: shut the connection's socket so that the read in progress ends now."""
    import socket

    expired.set()
    sock = getattr(connection, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _server_error(exc: object) -> str:
    """Prometheus' own reason for refusing ({"status": "error", "error": ...}), if the body gives one."""
    import json

    try:
        body = json.loads(exc.read(64 * 1024).decode("utf-8", "replace"))  # type: ignore[attr-defined]
        detail = body.get("error") if isinstance(body, dict) else None
    except (ValueError, OSError, AttributeError):
        detail = None
    return f": {str(detail)[:200]}" if detail else ""


def check_step(step_s: int, since: date, until: datetime) -> None:
    """Refuse a --step no one means, before any other rule on it is judged: outside 1 second to 31 days, or longer
    than the whole range (no step would fall in it)."""
    if not 1 <= step_s <= MAX_STEP_S:
        raise _option("--step", f"must be from 1 second to {MAX_STEP_S:,} (31 days) (got {step_s})")
    start = datetime(since.year, since.month, since.day, tzinfo=until.tzinfo)
    span = (until - start).total_seconds()
    if 0 < span < step_s:  # an empty or reversed range is --until's to name
        raise _option(
            "--step", f"no step of {step_s:,} s falls between --since and --until: give a step shorter than the range"
        )


def fetch_all(
    url: str,
    names: list[str],
    since: date,
    until: datetime,
    step_s: int,
    token_file: Path | None,
    timeout_s: float,
    folder: Path,
) -> list[Query]:
    """Run every query, each answer streamed to `folder`, all within one deadline (`timeout_s`) and one size limit;
    the first failure stops (nothing is read)."""
    import math

    if not 1 <= step_s <= MAX_STEP_S:
        raise _option("--step", f"must be from 1 second to {MAX_STEP_S:,} (31 days) (got {step_s})")
    if not (math.isfinite(timeout_s) and 0 < timeout_s <= MAX_TIMEOUT_S):
        raise _option("--timeout", f"must be more than 0 and at most {MAX_TIMEOUT_S:,.0f} seconds (got {timeout_s:g})")
    address = base_url(url)
    token = read_token(token_file)
    queries = plan_queries(address, names, since, until, step_s, folder)
    if not queries:
        raise _option(
            "--step", f"no step of {step_s:,} s falls between --since and --until: give a step shorter than the range"
        )
    budget = Budget(timeout_s)
    for query in queries:
        fetch(query, token, budget)
    return queries


def relabel_text(text: str, queries: list[Query]) -> str:
    """A note naming an answer's temporary file, naming the query instead."""
    for q in queries:
        text = text.replace(str(q.path), q.url).replace(q.path.name, q.url)
    return text


class Terminated(SystemExit):
    """A SIGTERM or SIGHUP during an import: unwinds (temporary files removed) and exits 128 + the signal."""


@contextlib.contextmanager
def unwound_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise Terminated, so that every `with` and `finally` on the way
    out runs (the temporary answers are removed) instead of the process ending where it stands."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise Terminated(128 + signum)

    before = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            before[number] = signal.signal(number, stop)
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def relabel(problems: list[Problem], queries: list[Query]) -> list[Problem]:
    """The file reader's problems, located at the query whose answer they are in instead of its
    temporary file (named by its full path, or by its name in a list of sources)."""
    out = []
    for p in problems:
        file = p.file
        for q in queries:
            file = file.replace(str(q.path), q.url).replace(q.path.name, q.url)
        out.append(Problem(file, p.line, p.field, p.message))
    return out
