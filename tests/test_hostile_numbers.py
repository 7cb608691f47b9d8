"""Hostile numbers: NaN and infinities, numbers written as text or as true/false, percentages where
fractions belong, dates far in the past or future, and currencies without an exchange rate.

Every bad number is a one-line error naming file, line and field (exit 2, nothing written); odd but
valid figures (extreme dates) give a safe result, never a crash. The command line's exit 2 with nothing
written is run for NaN and infinities and for the list of every bad number; the other bad numbers are
checked on the problems the workspace's readers raise, in process (tests/refusals.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import refusals
from clihelp import assert_error, run
from refusals import compare, returns_or_refuses, validate

OFFER = "offers/alpha.yaml"
CONFIG = "procure.yaml"


def edit(ws: Path, name: str, old: str, new: str) -> None:
    path = ws / name
    text = path.read_text(encoding="utf-8")
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def refused_by_compare(ws: Path, tmp_path: Path, *needles: str) -> str:
    """compare --out refuses with the problems (the same list validate prints) and writes nothing."""
    out = tmp_path / "out" / "cmp.json"
    stderr = assert_error(run("compare", "--format", "json", "--out", out, "-w", ws), *needles)
    assert not out.exists() and not out.parent.exists()
    return stderr


def refused(ws: Path, tmp_path: Path, *needles: str) -> str:
    """In process: the use case of compare refuses the workspace with the problems (the same list validate
    prints); returns them, one line each."""
    return refusals.refused(compare(ws), *needles)


# Fields of each file, with the line they are on in tests/data/basic.
NUMBER_FIELDS = [
    (OFFER, "  gpu_hour: 4.00", "  gpu_hour: {}", 11, "pricing.gpu_hour"),
    (OFFER, "once: 87600}", "once: {}}}", 13, "pricing.fees[0].once"),
    (OFFER, "sla: {availability: 0.995,", "sla: {{availability: {},", 16, "service.sla.availability"),
    (OFFER, "gpus: 100", "gpus: {}", 7, "gpus"),
    (OFFER, "points: [[50, 400],", "points: [[50, {}],", 34, "performance.points[0]"),
    (CONFIG, "  utilization: 0.8", "  utilization: {}", 11, "workload.utilization"),
    (CONFIG, "  fte_cost_year: 219000", "  fte_cost_year: {}", 13, "assumptions.fte_cost_year"),
    (CONFIG, "fx: {EUR: 1.1}", "fx: {{EUR: {}}}", 21, "assumptions.fx.EUR"),
]


NAN_CASES = [(v, *f) for v in (".nan", ".inf", "-.inf") for f in NUMBER_FIELDS] + [
    (v, *NUMBER_FIELDS[0]) for v in (".NaN", "+.Inf", ".INF")
]


@pytest.mark.parametrize(
    "value, target, old, template, line, field", NAN_CASES, ids=[f"{c[5]}-{c[0]}" for c in NAN_CASES]
)
def test_nan_and_infinities_are_refused(workspace_copy, tmp_path, value, target, old, template, line, field):
    words = "finite"
    ws = workspace_copy("basic")
    edit(ws, target, old, template.format(value))
    stderr = refused_by_compare(ws, tmp_path, f"{target}:{line}: {field}")
    assert words in stderr or "whole number" in stderr, stderr


@pytest.mark.parametrize(
    "value, shown",
    [
        ('"3.95"', "'3.95'"),
        ('"$3.95"', "'$3.95'"),
        ("$3.95", "'$3.95'"),
        ("3,95", "'3,95'"),
        ("'4'", "'4'"),
        ("3.95 USD", "'3.95 USD'"),
        ("1_000", ""),
        ("0x10", ""),
        ("[4.0]", ""),
        ("{amount: 4}", ""),
    ],
    ids=[
        "quoted",
        "quoted-dollar",
        "dollar",
        "decimal-comma",
        "quoted-int",
        "with-currency",
        "underscore",
        "hex",
        "list",
        "mapping",
    ],
)
def test_text_where_a_price_belongs_is_refused(workspace_copy, tmp_path, value, shown):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "  gpu_hour: 4.00", f"  gpu_hour: {value}")
    if value in ("1_000", "0x10"):
        # YAML 1.1 reads these as the numbers 1000 and 16: a safe (if surprising) result, or an error.
        returns_or_refuses(validate(ws))
        return
    stderr = refused(ws, tmp_path, f"{OFFER}:11: pricing.gpu_hour:", "must be a number")
    assert shown in stderr


BOOL_CASES = [("true", *f) for f in NUMBER_FIELDS] + [
    (v, *f) for v in ("false", "yes", "on", "True") for f in NUMBER_FIELDS if f[4] in ("pricing.gpu_hour", "gpus")
]


@pytest.mark.parametrize(
    "value, target, old, template, line, field", BOOL_CASES, ids=[f"{c[5]}-{c[0]}" for c in BOOL_CASES]
)
def test_booleans_where_numbers_belong_are_refused(workspace_copy, tmp_path, value, target, old, template, line, field):
    ws = workspace_copy("basic")
    edit(ws, target, old, template.format(value))
    stderr = refused(ws, tmp_path, f"{target}:{line}: {field}")
    assert "number" in stderr, stderr


def test_validate_lists_every_bad_number_at_once(workspace_copy):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "  gpu_hour: 4.00", "  gpu_hour: .nan\n  discount: 95\n  prepay_fraction: true")
    edit(ws, OFFER, "gpus: 100", 'gpus: "100"')
    edit(ws, OFFER, "sla: {availability: 0.995,", "sla: {availability: 99.5,")
    edit(ws, CONFIG, "  utilization: 0.8", "  utilization: 80")
    stderr = assert_error(run("validate", "-w", ws))
    for where in (
        f"{OFFER}:7: gpus",
        f"{OFFER}:11: pricing.gpu_hour",
        f"{OFFER}:12: pricing.discount",
        f"{OFFER}:13: pricing.prepay_fraction",
        f"{OFFER}:18: service.sla.availability",
        f"{CONFIG}:11: workload.utilization",
    ):
        assert where in stderr, (where, stderr)
    assert "6 problems found" in stderr


def test_number_where_text_belongs_is_a_field_error(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "vendor: Alpha Cloud", "vendor: 12345")
    refused(ws, tmp_path, f"{OFFER}:2: vendor:")


def test_bool_where_a_count_belongs_is_not_one(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "term_months: 12", "term_months: true")
    refused(ws, tmp_path, f"{OFFER}:8: term_months:", "whole number")


@pytest.mark.parametrize(
    "value", ["-3.95", "0", "-0.0", "1.0e-320"], ids=["negative", "zero", "negative-zero", "denormal"]
)
def test_non_positive_price_is_refused_or_priced_safely(workspace_copy, tmp_path, value):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "  gpu_hour: 4.00", f"  gpu_hour: {value}")
    if value == "1.0e-320":
        # Positive and finite, but no price: products of it round to zero (a cost per task of 0).
        refused(ws, tmp_path, f"{OFFER}:11: pricing.gpu_hour: is implausibly small")
        return
    refused(ws, tmp_path, f"{OFFER}:11: pricing.gpu_hour: must be greater than 0")


def test_huge_finite_figures_never_print_inf_or_nan(workspace_copy):
    """1e308 is a finite number: the outputs must not turn it into inf, nan or a crash."""
    ws = workspace_copy("basic")
    edit(ws, OFFER, "  gpu_hour: 4.00", "  gpu_hour: 1.0e+308")
    edit(ws, OFFER, "once: 87600}", "once: 1.0e+308}")
    for fmt in ("json", "csv", "markdown", "table"):
        result = run("compare", "--format", fmt, "-w", ws)
        assert result.exit_code in (0, 2), (fmt, result.exit_code, repr(result.exception))
        assert "Traceback" not in result.stdout + result.stderr
        if result.exit_code == 0 and fmt == "json":
            text = result.stdout
            assert "NaN" not in text and "Infinity" not in text
            json.loads(text)


# --- percentages where fractions belong ------------------------------------------------------------


FRACTION_FIELDS = [
    (OFFER, "  gpu_hour: 4.00", "  gpu_hour: 4.00\n  discount: {}", 12, "pricing.discount"),
    (OFFER, "  gpu_hour: 4.00", "  gpu_hour: 4.00\n  prepay_fraction: {}", 12, "pricing.prepay_fraction"),
    (OFFER, "sla: {availability: 0.995,", "sla: {{availability: {},", 16, "service.sla.availability"),
    (
        OFFER,
        "  points_source: measured",
        "  points_source: measured\n  quality_pass_rate: {}",
        36,
        "performance.quality_pass_rate",
    ),
    (CONFIG, "  success_rate: 0.9", "  success_rate: {}", 9, "workload.success_rate"),
    (CONFIG, "  min_success_rate: 0.8", "  min_success_rate: {}", 10, "workload.min_success_rate"),
    (CONFIG, "  utilization: 0.8", "  utilization: {}", 11, "workload.utilization"),
    (CONFIG, "  min_availability: 0.93", "  min_availability: {}", 37, "policy.min_availability"),
    (CONFIG, "  shared_weight: 0.5", "  shared_weight: {}", 14, "assumptions.shared_weight"),
    (CONFIG, "  cost_of_capital: 0.10", "  cost_of_capital: {}", 15, "assumptions.cost_of_capital"),
    (
        CONFIG,
        "  self_operated_reliability: 0.98",
        "  self_operated_reliability: {}",
        17,
        "assumptions.self_operated_reliability",
    ),
    (CONFIG, "    unrated: 0.97", "    unrated: {}", 19, "assumptions.reliability.unrated"),
]


PERCENT_CASES = [("95", *f) for f in FRACTION_FIELDS] + [
    (v, *f)
    for v in ("99.5", "100")
    for f in FRACTION_FIELDS
    if f[4] in ("service.sla.availability", "policy.min_availability", "workload.utilization")
]


@pytest.mark.parametrize(
    "value, target, old, template, line, field", PERCENT_CASES, ids=[f"{c[5]}-{c[0]}" for c in PERCENT_CASES]
)
def test_percentage_instead_of_a_fraction_is_caught_by_the_range_check(
    workspace_copy, tmp_path, value, target, old, template, line, field
):
    ws = workspace_copy("basic")
    edit(ws, target, old, template.format(value))
    stderr = refused(ws, tmp_path, f"{target}:{line}: {field}: must be")
    assert "at most 1" in stderr or "less than 1" in stderr, stderr


@pytest.mark.parametrize("value", ["-0.05", "1.0"], ids=["negative", "one"])
def test_discount_outside_zero_to_one_is_refused(workspace_copy, tmp_path, value):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "  gpu_hour: 4.00", f"  gpu_hour: 4.00\n  discount: {value}")
    refused(ws, tmp_path, f"{OFFER}:12: pricing.discount: must be")


def test_percentage_on_the_command_line_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    for option in ("--availability", "--utilization"):
        assert_error(run("whatif", "alpha", option, "95", "-w", ws), option, "between 0 and 1")


def test_percentage_in_rating_tiers_and_uncertainty_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    edit(ws, CONFIG, "policy:", "rating:\n  tiers: {platinum: 90, gold: 60, silver: 30}\npolicy:")
    stderr = refused(ws, tmp_path, f"{CONFIG}:", "rating.tiers.platinum")
    assert "at most 1" in stderr


# --- dates far in the past or future ---------------------------------------------------------------------


@pytest.mark.parametrize("as_of", ["1900-01-01", "2199-12-31"])
def test_extreme_as_of_dates_do_not_crash(workspace_copy, tmp_path, as_of):
    """Every command on a workspace dated at either end of the accepted range, 1900 to 2199 (the HTML
    report only for 2199: it is slow)."""
    ws = workspace_copy("basic")
    edit(ws, CONFIG, "as_of: 2026-11-29", f"as_of: {as_of}")
    edit(ws, OFFER, "valid_until: 2027-06-30", "valid_until: 2199-12-31")
    edit(ws, OFFER, "received: 2026-11-01", "received: 1900-01-01")
    commands = [
        ("validate",),
        ("compare", "--format", "json"),
        ("compare", "--format", "csv"),
        ("rate",),
        ("whatif", "alpha", "--price", "-5%"),
        ("whatif", "--price-to-win"),
        ("sensitivity",),
        ("hedge", "--offer", "alpha"),
        ("evaluate", "--save"),
        ("reevaluate",),
        ("history",),
    ]
    if as_of == "2199-12-31":
        commands.append(("report", "--format", "html", "--out", str(tmp_path / "report.html")))
    for args in commands:
        result = run(*args, "-w", ws)
        combined = result.stdout + result.stderr
        assert result.exit_code in (0, 2), (args, result.exit_code, repr(result.exception), combined[-1500:])
        assert isinstance(result.exception, (SystemExit, type(None))), (args, repr(result.exception))
        assert "Traceback" not in combined
        if result.exit_code == 2:
            assert result.stderr.strip(), args
    evaluation = json.loads(run("compare", "--format", "json", "-w", ws).stdout)
    alpha = next(o for o in evaluation["offers"] if o["id"] == "alpha")
    assert alpha["valid_until"] == "2199-12-31"
    if as_of == "2199-12-31":
        assert not alpha["acceptable"] or alpha["valid_until"] >= as_of


@pytest.mark.parametrize("as_of", ["1900-01-01", "2108-01-01", "9999-12-31"])
def test_xlsx_with_an_as_of_outside_the_zip_date_range_does_not_crash(workspace_copy, tmp_path, as_of):
    ws = workspace_copy("basic")
    out = tmp_path / "cmp.xlsx"
    result = run("compare", "--format", "xlsx", "--as-of", as_of, "--out", out, "-w", ws)
    assert result.exit_code in (0, 2), (result.exit_code, repr(result.exception))
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("as_of", ["0001-01-01", "1899-12-31", "2200-01-01", "9999-12-31"])
def test_as_of_outside_1900_to_2199_on_the_command_line_is_refused(workspace_copy, as_of):
    ws = workspace_copy("basic")
    result = run("compare", "--format", "markdown", "--as-of", as_of, "-w", ws)
    assert result.exit_code == 2 and "--as-of" in result.stderr and "between 1900 and 2199" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("where", "old", "new", "field"),
    [
        (OFFER, "received: 2026-11-01", "received: 0001-01-01", "received"),
        (OFFER, "valid_until: 2027-06-30", "valid_until: 9999-12-31", "valid_until"),
        (CONFIG, "as_of: 2026-11-29", "as_of: 9999-12-31", "as_of"),
    ],
)
def test_dates_in_year_1_or_9999_are_refused_at_their_line(workspace_copy, where, old, new, field):
    # Far dates made date arithmetic (terms, delays, expiry) overflow: exit 1, or nonsense. The line
    # is the one the date is on (counted in the fixture file).
    ws = workspace_copy("basic")
    line = next(i for i, text in enumerate((ws / where).read_text().splitlines(), start=1) if text.startswith(old))
    edit(ws, where, old, new)
    for call in (validate(ws), compare(ws)):
        refusals.refused(call, f"{where}:{line}: {field}: must be a date between 1900 and 2199")


@pytest.mark.parametrize("as_of", ["2027-12-31", "9999-12-31"])
def test_report_far_in_the_future_does_not_crash(workspace_copy, tmp_path, as_of):
    ws = workspace_copy("market_ws")
    out = tmp_path / "report.html"
    result = run("report", "--format", "html", "--as-of", as_of, "--out", out, "-w", ws)
    assert result.exit_code in (0, 2), (result.exit_code, repr(result.exception))
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    "value, message",
    [
        ("2027-02-30", "not a valid date"),
        ("10000-01-01", "date"),
        ("2027-13-01", "date"),
        ("27-06-30", "date"),
        ('"2027-06-30"', "date"),
        ("2027-06-30T25:00:00", ""),
    ],
    ids=["feb-30", "year-10000", "month-13", "two-digit-year", "quoted", "bad-time"],
)
def test_impossible_dates_are_errors_with_their_line(workspace_copy, tmp_path, value, message):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "valid_until: 2027-06-30", f"valid_until: {value}")
    if value == '"2027-06-30"':
        # A quoted ISO date is text that reads as a date: a safe result either way.
        returns_or_refuses(validate(ws))
        return
    stderr = refused(ws, tmp_path, f"{OFFER}:4: valid_until:")
    assert message in stderr


def test_valid_until_before_received_is_an_error(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "valid_until: 2027-06-30", "valid_until: 1900-01-01")
    refused(ws, tmp_path, f"{OFFER}:4: valid_until: is before received")


def test_index_with_extreme_dates_is_read_safely(workspace_copy):
    ws = workspace_copy("market_ws")
    path = ws / "market" / "index.csv"
    path.write_text(path.read_text(encoding="utf-8") + "9999-12-31,6.00\n0001-01-01,6.00\n", encoding="utf-8")
    for args in (("compare", "--format", "json"), ("hedge", "--format", "json"), ("whatif", "--price-to-win")):
        result = run(*args, "-w", ws)
        assert result.exit_code in (0, 2), (args, result.exit_code, repr(result.exception))
        assert "Traceback" not in result.stdout + result.stderr


# --- currencies without an exchange rate --------------------------------------------------------------


@pytest.mark.parametrize("currency", ["GBP", "XXX", "JPY"])
def test_currency_without_an_fx_rate_is_refused(workspace_copy, tmp_path, currency):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "currency: USD", f"currency: {currency}")
    refused(ws, tmp_path, f"{OFFER}:10: pricing.currency: unknown currency {currency}", f"assumptions.fx.{currency}")


@pytest.mark.parametrize("currency", ["usd", "US$", "EURO", "€", '""', "123", "null"])
def test_malformed_currency_codes_are_refused(workspace_copy, tmp_path, currency):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "currency: USD", f"currency: {currency}")
    if currency == "null":  # the workspace currency: a safe result
        validate(ws)()
        return
    refused(ws, tmp_path, f"{OFFER}:10: pricing.currency:")


def test_workspace_currency_without_rates_for_the_offers(workspace_copy, tmp_path):
    """Switching procure.yaml to EUR leaves the USD offers without a rate: each is named."""
    ws = workspace_copy("basic")
    edit(ws, CONFIG, "currency: USD", "currency: EUR")
    edit(ws, CONFIG, "fx: {EUR: 1.1}", "fx: {}")
    refused(ws, tmp_path, f"{OFFER}:10: pricing.currency: unknown currency USD")


@pytest.mark.parametrize("rate", ["0", "-1.1", ".nan", '"1.1"', "true"])
def test_bad_fx_rates_are_refused(workspace_copy, tmp_path, rate):
    ws = workspace_copy("basic")
    edit(ws, CONFIG, "fx: {EUR: 1.1}", f"fx: {{EUR: {rate}}}")
    refused(ws, tmp_path, f"{CONFIG}:21: assumptions.fx.EUR:")


def test_fx_key_that_is_not_a_currency_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    edit(ws, CONFIG, "fx: {EUR: 1.1}", "fx: {EUR: 1.1, ../x: 2.0}")
    refused(ws, tmp_path, f"{CONFIG}:21: assumptions.fx")
