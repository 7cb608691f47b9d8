"""InferenceX benchmark rows to reference throughput curves (performance/NAME.csv).

InferenceX (SemiAnalysis, Apache-2.0) publishes one row per (hw, framework, precision,
spec_decoding, isl, osl, conc): the median interactivity (tok/s per user), output tokens per second
per GPU and the time to first token, among others. A reference curve is one (hw, framework,
precision, spec_decoding) series at the workload's sequence lengths: its points, sorted by
interactivity, are what `performance.throughput_at` reads the Pareto frontier from.

A buyer pays for every GPU a configuration occupies, so a curve holds **output tokens per second
per billed GPU**. Single-node (aggregated) rows divide every throughput by the GPUs the server uses,
which are the billed GPUs. Disaggregated (prefill/decode) rows do not: InferenceX's multinode
processor divides input throughput by the prefill GPUs, output throughput by the decode GPUs and the
total by all of them, so that tput_per_gpu x (P + D) = input x P + output x D (checked on every
multinode row of its published benchmark API, 2026). Each row's basis is established from the row
itself (see `resolve_basis`) and converted; a row whose basis cannot be established is refused,
unless the user states it (`per_gpu_basis`). Both row layouts are read: the flat one of the
benchmark's result files (hw, spec_decoding, figures at the top level) and the one of its web API
(hardware, spec_method, figures under `metrics`).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem
from procure.io.files import own_input, write_files_atomic
from procure.io.yamlsafe import read_json

CURVE_COLUMNS = ("interactivity", "output_tok_s_gpu", "ttft_s")
PER_GPU_BASES = ("all", "decode")
# Relative tolerance of the throughput identities: published figures are floats from one division,
# so they hold to ~1e-12; 1e-3 also accepts figures rounded to four significant digits.
IDENTITY_TOLERANCE = 1e-3
# How each basis is described in a curve's header.
BASIS_LABELS = {
    "single": "single-node: every figure per serving GPU, which are the billed GPUs (kept as published)",
    "split": "prefill/decode split: output per decode GPU, input per prefill GPU, total per all GPUs (output x D / (P "
    "+ D))",
    "all": "one divisor, all GPUs of the configuration (kept as published)",
    "decode": "one divisor, the decode GPUs (output x D / (P + D))",
}
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
    output_tput: float  # output tok/s per billed GPU (converted from output_tput_per_gpu)
    ttft: float | None  # median_ttft, seconds; None when the row does not state it
    multinode: bool
    model: str | None
    day: date | None
    basis: str = "single"  # a key of BASIS_LABELS: how the row's per-GPU figures were normalized
    published_output: float = 0.0  # output_tput_per_gpu as published


def flatten_row(row: Any) -> Any:
    """A web-API row (hardware, spec_method, figures under `metrics`) in the flat layout of the result
    files (hw, spec_decoding, figures at the top level); a flat row, or anything else, unchanged."""
    if not isinstance(row, dict) or not isinstance(row.get("metrics"), dict):
        return row
    flat = {**row["metrics"], **{k: v for k, v in row.items() if k != "metrics"}}
    if "hw" not in flat and "hardware" in flat:
        flat["hw"] = flat["hardware"]
    if "spec_decoding" not in flat and "spec_method" in flat:
        flat["spec_decoding"] = flat["spec_method"]
    return flat


def read_rows(path: Path) -> list[Any]:
    """The rows of an InferenceX JSON file: a list of rows, or one row."""
    path = Path(path)
    display = str(path)
    own_input(path)
    data = read_json(path, display, MAX_JSON_BYTES)
    if isinstance(data, dict):
        return [flatten_row(data)]
    if isinstance(data, list):
        return [flatten_row(r) for r in data]
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

    def number(self, name: str, required: bool = True, whole: bool = False, zero: bool = False) -> float | None:
        """A finite number greater than 0 (or at least 0 with `zero`), a whole one with `whole`."""
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
        if value < 0 or (value == 0 and not zero):
            self.fail(name, f"must be {'at least 0' if zero else 'greater than 0'} (got {value})")
            return None
        if whole and value != int(value):
            self.fail(name, f"must be a whole number (got {value})")
            return None
        return float(value)

    def flag(self, name: str) -> bool:
        value = self.row.get(name, False)
        if value is None:
            return False
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"  # the benchmark's ingest writes flags as text
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
        problems.append(
            Problem(display, None, f"[{index}]", f"expected an InferenceX row (a JSON object), got {_show(row)}")
        )
        return None
    check = _Checker(display, index, row, problems)
    hw = check.text("hw")
    isl = check.number("isl", whole=True)
    osl = check.number("osl", whole=True)
    if not check.ok or hw is None or isl is None or osl is None:
        return None
    return hw, int(isl), int(osl)


def _close(a: float, b: float) -> bool:
    """Equal within IDENTITY_TOLERANCE; never for a product that overflowed to infinity."""
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= IDENTITY_TOLERANCE * max(abs(a), abs(b))


def _gpu_counts(check: _Checker, row: dict[str, Any]) -> tuple[float | None, float | None]:
    """(num_prefill_gpu, num_decode_gpu) as whole numbers of at least 0."""
    prefill = check.number("num_prefill_gpu", required=False, whole=True, zero=True)
    decode = check.number("num_decode_gpu", required=False, whole=True, zero=True)
    return prefill, decode


def _counts_fit_parallelism(check: _Checker, prefill: float | None, decode: float | None) -> None:
    """A disaggregated row's GPU counts are whole multiples of each phase's tensor-parallel size when
    the row states one (every disaggregated row InferenceX published in 2026 is: a count that is not
    is a typing error, not a configuration). Single-node rows need no counts and are not checked."""
    for phase, count in (("prefill", prefill), ("decode", decode)):
        tp = check.number(f"{phase}_tp", required=False, whole=True)
        if count and tp and count % tp:
            check.fail(
                f"num_{phase}_gpu",
                f"{count:g} GPUs is not a whole number of {phase}_tp {tp:g} groups: the GPU counts are inconsistent",
            )


def resolve_basis(
    check: _Checker, row: dict[str, Any], output: float, multinode: bool, per_gpu_basis: str | None
) -> tuple[str, float] | None:
    """(basis, share): how a row's output_tput_per_gpu is normalized, and the factor that makes it
    output per billed GPU (all GPUs the configuration occupies). Established from the row itself:

    - not disaggregated: every figure is per serving GPU, the billed GPUs (share 1); when input and
      total are both given, total = input + output must hold;
    - disaggregated, with P prefill and D decode GPUs: total x (P + D) = input x P + output x D shows
      the prefill/decode split (output per decode GPU: share D / (P + D)); total = input + output shows
      one divisor, which the absolute figures (output_tput_tps or total_tput_tps) name: P + D (share
      1) or D (share D / (P + D)).

    A row the evidence does not settle takes `per_gpu_basis` ("all" or "decode"); without it, and when
    the evidence contradicts it, the row is a problem. None after recording a problem.
    """
    prefill, decode = _gpu_counts(check, row)
    disagg = check.flag("disagg") if "disagg" in row else bool(multinode and prefill)
    if disagg:
        _counts_fit_parallelism(check, prefill, decode)
    total = check.number("tput_per_gpu", required=False)
    inputs = check.number("input_tput_per_gpu", required=False)
    if not check.ok:
        return None
    if not disagg:
        return _single_basis(check, total, inputs, output)
    for name, count in (("num_prefill_gpu", prefill), ("num_decode_gpu", decode)):
        if not count and per_gpu_basis != "all":
            check.fail(
                name,
                "a disaggregated row needs num_prefill_gpu and num_decode_gpu greater than 0 (the GPUs its figures are "
                "divided by)",
            )
            return None
    found, why = None, "input_tput_per_gpu or tput_per_gpu is missing"
    if prefill and decode and total is not None and inputs is not None:
        everyone = prefill + decode
        if _close(total * everyone, inputs * prefill + output * decode):
            found = "split"
        elif _close(total, inputs + output):
            why = (
                "total = input + output at one divisor, but the row does not say whether it is all GPUs or the "
                "decode GPUs"
            )
            for absolute, per_gpu in (("output_tput_tps", output), ("total_tput_tps", total)):
                figure = row.get(absolute)
                if (
                    isinstance(figure, (int, float))
                    and not isinstance(figure, bool)
                    and math.isfinite(figure)
                    and figure > 0
                ):
                    divisor = figure / per_gpu
                    found = "all" if _close(divisor, everyone) else "decode" if _close(divisor, decode) else None
                    if found is None:
                        check.fail(
                            absolute,
                            f"{figure:g} / {per_gpu:g} = {divisor:.4g} GPUs, neither all {everyone:g} nor the "
                            f"{decode:g} decode GPUs: the GPU counts are inconsistent",
                        )
                        return None
                    break
        else:
            why = (
                f"neither total x (P + D) = input x P + output x D nor total = input + output holds "
                f"(P {prefill:g}, D {decode:g}): the GPU counts do not match the figures"
            )
    return _basis_or_stated(check, found, why, prefill, decode, per_gpu_basis)


def _single_basis(
    check: _Checker, total: float | None, inputs: float | None, output: float
) -> tuple[str, float] | None:
    """A row that is not disaggregated: one divisor, the serving GPUs, which its figures must agree with."""
    # One divisor: output cannot exceed the total. (Split rows can: output per decode GPU may
    # exceed the total per GPU of a configuration heavy in prefill GPUs.)
    if total is not None and output > total * (1 + IDENTITY_TOLERANCE):
        check.fail(
            "tput_per_gpu",
            f"total tokens per GPU ({total:g}) below output_tput_per_gpu ({output:g}): are the two swapped?",
        )
        return None
    if total is not None and inputs is not None and not _close(total, inputs + output):
        check.fail(
            "tput_per_gpu",
            f"{total:g} is not input_tput_per_gpu + output_tput_per_gpu ({inputs + output:g}): the figures of a "
            "single-node row share one divisor",
        )
        return None
    return "single", 1.0


def _basis_or_stated(
    check: _Checker, found: str | None, why: str, prefill: float | None, decode: float | None, per_gpu_basis: str | None
) -> tuple[str, float] | None:
    """A disaggregated row's basis as its figures show it (`found`), which --per-gpu-basis may not contradict, else
    as --per-gpu-basis states it; without either, a problem saying `why`."""
    if found is not None:
        output_basis = "decode" if found in ("split", "decode") else "all"
        if per_gpu_basis is not None and per_gpu_basis != output_basis:
            check.fail(
                "output_tput_per_gpu",
                "the row's own figures show output per "
                f"{'decode GPU' if output_basis == 'decode' else 'GPU of the configuration'}, not per "
                f"{'decode GPU' if per_gpu_basis == 'decode' else 'GPU of the configuration'} as --per-gpu-basis "
                f"{per_gpu_basis} says",
            )
            return None
        return found, (decode / (prefill + decode)) if output_basis == "decode" else 1.0  # type: ignore[operator]
    if per_gpu_basis is None:
        check.fail(
            "output_tput_per_gpu",
            f"cannot tell which GPUs the disaggregated row's figures are divided by: {why}; state it with "
            "--per-gpu-basis all|decode",
        )
        return None
    if per_gpu_basis == "decode":
        return "decode (stated)", decode / (prefill + decode)  # type: ignore[operator]
    return "all (stated)", 1.0


def billed_output(
    row: dict[str, Any], per_gpu_basis: str | None = None, display: str = "", index: int = 0
) -> tuple[tuple[str, float] | None, list[Problem]]:
    """((basis, output tok/s per billed GPU) or None, problems) for one flat row: `resolve_basis`
    applied to its output_tput_per_gpu, for callers outside the import (the interpolation study)."""
    problems: list[Problem] = []
    check = _Checker(display, index, row, problems)
    output = check.number("output_tput_per_gpu")
    multinode = check.flag("is_multinode")
    resolved = resolve_basis(check, row, output, multinode, per_gpu_basis) if output is not None else None
    if resolved is None or output is None:
        return None, problems
    return (resolved[0], output * resolved[1]), problems


def _bench_row(
    index: int,
    row: dict[str, Any],
    display: str,
    problems: list[Problem],
    warnings: list[str],
    per_gpu_basis: str | None = None,
) -> BenchRow | None:
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
    ttft = check.number("median_ttft", required=False)  # optional: the curve then has no TTFT there
    check.number("p90_ttft", required=False)
    multinode = check.flag("is_multinode")
    resolved = resolve_basis(check, row, output, multinode, per_gpu_basis) if output is not None else None
    model = row.get("model") or row.get("infmax_model_prefix")
    day = None
    raw_day = row.get("date")
    if raw_day is not None:
        try:
            day = date.fromisoformat(str(raw_day)[:10])
        except ValueError:
            warnings.append(f"[{index}].date: not a date ({_show(raw_day)}); left out of the date range")
    if not check.ok or resolved is None:
        return None
    assert hw and framework and precision and isl and osl and conc and interactivity and output
    basis, share = resolved
    return BenchRow(
        index,
        hw,
        framework,
        precision,
        spec,
        int(isl),
        int(osl),
        int(conc),
        interactivity,
        output * share,
        ttft,
        multinode,
        str(model) if model else None,
        day,
        basis,
        output,
    )


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
    path: Path,
    out_dir: Path,
    isl: int,
    osl: int,
    gpu: str | None = None,
    force: bool = False,
    model: str | None = None,
    per_gpu_basis: str | None = None,
) -> tuple[list[Path], list[str]]:
    """Write one reference curve per (hw, framework, precision, spec_decoding) into out_dir (a
    workspace's performance/ folder) from the InferenceX rows of the workload's isl/osl.

    Rows of exactly (isl, osl) are kept; when there are none, those of the nearest pair, with a
    warning. `gpu` keeps only rows whose hw matches it (any letter case); `model` only rows whose
    `model` or `infmax_model_prefix` matches it, and is needed when the kept rows span several
    models. Output throughput is converted to output per billed GPU (`resolve_basis`);
    `per_gpu_basis` ("all" or "decode") states the basis of disaggregated rows whose own figures do
    not settle it. Bad rows (a missing field, a value that is no number, a basis that cannot be
    established) are problems named by their 0-based index in the file; an existing curve is replaced only with `force`.
    Nothing is written
    unless everything is good. Returns (files written, warnings).
    """
    path, out_dir = Path(path), Path(out_dir)
    display = str(path)
    if per_gpu_basis is not None and per_gpu_basis not in PER_GPU_BASES:
        raise InputError(
            [
                Problem(
                    "--per-gpu-basis",
                    None,
                    "",
                    f"must be one of {', '.join(PER_GPU_BASES)} (got {_show(per_gpu_basis)})",
                )
            ]
        )
    raw_rows = read_rows(path)
    warnings: list[str] = []
    candidates = _candidate_rows(raw_rows, display, gpu, model)
    chosen = _sequence_pair(candidates, isl, osl, warnings)
    rows, models = _rows_of_pair(candidates, chosen, display, warnings, per_gpu_basis)
    targets = _curve_files(
        rows, models, out_dir, path.name, isl, osl, chosen, gpu, force, per_gpu_basis, display, warnings
    )
    # All curves or none: a run killed midway never leaves half the series imported.
    from procure.io.workspace import check_curves_to_write

    files = {target.name: text for target, text in targets}
    check_curves_to_write(out_dir, files)
    write_files_atomic(out_dir, files)
    return [t for t, _ in targets], warnings


def _candidate_rows(
    raw_rows: list[Any], display: str, gpu: str | None, model: str | None
) -> list[tuple[int, dict[str, Any], int, int]]:
    """Step 1, the fields that filter (hw, isl, osl): every row needs them, and the rows of the GPU and
    model asked for are kept, as (index, row, isl, osl). None kept is an error naming the hardware
    the file has."""
    problems: list[Problem] = []
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
        if model is not None and model.strip().lower() not in {
            str(row.get(k, "")).lower() for k in ("model", "infmax_model_prefix")
        }:
            continue
        candidates.append((index, row, row_isl, row_osl))
    if problems:
        raise InputError(problems)
    if not candidates:
        wanted = (
            " and ".join(filter(None, [f"hw {gpu}" if gpu else "", f"model {model}" if model else ""]))
            or "any hardware"
        )
        raise InputError(
            [
                Problem(
                    display, None, "", f"no rows for {wanted} (hw in the file: {', '.join(sorted(hardware)) or 'none'})"
                )
            ]
        )
    return candidates


def _sequence_pair(
    candidates: list[tuple[int, dict[str, Any], int, int]], isl: int, osl: int, warnings: list[str]
) -> tuple[int, int]:
    """Step 2, the workload's sequence lengths, else the nearest pair with a warning: throughput
    depends on them, so a curve of other lengths is a stand-in."""
    pairs = {(i, o) for _, _, i, o in candidates}
    chosen = (isl, osl)
    if chosen not in pairs:
        chosen = _nearest(pairs, isl, osl)
        warnings.append(
            f"no rows for isl {isl}, osl {osl}: used the nearest pair, isl {chosen[0]}, osl {chosen[1]} "
            "(throughput depends on the sequence lengths: check the curve before relying on it)"
        )
    return chosen


def _rows_of_pair(
    candidates: list[tuple[int, dict[str, Any], int, int]],
    chosen: tuple[int, int],
    display: str,
    warnings: list[str],
    per_gpu_basis: str | None,
) -> tuple[list[BenchRow], list[str]]:
    """Step 3, every field of the rows of the chosen pair, and the model they measure: a curve is one
    model's, so rows of several are an error."""
    problems: list[Problem] = []
    rows = []
    for index, row, row_isl, row_osl in candidates:
        if (row_isl, row_osl) == chosen:
            found = _bench_row(index, row, display, problems, warnings, per_gpu_basis)
            if found is not None:
                rows.append(found)
    if problems:
        raise InputError(problems)
    models = sorted({r.model for r in rows if r.model})
    if len(models) > 1:
        raise InputError(
            [
                Problem(
                    display,
                    None,
                    "",
                    f"rows of {len(models)} models ({', '.join(models)}): pick one (model=...), a curve is one model's",
                )
            ]
        )
    return rows, models


def _curve_files(
    rows: list[BenchRow],
    models: list[str],
    out_dir: Path,
    source: str,
    isl: int,
    osl: int,
    chosen: tuple[int, int],
    gpu: str | None,
    force: bool,
    per_gpu_basis: str | None,
    display: str,
    warnings: list[str],
) -> list[tuple[Path, str]]:
    """Step 4, one curve per (hw, framework, precision, spec_decoding) as (file, text), with a warning
    where rows were normalized by the stated basis or lack a time to first token; an existing curve
    is replaced only with `force`."""
    problems: list[Problem] = []
    groups: dict[str, list[BenchRow]] = defaultdict(list)
    for row in rows:
        groups[curve_name(row.hw, row.framework, row.precision, row.spec_decoding)].append(row)
    targets: list[tuple[Path, str]] = []
    for name in sorted(groups):
        members = groups[name]
        keys = {(r.hw.lower(), r.framework.lower(), r.precision.lower(), r.spec_decoding.lower()) for r in members}
        if len(keys) > 1:
            problems.append(
                Problem(
                    display,
                    None,
                    "",
                    f"series {', '.join('/'.join(k) for k in sorted(keys))} would share the curve name {name}",
                )
            )
            continue
        stated = [r for r in members if r.basis.endswith("(stated)")]
        if stated:
            warnings.append(
                f"{name}: {len(stated)} of {len(members)} rows normalized as --per-gpu-basis {per_gpu_basis} says "
                "(their own figures do not show it)"
            )
        untimed = sum(r.ttft is None for r in members)
        if untimed:
            warnings.append(
                f"{name}: {untimed} of {len(members)} rows state no median_ttft: the curve has no time to first token "
                "there"
            )
        target = out_dir / f"{name}.csv"
        if target.exists() and not force:
            problems.append(Problem(str(target), None, "", "already exists: use --force to replace it"))
        targets.append((target, _curve_csv(members, source, isl, osl, chosen, gpu, models)))
    if problems:
        raise InputError(problems)
    return targets


def _curve_csv(
    rows: list[BenchRow], source: str, isl: int, osl: int, chosen: tuple[int, int], gpu: str | None, models: list[str]
) -> str:
    first = rows[0]
    spec = first.spec_decoding if first.spec_decoding.lower() not in NO_SPEC else "none"
    lines = [f"# InferenceX benchmark rows from {source}" + (f", model {models[0]}" if models else "")]
    workload = f"isl {chosen[0]}, osl {chosen[1]}" + (
        "" if chosen == (isl, osl) else f" (nearest to the workload's isl {isl}, osl {osl})"
    )
    lines.append(
        f"# filter: {workload}; hw {first.hw}, framework {first.framework}, precision {first.precision}, spec_decoding "
        f"{spec}" + (f" (gpu {gpu})" if gpu else "") + f"; {len(rows)} rows"
    )
    days = sorted(r.day for r in rows if r.day is not None)
    if days:
        lines.append(f"# dates: {days[0].isoformat()} to {days[-1].isoformat()}")
    bases = Counter(r.basis for r in rows)
    for basis in sorted(bases, key=lambda b: (-bases[b], b)):
        label = BASIS_LABELS.get(basis.replace(" (stated)", ""), basis)
        how = " as --per-gpu-basis said" if basis.endswith("(stated)") else ""
        lines.append(f"# normalization: {bases[basis]} of {len(rows)} rows {label}{how}")
    # what the curve measures, as procure/model/references.py compares curves (a row states no model: no mark)
    lines += (
        [f"# gpu: {first.hw}"] + ([f"# model: {models[0]}"] if models else []) + [f"# precision: {first.precision}"]
    )
    lines.append(
        "# interactivity = median_intvty (tok/s per user), output_tok_s_gpu = output tokens/s per billed GPU "
        "(all GPUs the configuration occupies), ttft_s = median_ttft (seconds; empty where the row states none)"
    )
    lines.append(",".join(CURVE_COLUMNS))
    for row in sorted(rows, key=lambda r: (r.interactivity, r.output_tput, r.ttft if r.ttft is not None else math.inf)):
        ttft = "" if row.ttft is None else _number(row.ttft)
        lines.append(",".join((_number(row.interactivity), _number(row.output_tput), ttft)))
    return "\n".join(_one_line(line) if line.startswith("#") else line for line in lines) + "\n"
