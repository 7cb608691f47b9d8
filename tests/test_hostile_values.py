"""Hostile values that used to get past validation: YAML merge keys, finite but huge numbers and
dates, percentages where factors or shares belong, oversized CSV fields, expanding workbooks,
pipes and devices as inputs, odd run ids, and a sheet name that tried to write YAML.

Each ends in exit 2 with the file, line and field, nothing written, within seconds; never exit 1,
a hang, or Infinity/NaN in JSON. The command line's part is run for huge numbers and far dates (validate,
compare and cashflow: exit 2, nothing on standard output or written), run ids, pipes and devices, and the
date of the build; the problems of the other files are checked where they are raised, in process
(tests/refusals.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import yaml
from clihelp import AS_OF, assert_error, edit, run
from refusals import compare, refused, validate

from procure.io.importers import import_offers

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
OFFER = "offers/alpha.yaml"
CONFIG = "procure.yaml"


def cli(*args: str | Path, timeout: float = 20.0, env: dict | None = None) -> subprocess.CompletedProcess | None:
    """procure in a subprocess (for cases that may hang); None when it did not finish in time."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "procure", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        )
    except subprocess.TimeoutExpired:
        return None


# --- YAML merge keys --------------------------------------------------------------------------------


def test_a_merge_key_setting_a_price_twice_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    line = edit(ws, OFFER, "  gpu_hour: 4.00", "  <<: [{gpu_hour: 0.01}, {gpu_hour: 99}]")
    problems = refused(validate(ws), f"{OFFER}:{line}: pricing.gpu_hour: set twice")
    assert "merge key" in problems


def test_a_merge_key_overriding_an_explicit_key_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    line = edit(ws, OFFER, "  gpu_hour: 4.00", "  gpu_hour: 4.00\n  <<: {gpu_hour: 0.01}")
    refused(validate(ws), f"{OFFER}:{line + 1}: pricing.gpu_hour: set twice")


def test_a_merge_key_that_sets_each_key_once_is_fine(workspace_copy):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "  gpu_hour: 4.00", "  <<: {gpu_hour: 4.00}")
    found = compare(ws, AS_OF)()
    assert found.evaluation.offer("alpha").metrics["rent"] == pytest.approx(4.0)


# --- finite but huge numbers and far dates ------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "where", "old", "new", "field", "needle"),
    [
        ("basic", OFFER, "gpu_hour: 4.00", "gpu_hour: 1.0e+308", "pricing.gpu_hour", "implausibly large"),
        ("basic", OFFER, "gpus: 100", "gpus: 1" + "0" * 30, "gpus", "implausibly large"),
        # A denormal price made a cost per task of exactly 0 and then a division by it (found by hypothesis).
        ("basic", OFFER, "gpu_hour: 4.00", "gpu_hour: 5.0e-324", "pricing.gpu_hour", "implausibly small"),
        (
            "cashflow_basic",
            "offers/golf.yaml",
            "life_years: 5",
            "life_years: 1.0e+308",
            "pricing.owned.life_years",
            "implausibly large",
        ),
        (
            "cashflow_basic",
            "offers/golf.yaml",
            "life_years: 5",
            "life_years: 5000",
            "pricing.owned.life_years",
            "at most 50",
        ),
        (
            "cashflow_basic",
            CONFIG,
            "expected_delay_weeks: 0",
            "expected_delay_weeks: 600000",
            "horizon.expected_delay_weeks",
            "at most 520",
        ),
        ("basic", OFFER, "received: 2026-11-01", "received: 0001-01-01", "received", "between 1900 and 2199"),
        ("basic", OFFER, "valid_until: 2027-06-30", "valid_until: 9999-12-31", "valid_until", "between 1900 and 2199"),
    ],
    ids=[
        "gpu_hour-1e308",
        "gpus-1e30",
        "gpu_hour-5e-324",
        "life_years-1e308",
        "life_years-5000",
        "delay-600000-weeks",
        "year-1",
        "year-9999",
    ],
)
def test_huge_numbers_and_far_dates_are_refused_at_their_line(
    workspace_copy, tmp_path, base, where, old, new, field, needle
):
    ws = workspace_copy(base)
    line = edit(ws, where, old, new)
    out = tmp_path / "cashflow.json"
    for args in (("validate",), ("compare", "-f", "json", "--horizon", "36"), ("cashflow", "-f", "json", "--out", out)):
        result = run(*args, "-w", ws, "--as-of", AS_OF)
        assert_error(result, f"{where}:{line}: {field}:", needle)
        assert result.stdout == ""
    assert not out.exists()


def test_json_never_holds_infinity_or_nan_at_the_largest_accepted_values(workspace_copy):
    # Just inside the bounds: a price of 1e12 per GPU-hour on 1e12 GPUs is nonsense, but finite.
    ws = workspace_copy("cashflow_basic")
    edit(ws, "offers/golf.yaml", "capex_per_gpu: 36000", "capex_per_gpu: 1.0e+12")
    edit(ws, "offers/golf.yaml", "gpus: 100", "gpus: 1000000000000")
    for args in (("compare", "-f", "json", "--horizon", "240"), ("cashflow", "-f", "json", "--horizon", "240")):
        result = run(*args, "-w", ws, "--as-of", AS_OF)
        assert result.exit_code in (0, 2), (args, result.stderr)
        assert "Infinity" not in result.stdout and "NaN" not in result.stdout, args
        if result.exit_code == 0:
            json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))


@pytest.mark.parametrize(
    "text",
    [
        "date,price\n2026-09-30,1e300\n",
        "date,price\n2026-09-30,1e-300\n",
        "date,price\n0001-09-30,5.00\n",
        "date,price\n9999-09-30,5.00\n",
    ],
    ids=["price-1e300", "price-1e-300", "year-1", "year-9999"],
)
def test_huge_numbers_and_far_dates_in_csv_inputs_are_refused_at_their_line(workspace_copy, text):
    ws = workspace_copy("basic")
    (ws / "market" / "index.csv").write_text(text, encoding="utf-8")
    refused(validate(ws), "market/index.csv:2:")


@pytest.mark.parametrize("epoch", ["99999999999999", "7258118400", "253402300800"])
def test_source_date_epoch_far_in_the_future_is_refused(workspace_copy, tmp_path, monkeypatch, epoch):
    ws = workspace_copy("basic")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    out = tmp_path / "r.html"
    assert_error(
        run("report", "-f", "html", "--out", out, "-w", ws, "--as-of", AS_OF), "SOURCE_DATE_EPOCH", "before 2200-01-01"
    )
    assert not out.exists()


def test_source_date_epoch_at_the_end_of_2199_is_accepted(workspace_copy, tmp_path, monkeypatch):
    ws = workspace_copy("basic")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "7258118399")  # 2199-12-31 23:59:59 UTC
    out = tmp_path / "r.html"
    assert run("report", "-f", "html", "--out", out, "-w", ws, "--as-of", AS_OF).exit_code == 0
    assert "2199-12-31" in out.read_text(encoding="utf-8")


# --- percentages where factors and shares belong -------------------------------------------------------


@pytest.mark.parametrize(
    "dist", ["{triangular: [0.85, 1.0, 15]}", "{triangular: [85, 100, 115]}", "{uniform: [10, 20]}"]
)
def test_uncertainty_factors_given_as_percentages_are_refused_with_a_hint(workspace_copy, dist):
    ws = workspace_copy("basic")
    config = (
        (ws / CONFIG).read_text(encoding="utf-8").split("# Stated so that", 1)[0]
    )  # the fixture's own section gives way
    assert "\nuncertainty:" not in config
    (ws / CONFIG).write_text(config + f"uncertainty:\n  fte_cost: {dist}\n", encoding="utf-8")
    line = config.count("\n") + 2
    problems = refused(validate(ws), f"{CONFIG}:{line}: uncertainty.fte_cost:", "a percentage?")
    assert "1.15" in problems


def reevaluate(ws: Path, *args: str):
    return run("reevaluate", "-w", ws, "--as-of", AS_OF, *args)


@pytest.mark.parametrize(("given", "shown"), [("5%", "5.0%"), ("0.05", "5.0%"), ("12.5%", "12.5%")])
def test_max_increase_accepts_a_percentage_or_a_share(workspace_copy, given, shown):
    ws = workspace_copy("history_base")
    assert reevaluate(ws).exit_code == 0  # the baseline
    edit(ws, "offers/alpha.yaml", "gpu_hour: 4.00", "gpu_hour: 6.00")  # +50%: breaches any of them
    result = reevaluate(ws, "--max-increase", given)
    assert result.exit_code == 3, result.stderr
    assert f"(limit {shown})" in result.stdout


@pytest.mark.parametrize("given", ["5", "15", "1.5"])
def test_a_bare_max_increase_above_1_is_refused_with_a_hint(workspace_copy, given):
    ws = workspace_copy("history_base")
    assert reevaluate(ws).exit_code == 0
    stderr = assert_error(reevaluate(ws, "--max-increase", given), "--max-increase", f"write {given}%")
    assert "0.05 = 5%" in stderr


# --- oversized CSV fields ---------------------------------------------------------------------------


BIG = "x" * 140_000  # over the csv module's 131,072-character field limit


def test_an_oversized_field_in_the_index_names_file_and_line(workspace_copy):
    ws = workspace_copy("basic")
    (ws / "market" / "index.csv").write_text(f'date,price\n2026-09-30,5.00\n2026-10-31,"{BIG}"\n', encoding="utf-8")
    refused(validate(ws), "market/index.csv:3:", "malformed CSV", "field larger than field limit")


def test_an_oversized_field_in_a_curve_names_file_and_line(workspace_copy):
    ws = workspace_copy("basic")
    curve = next((ws / "performance").glob("*.csv"))
    curve.write_text(curve.read_text() + f'"{BIG}",1\n', encoding="utf-8")
    lines = curve.read_text().count("\n")
    refused(validate(ws), f"performance/{curve.name}:{lines}:", "malformed CSV")


def test_an_oversized_field_in_quotes_and_rent_names_file_and_line(workspace_copy):
    ws = workspace_copy("market_ws")
    quotes = ws / "market" / "quotes.csv"
    quotes.write_text(quotes.read_text() + f'2026-11-02,B200,6.00,advertised,0,"{BIG}",T-BM,0\n', encoding="utf-8")
    line = quotes.read_text().count("\n")
    assert_error(run("index", "build", quotes, "-w", ws), f"quotes.csv:{line}:", "malformed CSV")
    rent = ws / "market" / "rent.csv"
    rent.write_text(rent.read_text() + f'2026-11-30,"{BIG}"\n', encoding="utf-8")
    line = rent.read_text().count("\n")
    assert_error(run("hedge", "--rent", rent, "-w", ws, "--as-of", AS_OF), f"rent.csv:{line}:", "malformed CSV")


def test_an_oversized_field_in_an_rfp_sheet_names_file_and_line(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    sheet = tmp_path / "rfp.csv"
    text = (DATA / "import_rfp.csv").read_text(encoding="utf-8")
    sheet.write_text(text.replace("Delta Cloud", f'"{BIG}"', 1), encoding="utf-8")
    before = sorted(p.name for p in (ws / "offers").iterdir())
    refused(lambda: import_offers(sheet, ws / "offers"), "rfp.csv:2:", "malformed CSV")
    assert sorted(p.name for p in (ws / "offers").iterdir()) == before


# --- workbooks that expand -------------------------------------------------------------------------------


def bomb(path: Path, parts: dict[str, int]) -> Path:
    """A zip named .xlsx whose parts are runs of spaces: tiny on disk, huge when expanded."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        for name, size in parts.items():
            with archive.open(name, "w") as handle:
                chunk = b" " * (1024 * 1024)
                for _ in range(size // len(chunk)):
                    handle.write(chunk)
    return path


@pytest.mark.parametrize(
    "parts",
    [
        {"xl/worksheets/sheet1.xml": 48 * 1024 * 1024},
        {"xl/sharedStrings.xml": 40 * 1024 * 1024},
        {f"xl/worksheets/sheet{i}.xml": 20 * 1024 * 1024 for i in range(1, 5)},
    ],
    ids=["one-sheet", "shared-strings", "many-sheets"],
)
def test_an_expanding_workbook_is_refused_before_it_is_expanded(workspace_copy, tmp_path, parts):
    ws = workspace_copy("basic")
    sheet = bomb(tmp_path / "rfp.xlsx", parts)
    assert sheet.stat().st_size < 1_200_000
    start = time.perf_counter()
    refused(lambda: import_offers(sheet, ws / "offers"), "rfp.xlsx", "refused before reading")
    elapsed = time.perf_counter() - start
    assert elapsed < 30, f"took {elapsed:.1f} s"  # a hang guard: ten times the 2.8 s measured on two loaded cores


def test_a_cell_longer_than_excel_allows_is_refused_with_row_and_column(tmp_path, workspace_copy):
    from openpyxl import Workbook

    ws = workspace_copy("basic")
    book = Workbook()
    book.active.append(["id", "vendor"])
    book.active.append(["x", "v" * 100])
    plain = tmp_path / "plain.xlsx"
    book.save(plain)
    path = tmp_path / "rfp.xlsx"  # openpyxl cuts long cells on saving: lengthen the stored text
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            target.writestr(item, source.read(item.filename).replace(b"v" * 100, b"v" * 40_000))
    refused(lambda: import_offers(path, ws / "offers"), "rfp.xlsx:2: B:", "40,000 characters")


# --- pipes and devices as inputs --------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_diff_perf_import_and_import_refuse_pipes_and_devices_without_hanging(workspace_copy, tmp_path, kind):
    ws = workspace_copy("basic")
    if kind == "fifo":
        sources = {}
        for name in ("a.json", "rows.json", "rfp.csv", "rfp.xlsx"):
            os.mkfifo(tmp_path / name)
            sources[name] = tmp_path / name
    else:
        sources = {name: Path("/dev/zero") for name in ("a.json", "rows.json", "rfp.csv", "rfp.xlsx")}
        for name in ("rfp.csv", "rfp.xlsx"):  # the importer picks the reader by the name's suffix
            (tmp_path / name).symlink_to("/dev/zero")
            sources[name] = tmp_path / name
    other = tmp_path / "b.json"
    other.write_text(run("compare", "-f", "json", "-w", ws, "--as-of", AS_OF).stdout, encoding="utf-8")
    commands = [
        ("diff", sources["a.json"], other, "-w", ws),
        ("diff", other, sources["a.json"], "-w", ws),
        (
            "perf",
            "import",
            sources["rows.json"],
            "--out",
            ws / "performance",
            "--isl",
            "1024",
            "--osl",
            "1024",
            "-w",
            ws,
        ),
        ("import", sources["rfp.csv"], "--out", ws / "offers"),
        ("import", sources["rfp.xlsx"], "--out", ws / "offers"),
    ]
    for args in commands:
        done = cli(*args)
        assert done is not None, f"{args[0]} hung on a {kind}"
        assert done.returncode == 2, (args, done.returncode, done.stderr)
        assert "not a regular file" in done.stderr and "Traceback" not in done.stderr


# --- run ids ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["²", "١", "12345678901234567890123", "9223372036854775808"])
def test_diff_with_odd_run_ids_exits_2(workspace_copy, ref):
    ws = workspace_copy("history_base")
    for _ in range(2):
        assert run("evaluate", "--save", "-w", ws, "--as-of", AS_OF).exit_code == 0
    for args in (("diff", ref, "1"), ("diff", "1", ref), ("diff", ref)):
        result = run(*args, "-w", ws)
        assert result.exit_code == 2, (args, result.exit_code, repr(result.exception))
        assert "Traceback" not in result.stdout + result.stderr


# --- YAML is written by the YAML library only -----------------------------------------------------------------


def test_a_line_break_in_the_sheet_name_cannot_inject_yaml(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    (ws / "offers" / "alpha.yaml").unlink()
    name = "rfp\nvendor: INJECTED\nservice: {kind: owned}\n#.csv"
    sheet = tmp_path / name
    sheet.write_text((DATA / "import_rfp.csv").read_text(encoding="utf-8"), encoding="utf-8")
    result = run("import", sheet, "--out", ws / "offers")
    assert result.exit_code == 0, result.stderr
    written = (ws / "offers" / "delta.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(written)
    assert data["vendor"] == "Delta Cloud" and data["service"]["kind"] == "managed_cluster"
    assert "INJECTED" not in data.values()
    assert written.splitlines()[0].startswith("# Imported from ") and "\\n" in written.splitlines()[0]
    assert run("validate", "-w", ws, "--as-of", AS_OF).exit_code == 0


def test_no_yaml_is_built_by_string_concatenation():
    """Offer files are serialized with the YAML library: the only text added by hand is the comment
    line, and it is escaped."""
    source = (ROOT / "procure" / "io" / "importers.py").read_text(encoding="utf-8")
    assert "yaml.dump(" in source
    assert 'f"# Imported from {source}' not in source
    from procure.io.importers import offer_yaml

    text = offer_yaml({"id": "a", "vendor": "x\ny: 1"}, "s\u2028t\n: z", 2)
    assert yaml.safe_load(text) == {"id": "a", "vendor": "x\ny: 1"}
    assert text.count("\n") == len(text.splitlines())


def test_a_list_price_renewal_on_an_offer_without_a_gpu_hour_price_is_refused(workspace_copy):
    # renewal_price: list restarts a renewal at pricing.gpu_hour; an index-linked, per-token or owned
    # offer has none, so the field would change nothing: each file gets the error at its contract line.
    ws = workspace_copy("offer_kinds")
    for name in ("indexed", "tokens", "owned"):
        path = ws / "offers" / f"{name}.yaml"
        path.write_text(path.read_text() + "contract: {renewal_price: list}\n")
    needle = "contract.renewal_price: list goes with a fixed price (pricing.gpu_hour)"
    stderr = refused(validate(ws, AS_OF), needle)
    assert len(stderr.splitlines()) == 3, stderr  # "3 problems found"
    for name in ("indexed", "tokens", "owned"):
        line = len((ws / "offers" / f"{name}.yaml").read_text().splitlines())
        assert f"offers/{name}.yaml:{line}: {needle}" in stderr
