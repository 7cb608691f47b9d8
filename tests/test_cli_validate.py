from clihelp import AS_OF, run


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
