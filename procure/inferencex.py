"""InferenceX benchmark rows to reference throughput curves (performance/NAME.csv).

InferenceX (SemiAnalysis, Apache-2.0) publishes one row per (hw, framework, precision,
spec_decoding, isl, osl, conc): the median interactivity (tok/s per user), output tokens per second
per GPU and the time to first token, among others. A reference curve is one (hw, framework,
precision, spec_decoding) series at the workload's sequence lengths: its points, sorted by
interactivity, are what `performance.throughput_at` reads the Pareto frontier from.

Multinode (disaggregated) rows divide output throughput by the decode GPUs only, so they overstate
output per GPU next to single-node rows: they are kept, and a warning says so.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem
from procure.fileio import write_atomic

CURVE_COLUMNS = ("interactivity", "output_tok_s_gpu", "ttft_s")
MAX_JSON_BYTES = 100 * 1024 * 1024  # a full InferenceX export runs to megabytes
NO_SPEC = ("", "none")


@dataclass(frozen=True)
class BenchRow:
    index: int  # position in the file's list (0-based; 0 for a file holding one row)
    hw: str
    framework: str
    precision: str
    spec_decoding: str
    isl: int
    osl: int
    conc: int
    interactivity: float  # median_intvty, tok/s per user
    output_tput: float  # output_tput_per_gpu, tok/s per GPU
    ttft: float  # median_ttft, seconds
    multinode: bool
    model: str | None
    day: date | None


def read_rows(path: Path) -> list[Any]:
    """The rows of an InferenceX JSON file: a list of rows, or one row."""
    path = Path(path)
    display = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise InputError([Problem(display, None, "", f"file is too large ({size:,} bytes; limit {MAX_JSON_BYTES:,})")])
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise InputError([Problem(display, None, "", f"cannot read file: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError:
        raise InputError([Problem(display, None, "", "not valid UTF-8 text")]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError([Problem(display, exc.lineno, "", f"malformed JSON: {exc.msg}")]) from None
    except RecursionError:
        raise InputError([Problem(display, None, "", "malformed JSON: nested too deeply")]) from None
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        return data
    raise InputError([Problem(display, None, "", "expected a list of InferenceX rows, or one row (a JSON object)")])


# --- checking rows ----------------------------------------------------------------------------------


class _Checker:
    """Reads the fields of one row, recording a problem (file, [index].field) for each bad one."""

    def __init__(self, display: str, index: int, row: dict[str, Any], problems: list[Problem]):
        self.display, self.index, self.row, self.problems = display, index, row, problems
        self.ok = True

    def fail(self, name: str, message: str) -> None:
        self.problems.append(Problem(self.display, None, f"[{self.index}].{name}", message))
        self.ok = False

    def text(self, name: str, required: bool = True) -> str | None:
        value = self.row.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                self.fail(name, "required field is missing")
            return None
        if not isinstance(value, str):
            self.fail(name, f"must be text (got {_show(value)})")
            return None
        return value.strip()

    def number(self, name: str, required: bool = True, whole: bool = False) -> float | None:
        value = self.row.get(name)
        if value is None:
            if required:
                self.fail(name, "required field is missing")
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(name, f"must be a number (got {_show(value)})")
            return None
        if not math.isfinite(value):
            self.fail(name, f"must be a finite number (got {value})")
            return None
        if value <= 0:
            self.fail(name, f"must be greater than 0 (got {value})")
            return None
        if whole and value != int(value):
            self.fail(name, f"must be a whole number (got {value})")
            return None
        return float(value)

    def flag(self, name: str) -> bool:
        value = self.row.get(name, False)
        if value is None:
            return False
        if not isinstance(value, bool):
            self.fail(name, f"must be true or false (got {_show(value)})")
            return False
        return value


def _show(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _workload_of(index: int, row: Any, display: str, problems: list[Problem]) -> tuple[str, int, int] | None:
    """(hw, isl, osl): the fields every row needs to be filtered."""
    if not isinstance(row, dict):
        problems.append(Problem(display, None, f"[{index}]", f"expected an InferenceX row (a JSON object), got {_show(row)}"))
        return None
    check = _Checker(display, index, row, problems)
    hw = check.text("hw")
    isl = check.number("isl", whole=True)
    osl = check.number("osl", whole=True)
    if not check.ok or hw is None or isl is None or osl is None:
        return None
    return hw, int(isl), int(osl)


def _bench_row(index: int, row: dict[str, Any], display: str, problems: list[Problem], warnings: list[str]) -> BenchRow | None:
    check = _Checker(display, index, row, problems)
    hw = check.text("hw")
    framework = check.text("framework")
    precision = check.text("precision")
    spec = check.text("spec_decoding", required=False) or "none"
    isl = check.number("isl", whole=True)
    osl = check.number("osl", whole=True)
    conc = check.number("conc", whole=True)
    interactivity = check.number("median_intvty")
    output = check.number("output_tput_per_gpu")
    ttft = check.number("median_ttft")
    total = check.number("tput_per_gpu", required=False)
    check.number("p90_ttft", required=False)
    multinode = check.flag("is_multinode")
    if total is not None and output is not None and output > total:
        check.fail("tput_per_gpu", f"total tokens per GPU ({total:g}) below output_tput_per_gpu ({output:g}): are the two swapped?")
    model = row.get("model") or row.get("infmax_model_prefix")
    day = None
    raw_day = row.get("date")
    if raw_day is not None:
        try:
            day = date.fromisoformat(str(raw_day)[:10])
        except ValueError:
            warnings.append(f"[{index}].date: not a date ({_show(raw_day)}); left out of the date range")
    if not check.ok:
        return None
    assert hw and framework and precision and isl and osl and conc and interactivity and output and ttft
    return BenchRow(index, hw, framework, precision, spec, int(isl), int(osl), int(conc), interactivity, output, ttft, multinode, str(model) if model else None, day)


def curve_name(hw: str, framework: str, precision: str, spec_decoding: str) -> str:
    """`{hw}-{framework}-{precision}`, plus `-{spec_decoding}` unless none, lower-cased and safe as a
    file name (anything but letters, digits, '.', '_' and '-' becomes '-')."""
    parts = [hw, framework, precision]
    if spec_decoding.strip().lower() not in NO_SPEC:
        parts.append(spec_decoding)
    name = re.sub(r"[^a-z0-9._-]+", "-", "-".join(p.strip().lower() for p in parts)).strip("-.")
    return name or "curve"


def _nearest(pairs: set[tuple[int, int]], isl: int, osl: int) -> tuple[int, int]:
    """The (isl, osl) pair closest in ratio: |ln(isl'/isl)| + |ln(osl'/osl)|; ties to the smaller pair."""
    return min(pairs, key=lambda p: (abs(math.log(p[0] / isl)) + abs(math.log(p[1] / osl)), p))


def _one_line(text: str) -> str:
    """Vendor and file text in a '#' comment line: no line breaks or other control characters."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", text)


def _number(value: float) -> str:
    return format(value, ".12g")


# --- the import ---------------------------------------------------------------------------------------


def import_curves(
    path: Path, out_dir: Path, isl: int, osl: int, gpu: str | None = None, force: bool = False, model: str | None = None
) -> tuple[list[Path], list[str]]:
    """Write one reference curve per (hw, framework, precision, spec_decoding) into out_dir (a
    workspace's performance/ folder) from the InferenceX rows of the workload's isl/osl.

    Rows of exactly (isl, osl) are kept; when there are none, those of the nearest pair, with a
    warning. `gpu` keeps only rows whose hw matches it (any letter case); `model` only rows whose
    `model` or `infmax_model_prefix` matches it, and is needed when the kept rows span several
    models. Bad rows (a missing field, a value that is no number) are problems named by their
    0-based index in the file; an existing curve is replaced only with `force`. Nothing is written
    unless everything is good. Returns (files written, warnings).
    """
    path, out_dir = Path(path), Path(out_dir)
    display = str(path)
    raw_rows = read_rows(path)
    problems: list[Problem] = []
    warnings: list[str] = []

    # 1. The fields that filter: every row needs them.
    candidates: list[tuple[int, dict[str, Any], int, int]] = []
    hardware: set[str] = set()
    for index, row in enumerate(raw_rows):
        key = _workload_of(index, row, display, problems)
        if key is None:
            continue
        hw, row_isl, row_osl = key
        hardware.add(hw.lower())
        if gpu is not None and hw.lower() != gpu.strip().lower():
            continue
        if model is not None and model.strip().lower() not in {str(row.get(k, "")).lower() for k in ("model", "infmax_model_prefix")}:
            continue
        candidates.append((index, row, row_isl, row_osl))
    if problems:
        raise InputError(problems)
    if not candidates:
        wanted = " and ".join(filter(None, [f"hw {gpu}" if gpu else "", f"model {model}" if model else ""])) or "any hardware"
        raise InputError([Problem(display, None, "", f"no rows for {wanted} (hw in the file: {', '.join(sorted(hardware)) or 'none'})")])

    # 2. The workload's sequence lengths, else the nearest pair.
    pairs = {(i, o) for _, _, i, o in candidates}
    chosen = (isl, osl)
    if chosen not in pairs:
        chosen = _nearest(pairs, isl, osl)
        warnings.append(
            f"no rows for isl {isl}, osl {osl}: used the nearest pair, isl {chosen[0]}, osl {chosen[1]} "
            "(throughput depends on the sequence lengths: check the curve before relying on it)"
        )

    # 3. Every field of the rows kept.
    rows = []
    for index, row, row_isl, row_osl in candidates:
        if (row_isl, row_osl) == chosen:
            found = _bench_row(index, row, display, problems, warnings)
            if found is not None:
                rows.append(found)
    if problems:
        raise InputError(problems)
    models = sorted({r.model for r in rows if r.model})
    if len(models) > 1:
        raise InputError([Problem(display, None, "", f"rows of {len(models)} models ({', '.join(models)}): pick one (model=...), a curve is one model's")])

    # 4. One curve per (hw, framework, precision, spec_decoding).
    groups: dict[str, list[BenchRow]] = defaultdict(list)
    for row in rows:
        groups[curve_name(row.hw, row.framework, row.precision, row.spec_decoding)].append(row)
    targets: list[tuple[Path, str]] = []
    for name in sorted(groups):
        members = groups[name]
        keys = {(r.hw.lower(), r.framework.lower(), r.precision.lower(), r.spec_decoding.lower()) for r in members}
        if len(keys) > 1:
            problems.append(Problem(display, None, "", f"series {', '.join('/'.join(k) for k in sorted(keys))} would share the curve name {name}"))
            continue
        multinode = [r for r in members if r.multinode]
        if multinode:
            warnings.append(
                f"{name}: {len(multinode)} of {len(members)} rows are multinode (disaggregated), kept: their output per GPU "
                "counts decode GPUs only, so it is not comparable with single-node rows"
            )
        target = out_dir / f"{name}.csv"
        if target.exists() and not force:
            problems.append(Problem(str(target), None, "", "already exists: use --force to replace it"))
        targets.append((target, _curve_csv(members, path.name, isl, osl, chosen, gpu, models)))
    if problems:
        raise InputError(problems)
    for target, text in targets:
        write_atomic(target, text, replace_inputs=True)
    return [t for t, _ in targets], warnings


def _curve_csv(rows: list[BenchRow], source: str, isl: int, osl: int, chosen: tuple[int, int], gpu: str | None, models: list[str]) -> str:
    first = rows[0]
    spec = first.spec_decoding if first.spec_decoding.lower() not in NO_SPEC else "none"
    lines = [f"# InferenceX benchmark rows from {source}" + (f", model {models[0]}" if models else "")]
    workload = f"isl {chosen[0]}, osl {chosen[1]}" + ("" if chosen == (isl, osl) else f" (nearest to the workload's isl {isl}, osl {osl})")
    lines.append(
        f"# filter: {workload}; hw {first.hw}, framework {first.framework}, precision {first.precision}, spec_decoding {spec}"
        + (f" (gpu {gpu})" if gpu else "")
        + f"; {len(rows)} rows"
    )
    days = sorted(r.day for r in rows if r.day is not None)
    if days:
        lines.append(f"# dates: {days[0].isoformat()} to {days[-1].isoformat()}")
    multinode = sum(r.multinode for r in rows)
    if multinode:
        lines.append(f"# {multinode} multinode row(s): their output per GPU counts decode GPUs only")
    lines.append("# interactivity = median_intvty (tok/s per user), output_tok_s_gpu = output_tput_per_gpu, ttft_s = median_ttft (seconds)")
    lines.append(",".join(CURVE_COLUMNS))
    for row in sorted(rows, key=lambda r: (r.interactivity, r.output_tput, r.ttft)):
        lines.append(",".join(_number(v) for v in (row.interactivity, row.output_tput, row.ttft)))
    return "\n".join(_one_line(line) if line.startswith("#") else line for line in lines) + "\n"
