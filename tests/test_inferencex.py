"""InferenceX rows to reference curves (procure/inferencex.py): the rows of the workload's sequence
lengths grouped by (hw, framework, precision, spec_decoding), one CSV each, read back here with the
csv module.

Figures are InferenceX's published ones (shared/reference/README.md): H200 SGLang TP8 8k/1k at conc
4, 16 and 64 gives 43.12, 93.89 and 150.98 output tok/s/GPU at 91.4, 50.0 and 20.3 tok/s per user;
B200 SGLang at conc 2: 51.72 at 109.5; B200 TensorRT-LLM at conc 4: 50.65 at 107.6. The times to first
token are made up. tests/data/import_inferencex_row.json is a real InferenceX row (MI355X, Kimi-K2.5,
8k/1k, conc 32; SemiAnalysis, Apache-2.0).
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from procure.errors import InputError
from procure.inferencex import curve_name, import_curves
from procure.workspace import load_workspace


def row(hw: str = "h200", framework: str = "sglang", conc: int = 4, intvty: float = 91.4, output: float = 43.12, ttft: float = 0.5, **changes: Any) -> dict[str, Any]:
    found = {
        "hw": hw,
        "conc": conc,
        "model": "deepseek-ai/DeepSeek-R1",
        "framework": framework,
        "precision": "fp8",
        "spec_decoding": "none",
        "isl": 8192,
        "osl": 1024,
        "is_multinode": False,
        "tput_per_gpu": output * 9 if isinstance(output, float) else None,
        "output_tput_per_gpu": output,
        "median_ttft": ttft,
        "p90_ttft": ttft * 2,
        "median_intvty": intvty,
    }
    found.update(changes)
    return found


H200 = [
    row(conc=16, intvty=50.0, output=93.89, ttft=0.6),  # out of order on purpose
    row(conc=4, intvty=91.4, output=43.12, ttft=0.4),
    row(conc=64, intvty=20.3, output=150.98, ttft=0.9),
]
B200 = [
    row(hw="b200", conc=2, intvty=109.5, output=51.72, ttft=0.3),
    row(hw="B200", framework="trt", conc=4, intvty=107.6, output=50.65, ttft=0.35),
]


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def read_curve(path: Path) -> tuple[list[str], list[list[str]]]:
    """(comment lines, rows with the header first) of a curve CSV."""
    lines = path.read_text().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    return comments, list(csv.reader(line for line in lines if not line.startswith("#")))


def problems_of(excinfo: pytest.ExceptionInfo[InputError]) -> list[str]:
    return [str(p) for p in excinfo.value.problems]


def test_rows_become_one_curve_per_series(tmp_path):
    other_workload = row(isl=1024, osl=1024, intvty=70.0, output=300.0)
    source = write_json(tmp_path / "ix.json", H200 + B200 + [other_workload])
    out = tmp_path / "performance"
    written, warnings = import_curves(source, out, 8192, 1024)
    assert warnings == []
    assert written == [out / "b200-sglang-fp8.csv", out / "b200-trt-fp8.csv", out / "h200-sglang-fp8.csv"]
    comments, rows = read_curve(out / "h200-sglang-fp8.csv")
    assert rows == [
        ["interactivity", "output_tok_s_gpu", "ttft_s"],
        ["20.3", "150.98", "0.9"],
        ["50", "93.89", "0.6"],
        ["91.4", "43.12", "0.4"],
    ]  # sorted by interactivity; the 1k/1k row is not in it
    assert comments[0] == "# InferenceX benchmark rows from ix.json, model deepseek-ai/DeepSeek-R1"
    assert comments[1] == "# filter: isl 8192, osl 1024; hw h200, framework sglang, precision fp8, spec_decoding none; 3 rows"
    assert read_curve(out / "b200-trt-fp8.csv")[1][1:] == [["107.6", "50.65", "0.35"]]


def test_a_curve_loads_as_a_reference_curve(tmp_path, workspace_copy):
    root = workspace_copy("basic")
    source = write_json(tmp_path / "ix.json", H200)
    import_curves(source, root / "performance", 8192, 1024)
    curve = load_workspace(root).curves["h200-sglang-fp8"]
    assert curve.points == [(20.3, 150.98, 0.9), (50.0, 93.89, 0.6), (91.4, 43.12, 0.4)]
    assert curve.source.startswith("InferenceX benchmark rows from ix.json")


def test_a_file_of_one_row(tmp_path, data_dir):
    written, warnings = import_curves(data_dir / "import_inferencex_row.json", tmp_path, 8192, 1024)
    assert written == [tmp_path / "mi355x-vllm-int4-mtp.csv"]
    # median_intvty 4.3418380529066685, output_tput_per_gpu 17.57057269511527, median_ttft 1.816827566944994
    # (seconds), written to 12 significant digits
    assert read_curve(written[0])[1] == [["interactivity", "output_tok_s_gpu", "ttft_s"], ["4.34183805291", "17.5705726951", "1.81682756694"]]
    assert warnings == []


def test_the_nearest_sequence_lengths_with_a_warning(tmp_path):
    # for 8000/1000: 8192/1024 is |ln(8192/8000)| + |ln(1024/1000)| = 0.047 away, 1024/1024 is 2.08 away
    source = write_json(tmp_path / "ix.json", H200 + [row(isl=1024, osl=1024, intvty=70.0, output=300.0)])
    written, warnings = import_curves(source, tmp_path / "out", 8000, 1000)
    assert warnings == [
        "no rows for isl 8000, osl 1000: used the nearest pair, isl 8192, osl 1024 "
        "(throughput depends on the sequence lengths: check the curve before relying on it)"
    ]
    comments, rows = read_curve(written[0])
    assert len(rows) == 4  # header and the three 8k/1k rows
    assert "# filter: isl 8192, osl 1024 (nearest to the workload's isl 8000, osl 1000); " in comments[1]


def test_gpu_filter_matches_any_letter_case(tmp_path):
    source = write_json(tmp_path / "ix.json", H200 + B200)
    written, _ = import_curves(source, tmp_path / "out", 8192, 1024, gpu="B200")
    assert [p.name for p in written] == ["b200-sglang-fp8.csv", "b200-trt-fp8.csv"]  # hw b200 and B200
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["b200-sglang-fp8.csv", "b200-trt-fp8.csv"]
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path / "none", 8192, 1024, gpu="gb300")
    assert problems_of(caught) == [f"{source}: no rows for hw gb300 (hw in the file: b200, h200)"]


def test_multinode_rows_are_kept_with_a_warning(tmp_path):
    disagg = row(conc=256, intvty=30.0, output=400.0, ttft=2.0, is_multinode=True)
    source = write_json(tmp_path / "ix.json", H200 + [disagg])
    written, warnings = import_curves(source, tmp_path, 8192, 1024)
    assert warnings == [
        "h200-sglang-fp8: 1 of 4 rows are multinode (disaggregated), kept: their output per GPU counts decode GPUs only, "
        "so it is not comparable with single-node rows"
    ]
    comments, rows = read_curve(written[0])
    assert ["30", "400", "2"] in rows
    assert "# 1 multinode row(s): their output per GPU counts decode GPUs only" in comments


@pytest.mark.parametrize(
    "spec, name",
    [("mtp", "h200-sglang-fp8-mtp"), ("MTP", "h200-sglang-fp8-mtp"), ("none", "h200-sglang-fp8"), ("", "h200-sglang-fp8"), (None, "h200-sglang-fp8")],
)
def test_spec_decoding_names_the_curve_unless_none(tmp_path, spec, name):
    source = write_json(tmp_path / "ix.json", [row(spec_decoding=spec)])
    written, _ = import_curves(source, tmp_path / "out", 8192, 1024)
    assert [p.name for p in written] == [f"{name}.csv"]


def test_series_with_and_without_spec_decoding_are_separate_curves(tmp_path):
    source = write_json(tmp_path / "ix.json", [row(spec_decoding="mtp", intvty=120.0, output=60.0), row(), {k: v for k, v in row(conc=16, intvty=50.0).items() if k != "spec_decoding"}])
    written, _ = import_curves(source, tmp_path, 8192, 1024)
    assert [p.name for p in written] == ["h200-sglang-fp8.csv", "h200-sglang-fp8-mtp.csv"]
    assert len(read_curve(tmp_path / "h200-sglang-fp8.csv")[1]) == 3  # "none" and a missing spec_decoding: one series


def test_curve_names_are_safe_file_names():
    assert curve_name("B200", "TRT LLM", "FP4", "eagle/3") == "b200-trt-llm-fp4-eagle-3"
    assert curve_name("../x", "y", "z", "none") == "x-y-z"


def test_an_existing_curve_is_replaced_only_with_force(tmp_path):
    source = write_json(tmp_path / "ix.json", H200 + B200)
    out = tmp_path / "performance"
    out.mkdir()
    (out / "h200-sglang-fp8.csv").write_text("interactivity,output_tok_s_gpu\n1,1\n")
    with pytest.raises(InputError) as caught:
        import_curves(source, out, 8192, 1024)
    assert problems_of(caught) == [f"{out / 'h200-sglang-fp8.csv'}: already exists: use --force to replace it"]
    assert sorted(p.name for p in out.iterdir()) == ["h200-sglang-fp8.csv"]  # nothing written
    assert (out / "h200-sglang-fp8.csv").read_text() == "interactivity,output_tok_s_gpu\n1,1\n"

    written, _ = import_curves(source, out, 8192, 1024, force=True)
    assert len(written) == 3
    assert read_curve(out / "h200-sglang-fp8.csv")[1][1] == ["20.3", "150.98", "0.9"]
    assert sorted(p.name for p in out.iterdir()) == ["b200-sglang-fp8.csv", "b200-trt-fp8.csv", "h200-sglang-fp8.csv"]


def test_bad_rows_are_reported_by_their_index(tmp_path):
    missing = row(conc=16, intvty=50.0)
    del missing["median_intvty"]
    rows = [
        H200[0],
        missing,
        row(output="fast"),
        row(is_multinode="no", median_ttft=float("nan")),
        "a row",
        {k: v for k, v in row().items() if k != "isl"},
        row(isl=1024, osl=1024, median_ttft=None),  # another workload: its other fields are not read
    ]
    source = tmp_path / "ix.json"
    source.write_text(json.dumps(rows))  # NaN written as JSON's NaN, which Python reads
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path / "out", 8192, 1024)
    # the rows that cannot be filtered are reported first, on their own
    assert problems_of(caught) == [f"{source}: [4]: expected an InferenceX row (a JSON object), got 'a row'", f"{source}: [5].isl: required field is missing"]

    source.write_text(json.dumps(rows[:4] + rows[6:]))
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path / "out", 8192, 1024)
    assert problems_of(caught) == [
        f"{source}: [1].median_intvty: required field is missing",
        f"{source}: [2].output_tput_per_gpu: must be a number (got 'fast')",
        f"{source}: [3].median_ttft: must be a finite number (got nan)",
        f"{source}: [3].is_multinode: must be true or false (got 'no')",
    ]
    assert not (tmp_path / "out").exists()


def test_rows_of_several_models_need_a_model_filter(tmp_path):
    source = write_json(tmp_path / "ix.json", H200 + [row(model="moonshotai/Kimi-K2.5", intvty=60.0, output=80.0)])
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path, 8192, 1024)
    assert problems_of(caught) == [f"{source}: rows of 2 models (deepseek-ai/DeepSeek-R1, moonshotai/Kimi-K2.5): pick one (model=...), a curve is one model's"]
    written, _ = import_curves(source, tmp_path, 8192, 1024, model="moonshotai/kimi-k2.5")
    assert read_curve(written[0])[1][1:] == [["60", "80", "0.5"]]


def test_the_date_range_is_noted_when_rows_carry_dates(tmp_path):
    dated = [row(conc=4, date="2026-05-20"), row(conc=16, intvty=50.0, output=93.89, date="2026-05-01T12:00:00Z")]
    written, _ = import_curves(write_json(tmp_path / "ix.json", dated), tmp_path, 8192, 1024)
    assert "# dates: 2026-05-01 to 2026-05-20" in read_curve(written[0])[0]


def test_malformed_json_names_the_line(tmp_path):
    source = tmp_path / "ix.json"
    source.write_text('[\n  {"hw": "h200",\n  "isl" 8192}\n]\n')
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path, 8192, 1024)
    assert problems_of(caught) == [f"{source}:3: malformed JSON: Expecting ':' delimiter"]


def test_the_reference_sample_copied_in_a_list(tmp_path, data_dir):
    # the same row twice over, as a list: one curve, two identical points kept as given
    one = json.loads((data_dir / "import_inferencex_row.json").read_text())
    source = write_json(tmp_path / "ix.json", [one, one])
    shutil.rmtree(tmp_path / "out", ignore_errors=True)
    written, _ = import_curves(source, tmp_path / "out", 8192, 1024, gpu="MI355X")
    assert len(read_curve(written[0])[1]) == 3
