import json

from clihelp import run
from refusals import refused


def test_grade_table_names_each_offer_and_the_nearest_grade(data_dir):
    result = run("grade", "-w", data_dir / "basic")
    assert result.exit_code == 0
    charlie = next(line for line in result.stdout.splitlines() if "charlie" in line)
    assert "ungraded" in charlie and "nearest T-MC" in charlie


def test_explain_lists_every_grade_requirement(data_dir):
    result = run("grade", "-w", data_dir / "basic", "--explain", "bravo", "--format", "json")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert document["command"] == "grade" and len(document["offers"]) == 1  # the envelope, one offer named
    data = document["offers"][0]
    assert data["grade"] == "T-BM"
    by_grade = {c["grade"]: c for c in data["checks"]}
    assert by_grade["T-BM"]["passed"] and not by_grade["T-MC"]["passed"]
    kind = next(r for r in by_grade["T-MC"]["requirements"] if r["requirement"] == "service kind")
    assert (kind["observed"], kind["passed"]) == ("bare_metal", False)
    table = run("grade", "-w", data_dir / "basic", "--explain", "bravo")
    assert "FAIL" in table.stdout and "pass" in table.stdout


def test_explain_unknown_offer_is_refused(data_dir):
    from procure.analysis.usecases import grades

    refused(lambda: grades(data_dir / "basic", None, ["nope"]), "no offer with id 'nope'")


def test_explain_names_the_requirement_a_real_offer_misses(data_dir):
    # AWS p6-b200 with EKS: the customer rolls out node images (os_patching shared), so it is not a managed cluster
    result = run("grade", "-w", data_dir / "real_offers", "--explain", "aws-p6-b200")
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "aws-p6-b200 (Amazon Web Services): grade B200-BM" in text
    assert "misses B200-MC: provider owns (not provider: os_patching (shared))" in text
    assert "misses B200-MS: service kind (managed_cluster)" in text
