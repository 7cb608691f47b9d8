import json

import pytest
from clihelp import assert_error, run


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        (
            "offer",
            {
                "id",
                "vendor",
                "gpus",
                "max_gpus",
                "term_months",
                "pricing",
                "service",
                "responsibilities",
                "performance",
                "operator",
            },
        ),
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
    assert set(defs["Service"]["properties"]["kind"]["enum"]) == {
        "managed_serving",
        "managed_cluster",
        "bare_metal",
        "owned",
    }


def test_unknown_schema_is_a_usage_error():
    assert run("schema", "nonsense").exit_code == 2


def test_a_command_name_gives_its_document():
    # `schema compare` is the Evaluation that compare writes; validate's and grades update's too
    assert run("schema", "compare").stdout == run("schema", "evaluation").stdout
    assert run("schema", "validate").stdout == run("schema", "validation").stdout
    assert json.loads(run("schema", "grades").stdout)["properties"].keys() >= {"files", "written", "command"}
    assert json.loads(run("schema", "claims").stdout)["properties"].keys() >= {"vendors", "as_of"}


def test_unknown_schema_names_the_nearest():
    result = run("schema", "evalution")
    assert result.exit_code == 2
    assert "schema: NAME: no schema 'evalution'; did you mean 'evaluation'?" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_schema_takes_format_json_and_out(tmp_path):
    out = tmp_path / "s" / "offer.schema.json"
    result = run("schema", "offer", "--format", "json", "--out", out)
    assert result.exit_code == 0 and result.stdout == ""
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(run("schema", "offer").stdout)
    refused = run("schema", "offer", "--out", tmp_path / "offer.csv")
    assert refused.exit_code == 2 and "it writes json (suffixes .json)" in refused.stderr


def test_every_output_document_has_one_model_in_the_registry():
    """`procure schema NAME` finds each output document's model by its name: the registry holds every name
    OUTPUT_SCHEMAS lists and no other, and each entry makes a model with a JSON Schema."""
    from procure.render.schemas import OUTPUT_MODELS, OUTPUT_SCHEMAS, json_schema

    assert list(OUTPUT_MODELS) == list(OUTPUT_SCHEMAS)
    for name in OUTPUT_SCHEMAS:
        assert json_schema(name)["description"]


def test_input_and_output_name_a_file_and_a_command_apart():
    """`schema input grade` is the grade file's schema (a grade's requirements), `schema output grade` the grade
    command's JSON (offers with their checks); the one-word form keeps its old meaning (the input)."""
    grade_file = json.loads(run("schema", "input", "grade").stdout)
    grade_output = json.loads(run("schema", "output", "grade").stdout)
    assert "offers" in grade_output["properties"] and "schema_version" in grade_output["properties"]
    assert "offers" not in grade_file["properties"] and "schema_version" not in grade_file["properties"]
    assert json.loads(run("schema", "grade").stdout) == grade_file
    assert json.loads(run("schema", "output", "grading").stdout) == grade_output
    for command, document in [
        ("compare", "evaluation"),
        ("validate", "validation"),
        ("grades-update", "grades-update"),
        ("index-build", "index"),
        ("whatif-price-to-win", "price-to-win"),
        ("scorecard-claim", "claims"),
        ("reevaluate", "reevaluate"),
    ]:
        assert run("schema", "output", command).stdout == run("schema", document).stdout, command
    assert run("schema", "input", "procure.yaml").stdout == run("schema", "workspace").stdout


def test_a_kind_or_name_that_is_not_one_names_the_nearest():
    assert_error(run("schema", "inptu", "offer"), "no kind of schema 'inptu'", "did you mean 'input'")
    assert_error(run("schema", "input", "compare"), "no input schema 'compare'")  # a command writes no input
    assert_error(run("schema", "output", "offer"), "no output schema 'offer'")
