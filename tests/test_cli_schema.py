import json

import pytest
from clihelp import run


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("offer", {"id", "vendor", "gpus", "max_gpus", "term_months", "pricing", "service", "responsibilities", "performance", "operator"}),
        ("grade", {"id", "name", "rank", "gpu", "expect", "requires"}),
        ("workspace", {"currency", "workload", "assumptions", "policy"}),
        ("evaluation", {"schema_version", "as_of", "workload", "offers"}),
    ],
)
def test_schema_lists_the_design_fields(name, fields):
    result = run("schema", name)
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert fields <= schema["properties"].keys()


def test_offer_schema_fixes_owners_and_fee_kinds():
    defs = json.loads(run("schema", "offer").stdout)["$defs"]
    assert set(defs["Fee"]["properties"]) == {"name", "once", "monthly", "gpu_hour", "per_tb", "tb_per_month"}
    assert set(defs["Service"]["properties"]["kind"]["enum"]) == {"managed_serving", "managed_cluster", "bare_metal", "owned"}


def test_unknown_schema_is_a_usage_error():
    assert run("schema", "nonsense").exit_code == 2
