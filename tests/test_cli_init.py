"""`procure init DIR`: an empty workspace of commented templates; `--example`: the example. Never over an existing
one."""

from __future__ import annotations

from pathlib import Path

import pytest
from clihelp import AS_OF, assert_error, run

from procure.io.example import example_files, example_root


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_init_writes_a_workspace_that_validates(tmp_path):
    target = tmp_path / "deep" / "rfp-2027"  # missing folders are created
    result = run("init", target, "--example")
    assert result.exit_code == 0, result.stderr
    files = example_files()
    assert result.stderr == f"wrote {len(files)} files to {target}; next: procure validate --workspace {target}\n"
    assert result.stdout == ""
    written = snapshot(target)
    assert set(written) == {f.as_posix() for f in files}
    assert {"procure.yaml", "offers", "grades", "performance", "market", "actuals"} == {
        Path(name).parts[0] for name in written
    }
    root = example_root()
    assert all(written[f.as_posix()] == (root / f).read_bytes() for f in files)
    assert not any(name.startswith(".procure") for name in written)  # no history comes along

    checked = run("validate", "-w", target, "--as-of", AS_OF)
    assert checked.exit_code == 0, checked.stderr
    offers = len([f for f in files if f.parts[0] == "offers"])
    assert checked.stdout.startswith(f"ok: {offers} offers, ")
    assert run("compare", "-w", target, "--as-of", AS_OF).exit_code == 0


def test_init_refuses_an_existing_workspace_and_overwrites_nothing(workspace_copy):
    ws = workspace_copy("basic")
    before = snapshot(ws)
    result = run("init", ws, "--example")
    assert result.exit_code == 2
    # basic shares two paths with the example: market/index.csv (named first) and procure.yaml
    assert f"{ws / 'market' / 'index.csv'}: already exists (2 file(s) would be overwritten)" in result.stderr
    assert "choose an empty folder" in result.stderr
    assert "nothing was written" in result.stderr
    assert snapshot(ws) == before  # not even the example's other offers were added


def test_init_twice_keeps_the_edits_of_the_first(tmp_path):
    target = tmp_path / "ws"
    assert run("init", target, "--example").exit_code == 0
    (target / "procure.yaml").write_text(
        "# mine now\n" + (target / "procure.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    before = snapshot(target)
    again = run("init", target, "--example")
    assert again.exit_code == 2
    assert f"({len(example_files())} file(s) would be overwritten)" in again.stderr
    assert snapshot(target) == before


def test_init_into_a_folder_with_other_files(tmp_path):
    target = tmp_path / "ws"
    target.mkdir()
    (target / "NOTES.md").write_text("kept\n", encoding="utf-8")
    assert run("init", target, "--example").exit_code == 0
    assert (target / "NOTES.md").read_text(encoding="utf-8") == "kept\n"
    assert (target / "procure.yaml").is_file()


def test_init_refuses_a_file(tmp_path):
    target = tmp_path / "file"
    target.write_text("not a folder\n", encoding="utf-8")
    result = run("init", target, "--example")
    assert result.exit_code == 2
    assert target.read_text(encoding="utf-8") == "not a folder\n"


def test_a_stray_file_beside_the_example_never_spreads(tmp_path, monkeypatch):
    """A file created in the checkout (an editable install reads the example from there) stays there."""
    import shutil

    import procure.io.example as example

    checkout = tmp_path / "checkout"
    root = example_root()
    for f in example_files():
        (checkout / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / f, checkout / f)
    (checkout / "offers" / "my-draft.yaml").write_text("id: my-draft\n")
    (checkout / "market" / "scratch.csv").write_text("date,price\n")
    (checkout / "notes.txt").write_text("private\n")
    monkeypatch.setattr(example, "example_root", lambda: checkout)
    target = tmp_path / "new"
    assert run("init", target, "--example").exit_code == 0
    written = set(snapshot(target))
    assert written == {f.as_posix() for f in example_files()}
    assert not {"offers/my-draft.yaml", "market/scratch.csv", "notes.txt"} & written


def test_the_example_list_matches_the_package_data_of_pyproject():
    """The wheel ships the same files, named one by one (no glob that would take a stray file)."""
    import tomllib

    from procure.io.example import EXAMPLE_FILES

    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    data = pyproject["tool"]["setuptools"]["package-data"]
    assert pyproject["tool"]["setuptools"]["include-package-data"] is False
    shipped = set()
    for package, names in data.items():
        if package.startswith("procure.example_workspace"):
            folder = package.removeprefix("procure.example_workspace").lstrip(".").replace(".", "/")
            assert not any("*" in n for n in names), names
            shipped |= {f"{folder}/{n}" if folder else n for n in names}
    assert shipped == set(EXAMPLE_FILES)
    assert all((example_root() / f).is_file() for f in EXAMPLE_FILES)


def test_every_example_file_is_listed():
    """A file added to the example must be added to the list (and to package-data), or init leaves
    it out; a file lying in a checkout without being part of the example shows up here too."""
    root = example_root()
    if not (root / "pyproject.toml").is_file():
        pytest.skip("an installed package: only the listed files are there")
    present = {
        p.relative_to(root).as_posix()
        for folder in ("offers", "grades", "performance", "market", "actuals")
        for p in (root / folder).rglob("*")
        if p.is_file()
    }
    assert present | {"procure.yaml"} == {f.as_posix() for f in example_files()}


# --- the empty workspace: the user's own offers, nothing of the example ---------------------------


def own_offer(oid: str, vendor: str, price: float, gpus: int, term: int) -> str:
    return f"""\
id: {oid}
vendor: {vendor}
received: 2027-01-04
valid_until: 2027-03-31
region: us-east
gpu: B200
gpus: {gpus}
max_gpus: {gpus * 4}
term_months: {term}
delivery: 2027-02-01
pricing: {{currency: USD, gpu_hour: {price}}}
service:
  kind: managed_cluster
  orchestration: kubernetes
  sla: {{availability: 0.995, node_replacement_hours: 24, automatic_credits: true}}
  attestations: [soc2_type2]
  tenant_isolation: true
  isolated_monitoring: true
responsibilities: {{hardware_repair: provider, firmware_drivers: provider, os_patching: provider, fabric_isolation: provider,
  health_checks: provider, scheduler: provider, storage: provider, monitoring: provider, incident_response: shared,
  serving_stack: customer, release_validation: customer, capacity_planning: customer}}
performance: {{reference: b200-dynamo-trt-fp4}}
operator: {{published_tier: gold}}
"""  # noqa: E501


def test_init_writes_an_empty_workspace_of_templates(tmp_path):
    target = tmp_path / "mine"
    result = run("init", target)
    assert result.exit_code == 0, result.stderr
    written = snapshot(target)
    assert "procure.yaml" in written and "offer-template.yaml" in written
    assert (target / "offers").is_dir() and not any((target / "offers").iterdir())  # offers/ empty
    assert not (target / "actuals").exists() and not (target / "market").exists()  # no evidence, no market data
    config = written["procure.yaml"].decode()
    # no `market.own` (what we pay today) and no vendor-share cap unless the user sets one: commented only
    assert all(
        line.lstrip().startswith("#") for line in config.splitlines() if "own:" in line or "max_vendor_share" in line
    )
    root = example_root()
    assert {n for n in written if n.startswith(("grades/", "performance/"))} == {
        f.as_posix() for f in example_files() if f.parts[0] in ("grades", "performance")
    }
    assert all(written[n] == (root / n).read_bytes() for n in written if n.startswith(("grades/", "performance/")))
    # no offer yet: validate says what is missing (exit 2); the template itself is a valid offer once copied
    assert_error(run("validate", "-w", target), "offers/", "expected at least one")
    (target / "offers" / "vendor-b200.yaml").write_bytes(written["offer-template.yaml"])
    checked = run("validate", "-w", target, "--as-of", "2027-01-10")
    assert checked.exit_code == 0, checked.stderr
    assert checked.stdout.startswith("ok: 1 offers, ")
    again = run("init", target)  # never over an existing workspace
    assert_error(again, "already exists")


@pytest.mark.slow
def test_three_own_offers_and_nothing_of_the_example_is_named(tmp_path):
    """init, three hand-written offers: compare and the board memo name only what the user entered."""
    import yaml

    target = tmp_path / "mine"
    assert run("init", target).exit_code == 0
    for oid, vendor, price, gpus, term in (
        ("ardent-b200", "Ardent GPU", 3.9, 1024, 12),
        ("birch-b200", "Birch Cloud", 4.4, 512, 6),
        ("cobalt-b200", "Cobalt Compute", 3.6, 2048, 24),
    ):
        (target / "offers" / f"{oid}.yaml").write_text(own_offer(oid, vendor, price, gpus, term), encoding="utf-8")
    as_of = "2027-01-10"
    compared = run("compare", "-w", target, "--as-of", as_of, "--wide")
    assert compared.exit_code == 0, compared.stderr
    memo = target / "board.html"
    made = run("report", "--board", "-w", target, "--as-of", as_of, "--out", memo)
    assert made.exit_code == 0, made.stderr
    text = compared.stdout + compared.stderr + memo.read_text(encoding="utf-8") + made.stderr
    root = example_root()
    example_vendors = {
        yaml.safe_load((root / f).read_text(encoding="utf-8"))["vendor"]
        for f in example_files()
        if f.parts[0] == "offers"
    }
    example_ids = {f.stem for f in example_files() if f.parts[0] == "offers"}
    for name in sorted(example_vendors | example_ids):
        assert name not in text, name
    # the example's own cost (market.own: 0.0068 a task at 150 M tasks, about 1.02 M a month) and its date
    for leak in (
        "recorded cost",
        "Today we pay",
        "2026-11-29",
        "2026-05-31",
        "Rival",
        "reasoning-chat",
        "max_vendor_share",
    ):
        assert leak not in text, leak
    assert "No figure for what we pay today is recorded" in text
    for vendor in ("Ardent GPU", "Birch Cloud", "Cobalt Compute"):
        assert vendor in text


KINDS = {  # offer-templates/<name>.yaml -> the kind and pricing it shows
    "managed-cluster": ("managed_cluster", "gpu_hour"),
    "bare-metal": ("bare_metal", "gpu_hour"),
    "managed-serving": ("managed_serving", "gpu_hour"),
    "per-token": ("managed_serving", "per_mtok"),
    "owned": ("owned", "owned"),
}


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_has_a_template_valid_as_written_without_a_warning(tmp_path, name):
    import yaml

    target = tmp_path / "mine"
    assert run("init", target).exit_code == 0
    template = target / "offer-templates" / f"{name}.yaml"
    offer = yaml.safe_load(template.read_text())
    kind, pricing = KINDS[name]
    assert offer["service"]["kind"] == kind and pricing in offer["pricing"]
    assert template.read_text().count("\n# ") + template.read_text().count("  # ") >= 5  # commented
    (target / "offers" / template.name).write_bytes(template.read_bytes())
    result = run("validate", "--format", "json", "-w", target, "--as-of", "2027-01-10")
    assert result.exit_code == 0, result.stderr
    doc = __import__("json").loads(result.stdout)
    assert doc["offers"] == 1 and doc["warnings"] == []
    plain = run("validate", "-w", target, "--as-of", "2027-01-10")
    assert "warning" not in plain.stderr


def test_offer_template_is_the_managed_cluster_template(tmp_path):
    target = tmp_path / "mine"
    assert run("init", target).exit_code == 0
    assert (target / "offer-template.yaml").read_bytes() == (
        target / "offer-templates" / "managed-cluster.yaml"
    ).read_bytes()
