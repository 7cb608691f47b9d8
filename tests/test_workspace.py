"""Bad input: every problem an InputError naming file, line and field, all of them at once.

Each test breaks one copy of tests/data/basic and asserts on the exact line it broke. Line numbers
refer to the fixture files (`cat -n tests/data/basic/offers/alpha.yaml`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from procure.errors import InputError
from procure.io.workspace import load_workspace
from procure.model.inputs import OPERATING_JOBS


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new))


def problems(root: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_workspace(root)
    return [str(p) for p in caught.value.problems]


def only_problem(root: Path) -> str:
    found = problems(root)
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def basic(workspace_copy) -> Path:
    return workspace_copy("basic")


def test_the_fixture_workspaces_load(data_dir):
    assert [o.id for o in load_workspace(data_dir / "basic").offers] == ["alpha", "bravo", "charlie"]
    assert [o.id for o in load_workspace(data_dir / "offer_kinds").offers] == ["indexed", "owned", "tokens"]


def test_malformed_yaml(basic):
    edit(basic / "offers" / "alpha.yaml", "region: us-east\n", "region: us-east: x\n")  # line 5
    problem = only_problem(basic)
    assert problem.startswith("offers/alpha.yaml:5: malformed YAML: ")


def test_missing_required_field_points_at_its_parent(basic):
    edit(basic / "offers" / "alpha.yaml", "  kind: managed_cluster\n", "")  # under service:, line 14
    assert only_problem(basic) == "offers/alpha.yaml:14: service.kind: required field is missing"


def test_missing_top_level_field(basic):
    edit(basic / "offers" / "bravo.yaml", "vendor: Bravo Metal\n", "")
    assert only_problem(basic) == "offers/bravo.yaml:1: vendor: required field is missing"


def test_wrong_type(basic):
    edit(basic / "offers" / "alpha.yaml", "gpus: 100\n", "gpus: many\n")  # line 7
    assert only_problem(basic) == "offers/alpha.yaml:7: gpus: must be a whole number (got 'many')"


def test_wrong_type_in_a_list(basic):
    edit(basic / "offers" / "alpha.yaml", "once: 87600}", "once: lots}")  # line 13, fees[0]
    assert only_problem(basic) == "offers/alpha.yaml:13: pricing.fees[0].once: must be a number (got 'lots')"


@pytest.mark.parametrize("price", ["-3", "0", "-0.5"])
def test_negative_or_zero_price(basic, price):
    edit(basic / "offers" / "alpha.yaml", "  gpu_hour: 4.00\n", f"  gpu_hour: {price}\n")  # line 11
    # as in DESIGN.md: `offers/acme.yaml:12: pricing.gpu_hour: must be greater than 0 (got -3)`
    assert only_problem(basic) == f"offers/alpha.yaml:11: pricing.gpu_hour: must be greater than 0 (got {price})"


def test_zero_gpus(basic):
    edit(basic / "offers" / "alpha.yaml", "gpus: 100\n", "gpus: 0\n")  # line 7
    # 0 is a valid minimum only for a pure on-demand offer (pricing.burst) or a commitment without minimum (max_gpus)
    assert (
        only_problem(basic)
        == "offers/alpha.yaml:7: gpus: 0 committed GPUs needs pricing.burst (a pure on-demand offer) or max_gpus (a "
        "commitment without minimum)"
    )


def test_unknown_operating_job(basic):
    edit(
        basic / "offers" / "alpha.yaml", "  os_patching: provider\n", "  os_patching: provider\n  cooking: provider\n"
    )  # line 24
    assert only_problem(basic) == (
        "offers/alpha.yaml:24: responsibilities.cooking: unknown operating job (expected one of: "
        f"{', '.join(OPERATING_JOBS)})"
    )


def test_unknown_operating_job_in_procure_yaml(basic):
    edit(basic / "procure.yaml", "    storage: {fte_fixed", "    storing: {fte_fixed")  # line 29
    problem = only_problem(basic)
    assert problem.startswith("procure.yaml:29: assumptions.jobs.storing: unknown operating job")


def test_missing_operating_job(basic):
    edit(basic / "offers" / "alpha.yaml", "  scheduler: provider\n", "")
    problem = only_problem(basic)
    assert problem.startswith("offers/alpha.yaml:20: responsibilities: no owner given for: scheduler")


def test_owner_other_than_provider_customer_shared(basic):
    edit(basic / "offers" / "bravo.yaml", "  firmware_drivers: customer\n", "  firmware_drivers: vendor\n")  # line 20
    assert only_problem(basic) == (
        "offers/bravo.yaml:20: responsibilities.firmware_drivers: must be one of 'provider', 'customer' or 'shared' "
        "(got 'vendor')"
    )


def test_duplicate_offer_ids(basic):
    (basic / "offers" / "zulu.yaml").write_text((basic / "offers" / "alpha.yaml").read_text())
    assert only_problem(basic) == "offers/zulu.yaml:1: id: duplicate offer id 'alpha' (also in offers/alpha.yaml)"


def test_unknown_reference_curve(basic):
    edit(basic / "offers" / "bravo.yaml", "  reference: test-curve\n", "  reference: no-such-curve\n")  # line 32
    assert only_problem(basic) == (
        "offers/bravo.yaml:32: performance.reference: unknown reference curve 'no-such-curve' (known: test-curve)"
    )


def test_unknown_currency_without_fx_rate(basic):
    edit(basic / "offers" / "bravo.yaml", "  currency: EUR\n", "  currency: GBP\n")  # line 10
    assert only_problem(basic) == (
        "offers/bravo.yaml:10: pricing.currency: unknown currency GBP: add assumptions.fx.GBP (units of USD per GBP) "
        "to procure.yaml"
    )


def test_currency_with_fx_rate_is_fine(basic):
    edit(basic / "procure.yaml", "  fx: {EUR: 1.1}\n", "  fx: {EUR: 1.1, GBP: 1.25}\n")
    edit(basic / "offers" / "bravo.yaml", "  currency: EUR\n", "  currency: GBP\n")
    assert load_workspace(basic).fx_rate("GBP") == 1.25


def test_empty_offers_folder(basic):
    for path in (basic / "offers").iterdir():
        path.unlink()
    assert only_problem(basic).startswith("offers/: no .yaml or .yml files: expected at least one; copy offer-template")


def test_duplicate_yaml_keys(basic):
    edit(basic / "offers" / "alpha.yaml", "gpus: 100\n", "gpus: 100\ngpus: 200\n")  # lines 7 and 8
    assert only_problem(basic) == "offers/alpha.yaml:8: gpus: duplicate key (first given on line 7)"


def test_duplicate_nested_yaml_keys(basic):
    edit(
        basic / "offers" / "alpha.yaml", "  monitoring: provider\n", "  monitoring: provider\n  monitoring: customer\n"
    )  # 28, 29
    assert (
        only_problem(basic)
        == "offers/alpha.yaml:29: responsibilities.monitoring: duplicate key (first given on line 28)"
    )


@pytest.mark.parametrize(
    "tag", ["!!python/object/apply:os.system", "!!python/object:os.system", "!!python/name:os.system"]
)
def test_python_object_tags_are_refused_and_never_run(basic, tmp_path, tag):
    marker = tmp_path / "pwned"
    edit(basic / "offers" / "alpha.yaml", "vendor: Alpha Cloud\n", f"vendor: {tag} ['touch {marker}']\n")  # line 2
    problem = only_problem(basic)
    assert problem.startswith("offers/alpha.yaml:2: malformed YAML: ")
    assert "python/" in problem
    assert not marker.exists()


def test_several_problems_at_once_all_reported(basic):
    edit(basic / "offers" / "alpha.yaml", "  gpu_hour: 4.00\n", "  gpu_hour: -3\n")  # line 11
    edit(basic / "offers" / "alpha.yaml", "  tenant_isolation: true\n", "  tenant_isolation: maybe\n")  # line 18
    edit(basic / "offers" / "bravo.yaml", "  reference: test-curve\n", "  reference: nope\n")  # line 32
    edit(basic / "offers" / "charlie.yaml", "valid_until: 2027-06-30\n", "valid_until: someday\n")  # line 4
    edit(basic / "grades" / "T-MC.yaml", "rank: 1\n", "rank: first\n")  # line 3
    edit(basic / "market" / "index.csv", "2026-10-31,4.50\n", "2026-10-31,cheap\n")  # line 4
    found = problems(basic)
    locations = [p.split(": ")[0] for p in found]
    assert locations == [
        "grades/T-MC.yaml:3",
        "market/index.csv:4",
        "offers/alpha.yaml:11",
        "offers/alpha.yaml:18",
        "offers/bravo.yaml:32",
        "offers/charlie.yaml:4",
    ]
    assert found[3] == "offers/alpha.yaml:18: service.tenant_isolation: must be true or false (got 'maybe')"
    assert found[5] == "offers/charlie.yaml:4: valid_until: must be a date like 2026-11-30 (got 'someday')"


def test_schema_and_cross_field_problems_in_one_file_reported_together(basic):
    edit(basic / "offers" / "alpha.yaml", "gpus: 100\n", "gpus: many\n")  # line 7
    edit(
        basic / "offers" / "alpha.yaml", "  os_patching: provider\n", "  os_patching: provider\n  cooking: provider\n"
    )  # line 24
    locations = [p.split(": ")[0] for p in problems(basic)]
    assert locations == ["offers/alpha.yaml:7", "offers/alpha.yaml:24"]


def test_bad_row_in_a_performance_curve(basic):
    edit(basic / "performance" / "test-curve.csv", "100,300\n", "100,abc\n")  # line 4
    found = problems(basic)
    assert "performance/test-curve.csv:4: output_tok_s_gpu: must be a number (got 'abc')" in found


def test_negative_throughput_in_a_performance_curve(basic):
    edit(basic / "performance" / "test-curve.csv", "150,100\n", "150,-100\n")  # line 5
    assert "performance/test-curve.csv:5: output_tok_s_gpu: must be greater than 0 (got -100)" in problems(basic)


def test_short_row_in_a_performance_curve(basic):
    edit(basic / "performance" / "test-curve.csv", "50,400\n", "50\n")  # line 3
    assert "performance/test-curve.csv:3: expected 2 values, got 1" in problems(basic)


def test_bad_date_in_the_index(basic):
    edit(basic / "market" / "index.csv", "2026-10-31,4.50\n", "2026-10-32,4.50\n")  # line 4
    assert only_problem(basic) == "market/index.csv:4: date: must be a date like 2026-11-30 (got '2026-10-32')"


def test_bad_price_in_the_index(basic):
    edit(basic / "market" / "index.csv", "2026-11-30,6.00\n", "2026-11-30,-6\n")  # line 5
    assert only_problem(basic) == "market/index.csv:5: price: must be greater than 0 (got -6)"


def test_duplicate_date_in_the_index(basic):
    edit(basic / "market" / "index.csv", "2026-11-30,6.00\n", "2026-11-30,6.00\n2026-11-30,6.10\n")  # line 6
    assert only_problem(basic) == "market/index.csv:6: date: duplicate date 2026-11-30"


def test_wrong_index_header(basic):
    edit(basic / "market" / "index.csv", "date,price\n", "day,price\n")  # line 2
    problem = only_problem(basic)
    assert problem.startswith("market/index.csv:2: expected columns date, price")


def test_index_linked_offer_needs_an_index(workspace_copy):
    root = workspace_copy("offer_kinds")
    (root / "market" / "index.csv").unlink()
    assert (
        only_problem(root)
        == "offers/indexed.yaml:12: pricing.index_linked: index-linked pricing needs market/index.csv (date, price)"
    )


def test_problems_raise_input_error_with_one_line_each(basic):
    edit(basic / "offers" / "alpha.yaml", "  gpu_hour: 4.00\n", "  gpu_hour: -3\n")
    edit(basic / "offers" / "charlie.yaml", "  gpu_hour: 2.50\n", "  gpu_hour: 0\n")
    with pytest.raises(InputError) as caught:
        load_workspace(basic)
    error = caught.value
    assert len(error.problems) == 2
    assert str(error).splitlines() == [str(p) for p in error.problems]
    first = error.problems[0]
    assert (first.file, first.line, first.field) == ("offers/alpha.yaml", 11, "pricing.gpu_hour")


def test_not_a_workspace(tmp_path):
    problem = only_problem(tmp_path)
    assert "no procure.yaml here" in problem


def test_originals_untouched(data_dir, basic):
    edit(basic / "offers" / "alpha.yaml", "  gpu_hour: 4.00\n", "  gpu_hour: -3\n")
    assert "  gpu_hour: 4.00\n" in (data_dir / "basic" / "offers" / "alpha.yaml").read_text()


def test_a_bad_curve_file_is_reported_once_not_as_an_unknown_curve(basic):
    edit(basic / "performance" / "test-curve.csv", "100,300\n", "100,abc\n")  # line 4; bravo references it
    assert only_problem(basic) == "performance/test-curve.csv:4: output_tok_s_gpu: must be a number (got 'abc')"


def test_discount_on_an_owned_offer_is_refused(workspace_copy):
    ws = workspace_copy("offer_kinds")
    owned = ws / "offers" / "owned.yaml"
    text = owned.read_text()
    assert "pricing:\n" in text
    owned.write_text(text.replace("pricing:\n", "pricing:\n  discount: 0.5\n", 1))
    line = owned.read_text().splitlines().index("  discount: 0.5") + 1
    found = only_problem(ws)
    # the rented kinds (GPU-hour, index-linked and any other of procure/model/kinds/) take a discount
    assert found.startswith(f"offers/owned.yaml:{line}: pricing.discount: a discount applies to GPU-hour")
    assert found.endswith(" prices; fold it into per_mtok or owned figures")
