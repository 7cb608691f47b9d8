"""Safe YAML loading that remembers the line of every field.

Vendor files come from outside the organisation: only the safe loader is used (libyaml's
CSafeLoader when present), duplicate keys are errors rather than last-one-wins, and size and
alias expansion are bounded so that a small file cannot blow up into a huge document.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from procure.errors import InputError, Problem, format_field_path
from procure.io.files import check_link

try:  # libyaml is much faster; the pure-Python loader behaves the same
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_NODES = 200_000  # nodes visited, aliases counted each time they are used
MAX_DEPTH = 64

Path_ = tuple[str | int, ...]


@dataclass
class LineMap:
    """Line numbers (1-based) of every field path in one document."""

    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, loc: Path_) -> int | None:
        """The line of the deepest existing prefix of loc: a missing field points at its parent."""
        for cut in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:cut]))
            if line is not None:
                return line
        return None


@dataclass
class Document:
    data: Any
    lines: LineMap
    display: str  # the file name shown in messages
    # Problems found while reading (invalid dates, duplicate keys) when the caller asked to collect
    # them: the document is still built (the first value of a duplicate key, a bad date as text), so
    # that validation can report the rest of the file in the same run.
    problems: list[Problem] = field(default_factory=list)
    text: str = ""  # the text as read (hashed for the appendix's list of inputs without reading the file again)

    def problem(self, loc: Path_, message: str) -> Problem:
        """A problem with the field at `loc`: this file, the field's line (its parent's when it is missing) and its
        path."""
        return Problem(self.display, self.lines.line_of(loc), format_field_path(loc), message)


def regular_file(path: Path, display: str, limit: int = MAX_FILE_BYTES) -> int:
    """Check an input before opening it: inside its workspace (no link out of it), a regular file
    (a pipe or a device such as /dev/zero would hang or never end), at most `limit` bytes."""
    check_link(path, display)
    try:
        info = Path(path).stat()
    except OSError as exc:
        raise InputError([Problem(display, None, "", f"cannot read file: {exc.strerror or exc}")]) from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError([Problem(display, None, "", "not a regular file (a pipe or a device): refused")])
    if info.st_size > limit:
        raise InputError([Problem(display, None, "", f"file is too large ({info.st_size:,} bytes; limit {limit:,})")])
    return info.st_size


def read_bytes(path: Path, display: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular input file, read without following it past `limit`."""
    regular_file(path, display, limit)
    try:
        # O_NONBLOCK: if the file was swapped for a pipe since the check, opening does not hang.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise InputError([Problem(display, None, "", "not a regular file (a pipe or a device): refused")])
            # A buffer of the file's size, not of the limit (500 MB for telemetry, whatever the file);
            # a file that grew since is read on, still never past the limit.
            raw = handle.read(min(info.st_size, limit) + 1)
            if info.st_size < len(raw) <= limit:
                raw += handle.read(limit + 1 - len(raw))
    except OSError as exc:
        raise InputError([Problem(display, None, "", f"cannot read file: {exc.strerror or exc}")]) from None
    if len(raw) > limit:
        raise InputError([Problem(display, None, "", f"file is too large (limit {limit:,} bytes)")])
    return raw


def read_text(path: Path, display: str, limit: int = MAX_FILE_BYTES) -> str:
    """Read a UTF-8 text input with a size limit; problems become InputError."""
    raw = read_bytes(path, display, limit)
    if b"\x00" in raw:
        raise InputError([Problem(display, None, "", "binary file: expected UTF-8 text")])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError([Problem(display, line, "", "not valid UTF-8 text")]) from None


GZIP_MAGIC = b"\x1f\x8b"  # RFC 1952 section 2.3.1: ID1 ID2


class _Bounded(io.RawIOBase):
    """The bytes of `source` (a file, or a gzip stream over it), refused past `limit` bytes or at a NUL byte
    (binary, not text); a gzip stream that breaks is a located problem, not an internal error."""

    def __init__(self, source: Any, limit: int, display: str, compressed: bool) -> None:
        self.source, self.limit, self.display, self.compressed, self.total = source, limit, display, compressed, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        import zlib

        try:
            data = self.source.read(min(len(buffer), 1 << 16))
        except (OSError, EOFError, zlib.error) as exc:
            if not self.compressed:
                raise InputError([Problem(self.display, None, "", f"cannot read file: {exc}")]) from None
            raise InputError(
                [
                    Problem(
                        self.display,
                        None,
                        "",
                        f"not a readable gzip file ({exc}): expected CSV text, or CSV compressed with gzip",
                    )
                ]
            ) from None
        self.total += len(data)
        if self.total > self.limit:
            once = " once decompressed" if self.compressed else ""
            raise InputError([Problem(self.display, None, "", f"file is too large{once} (limit {self.limit:,} bytes)")])
        if b"\x00" in data:
            raise InputError(
                [Problem(self.display, None, "", "binary file: expected UTF-8 text (or text compressed with gzip)")]
            )
        buffer[: len(data)] = data
        return len(data)


@contextmanager
def _open_bytes_gz(path: Path, display: str, limit: int) -> Iterator[io.BufferedReader]:
    """The bytes of a regular file, decompressed as they are read when it is gzip, bounded by `limit`."""
    import gzip

    regular_file(path, display, limit)
    try:
        # O_NONBLOCK: if the file was swapped for a pipe since the check, opening does not hang.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError([Problem(display, None, "", f"cannot read file: {exc.strerror or exc}")]) from None
    with os.fdopen(fd, "rb") as raw:
        if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
            raise InputError([Problem(display, None, "", "not a regular file (a pipe or a device): refused")])
        compressed = raw.read(len(GZIP_MAGIC)) == GZIP_MAGIC
        raw.seek(0)
        source: Any = gzip.GzipFile(fileobj=raw) if compressed else raw
        yield io.BufferedReader(_Bounded(source, limit, display, compressed), 1 << 16)


def utf8_error_line(path: Path, display: str, limit: int = MAX_FILE_BYTES) -> int | None:
    """The line of the first byte that is not UTF-8 (read again as a stream, for the problem's line)."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    with _open_bytes_gz(path, display, limit) as stream:
        while block := stream.read(1 << 16):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as exc:
                return line + block[: exc.start].count(b"\n")
            line += block.count(b"\n")
    return None


@contextmanager
def open_text_gz(path: Path, display: str, limit: int = MAX_FILE_BYTES) -> Iterator[io.TextIOBase]:
    """A UTF-8 text input as a stream, read a block at a time (never held whole), where a file compressed
    with gzip (known by its first two bytes, whatever its name: AWS Data Exports write FOCUS as .csv.gz) is
    decompressed as it is read; never past `limit` bytes of text, no NUL byte. Line ends are kept as written
    (newline=""), for the csv module. A byte that is not UTF-8 raises UnicodeDecodeError from the reads:
    the reader, which knows the line it is on, names it."""
    with (
        _open_bytes_gz(path, display, limit) as stream,
        io.TextIOWrapper(stream, encoding="utf-8-sig", newline="") as text,
    ):
        yield text


def read_json(path: Path, display: str, limit: int = MAX_FILE_BYTES) -> Any:
    """Parse a UTF-8 JSON input with a size limit; malformed JSON is a located problem."""
    try:
        text = read_bytes(path, display, limit).decode(
            "utf-8-sig"
        )  # regular files only: a pipe or /dev/zero never ends
    except UnicodeDecodeError:
        raise InputError([Problem(display, None, "", "not valid UTF-8 text")]) from None
    return parse_json(text, display)


def parse_json(text: str, display: str) -> Any:
    """JSON text parsed; malformed JSON is a located problem."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError([Problem(display, exc.lineno, "", f"malformed JSON: {exc.msg}")]) from None
    except RecursionError:
        raise InputError([Problem(display, None, "", "malformed JSON: nested too deeply")]) from None


def load_yaml(path: Path, display: str, collect: bool = False) -> Document:
    """Load one YAML document with its line map, or raise InputError naming file and line.

    With `collect`, invalid dates and duplicate keys are returned in `Document.problems` instead of
    raised, so that one run lists every problem of the file.
    """
    text = read_text(path, display)
    _count_values(text, display)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise InputError([Problem(display, None, "", "file is empty: expected a YAML mapping")])
        lines = LineMap()
        soft: list[Problem] = []
        _walk(node, (), lines, display, [0], 0, soft)
        if soft and not collect:
            raise InputError(soft)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = " ".join(s for s in (exc.context, exc.problem) if s)
        raise InputError([Problem(display, line, "", f"malformed YAML: {what}")]) from None
    except yaml.YAMLError as exc:
        raise InputError([Problem(display, None, "", f"malformed YAML: {exc}")]) from None
    finally:
        loader.dispose()
    return Document(data, lines, display, soft, text)


def _count_values(text: str, display: str) -> None:
    """Refuse a document with too many values before building it: the parser's event stream is
    counted (cheap, no tree in memory); aliases are bounded later, when the tree is walked."""
    if len(text) < MAX_NODES // 2:
        return  # no YAML value takes less than half a character: a text this short cannot hold that many
    parser = _Loader(text)
    try:
        count = 0
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                count += 1
                if count > MAX_NODES:
                    line = event.start_mark.line + 1 if event.start_mark else None
                    raise InputError([Problem(display, line, "", f"document holds more than {MAX_NODES:,} values")])
    except yaml.YAMLError:
        return  # malformed: the full load reports it with its location
    finally:
        parser.dispose()


TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
# Plausible ranges for every value of every input: no price, count or amount comes near a trillion,
# no figure other than zero is below a trillionth, and no offer date lies before 1900 or after 2199.
# Beyond them, sums and products can reach infinity (written as Infinity/NaN into JSON), products of
# tiny figures round to zero (a price of 5e-324 made a cost per task of exactly 0, then a division by
# it), and date arithmetic overflows.
MAX_MAGNITUDE = 1e12
MIN_MAGNITUDE = 1e-12
FIRST_YEAR, LAST_YEAR = 1900, 2199
# The safe constructor's own scalar rules (its timestamp and int readers use no state of a loader): one
# instance for every node, where a loader made for each date and whole number cost 1 ms per value.
_SCALARS = yaml.constructor.SafeConstructor()


def implausible(value: float, raw: str) -> str | None:
    """Why a finite number is out of every input's range, or None."""
    if abs(value) > MAX_MAGNITUDE:
        return f"is implausibly large (got {raw[:40]}; no figure here exceeds {MAX_MAGNITUDE:.0e})"
    if 0 < abs(value) < MIN_MAGNITUDE:
        return f"is implausibly small (got {raw[:40]}; no figure here but 0 is below {MIN_MAGNITUDE:.0e})"
    return None


def _walk(
    node: yaml.Node, loc: Path_, lines: LineMap, display: str, count: list[int], depth: int, bad_dates: list[Problem]
) -> None:
    """Record lines, reject duplicate keys, check dates, and bound the size of the expanded document.

    Invalid dates and duplicate keys go to `bad_dates` (and the tree is mended so it can be built);
    the rest raise at once.
    """
    count[0] += 1
    if count[0] > MAX_NODES:
        raise InputError(
            [
                Problem(
                    display,
                    node.start_mark.line + 1,
                    "",
                    f"document expands to more than {MAX_NODES:,} values (alias bomb?)",
                )
            ]
        )
    if depth > MAX_DEPTH:
        raise InputError([Problem(display, node.start_mark.line + 1, "", f"nesting deeper than {MAX_DEPTH} levels")])
    lines.lines.setdefault(loc, node.start_mark.line + 1)
    _check_scalar(node, loc, display, bad_dates)
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        duplicates = []
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError(
                    [
                        Problem(
                            display,
                            key_node.start_mark.line + 1,
                            format_field_path(loc),
                            "mapping keys must be plain values",
                        )
                    ]
                )
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key == "<<":  # merge keys: a key set twice through them is a duplicate like any other
                for merged, merged_line in _merged_keys(value_node, display):
                    if merged in seen:
                        raise InputError(
                            [
                                Problem(
                                    display,
                                    line,
                                    format_field_path(loc + (merged,)),
                                    f"set twice: through the merge key `<<` here and on line {seen[merged]} (a merge "
                                    "may not override a key)",
                                )
                            ]
                        )
                    seen[merged] = merged_line
                _walk(value_node, loc, lines, display, count, depth + 1, bad_dates)
                continue
            if key in seen:
                bad_dates.append(
                    Problem(
                        display,
                        line,
                        format_field_path(loc + (key,)),
                        f"duplicate key (first given on line {seen[key]})",
                    )
                )
                duplicates.append((key_node, value_node))
                continue
            seen[key] = line
            lines.lines[loc + (key,)] = line
            _walk(value_node, loc + (key,), lines, display, count, depth + 1, bad_dates)
        if duplicates:  # the document keeps the first value; the later ones are reported
            node.value = [pair for pair in node.value if not any(pair[0] is d[0] for d in duplicates)]
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, loc + (index,), lines, display, count, depth + 1, bad_dates)


def _check_scalar(node: yaml.Node, loc: Path_, display: str, bad_dates: list[Problem]) -> None:
    """A date that is no date or out of range, or an implausible number, into `bad_dates` (a bad date is mended into
    text so that the tree can be built)."""
    if isinstance(node, yaml.ScalarNode) and node.tag == TIMESTAMP_TAG:
        try:  # a date-shaped value that is no date (2026-11-31) would otherwise fail without a location
            moment = _SCALARS.construct_yaml_timestamp(node)
        except ValueError as exc:
            bad_dates.append(
                Problem(
                    display,
                    node.start_mark.line + 1,
                    format_field_path(loc),
                    f"not a valid date: {exc} (got {node.value!r})",
                )
            )
            node.tag = "tag:yaml.org,2002:str"  # built as text; the problem is already recorded
        else:
            if not FIRST_YEAR <= moment.year <= LAST_YEAR:  # date arithmetic (terms, delays) must stay in range
                bad_dates.append(
                    Problem(
                        display,
                        node.start_mark.line + 1,
                        format_field_path(loc),
                        f"must be a date between {FIRST_YEAR} and {LAST_YEAR} (got {node.value})",
                    )
                )
    elif isinstance(node, yaml.ScalarNode) and node.tag in NUMBER_TAGS:
        value: float | int | None
        try:
            value = (
                float(node.value.replace("_", "")) if node.tag == NUMBER_TAGS[1] else _SCALARS.construct_yaml_int(node)
            )
        except (ValueError, OverflowError):
            value = None  # .nan, .inf and malformed values are judged by the field's own rules
        why = (
            implausible(value, node.value)
            if value is not None and value == value and abs(value) != float("inf")
            else None
        )
        if why:
            bad_dates.append(Problem(display, node.start_mark.line + 1, format_field_path(loc), why))


def _merged_keys(node: yaml.Node, display: str, depth: int = 0) -> list[tuple[Any, int]]:
    """The keys a merge key brings in: of one mapping, or of each mapping of a list (nested merges too)."""
    if depth > MAX_DEPTH:
        raise InputError(
            [Problem(display, node.start_mark.line + 1, "", f"merge keys nested deeper than {MAX_DEPTH} levels")]
        )
    found: list[tuple[Any, int]] = []
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found += _merged_keys(item, display, depth + 1)
    elif isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == "<<":
                found += _merged_keys(value_node, display, depth + 1)
            elif isinstance(key_node, yaml.ScalarNode):
                found.append((key_node.value, key_node.start_mark.line + 1))
    return found
