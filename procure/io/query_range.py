"""Prometheus HTTP API range queries (`GET /api/v1/query_range`, prometheus.io/docs/prometheus/latest/querying/api,
"Range queries"): `{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"__name__": ...,
labels}, "values": [[unix_seconds, "value"], ...]}]}}`, into the Series of procure/io/telemetry.py.

The file is read a block at a time and its result walked one series at a time, another metric's samples never
built and what was walked dropped (memory: a block, the response outside data.result, up to MAX_ENVELOPE_CHARS,
and one series): time and memory follow the wanted series, not the file (benchmarks/bench_readers.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem
from procure.io.telemetry import (
    EARLIEST_S,
    LATEST_S,
    MAX_METRICS_BYTES,
    TIME_RANGE,
    Series,
    _base,
    _key,
    month_of,
    month_starts,
)


def read_query_range(
    path: Path, display: str, wanted: set[str], problems: list[Problem], partial: dict[str, list[str]] | None = None
) -> list[Series]:
    """The series of a query_range response whose base metric is one of `wanted` (a histogram's
    `_bucket` series count for the histogram's name). A success that carries `warnings` or `infos` (the
    API's answer may be incomplete, or its query questionable: prometheus.io/docs/prometheus/latest/querying/api,
    "Format overview"; Thanos and Mimir say so of a partial response) fills `partial`: each month its series
    span -> the texts, "file: warning: ...". The file is read a block at a time
    (`_Window`) and the result list walked one series at a time (`_walk_result`): a series of
    another metric is stepped over without building its samples, and what was walked is dropped, so
    the memory is a block, the response's envelope and the largest single series, whatever the file
    holds; the time is one pass over its text."""
    from procure.io.yamlsafe import parse_json

    found: list[Problem] = []  # the series' problems, stated once the envelope is known good
    with _Window(path, display) as window:
        head = window.until(RESULT_START)
        if head is None:  # no result list: the whole (small) text is parsed, and what is wrong named
            skeleton, out = window.text, None
        else:
            out, lines = _walk_result(window, display, wanted, found)
            # the list's lines are kept as newlines, so that a problem after it is named by its line
            skeleton = head + "\n" * lines + "]" + window.rest()
    data = parse_json(skeleton, display)
    if not isinstance(data, dict) or data.get("status") != "success" or not isinstance(data.get("data"), dict):
        status = data.get("status") if isinstance(data, dict) else None
        raise InputError(
            [
                Problem(
                    display,
                    None,
                    "status",
                    f'a Prometheus query_range response has "status": "success" and "data" (got {status!r})',
                )
            ]
        )
    body = data["data"]
    if body.get("resultType") != "matrix":
        raise InputError(
            [
                Problem(
                    display,
                    None,
                    "data.resultType",
                    f'must be "matrix", the result of a range query (got {body.get("resultType")!r})',
                )
            ]
        )
    if out is None:
        result = body.get("result")
        if not isinstance(result, list):
            raise InputError([Problem(display, None, "data.result", "must be a list of series")])
        out = _kept_series(
            ((i, item) for i, item in enumerate(result) if _wanted_item(item, wanted)), display, found, {}
        )
    problems.extend(found)
    if partial is not None:
        said = [
            f"{display}: {kind[:-1]}: {str(text)[:300]}"
            for kind in ("warnings", "infos")
            for text in (data.get(kind) if isinstance(data.get(kind), list) else [data.get(kind)])
            if text not in (None, "")
        ]
        spanned = [float(t) for x in out if len(x.times) for t in (x.times[0], x.times[-1])]
        if said and spanned:
            for start in month_starts(min(spanned), max(spanned))[:-1]:
                partial.setdefault(month_of(start), []).extend(said)
    return out


RESULT_START = re.compile(r'"result"\s*:\s*\[')


RANGE_BLOCK_BYTES = 1024 * 1024  # a query_range file is read this much at a time


MAX_ENVELOPE_CHARS = 16 * 1024 * 1024  # what a response holds outside data.result (status, warnings)


def _kept_series(
    items: Iterable[tuple[int, Any]], display: str, problems: list[Problem], seen: dict[tuple, str]
) -> list[Series]:
    """The series of wanted result items (index, item), each checked (`_range_series`), a series
    seen twice named."""
    out: list[Series] = []
    for index, item in items:
        series = _range_series(item, f"data.result[{index}]", display, problems)
        if series is None:
            continue
        key = (series.name, series.labels)
        if key in seen:
            problems.append(
                Problem(display, None, f"data.result[{index}]", f"duplicate series {series.show()} (also {seen[key]})")
            )
            continue
        seen[key] = f"data.result[{index}]"
        out.append(series)
    return out


def _wanted_item(item: Any, wanted: set[str]) -> bool:
    """A series to read: anything that is not a series of another metric (malformed items are kept,
    to be named)."""
    metric = item.get("metric") if isinstance(item, dict) else None
    name = metric.get("__name__") if isinstance(metric, dict) else None
    return not isinstance(name, str) or _base(name) in wanted


class _Window:
    """The text of a UTF-8 file read a block at a time: `text` is the part not yet dropped,
    `lines` the newlines dropped before it (for a problem's line), `done` whether the file is read
    to its end. A NUL byte or invalid UTF-8 is named by its line, as `yamlsafe.read_text` does."""

    def __init__(self, path: Path, display: str) -> None:
        self.path, self.display = path, display
        self.text, self.lines, self.done = "", 0, False
        self._bytes_lines = self._read = 0

    def __enter__(self) -> _Window:
        import codecs
        import os
        import stat

        from procure.io.yamlsafe import regular_file

        regular_file(self.path, self.display, MAX_METRICS_BYTES)
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a file swapped for a pipe never hangs
            self._handle = os.fdopen(fd, "rb")
        except OSError as exc:
            raise InputError([Problem(self.display, None, "", f"cannot read file: {exc.strerror or exc}")]) from None
        if not stat.S_ISREG(os.fstat(self._handle.fileno()).st_mode):
            self._handle.close()
            raise InputError([Problem(self.display, None, "", "not a regular file (a pipe or a device): refused")])
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        return self

    def __exit__(self, *_: Any) -> None:
        self._handle.close()

    def more(self, at_least: int = 0) -> bool:
        """Read on (a block, or `at_least` bytes if more); False at the end of the file."""
        if self.done:
            return False
        try:
            raw = self._handle.read(max(RANGE_BLOCK_BYTES, at_least))
        except OSError as exc:
            raise InputError([Problem(self.display, None, "", f"cannot read file: {exc.strerror or exc}")]) from None
        self._read += len(raw)
        if self._read > MAX_METRICS_BYTES:  # the file grew since it was checked
            raise InputError(
                [Problem(self.display, None, "", f"file is too large (limit {MAX_METRICS_BYTES:,} bytes)")]
            )
        nul = raw.find(b"\x00")
        if nul >= 0:
            raise InputError(
                [
                    Problem(
                        self.display,
                        self._bytes_lines + raw[:nul].count(b"\n") + 1,
                        "",
                        "binary file: expected UTF-8 text",
                    )
                ]
            )
        pending = len(self._decoder.getstate()[0])  # bytes of a character cut by the last block
        try:
            self.text += self._decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            raise InputError(
                [
                    Problem(
                        self.display,
                        self._bytes_lines + raw[: max(exc.start - pending, 0)].count(b"\n") + 1,
                        "",
                        "not valid UTF-8 text",
                    )
                ]
            ) from None
        self._bytes_lines += raw.count(b"\n")
        self.done = not raw
        return True

    def drop(self, position: int) -> None:
        """Forget the text before `position` (positions then count from it)."""
        self.lines += self.text.count("\n", 0, position)
        self.text = self.text[position:]

    def until(self, pattern: re.Pattern[str]) -> str | None:
        """The text up to the end of `pattern`'s first match, dropped from the window; None (the
        whole file in `text`) when the file has none."""
        while True:
            found = pattern.search(self.text)
            if found is not None:
                head = self.text[: found.end()]
                self.drop(found.end())
                return head
            self._bounded("before data.result")
            if not self.more():
                return None

    def rest(self) -> str:
        """The text to the end of the file."""
        while self.more():
            self._bounded("after data.result")
        return self.text

    def _bounded(self, where: str) -> None:
        if len(self.text) > MAX_ENVELOPE_CHARS:
            raise InputError(
                [
                    Problem(
                        self.display,
                        None,
                        "",
                        f"a query_range response holds its series in data.result: over {MAX_ENVELOPE_CHARS:,} "
                        f"characters {where}: refused",
                    )
                ]
            )

    def located(self, message: str, position: int) -> InputError:
        return InputError(
            [
                Problem(
                    self.display, self.lines + self.text.count("\n", 0, position) + 1, "", f"malformed JSON: {message}"
                )
            ]
        )


def _walk_result(window: _Window, display: str, wanted: set[str], problems: list[Problem]) -> tuple[list[Series], int]:
    """The wanted series of the result list that `window` starts in (just after its "["), and the
    newlines the list spans; the window is left just after the list's "]". Prometheus writes each
    series as {"metric": {...}, "values": [[t, "v"], ...]}: one regular expression steps over a
    series in that layout (`_plain_item`), its name read from the metric's text, and only a wanted
    series is decoded (its values in one call, `_numeric_pairs`); an item in any other layout is
    decoded on its own. An item cut by the window's end is read on (doubling what is read, so a
    long series costs linear time); at the file's end it is malformed JSON, named by its line."""
    import json

    decoder = json.JSONDecoder()
    out: list[Series] = []
    seen: dict[tuple, str] = {}
    others: set[str] = set()  # names known to be of other metrics
    lines_before = window.lines
    position, index = 0, 0
    while True:
        if len(window.text) - position < RANGE_BLOCK_BYTES and not window.done:
            window.drop(position)
            position = 0
            window.more()
            continue
        text = window.text
        position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
        if index == 0 and text.startswith("]", position):
            window.drop(position + 1)
            return out, window.lines - lines_before
        skipped, after, last = _skip_others(text, position, wanted, others)
        if skipped:
            index += skipped
            if last:
                window.drop(after)
                return out, window.lines - lines_before
            position = after
            continue
        try:
            step = _result_item(text, position, decoder, wanted, window.done)
        except json.JSONDecodeError as exc:
            cut = exc.pos >= len(text) - 16 or exc.msg.startswith("Unterminated string")
            if cut and not window.done:  # the item goes on past the window's end: read on
                window.drop(position)
                position = 0
                window.more(len(window.text))
                continue
            raise window.located(exc.msg, exc.pos) from None
        except RecursionError:
            raise InputError([Problem(display, None, "", "malformed JSON: nested too deeply")]) from None
        if step is None:  # the item ends where the window does: read on
            window.drop(position)
            position = 0
            if not window.more(len(window.text)):
                raise window.located("Expecting ',' delimiter", len(window.text))
            continue
        item, end, last = step
        if item is not None:
            out += _kept_series([(index, item)], display, problems, seen)
        index += 1
        if last:
            window.drop(end)
            return out, window.lines - lines_before
        position = end


# A whole series of Prometheus' layout, as `_plain_item` reads it (values up to the first "]]",
# without braces), and the comma or the list's "]" after it.
_PLAIN_WHOLE = re.compile(
    r'\{\s*"metric"\s*:\s*(\{[^{}]*\})\s*,\s*"values"\s*:\s*\[\s*(?:\]|\[(?:[^\]{}]++|\](?!\]))*+\]\])\s*\}\s*(?:,\s*|(\]))'
)


MAX_OTHER_NAMES = 1_000


def _skip_others(text: str, position: int, wanted: set[str], others: set[str]) -> tuple[int, int, bool]:
    """Step over the series of other metrics from `position` that the text holds whole, in
    Prometheus' layout: (how many, the position after them, whether the list ended). Their names
    are remembered in `others` (up to MAX_OTHER_NAMES) so that each costs one regular expression."""
    count = 0
    while True:
        found = _PLAIN_WHOLE.match(text, position)
        named = _NAME.search(found.group(1)) if found is not None else None
        if named is None:
            return count, position, False
        name = named.group(1)
        if name not in others:
            if _base(name) in wanted:
                return count, position, False
            if len(others) < MAX_OTHER_NAMES:
                others.add(name)
        count += 1
        position = found.end()
        if found.group(2):
            return count, position, True


def _result_item(text: str, position: int, decoder: Any, wanted: set[str], final: bool) -> tuple[Any, int, bool] | None:
    """The result item at `position`: (the item if wanted else None, the position after its comma
    or the list's "]", whether that was the list's end). None when the text ends before that can
    be told and is not `final` (the file's end), or ends before the separator; an item the text
    does not hold whole raises JSONDecodeError."""
    import json

    plain = _plain_item(text, position)
    if plain is CUT and not final:
        return None
    if isinstance(plain, tuple):
        metric_text, body, end, last = plain
        named = _NAME.search(metric_text)
        if named is not None and _base(named.group(1)) not in wanted:
            return None, end, last
        pairs = _numeric_pairs(body)
        item = (
            {"metric": json.loads(metric_text), "values": pairs}
            if pairs is not None
            else decoder.raw_decode(text, position)[0]
        )
        return (item if _wanted_item(item, wanted) else None), end, last
    item, after = decoder.raw_decode(text, position)
    following = _NEXT.match(text, after)
    if following is None:
        rest = _SPACE.match(text, after).end()  # type: ignore[union-attr]
        if rest >= len(text):
            return None
        raise json.JSONDecodeError("Expecting ',' delimiter", text, rest)
    return (item if _wanted_item(item, wanted) else None), following.end(), following.group(1) == "]"


_SPACE = re.compile(r"\s*")


_NEXT = re.compile(r"\s*(,|\])")


# A series as Prometheus writes it: a metric without nested braces, then values of numbers and
# strings only ([[t,"v"],...] or []) up to the first "]]", then the item's end and a comma or "]".
_PLAIN_HEAD = re.compile(r'\{\s*"metric"\s*:\s*(\{[^{}]*\})\s*,\s*"values"\s*:\s*\[\s*')


_PLAIN_TAIL = re.compile(r"\s*\}\s*(,|\])")


def _plain_item(text: str, position: int) -> tuple[str, str, int, bool] | str | None:
    """A series at `position` in Prometheus' own layout: (the metric's JSON, the values between
    "[[" and "]]", the position after the item's comma or the list's "]", whether that was the
    list's end); CUT when the text ends before that can be told; None for any other layout."""
    head = _PLAIN_HEAD.match(text, position)
    if head is None:
        brace = text.find("}", position)
        return CUT if brace < 0 or text.find("[", brace) < 0 else None
    start = head.end()
    if start == len(text):
        return CUT
    if text.startswith("]", start):
        body, after = "", start + 1
    else:
        if not text.startswith("[", start):
            return None
        close = text.find("]]", start)
        if close < 0:
            return CUT
        body, after = text[start + 1 : close], close + 2
        if "{" in body or "}" in body:
            return None
    tail = _PLAIN_TAIL.match(text, after)
    if tail is None:
        return CUT if _TAIL_CUT.match(text, after) else None
    return head.group(1), body, tail.end(), tail.group(1) == "]"


CUT = "cut"


_TAIL_CUT = re.compile(r"\s*(\}\s*)?\Z")


_NAME = re.compile(r'"__name__"\s*:\s*"([^"\\]*)"')


def _numeric_pairs(body: str) -> Any:
    """The [time, "value"], ... pairs of one series (without the outer brackets and the first "[")
    parsed in one pass by pandas' C reader (a year of one-minute samples is half a million pairs: as
    Python lists they cost seconds and hundreds of MB); None when they are not plain finite numbers
    (NaN, +Inf, anything malformed: the JSON parser and the checks after it then name them)."""
    import io

    import numpy as np

    if not body.strip():
        return np.zeros((0, 2))
    if "{" in body or "}" in body:
        return None
    import pandas as pd

    try:
        frame = pd.read_csv(
            io.StringIO(body.replace('"', "").replace("], [", "\n").replace("],[", "\n")),
            header=None,
            engine="c",
            dtype=float,
            skipinitialspace=True,
        )
    except (ValueError, pd.errors.ParserError):
        return None
    numbers = frame.to_numpy()
    if numbers.ndim != 2 or numbers.shape[1] != 2 or not np.isfinite(numbers).all():
        return None
    return numbers


def _range_series(item: Any, where: str, display: str, problems: list[Problem]) -> Series | None:
    """One series of a query_range result, its samples checked: [unix seconds, "value"] pairs, times
    in the range procure can place in a month."""
    import numpy as np

    metric = item.get("metric") if isinstance(item, dict) else None
    values = item.get("values") if isinstance(item, dict) else None
    if not isinstance(metric, dict) or not isinstance(values, (list, np.ndarray)):
        problems.append(Problem(display, None, where, 'expected {"metric": {...}, "values": [[time, "value"], ...]}'))
        return None
    name = metric.get("__name__")
    if not isinstance(name, str):
        problems.append(
            Problem(
                display,
                None,
                f"{where}.metric",
                "has no __name__: query the raw series (e.g. vllm:generation_tokens_total), not an expression of it",
            )
        )
        return None
    labels = {str(k): str(v) for k, v in metric.items() if k != "__name__"}
    series = Series(name, _key(name, labels)[1], f"{display}: {where}")
    try:
        pairs = (
            values if isinstance(values, np.ndarray) else np.array(values, dtype=object)
        )  # ndarray: parsed in one pass (_numeric_pairs)
        if (
            pairs.ndim != 2
            or (len(values) and pairs.shape[1] != 2)
            or (pairs.dtype == object and any(isinstance(x, bool) for x in pairs.ravel()))
        ):
            raise ValueError
        times = np.asarray(pairs[:, 0], dtype=float) if len(values) else np.zeros(0)
        series.values = np.asarray(pairs[:, 1], dtype=float) if len(values) else np.zeros(0)
    except (ValueError, TypeError):
        problems.append(Problem(display, None, f"{where}.values", 'each sample must be [unix seconds, "value"]'))
        return None
    bad = ~np.isfinite(times) | (times < EARLIEST_S) | (times >= LATEST_S)
    if np.any(bad):
        i = int(np.argmax(bad))
        problems.append(
            Problem(
                display,
                None,
                f"{where}.values[{i}]",
                f"{series.show()}: a sample's time must be {TIME_RANGE} (got {times[i]:.15g} s since 1970)",
            )
        )
        return None
    series.times = times
    return series
