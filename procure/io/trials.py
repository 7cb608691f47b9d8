"""A buyer's own trial on a vendor's endpoint, read into a throughput curve per billed GPU.

Before signing, a buyer runs their workload against the vendor's endpoint with one of three tools and
keeps the result file. Each is read in the layout its project publishes:

- guidellm (vllm-project/guidellm): the benchmark report JSON, `{"benchmarks": [...]}`, one entry per
  strategy of a sweep. Fields from src/guidellm/benchmark/schemas/benchmark.py and metrics.py (v0.7.3)
  and the report the project kept as a test asset, tests/unit/entrypoints/assets/benchmarks_stripped.json
  (v0.2.1-41, commit a1fe883a; copied to tests/data/trials/): `start_time` (Unix seconds) and
  `metrics.{time_per_output_token_ms, time_to_first_token_ms, output_tokens_per_second,
  prompt_token_count, output_token_count, request_concurrency}.successful.{median, mean}`; request
  counts in `request_totals` (v0.2/0.3 at the top of each benchmark, v0.7 under `metrics`).
- `vllm bench serve --save-result` (vllm-project/vllm, vllm/benchmarks/serve.py, 2026 main, commit
  009e6d4a): one JSON object per run (`--append-result` adds one per line), with `date`
  ("%Y%m%d-%H%M%S"), `max_concurrency`, `completed`, `failed`, `total_input_tokens`,
  `total_output_tokens`, `output_throughput` (output tok/s over the run), `median_ttft_ms`,
  `median_tpot_ms`.
- genai-perf (triton-inference-server/perf_analyzer, genai-perf 0.0.16dev,
  genai_perf/export_data/json_exporter.py and metrics/llm_metrics.py): `profile_export_genai_perf.json`,
  one run: a mapping of metric name to statistics (`unit`, `avg`, `p50`, ...) for
  `output_token_throughput` (tokens/sec), `output_token_throughput_per_user` (tokens/sec/user),
  `time_to_first_token` and `inter_token_latency` (ms), `input_sequence_length` and
  `output_sequence_length` (tokens), and `input_config` (the concurrency under
  `perf_analyzer.stimulus`). It states no date: give one.
- AIPerf (ai-dynamo/aiperf, genai-perf's successor): `profile_export_aiperf.json`, one run, the same
  metric names and statistics as genai-perf (aiperf/common/models/export_models.py `JsonExportData`,
  `JsonMetricResult`, v0.1.1; docs/reference/json-export-schema.md for schema 1.x): the metrics at the
  top level, or under `records` with the time to first token tagged `ttft` (the project's sample
  examples/artifacts/run1/profile_export_aiperf.json, commit 7c31f579, v0.1.1, 2025-10-03; copied to
  tests/data/trials/). Also `request_count.avg` and `error_request_count.avg` (cancelled and failed
  requests), `input_config.loadgen.concurrency` (schema 1.x: `input_config.phases.profiling.concurrency`)
  and `start_time` (ISO 8601): the trial's date. Each metric states its `unit`, which is checked.

None of the three records how many GPUs served the endpoint, so the buyer states it (`gpus`): the
curve holds output tokens per second per billed GPU = the run's output throughput / gpus, the
interactivity as output tok/s per user (1000 / median time per output token, genai-perf's per-user
throughput P50), and the median time to first token in seconds. A trial whose mean input or output
length differs from the workload's by more than MAX_LENGTH_MISMATCH is flagged: throughput depends on
the sequence lengths, and a trial of other lengths measures another workload.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem
from procure.io.files import own_input, write_files_atomic
from procure.io.yamlsafe import implausible, read_json, regular_file

MAX_LENGTH_MISMATCH = 0.20  # share by which a trial's mean input or output length may differ from the workload's
MAX_TRIAL_BYTES = 200 * 1024 * 1024  # a detailed guidellm report holds every request
FORMATS = ("guidellm", "vllm-bench-serve", "genai-perf", "aiperf")


@dataclass(frozen=True)
class TrialPoint:
    """One run (one concurrency or rate) of a trial, as the tool reported it."""

    label: str  # where in the file: benchmarks[2], line 3, ...
    interactivity: float  # output tok/s per user
    output_tok_s: float  # output tok/s of the whole endpoint
    ttft_s: float | None
    input_len: float | None  # mean tokens per request
    output_len: float | None
    concurrency: float | None
    completed: int | None = None
    failed: int | None = None


def _point(
    label: str,
    interactivity: float,
    output: float,
    ttft_ms: float | None,
    isl: float | None,
    osl: float | None,
    conc: float | None,
    completed: float | None = None,
    failed: float | None = None,
) -> TrialPoint:
    """A run as the tools report it (times to first token in milliseconds, counts as numbers) as a TrialPoint."""
    whole = [int(n) if n is not None else None for n in (completed, failed)]
    return TrialPoint(label, interactivity, output, ttft_ms / 1000.0 if ttft_ms else None, isl, osl, conc, *whole)


@dataclass
class Trial:
    source: str
    format: str
    day: date | None
    points: list[TrialPoint] = field(default_factory=list)
    tool_version: str | None = None
    models: dict[str, str] = field(default_factory=dict)  # the model names the file states -> the field stating it


LATEST_UNIX_S = 253402300800.0  # 10000-01-01T00:00:00Z


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


class _Fields:
    """Reads numbers at dotted paths of one run, recording a located problem for a missing or bad one."""

    def __init__(self, display: str, where: str, data: Any, problems: list[Problem]):
        self.display, self.where, self.data, self.problems = display, where, data, problems

    def get(self, path: str, required: bool = True, positive: bool = True) -> float | None:
        node: Any = self.data
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        value = _number(node)
        name = f"{self.where}.{path}" if self.where else path
        if node is None:
            if required:
                self.problems.append(Problem(self.display, None, name, "required field is missing"))
            return None
        if value is None:
            self.problems.append(Problem(self.display, None, name, f"must be a finite number (got {str(node)[:40]!r})"))
            return None
        if value < 0 or (positive and value == 0):
            self.problems.append(
                Problem(
                    self.display,
                    None,
                    name,
                    f"must be {'greater than 0' if positive else 'at least 0'} (got {value:g})",
                )
            )
            return None
        why = (
            implausible(value, repr(node)) if path != "start_time" else None
        )  # the loader's range: a curve of 1e300 is refused by every command
        if why:
            self.problems.append(Problem(self.display, None, name, why))
            return None
        return value


def detect_format(data: Any) -> str | None:
    """Which tool wrote the parsed JSON: a key set only that tool's layout has."""
    if isinstance(data, dict) and isinstance(data.get("benchmarks"), list):
        return "guidellm"
    runs = data if isinstance(data, list) else [data]
    if runs and all(
        isinstance(r, dict) and "output_throughput" in r and ("median_tpot_ms" in r or "mean_tpot_ms" in r)
        for r in runs
    ):
        return "vllm-bench-serve"
    if _is_aiperf(data):
        return "aiperf"
    if (
        isinstance(data, dict)
        and "output_token_throughput" in data
        and ("input_config" in data or "output_token_throughput_per_user" in data or "inter_token_latency" in data)
    ):
        return "genai-perf"
    return None


def _head(path: Path) -> str:
    """The first 64 KiB of a file as text ('' when it cannot be read): enough to tell its kind."""
    try:
        with open(path, "rb") as handle:
            return handle.read(65536).decode("utf-8", "replace")
    except OSError:
        return ""


def looks_like_trial(path: Path) -> bool:
    """A quick look: is this file a trial result rather than InferenceX rows? (Only the first 64 KiB
    of a regular file: a pipe or a device is refused as every input is.)"""
    regular_file(Path(path), str(path), MAX_TRIAL_BYTES)
    return bool(
        re.search(
            r'"(benchmarks|median_tpot_ms|mean_tpot_ms|output_throughput|output_token_throughput_per_user|input_config|aiperf_version)"',
            _head(path),
        )
    )


def looks_like_inferencex(path: Path) -> bool:
    """A quick look for InferenceX's row fields (procure/io/inferencex.py), so that a broken trial file is
    told as a broken trial, not as rows of another kind."""
    return bool(re.search(r'"(hw|output_tput_per_gpu|tput_per_gpu|median_intvty)"', _head(path)))


def read_trial(path: Path, day: date | None = None) -> Trial:
    """The runs of one trial file; `day` (the trial's date) replaces the file's own."""
    from procure.textsafe import text_problem

    path = Path(path)
    display = str(path)
    refused = text_problem(path.name, True, 255)  # the name is kept as the trial's source, shown on every screen
    if refused is not None:
        raise InputError([Problem(display, None, "file name", f"{refused}: rename the file")])
    own_input(path)
    data = _load(path, display)
    kind = detect_format(data)
    problems: list[Problem] = []
    if kind == "guidellm":
        trial = _guidellm(data, display, problems)
    elif kind == "vllm-bench-serve":
        trial = _vllm(data if isinstance(data, list) else [data], display, problems)
    elif kind == "genai-perf":
        trial = _genai_perf(data, display, problems)
    elif kind == "aiperf":
        trial = _aiperf(data, display, problems)
    else:
        raise InputError(
            [
                Problem(
                    display,
                    None,
                    "",
                    'not a trial result: expected a guidellm benchmark report ("benchmarks"), a `vllm bench serve` '
                    'result ("output_throughput", "median_tpot_ms"), a genai-perf profile export '
                    '("output_token_throughput", "input_config") or an AIPerf profile_export_aiperf.json',
                )
            ]
        )
    if problems:
        raise InputError(problems)
    trial.models = file_models(kind, data)
    if not trial.points:
        raise InputError([Problem(display, None, "", f"{kind} file holds no runs")])
    if day is not None:
        trial.day = day
    if trial.day is None:
        raise InputError(
            [Problem(display, None, "", f"{kind} results state no date: give the trial's date with --date")]
        )
    return trial


def file_models(kind: str, data: Any) -> dict[str, str]:
    """The model names a result file states, each with the field that states it:

    - guidellm: the report's `args.model` (0.4 and later, src/guidellm/benchmark/schemas/report.py
      `GenerativeBenchmarksReport.args`, a `BenchmarkGenerativeTextArgs`), else each benchmark's
      `worker.backend_model` (v0.2, the project's benchmarks_stripped.json);
    - `vllm bench serve`: each run's `model_id` (vllm/benchmarks/serve.py, result_json["model_id"]);
    - genai-perf: `input_config.model_names` (genai-perf's --model, a list), or `input_config.model`;
    - AIPerf: `input_config.endpoint.model_names` (aiperf/common/config/endpoint_config.py, its examples'
      profile_export_aiperf.json)."""

    def names(value: Any, where: str) -> dict[str, str]:
        items = value if isinstance(value, list) else [value]
        return {str(v).strip(): where for v in items if isinstance(v, str) and v.strip()}

    def at(obj: Any, *path: str) -> Any:
        for key in path:
            obj = obj.get(key) if isinstance(obj, dict) else None
        return obj

    found: dict[str, str] = {}
    if kind == "guidellm":
        found = names(at(data, "args", "model"), "args.model")
        if not found:
            for i, bench in enumerate(data.get("benchmarks") or []):
                found.update(names(at(bench, "worker", "backend_model"), f"benchmarks[{i}].worker.backend_model"))
    elif kind == "vllm-bench-serve":
        for i, run in enumerate(data if isinstance(data, list) else [data]):
            found.update(
                names(at(run, "model_id"), "model_id" if not isinstance(data, list) else f"line {i + 1}: model_id")
            )
    elif kind == "genai-perf":
        found = names(at(data, "input_config", "model_names"), "input_config.model_names") or names(
            at(data, "input_config", "model"), "input_config.model"
        )
    elif kind == "aiperf":
        found = names(at(data, "input_config", "endpoint", "model_names"), "input_config.endpoint.model_names")
    return found


def same_model(a: str, b: str) -> bool:
    """One model however it is written: the name after an organisation ("deepseek-ai/DeepSeek-R1" and
    "DeepSeek-R1"), any case."""
    return a.rsplit("/", 1)[-1].strip().casefold() == b.rsplit("/", 1)[-1].strip().casefold()


def resolve_model(trials: list[Trial], given: str | None) -> str | None:
    """The model of a trial: --model when given, else the one model the result files state. A file naming
    another model than --model, or files naming different models without --model, is an error."""
    problems: list[Problem] = []
    stated: list[tuple[str, str, str]] = [(t.source, name, where) for t in trials for name, where in t.models.items()]
    if given is not None:
        for source, name, where in stated:
            if not same_model(name, given):
                problems.append(
                    Problem(
                        source,
                        None,
                        where,
                        f"the run served {name[:80]!r}, but --model says {given[:80]!r}: import the trial of the model "
                        "meant, or correct --model",
                    )
                )
        if problems:
            raise InputError(problems)
        return given
    distinct: list[tuple[str, str, str]] = []
    for item in stated:
        if not any(same_model(item[1], d[1]) for d in distinct):
            distinct.append(item)
    if len(distinct) > 1:
        (_, first, _), (source, other, where) = distinct[0], distinct[1]
        raise InputError(
            [
                Problem(
                    source,
                    None,
                    where,
                    f"{other[:80]!r}, but {first[:80]!r} in the same trial: one trial measures one model (give --model "
                    "to name it, and import each model's files apart)",
                )
            ]
        )
    return distinct[0][1] if distinct else None


def _load(path: Path, display: str) -> Any:
    """JSON, or JSON lines (`vllm bench serve --append-result` writes one result per line)."""
    try:
        return read_json(path, display, MAX_TRIAL_BYTES)
    except InputError as exc:
        from procure.io.yamlsafe import read_text

        text = read_text(path, display, MAX_TRIAL_BYTES)
        lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
        if len(lines) < 2:
            raise exc from None
        runs = []
        for _number, line in lines:
            try:
                runs.append(json.loads(line))
            except (json.JSONDecodeError, RecursionError):
                raise exc from None
        return runs


def _guidellm(data: dict[str, Any], display: str, problems: list[Problem]) -> Trial:
    version = data.get("metadata", {}).get("guidellm_version") if isinstance(data.get("metadata"), dict) else None
    trial = Trial(display, "guidellm", None, tool_version=str(version) if version else None)
    starts = []
    for index, bench in enumerate(data["benchmarks"]):
        where = f"benchmarks[{index}]"
        if not isinstance(bench, dict):
            problems.append(Problem(display, None, where, "expected a benchmark (a JSON object)"))
            continue
        f = _Fields(display, where, bench, problems)
        # guidellm 0.3 and later count the first token in time_per_output_token_ms: the time between
        # output tokens is inter_token_latency_ms there (src/guidellm/benchmark/schemas/metrics.py, v0.7.3)
        tpot = f.get(
            "metrics.inter_token_latency_ms.successful.median"
            if _from_0_3(version)
            else "metrics.time_per_output_token_ms.successful.median"
        )
        output = f.get("metrics.output_tokens_per_second.successful.mean")
        ttft = f.get("metrics.time_to_first_token_ms.successful.median", required=False)
        isl = f.get("metrics.prompt_token_count.successful.mean", required=False)
        osl = f.get("metrics.output_token_count.successful.mean", required=False)
        conc = f.get("metrics.request_concurrency.successful.mean", required=False)
        start = f.get("start_time", required=False)
        totals = bench.get("request_totals") or (bench.get("metrics") or {}).get("request_totals") or {}
        completed = _number(totals.get("successful")) if isinstance(totals, dict) else None
        failed = _number(totals.get("errored")) if isinstance(totals, dict) else None
        if start is not None and start >= LATEST_UNIX_S:  # a date Python's calendar cannot hold
            problems.append(
                Problem(
                    display, None, f"{where}.start_time", f"must be Unix seconds before the year 10000 (got {start:g})"
                )
            )
        elif start is not None:
            starts.append(start)
        if tpot is None or output is None:
            continue
        trial.points.append(_point(where, 1000.0 / tpot, output, ttft, isl, osl, conc, completed, failed))
    if starts:
        trial.day = datetime.fromtimestamp(min(starts), tz=UTC).date()
    return trial


def _from_0_3(version: Any) -> bool:
    """A guidellm version string ("0.7.3", "0.3.0.dev4") of 0.3 or later."""
    found = re.match(r"(\d+)\.(\d+)", str(version or ""))
    return bool(found) and (int(found.group(1)), int(found.group(2))) >= (0, 3)


def _vllm(runs: list[dict[str, Any]], display: str, problems: list[Problem]) -> Trial:
    trial = Trial(display, "vllm-bench-serve", None)
    days = []
    for index, run in enumerate(runs):
        where = f"[{index}]" if len(runs) > 1 else ""
        f = _Fields(display, where, run, problems)
        tpot = f.get("median_tpot_ms")
        output = f.get("output_throughput")
        ttft = f.get("median_ttft_ms", required=False)
        completed = f.get("completed", required=False, positive=False)
        failed = f.get("failed", required=False, positive=False)
        total_in = f.get("total_input_tokens", required=False, positive=False)
        total_out = f.get("total_output_tokens", required=False, positive=False)
        conc = f.get("max_concurrency", required=False)
        raw_day = run.get("date")
        if isinstance(raw_day, str):
            try:
                days.append(datetime.strptime(raw_day, "%Y%m%d-%H%M%S").date())
            except ValueError:
                problems.append(
                    Problem(
                        display,
                        None,
                        f"{where}.date" if where else "date",
                        f"must be a date like 20261130-142501 (got {raw_day[:40]!r})",
                    )
                )
        if tpot is None or output is None:
            continue
        isl = total_in / completed if total_in is not None and completed else None
        osl = total_out / completed if total_out is not None and completed else None
        trial.points.append(_point(where or "run", 1000.0 / tpot, output, ttft, isl, osl, conc, completed, failed))
    if days:
        trial.day = min(days)
    return trial


def _genai_perf(data: dict[str, Any], display: str, problems: list[Problem]) -> Trial:
    trial = Trial(display, "genai-perf", None)
    f = _Fields(display, "", data, problems)
    output = f.get("output_token_throughput.avg")
    per_user = f.get("output_token_throughput_per_user.p50", required=False)
    itl = None
    if per_user is None:
        itl = f.get("inter_token_latency.p50")
    ttft = f.get("time_to_first_token.p50", required=False)
    isl = f.get("input_sequence_length.avg", required=False)
    osl = f.get("output_sequence_length.avg", required=False)
    config = data.get("input_config") if isinstance(data.get("input_config"), dict) else {}
    stimulus = (
        (config.get("perf_analyzer") or {}).get("stimulus") if isinstance(config.get("perf_analyzer"), dict) else None
    )
    conc = _number(stimulus.get("concurrency")) if isinstance(stimulus, dict) else _number(config.get("concurrency"))
    interactivity = per_user if per_user is not None else (1000.0 / itl if itl else None)
    if output is not None and interactivity is not None:
        trial.points.append(_point("run", interactivity, output, ttft, isl, osl, conc))
    return trial


def length_mismatches(trial: Trial, isl: int, osl: int) -> list[str]:
    """A line per run whose mean input or output length is off the workload's by more than the limit."""
    out = []
    for p in trial.points:
        for what, seen, wanted in (("input", p.input_len, isl), ("output", p.output_len, osl)):
            if seen is not None and abs(seen - wanted) > MAX_LENGTH_MISMATCH * wanted:
                out.append(
                    f"{p.label}: mean {what} length {seen:.0f} tokens is {abs(seen / wanted - 1):.0%} off the "
                    f"workload's {wanted} (more than {MAX_LENGTH_MISMATCH:.0%}): the trial measures another workload"
                )
    return out


def curve_csv(
    trials: list[Trial],
    gpus: int,
    isl: int,
    osl: int,
    mismatches: list[str],
    marks: dict[str, str | None] | None = None,
) -> str:
    """The curve file: '#' lines say where it comes from (points_source: measured, trial date, and the
    gpu, model and precision when stated: procure/model/references.py), then interactivity, output
    tok/s per billed GPU and TTFT per run."""
    days = sorted(t.day for t in trials if t.day)
    lines = [
        "# points_source: measured",
        f"# trial date: {days[-1].isoformat()}" if days else "# trial date: unknown",
        "# trial: "
        + "; ".join(
            f"{t.format}{' ' + t.tool_version if t.tool_version else ''} from {Path(t.source).name} ({len(t.points)} "
            f"run{'s' if len(t.points) != 1 else ''}, {t.day})"
            for t in trials
        ),
        f"# per billed GPU: the endpoint's output throughput / {gpus} GPUs; workload isl {isl}, osl {osl}",
    ]
    lines += [f"# {name}: {value}" for name, value in (marks or {}).items() if value]
    lines += [f"# length mismatch: {m}" for m in mismatches]
    lines.append(
        "# interactivity = output tok/s per user (1000 / median TPOT), output_tok_s_gpu = output tok/s per billed GPU, "
        "ttft_s = median time to first token (s)"
    )
    lines.append("interactivity,output_tok_s_gpu,ttft_s")
    points = sorted((p for t in trials for p in t.points), key=lambda p: (p.interactivity, p.output_tok_s))
    for p in points:
        ttft = "" if p.ttft_s is None else format(p.ttft_s, ".6g")
        lines.append(f"{p.interactivity:.6g},{p.output_tok_s / gpus:.6g},{ttft}")
    return "\n".join(re.sub(r"[\x00-\x1f\x7f]+", " ", line) for line in lines) + "\n"


def trial_warnings(trials: list[Trial], isl: int, osl: int) -> tuple[list[str], list[str]]:
    """(warnings, length mismatches): runs of other sequence lengths than the workload's, and failed requests."""
    mismatches = [f"{Path(t.source).name} {m}" for t in trials for m in length_mismatches(t, isl, osl)]
    warnings = list(mismatches)
    for trial in trials:
        for p in trial.points:
            if p.failed:
                warnings.append(
                    f"{Path(trial.source).name} {p.label}: {p.failed} failed request(s) of "
                    f"{p.failed + (p.completed or 0)}: the throughput counts completed requests only"
                )
    return warnings, mismatches


def default_name(path: Path) -> str:
    """trial-{file name}, lower-cased and safe as a curve name."""
    return "trial-" + (re.sub(r"[^a-z0-9._-]+", "-", Path(path).stem.lower()).strip("-.") or "run")


def import_trials(
    paths: list[Path],
    out_dir: Path,
    name: str,
    gpus: int,
    isl: int,
    osl: int,
    day: date | None = None,
    force: bool = False,
    marks: dict[str, str | None] | None = None,
) -> tuple[list[Path], list[str]]:
    """Write performance/NAME.csv from the trial files: every run is a point. Returns (written, warnings)."""
    if gpus < 1:
        raise InputError([Problem("--gpus", None, "", f"must be at least 1 (got {gpus})")])
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
        raise InputError(
            [Problem("--name", None, "", f"must be lower-case letters, digits, '.', '_' or '-' (got {name!r})")]
        )
    problems: list[Problem] = []
    trials = []
    for path in paths:
        try:
            trials.append(read_trial(path, day))
        except InputError as exc:
            problems.extend(exc.problems)
    target = Path(out_dir) / f"{name}.csv"
    if target.exists() and not force:
        problems.append(Problem(str(target), None, "", "already exists: use --force to replace it"))
    if problems:
        raise InputError(problems)
    marks = dict(marks or {})
    marks["model"] = resolve_model(trials, marks.get("model"))
    warnings, mismatches = trial_warnings(trials, isl, osl)
    from procure.io.workspace import check_curves_to_write

    files = {target.name: curve_csv(trials, gpus, isl, osl, mismatches, marks)}
    check_curves_to_write(Path(out_dir), files)
    write_files_atomic(Path(out_dir), files)
    return [target], warnings


# --- AIPerf ----------------------------------------------------------------------------------------

AIPERF_UNITS = {  # the display units AIPerf writes (aiperf/common/enums/metric_enums.py, v0.1.1)
    "output_token_throughput": "tokens/sec",
    "output_token_throughput_per_user": "tokens/sec/user",
    "inter_token_latency": "ms",
    "time_to_first_token": "ms",
    "ttft": "ms",
    "input_sequence_length": "tokens",
    "output_sequence_length": "tokens",
}


def _is_aiperf(data: Any) -> bool:
    """An AIPerf export: its run fields (was_cancelled, error_summary, schema_version, aiperf_version)
    or its `records` beside genai-perf's metric names."""
    if not isinstance(data, dict):
        return False
    records = data.get("records")
    if isinstance(records, dict) and "output_token_throughput" in records:
        return True
    return "output_token_throughput" in data and any(
        k in data for k in ("was_cancelled", "error_summary", "schema_version", "aiperf_version")
    )


def _aiperf(data: dict[str, Any], display: str, problems: list[Problem]) -> Trial:
    """One AIPerf run (see the module's docstring): interactivity from the per-user output throughput
    P50 (else 1000 / the inter-token latency P50), which excludes the first token as guidellm's ITL does."""
    nested = isinstance(data.get("records"), dict)
    root, where = (data["records"], "records") if nested else (data, "")
    trial = Trial(
        display, "aiperf", None, tool_version=str(data["aiperf_version"])[:20] if data.get("aiperf_version") else None
    )
    f = _Fields(display, where, root, problems)
    ttft_key = "ttft" if "ttft" in root and "time_to_first_token" not in root else "time_to_first_token"
    for key in (
        "output_token_throughput",
        "output_token_throughput_per_user",
        "inter_token_latency",
        ttft_key,
        "input_sequence_length",
        "output_sequence_length",
    ):
        unit = root.get(key, {}).get("unit") if isinstance(root.get(key), dict) else None
        if unit is not None and unit != AIPERF_UNITS[key]:
            problems.append(
                Problem(
                    display,
                    None,
                    f"{where + '.' if where else ''}{key}.unit",
                    f"must be {AIPERF_UNITS[key]!r}, the unit read (got {str(unit)[:20]!r})",
                )
            )
    output = f.get("output_token_throughput.avg")
    per_user = f.get("output_token_throughput_per_user.p50", required=False)
    itl = f.get("inter_token_latency.p50") if per_user is None else None
    ttft = f.get(f"{ttft_key}.p50", required=False)
    isl = f.get("input_sequence_length.avg", required=False)
    osl = f.get("output_sequence_length.avg", required=False)
    completed = f.get("request_count.avg", required=False, positive=False)
    failed = f.get("error_request_count.avg", required=False, positive=False)
    config = data.get("input_config") if isinstance(data.get("input_config"), dict) else {}
    loadgen = config.get("loadgen") if isinstance(config.get("loadgen"), dict) else {}
    profiling = ((config.get("phases") or {}).get("profiling") or {}) if isinstance(config.get("phases"), dict) else {}
    conc = (
        _number(loadgen.get("concurrency"))
        if "concurrency" in loadgen
        else _number(profiling.get("concurrency") if isinstance(profiling, dict) else None)
    )
    start = data.get("start_time")
    if start is not None:
        try:
            trial.day = datetime.fromisoformat(str(start).replace("Z", "+00:00")).date()
        except ValueError:
            problems.append(
                Problem(
                    display,
                    None,
                    "start_time",
                    f"must be an ISO 8601 date-time like 2025-10-03T13:13:39 (got {str(start)[:40]!r})",
                )
            )
    interactivity = per_user if per_user is not None else (1000.0 / itl if itl else None)
    if output is not None and interactivity is not None:
        trial.points.append(_point("run", interactivity, output, ttft, isl, osl, conc, completed, failed))
    return trial
