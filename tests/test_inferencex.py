"""InferenceX rows to reference curves (procure/io/inferencex.py): the rows of the workload's sequence
lengths grouped by (hw, framework, precision, spec_decoding), one CSV each, read back here with the
csv module.

Figures are InferenceX's published ones (SemiAnalysis InferenceX, May 2026): H200 SGLang TP8 8k/1k at conc
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
from procure.io.inferencex import curve_name, import_curves
from procure.io.workspace import load_workspace


def row(
    hw: str = "h200",
    framework: str = "sglang",
    conc: int = 4,
    intvty: float = 91.4,
    output: float = 43.12,
    ttft: float = 0.5,
    **changes: Any,
) -> dict[str, Any]:
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
    assert (
        comments[1]
        == "# filter: isl 8192, osl 1024; hw h200, framework sglang, precision fp8, spec_decoding none; 3 rows"
    )
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
    assert read_curve(written[0])[1] == [
        ["interactivity", "output_tok_s_gpu", "ttft_s"],
        ["4.34183805291", "17.5705726951", "1.81682756694"],
    ]
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


def test_multinode_rows_without_a_split_are_single_node_rows(tmp_path):
    # is_multinode without disagg or GPU counts: an aggregated server on more GPUs, every figure per GPU
    disagg = row(conc=256, intvty=30.0, output=400.0, ttft=2.0, is_multinode=True)
    source = write_json(tmp_path / "ix.json", H200 + [disagg])
    written, warnings = import_curves(source, tmp_path, 8192, 1024)
    assert warnings == []
    comments, rows = read_curve(written[0])
    assert ["30", "400", "2"] in rows
    assert any(c.startswith("# normalization: 4 of 4 rows single-node") for c in comments)


# --- disaggregated rows: output per billed GPU ------------------------------------------------------


def api_row(
    framework: str,
    conc: int,
    prefill: int,
    decode: int,
    intvty: float,
    total: float,
    inputs: float,
    output: float,
    ttft: float | None,
    day: str,
) -> dict[str, Any]:
    """A row in the InferenceX web API's layout (figures under "metrics"), B200 DeepSeek-R1 FP8 8k/1k."""
    metrics = {
        "median_intvty": intvty,
        "tput_per_gpu": total,
        "input_tput_per_gpu": inputs,
        "output_tput_per_gpu": output,
    }
    if ttft is not None:
        metrics["median_ttft"] = ttft
    return {
        "hardware": "b200",
        "framework": framework,
        "model": "dsr1",
        "precision": "fp8",
        "spec_method": "none",
        "disagg": True,
        "is_multinode": True,
        "prefill_tp": 8,
        "decode_tp": 8,
        "num_prefill_gpu": prefill,
        "num_decode_gpu": decode,
        "isl": 8192,
        "osl": 1024,
        "conc": conc,
        "metrics": metrics,
        "date": day,
    }


# Real B200 DeepSeek-R1 FP8 8k/1k disaggregated rows, as the InferenceX web API published them (its
# benchmarks endpoint, captured in SemiAnalysisAI/InferenceX-app, packages/app/cypress/fixtures/api/
# benchmarks.json, 2026-06; Apache-2.0). Runs: github.com/SemiAnalysisAI/InferenceX/actions/runs/...
SGLANG_4 = api_row(
    "dynamo-sglang",
    4,
    8,
    8,
    97.49213979159121,
    201.9475324928681,
    358.9703672211885,
    44.92469776454773,
    0.44102503650356084,
    "2026-02-07",
)  # 21776201394
SGLANG_32 = api_row(
    "dynamo-sglang",
    32,
    8,
    48,
    91.12158127142403,
    342.14993209371244,
    2127.248710474434,
    44.63346903025885,
    2.9839357234886847,
    "2026-02-07",
)  # 21776201394
TRT_32 = api_row(
    "dynamo-trt",
    32,
    8,
    32,
    97.14855672294195,
    578.9682021876605,
    2571.156355704804,
    80.92116380837463,
    1.2892533569829538,
    "2026-03-23",
)  # 23438524239
TRT_128 = api_row(
    "dynamo-trt",
    128,
    8,
    32,
    61.04555150497442,
    1428.8085258145509,
    6352.824424463733,
    197.8045511522554,
    2.273917281505419,
    "2026-02-12",
)  # 21957354903


def test_real_disaggregated_rows_become_output_per_billed_gpu(tmp_path):
    # Each row's split, by hand: total x (P + D) = input x P + output x D.
    # SGLang conc 4, P 8, D 8:   (358.97037 x 8 + 44.924698 x 8) / 16 = (2871.7629 + 359.3976) / 16 = 201.9475 =
    # tput_per_gpu
    #   SGLang conc 32, P 8, D 48: (2127.2487 x 8 + 44.633469 x 48) / 56 = (17017.990 + 2142.4065) / 56 = 342.1499
    #   TRT conc 32, P 8, D 32:    (2571.1564 x 8 + 80.921164 x 32) / 40 = (20569.251 + 2589.4772) / 40 = 578.9682
    # so output is per decode GPU; per billed GPU it is output x D / (P + D):
    #   SGLang conc 4:  44.924698 x 8 / 16 = 22.462349
    #   SGLang conc 32: 44.633469 x 48 / 56 = 38.257259
    #   TRT conc 32:    80.921164 x 32 / 40 = 64.736931
    #   TRT conc 128:   197.80455 x 32 / 40 = 158.24364
    source = write_json(tmp_path / "api.json", [SGLANG_4, SGLANG_32, TRT_32, TRT_128])
    written, warnings = import_curves(source, tmp_path / "out", 8192, 1024)
    assert warnings == []
    assert [p.name for p in written] == ["b200-dynamo-sglang-fp8.csv", "b200-dynamo-trt-fp8.csv"]
    sglang = [(float(x), float(y)) for x, y, _ in read_curve(written[0])[1][1:]]
    trt = [(float(x), float(y)) for x, y, _ in read_curve(written[1])[1][1:]]
    # sorted by interactivity, written to 12 significant digits
    assert sglang == [
        (pytest.approx(91.121581), pytest.approx(38.257259, abs=1e-6)),
        (pytest.approx(97.492140), pytest.approx(22.462349, abs=1e-6)),
    ]
    assert trt == [
        (pytest.approx(61.045552), pytest.approx(158.24364, abs=1e-5)),
        (pytest.approx(97.148557), pytest.approx(64.736931, abs=1e-6)),
    ]
    comments = read_curve(written[1])[0]
    assert (
        "# normalization: 2 of 2 rows prefill/decode split: output per decode GPU, input per prefill GPU, total per "
        "all GPUs (output x D / (P + D))" in comments
    )
    # Near 97 tok/s per user, per decode GPU TRT gives 80.92 / 44.92 = 1.80x SGLang; per billed GPU,
    # 64.74 / 22.46 = 2.88x: SGLang's conc-4 configuration spends half its GPUs on prefill.
    assert trt[1][1] / sglang[1][1] == pytest.approx(64.736931 / 22.462349)


def one_divisor(**changes: Any) -> dict[str, Any]:
    """A disaggregated row (P 2, D 6) whose figures share one divisor: total 1000 = input 900 + output 100."""
    found = row(
        intvty=40.0,
        output=100.0,
        tput_per_gpu=1000.0,
        input_tput_per_gpu=900.0,
        disagg=True,
        is_multinode=True,
        num_prefill_gpu=2,
        num_decode_gpu=6,
    )
    found.update(changes)
    return found


def test_one_divisor_named_by_the_absolute_figures(tmp_path):
    # output_tput_tps 800 / output 100 = 8 GPUs = P + D: per all GPUs, kept; 600 / 100 = 6 = D: per
    # decode GPU, 100 x 6 / 8 = 75 per billed GPU.
    source = write_json(
        tmp_path / "ix.json",
        [one_divisor(output_tput_tps=800.0), one_divisor(conc=8, median_intvty=30.0, output_tput_tps=600.0)],
    )
    written, _ = import_curves(source, tmp_path / "out", 8192, 1024)
    comments, rows = read_curve(written[0])
    assert rows[1:] == [["30", "75", "0.5"], ["40", "100", "0.5"]]
    assert "# normalization: 1 of 2 rows one divisor, all GPUs of the configuration (kept as published)" in comments
    assert "# normalization: 1 of 2 rows one divisor, the decode GPUs (output x D / (P + D))" in comments


def test_a_row_that_does_not_show_its_divisor_needs_the_users_basis(tmp_path):
    source = write_json(tmp_path / "ix.json", [one_divisor()])
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path / "out", 8192, 1024)
    assert problems_of(caught) == [
        f"{source}: [0].output_tput_per_gpu: cannot tell which GPUs the disaggregated row's figures are divided by: "
        "total = input + output at one divisor, but the row does not say whether it is all GPUs or the decode GPUs; "
        "state it with --per-gpu-basis all|decode"
    ]
    assert not (tmp_path / "out").exists()
    # decode: 100 x 6 / (2 + 6) = 75; all: 100 as published
    written, warnings = import_curves(source, tmp_path / "decode", 8192, 1024, per_gpu_basis="decode")
    assert read_curve(written[0])[1][1] == ["40", "75", "0.5"]
    assert warnings == [
        "h200-sglang-fp8: 1 of 1 rows normalized as --per-gpu-basis decode says (their own figures do not show it)"
    ]
    assert (
        "# normalization: 1 of 1 rows one divisor, the decode GPUs (output x D / (P + D)) as --per-gpu-basis said"
        in read_curve(written[0])[0]
    )
    written, _ = import_curves(source, tmp_path / "all", 8192, 1024, per_gpu_basis="all")
    assert read_curve(written[0])[1][1] == ["40", "100", "0.5"]


def test_the_users_basis_never_overrides_what_the_row_shows(tmp_path):
    source = write_json(tmp_path / "api.json", [TRT_32])
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path / "out", 8192, 1024, per_gpu_basis="all")
    assert problems_of(caught) == [
        f"{source}: [0].output_tput_per_gpu: the row's own figures show output per decode GPU, not per GPU of the "
        "configuration as --per-gpu-basis all says"
    ]
    written, _ = import_curves(
        source, tmp_path / "out", 8192, 1024, per_gpu_basis="decode"
    )  # agrees: converted as without it
    assert float(read_curve(written[0])[1][1][1]) == pytest.approx(64.736931, abs=1e-6)


def test_a_real_row_whose_counts_do_not_match_its_figures_is_refused(tmp_path):
    # GB200 Dynamo-TRT 1k/1k conc 4 as published (run 19948006055, 2025-12-05): P 36, D 36, total 32.667,
    # input 146.43, output 18.447. Split: (146.43 + 18.447) x 36 / 72 = 82.44, not 32.67; one divisor:
    # 146.43 + 18.447 = 164.88, not 32.67. No basis fits: refused, unless the user states one.
    gb200 = api_row(
        "dynamo-trt",
        4,
        36,
        36,
        159.50286761079036,
        32.66740863189287,
        146.43053093445712,
        18.44701834407234,
        0.12634469696786255,
        "2025-12-05",
    )
    gb200.update(hardware="gb200", is_multinode=False, prefill_tp=36, decode_tp=36, isl=1024, osl=1024)
    source = write_json(tmp_path / "api.json", [gb200])
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path / "out", 1024, 1024)
    assert problems_of(caught) == [
        f"{source}: [0].output_tput_per_gpu: cannot tell which GPUs the disaggregated row's figures are divided by: "
        "neither "
        "total x (P + D) = input x P + output x D nor total = input + output holds (P 36, D 36): the GPU counts do not "
        "match "
        "the figures; state it with --per-gpu-basis all|decode"
    ]
    written, _ = import_curves(source, tmp_path / "out", 1024, 1024, per_gpu_basis="decode")
    assert float(read_curve(written[0])[1][1][1]) == pytest.approx(18.44701834407234 / 2)  # x 36 / 72


def test_a_row_without_median_ttft_imports_with_no_ttft_there(tmp_path):
    untimed = api_row(
        "dynamo-trt",
        32,
        8,
        32,
        97.14855672294195,
        578.9682021876605,
        2571.156355704804,
        80.92116380837463,
        None,
        "2026-03-23",
    )
    source = write_json(tmp_path / "api.json", [untimed, TRT_128])
    written, warnings = import_curves(source, tmp_path / "out", 8192, 1024)
    assert warnings == [
        "b200-dynamo-trt-fp8: 1 of 2 rows state no median_ttft: the curve has no time to first token there"
    ]
    rows = read_curve(written[0])[1]
    assert rows[1][2] == "2.27391728151" and rows[2][2] == ""  # the conc-32 row at 97.1 tok/s/user states none
    root = tmp_path / "ws"
    shutil.copytree(Path(__file__).parent / "data" / "basic", root)
    import_curves(source, root / "performance", 8192, 1024)
    curve = load_workspace(root).curves["b200-dynamo-trt-fp8"]
    assert curve.points[1] == (pytest.approx(97.148557), pytest.approx(64.736931, abs=1e-6))  # two values: no TTFT


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        (
            {"num_decode_gpu": 0},
            "[0].num_decode_gpu: a disaggregated row needs num_prefill_gpu and num_decode_gpu greater than 0 (the GPUs "
            "its figures are divided by)",
        ),
        ({"num_prefill_gpu": -8}, "[0].num_prefill_gpu: must be at least 0 (got -8)"),
        ({"num_decode_gpu": 31.5}, "[0].num_decode_gpu: must be a whole number (got 31.5)"),
        (
            {"num_decode_gpu": 30},
            "[0].num_decode_gpu: 30 GPUs is not a whole number of decode_tp 8 groups: the GPU counts are inconsistent",
        ),
        (
            {"num_prefill_gpu": None},
            "[0].num_prefill_gpu: a disaggregated row needs num_prefill_gpu and num_decode_gpu greater than 0 (the "
            "GPUs its figures are divided by)",
        ),
        ({"num_decode_gpu": "32"}, "[0].num_decode_gpu: must be a number (got '32')"),
        ({"disagg": "maybe"}, "[0].disagg: must be true or false (got 'maybe')"),
        (
            {"num_decode_gpu": 16},
            "[0].output_tput_per_gpu: cannot tell which GPUs the disaggregated row's figures are divided by: neither "
            "total x (P + D) = input x P + output x D nor total = input + output holds (P 8, D 16): the GPU counts do "
            "not match the figures; state it with --per-gpu-basis all|decode",
        ),
        ({"output_tput_per_gpu": float("nan")}, "[0].output_tput_per_gpu: must be a finite number (got nan)"),
        # 1e308 x 32 decode GPUs overflows to infinity: no identity can hold
        (
            {"output_tput_per_gpu": 1e308},
            "[0].output_tput_per_gpu: cannot tell which GPUs the disaggregated row's figures are divided by: neither "
            "total x (P + D) = input x P + output x D nor total = input + output holds (P 8, D 32): the GPU counts do "
            "not match the figures; state it with --per-gpu-basis all|decode",
        ),
        ({"tput_per_gpu": float("inf")}, "[0].tput_per_gpu: must be a finite number (got inf)"),
    ],
)
def test_hostile_disaggregated_rows_are_refused_by_index_and_field(tmp_path, changes, problem):
    bad = json.loads(json.dumps(TRT_32))
    for key, value in changes.items():
        target = bad["metrics"] if key.endswith("_per_gpu") else bad
        if value is None:
            del target[key]
        else:
            target[key] = value
    source = tmp_path / "api.json"
    source.write_text(json.dumps([bad]))  # NaN and Infinity as JSON's, which Python reads
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path / "out", 8192, 1024)
    assert problems_of(caught) == [f"{source}: {problem}"]
    assert not (tmp_path / "out").exists()


def test_an_unknown_per_gpu_basis_is_refused(tmp_path):
    with pytest.raises(InputError) as caught:
        import_curves(write_json(tmp_path / "ix.json", H200), tmp_path / "out", 8192, 1024, per_gpu_basis="prefill")
    assert problems_of(caught) == ["--per-gpu-basis: must be one of all, decode (got 'prefill')"]


def test_a_single_node_row_whose_figures_do_not_add_up_is_refused(tmp_path):
    # one divisor on one server: total must be input + output; 500 is not 300 + 100
    source = write_json(
        tmp_path / "ix.json", [row(intvty=50.0, output=100.0, tput_per_gpu=500.0, input_tput_per_gpu=300.0)]
    )
    with pytest.raises(InputError) as caught:
        import_curves(source, tmp_path / "out", 8192, 1024)
    assert problems_of(caught) == [
        f"{source}: [0].tput_per_gpu: 500 is not input_tput_per_gpu + output_tput_per_gpu (400): the figures of a "
        "single-node row share one divisor"
    ]


@pytest.mark.parametrize(
    "spec, name",
    [
        ("mtp", "h200-sglang-fp8-mtp"),
        ("MTP", "h200-sglang-fp8-mtp"),
        ("none", "h200-sglang-fp8"),
        ("", "h200-sglang-fp8"),
        (None, "h200-sglang-fp8"),
    ],
)
def test_spec_decoding_names_the_curve_unless_none(tmp_path, spec, name):
    source = write_json(tmp_path / "ix.json", [row(spec_decoding=spec)])
    written, _ = import_curves(source, tmp_path / "out", 8192, 1024)
    assert [p.name for p in written] == [f"{name}.csv"]


def test_series_with_and_without_spec_decoding_are_separate_curves(tmp_path):
    source = write_json(
        tmp_path / "ix.json",
        [
            row(spec_decoding="mtp", intvty=120.0, output=60.0),
            row(),
            {k: v for k, v in row(conc=16, intvty=50.0).items() if k != "spec_decoding"},
        ],
    )
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
    assert problems_of(caught) == [
        f"{source}: [4]: expected an InferenceX row (a JSON object), got 'a row'",
        f"{source}: [5].isl: required field is missing",
    ]

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
    assert problems_of(caught) == [
        f"{source}: rows of 2 models (deepseek-ai/DeepSeek-R1, moonshotai/Kimi-K2.5): pick one (model=...), a curve is "
        "one model's"
    ]
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


# --- the command ----------------------------------------------------------------------------------


def test_cli_imports_disaggregated_rows_and_refuses_unresolved_ones(tmp_path):
    from tests.clihelp import assert_error, run

    source = write_json(tmp_path / "ix.json", [one_divisor()])
    out = tmp_path / "performance"
    assert_error(
        run("perf", "import", source, "--out", out, "--isl", "8192", "--osl", "1024"),
        f"{source}: [0].output_tput_per_gpu: cannot tell which GPUs",
    )
    assert not out.exists()
    result = run("perf", "import", source, "--out", out, "--isl", "8192", "--osl", "1024", "--per-gpu-basis", "decode")
    assert result.exit_code == 0, result.stderr
    assert read_curve(out / "h200-sglang-fp8.csv")[1][1] == ["40", "75", "0.5"]  # 100 x 6 / 8
    assert "warning: h200-sglang-fp8: 1 of 1 rows normalized as --per-gpu-basis decode says" in result.stderr
    bad = run("perf", "import", source, "--out", out, "--per-gpu-basis", "prefill", "--isl", "8192", "--osl", "1024")
    assert bad.exit_code == 2 and "Traceback" not in bad.stdout + bad.stderr


def test_a_single_node_api_row_needs_no_gpu_counts(tmp_path):
    # Single-node rows divide every figure by the serving GPUs: kept as published, whatever the
    # counts say (published single-node B200 TRT rows carry num_decode_gpu 64 with decode_tp 8).
    single = api_row("trt", 4, 12, 12, 107.6, 455.85, 405.2, 50.65, 0.35, "2026-05-01")
    single.update(disagg=False, is_multinode=False)
    # total 455.85 = input 405.2 + output 50.65: one divisor
    written, _ = import_curves(write_json(tmp_path / "api.json", [single]), tmp_path / "out", 8192, 1024)
    comments, rows = read_curve(written[0])
    assert rows[1] == ["107.6", "50.65", "0.35"]
    assert (
        "# normalization: 1 of 1 rows single-node: every figure per serving GPU, which are the billed GPUs (kept as "
        "published)" in comments
    )
