"""`procure validate`: what it prints for a valid workspace, and for an invalid one its problems, one line each, exit 2
and the count line. Which problems a workspace has, and in what order, is checked on validate's use case in process
(tests/refusals.py)."""

from clihelp import AS_OF, run
from refusals import refused, validate


def test_valid_workspace(data_dir):
    result = run("validate", "-w", data_dir / "basic", "--as-of", AS_OF)
    assert result.exit_code == 0
    assert result.stdout.startswith("ok: 3 offers, 2 grades, 1 reference curve, 3 index levels")


def test_broken_offer_prints_file_line_field_and_exits_2(workspace_copy):
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    offer.write_text(offer.read_text().replace("gpu_hour: 4.00", "gpu_hour: -3"))
    line = offer.read_text().splitlines().index("  gpu_hour: -3") + 1
    result = run("validate", "-w", ws, "--as-of", AS_OF)
    assert result.exit_code == 2
    assert f"offers/alpha.yaml:{line}: pricing.gpu_hour: must be greater than 0 (got -3)" in result.stderr.splitlines()
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_all_problems_at_once(workspace_copy):
    ws = workspace_copy("basic")
    alpha = ws / "offers" / "alpha.yaml"
    alpha.write_text(alpha.read_text().replace("gpus: 100", "gpus: many"))
    bravo = ws / "offers" / "bravo.yaml"
    bravo.write_text(bravo.read_text().replace("region: us-west\n", ""))
    result = run("validate", "-w", ws)
    assert result.exit_code == 2
    assert "offers/alpha.yaml:7: gpus: must be a whole number (got 'many')" in result.stderr
    assert "offers/bravo.yaml:1: region: required field is missing" in result.stderr
    assert "2 problems found; nothing was written." in result.stderr


def edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def problem_lines(ws):
    """The problems validate -w WS --as-of AS_OF prints, one line each (without the count line), in process."""
    return refused(validate(ws, AS_OF)).splitlines()


def test_a_bad_date_does_not_hide_a_negative_price_in_the_same_file(workspace_copy):
    ws = workspace_copy("basic")
    alpha = ws / "offers" / "alpha.yaml"
    edit(alpha, "received: 2026-11-01", "received: 2026-13-01")  # line 3
    edit(alpha, "gpu_hour: 4.00", "gpu_hour: -4")  # line 11
    assert problem_lines(ws) == [
        "offers/alpha.yaml:3: received: not a valid date: month must be in 1..12 (got '2026-13-01')",
        "offers/alpha.yaml:11: pricing.gpu_hour: must be greater than 0 (got -4)",
    ]


def test_a_duplicate_key_does_not_hide_the_rest(workspace_copy):
    ws = workspace_copy("basic")
    alpha = ws / "offers" / "alpha.yaml"
    edit(alpha, "gpus: 100\n", "gpus: 100\ngpus: 200\n")  # lines 7 and 8; the price moves to line 12
    edit(alpha, "gpu_hour: 4.00", "gpu_hour: -4")
    edit(ws / "offers" / "bravo.yaml", "region: us-west\n", "")
    assert problem_lines(ws) == [
        "offers/alpha.yaml:8: gpus: duplicate key (first given on line 7)",
        "offers/alpha.yaml:12: pricing.gpu_hour: must be greater than 0 (got -4)",
        "offers/bravo.yaml:1: region: required field is missing",
    ]


def test_a_duplicate_key_alone_still_fails(workspace_copy):
    ws = workspace_copy("basic")
    edit(ws / "offers" / "alpha.yaml", "gpus: 100\n", "gpus: 100\ngpus: 100\n")
    assert problem_lines(ws) == ["offers/alpha.yaml:8: gpus: duplicate key (first given on line 7)"]


def test_unknown_fields_get_the_nearest_known_name(workspace_copy):
    ws = workspace_copy("basic")
    alpha = ws / "offers" / "alpha.yaml"
    edit(alpha, "region: us-east", "regoin: us-east")  # line 5
    edit(alpha, "  tenant_isolation: true", "  tenant_isolaton: true")
    edit(ws / "procure.yaml", "currency: USD", "curency: USD")
    edit(ws / "offers" / "bravo.yaml", "region: us-west\n", "region: us-west\nflavour: vanilla\n")
    lines = problem_lines(ws)
    assert (
        "offers/alpha.yaml:5: regoin: unknown field: did you mean region? (`procure schema` lists the fields)" in lines
    )
    assert any(
        line.endswith(
            "service.tenant_isolaton: unknown field: did you mean tenant_isolation? (`procure schema` lists the fields)"
        )
        for line in lines
    )
    assert "procure.yaml:2: curency: unknown field: did you mean currency? (`procure schema` lists the fields)" in lines
    # nothing close: no guess
    assert any(
        line.endswith("flavour: unknown field (check the spelling; `procure schema` lists the fields)")
        for line in lines
    )


def schema_requires(schema: dict, offer: dict) -> set[str]:
    """The fields the offer schema requires of this offer: `required` plus the if/then rules
    (evaluated here for the three shapes they use: a missing key, a const)."""
    required = set(schema["required"])
    for rule in schema.get("allOf", []):
        ((name, condition),) = rule["if"]["properties"].items()
        value = offer.get(name, {})
        if "not" in condition and "required" in condition["not"]:
            holds = not all(k in value for k in condition["not"]["required"])
        else:
            ((key, test),) = condition["properties"].items()
            holds = value.get(key) != test["not"]["const"]
        if holds:
            then = rule["then"]
            required |= set(then.get("required", []))
            for inner, spec in then.get("properties", {}).items():
                required |= {f"{inner}.{k}" for k in spec["required"]}
    return required


def test_required_fields_match_the_schema(workspace_copy):
    """`procure schema offer` and the loader agree: term_months (and gpus, service.sla) are required
    exactly when the schema says so."""
    import json

    import yaml

    schema = json.loads(run("schema", "offer").stdout)
    assert (
        "term_months" in schema["properties"]
        and "required unless owned" in schema["properties"]["term_months"]["description"]
    )
    ws = workspace_copy("offer_kinds")
    seen = set()
    for path in sorted((ws / "offers").glob("*.yaml")):
        offer = yaml.safe_load(path.read_text())
        for field in ("term_months", "gpus"):
            trimmed = {k: v for k, v in offer.items() if k != field}
            path.write_text(yaml.safe_dump(trimmed))
            stderr = run("validate", "-w", ws, "--as-of", AS_OF).stderr
            loader_requires = f"offers/{path.name}:1: {field}: required field is missing" in stderr
            assert loader_requires == (field in schema_requires(schema, trimmed)), (path.name, field)
            seen.add((field, loader_requires))
            path.write_text(yaml.safe_dump(offer))
    assert ("term_months", True) in seen and ("term_months", False) in seen  # both cases were tried


def test_a_broken_offer_with_actuals_is_named_once_not_as_an_unknown_actuals_folder(workspace_copy):
    # alpha.yaml is invalid; its actuals folder still names a real offer file's id, so the only
    # problem is the price (before the fix, actuals/alpha was also called "no offer with this id").
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    edit(offer, "gpu_hour: 4.00", "gpu_hour: -3")
    (ws / "actuals" / "alpha").mkdir(parents=True)
    assert problem_lines(ws) == [
        f"offers/alpha.yaml:{offer.read_text().splitlines().index('  gpu_hour: -3') + 1}: pricing.gpu_hour: must be "
        "greater than 0 (got -3)"
    ]
