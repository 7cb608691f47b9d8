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

Each answer is saved as received to a temporary file and read by the file import's own reader, so the
statistics and the errors are the same; a problem in one names the query's URL. The connection: HTTPS
certificates verified (the system's CAs, or SSL_CERT_FILE), a bearer token read from a file sent in
`Authorization`, a time-out per request, redirects refused (the token goes to the named server only).
A server that cannot be reached or answers other than 200 is one line naming the URL and the status,
and nothing is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from procure.errors import InputError, Problem

MAX_POINTS = 10_000  # steps per query: below Prometheus' limit of 11,000 points per series
MAX_ANSWER_BYTES = 500 * 1024 * 1024  # as a query_range file (procure/io/telemetry.py)
MAX_TOKEN_BYTES = 64 * 1024


@dataclass(frozen=True)
class Query:
    """One range query: its URL (shown in messages) and the file its answer is saved to."""

    url: str
    path: Path
    month: str


def base_url(raw: str) -> str:
    """The server's address, http(s)://host[:port][/prefix], without a trailing slash."""
    parts = urlsplit(raw.strip())
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
    if not token or any(c.isspace() or ord(c) < 33 or ord(c) == 127 for c in token):
        raise InputError(
            [Problem(str(path), None, "", "must hold one bearer token: printable characters without spaces")]
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


class _NoRedirect:
    """urllib's redirect handler, refusing: the bearer token must not follow a redirect to another server."""

    @staticmethod
    def handler():  # type: ignore[no-untyped-def]
        import urllib.request

        class Refuse(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
                return None  # urllib then raises the 3xx as an HTTPError

        return Refuse()


def fetch(query: Query, token: str | None, timeout_s: float) -> None:
    """Save one answer to query.path; an unreachable or refusing server is one located line."""
    import socket
    import ssl
    import urllib.error
    import urllib.request

    shown = query.url.split("?")[0]
    request = urllib.request.Request(
        query.url, headers={"Accept": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    )
    opener = urllib.request.build_opener(
        urllib.request.HTTPSHandler(context=ssl.create_default_context()), _NoRedirect.handler()
    )
    try:
        with opener.open(request, timeout=timeout_s) as answer, open(query.path, "wb") as out:
            size = 0
            while chunk := answer.read(1 << 20):
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise InputError(
                        [
                            Problem(
                                shown,
                                None,
                                "",
                                f"answer larger than {MAX_ANSWER_BYTES:,} bytes: give a shorter range or a coarser "
                                "--step",
                            )
                        ]
                    )
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise InputError([Problem(shown, None, "", f"HTTP {exc.code} {exc.reason}{_server_error(exc)}")]) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ssl.SSLCertVerificationError):
            why = f"TLS certificate not verified ({reason.verify_message})"
        elif isinstance(reason, (socket.timeout, TimeoutError)):
            why = f"no answer within {timeout_s:g} s"
        else:
            why = f"cannot connect ({getattr(reason, 'strerror', None) or reason})"
        raise InputError([Problem(shown, None, "", f"no HTTP status: {why}")]) from None
    except TimeoutError:
        raise InputError([Problem(shown, None, "", f"no HTTP status: no answer within {timeout_s:g} s")]) from None
    except OSError as exc:
        raise InputError([Problem(shown, None, "", f"no HTTP status: {exc.strerror or exc}")]) from None


def _server_error(exc: object) -> str:
    """Prometheus' own reason for refusing ({"status": "error", "error": ...}), if the body gives one."""
    import json

    try:
        body = json.loads(exc.read(64 * 1024).decode("utf-8", "replace"))  # type: ignore[attr-defined]
        detail = body.get("error") if isinstance(body, dict) else None
    except (ValueError, OSError, AttributeError):
        detail = None
    return f": {str(detail)[:200]}" if detail else ""


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
    """Run every query, each answer saved in `folder`; the first failure stops (nothing is read)."""
    if step_s < 1:
        raise InputError([Problem("--step", None, "", f"must be at least 1 second (got {step_s})")])
    if timeout_s <= 0:
        raise InputError([Problem("--timeout", None, "", f"must be more than 0 seconds (got {timeout_s:g})")])
    token = read_token(token_file)
    queries = plan_queries(base_url(url), names, since, until, step_s, folder)
    for query in queries:
        fetch(query, token, timeout_s)
    return queries


def relabel_text(text: str, queries: list[Query]) -> str:
    """A note naming an answer's temporary file, naming the query instead."""
    for q in queries:
        text = text.replace(str(q.path), q.url).replace(q.path.name, q.url)
    return text


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
