"""Hostile YAML in vendor files: every case ends in a clear error (exit 2, file and line, no
traceback, nothing written) or a safe result, and quickly. The command line's part (exit 2, no
traceback, nothing on standard output, no file written) is run for the alias bomb and a file of
millions of values; the other cases are checked on the problems the workspace's readers raise, in
process (tests/refusals.py), through the use cases of compare and validate.

Vendor files come from outside the buyer's organisation: alias bombs, deep nesting, huge, binary or
non-UTF-8 files, duplicate keys, tags that would construct objects, empty files, the wrong kind of
document and tabs.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import refusals
from clihelp import run
from refusals import compare, refused, validate

import procure.io.yamlsafe as yamlsafe

OFFER = "offers/alpha.yaml"
GRADE = "grades/T-MC.yaml"
CONFIG = "procure.yaml"


# --- helpers ------------------------------------------------------------------------------------


def refused_by_commands(ws: Path, *needles: str) -> str:
    """`procure compare --out` and `procure validate` exit 2 with every needle on stderr, no traceback,
    nothing on stdout and no output file; returns stderr."""
    out = ws.parent / "out" / "comparison.csv"
    commands = [("compare", "--format", "csv", "--out", str(out)), ("validate",)]
    for command in commands:
        result = run(*command, "-w", ws)
        combined = result.stdout + result.stderr
        assert result.exit_code == 2, (command[0], result.exit_code, result.exception, combined[-2000:])
        assert isinstance(result.exception, (SystemExit, type(None))), repr(result.exception)
        assert "Traceback" not in combined
        assert result.stdout == ""
        for needle in needles:
            assert needle in result.stderr, (needle, result.stderr[-2000:])
        assert "nothing was written" in result.stderr
    assert not out.exists() and not out.parent.exists()
    return result.stderr


def assert_refused(ws: Path, *needles: str, validate: bool = False) -> str:
    """In process: the use case of compare (and with `validate`, of validate) refuses the workspace with every
    needle in its problems; returns the problems, one line each."""
    problems = refused(compare(ws), *needles)
    if validate:
        problems = refused(refusals.validate(ws), *needles)
    return problems


def write(ws: Path, name: str, text: str | bytes) -> Path:
    path = ws / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def replace(ws: Path, name: str, old: str, new: str) -> None:
    path = ws / name
    text = path.read_text(encoding="utf-8")
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# A guard against a hang, not a speed test: ten times the slowest of these blocks measured on two
# loaded cores (about 3 s, the billion laughs through the whole CLI); speed is benchmarks/' business.
HANG_GUARD_S = 30.0


def timed(seconds: float):  # type: ignore[no-untyped-def]
    """A context manager asserting that its block finishes within `seconds`."""

    class _Timer:
        def __enter__(self):  # type: ignore[no-untyped-def]
            self.start = time.perf_counter()
            return self

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            elapsed = time.perf_counter() - self.start
            if exc[0] is None:
                assert elapsed < seconds, f"took {elapsed:.2f} s (budget {seconds} s)"
            return False

    return _Timer()


# --- alias bombs ----------------------------------------------------------------------------------


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    lines = ['lol0: &lol0 "lol"']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*lol{i - 1}"] * width)
        lines.append(f"lol{i}: &lol{i} [{refs}]")
    return "\n".join(lines) + "\n"


def merge_key_bomb(levels: int = 9, width: int = 9) -> str:
    """The same blow-up through merge keys (`<<`), which libyaml expands on construction."""
    lines = ["m0: &m0 {a: 1, b: 2, c: 3}"]
    for i in range(1, levels + 1):
        refs = ", ".join([f"*m{i - 1}"] * width)
        lines.append(f"m{i}: &m{i} {{<<: [{refs}], k{i}: [{refs}]}}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("target", [OFFER, CONFIG])
def test_billion_laughs_is_refused_quickly(workspace_copy, target):
    ws = workspace_copy("basic")
    write(ws, target, billion_laughs())
    with timed(HANG_GUARD_S):
        refused_by_commands(ws, f"{target}:", "alias bomb")


def test_alias_bomb_inside_a_valid_offer_field_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    nested = "".join("      " + line + "\n" for line in billion_laughs().splitlines())
    replace(ws, OFFER, "region: us-east\n", "region: us-east\noperator:\n  evidence:\n    security:\n" + nested)
    with timed(HANG_GUARD_S):
        assert_refused(ws, f"{OFFER}:", "alias bomb")


def test_merge_key_bomb_is_refused_quickly(workspace_copy):
    ws = workspace_copy("basic")
    write(ws, OFFER, merge_key_bomb())
    with timed(HANG_GUARD_S):
        assert_refused(ws, f"{OFFER}:")


@pytest.mark.parametrize(
    "text", ["a: &a [*a]\n", "a: &a {b: *a}\n", "a: &a {b: [{c: *a}]}\n"], ids=["list", "mapping", "mixed"]
)
def test_recursive_alias_is_refused(workspace_copy, text):
    ws = workspace_copy("basic")
    write(ws, OFFER, text)
    with timed(HANG_GUARD_S):
        assert_refused(ws, f"{OFFER}:1:", "nesting deeper")


# --- deep nesting -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "x: " + "[" * 10_000 + "\n",  # unclosed
        "x: " + "[" * 10_000 + "]" * 10_000 + "\n",
        "x: " + "{a: " * 10_000 + "}" * 10_000 + "\n",
        "- " * 10_000 + "x\n",
        "".join("  " * i + "a:\n" for i in range(2_000)) + "  " * 2_000 + "b: 1\n",
        "x: " + "[" * 100 + "]" * 100 + "\n",  # within libyaml's limit, beyond procure's
    ],
    ids=[
        "flow-unclosed-10000",
        "flow-10000",
        "flow-mapping-10000",
        "block-sequence-10000",
        "block-mapping-2000",
        "flow-100",
    ],
)
def test_deep_nesting_is_refused_with_its_line(workspace_copy, text):
    ws = workspace_copy("basic")
    write(ws, OFFER, text)
    with timed(HANG_GUARD_S):
        stderr = assert_refused(ws, f"{OFFER}:")
    assert "nesting" in stderr or "malformed YAML" in stderr


# --- size -------------------------------------------------------------------------------------------


def test_a_50_mb_offer_is_refused_by_its_size_without_parsing(workspace_copy, monkeypatch):
    ws = workspace_copy("basic")
    block = "".join(f"key_{i:07d}: {'x' * 66}\n" for i in range(10_000))  # 80 bytes a line
    with open(ws / "offers" / "huge.yaml", "w", encoding="utf-8") as handle:
        for _ in range(66):  # 52.8 MB of well-formed YAML
            handle.write(block)
    assert (ws / "offers" / "huge.yaml").stat().st_size >= 50 * 1024 * 1024
    parsed: list[int] = []
    real_loader = yamlsafe._Loader

    def recording_loader(text):  # type: ignore[no-untyped-def]
        parsed.append(len(text))
        return real_loader(text)

    monkeypatch.setattr(yamlsafe, "_Loader", recording_loader)
    with timed(HANG_GUARD_S):
        stderr = assert_refused(ws, "offers/huge.yaml", "too large")
    assert max(parsed) < 1024 * 1024, "a file over the size limit reached the YAML parser"
    assert "limit" in stderr


def test_a_sparse_file_claiming_50_mb_is_refused_quickly(workspace_copy):
    ws = workspace_copy("basic")
    with open(ws / "offers" / "sparse.yaml", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    with timed(HANG_GUARD_S):
        assert_refused(ws, "offers/sparse.yaml", "too large")


def test_a_file_just_under_the_size_limit_with_millions_of_values_is_refused_quickly(workspace_copy):
    ws = workspace_copy("basic")
    text = "x: [" + ",".join(["1"] * 2_000_000) + "]\n"
    assert len(text) < yamlsafe.MAX_FILE_BYTES
    write(ws, OFFER, text)
    command = [sys.executable, "-m", "procure", "validate", "-w", str(ws)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=HANG_GUARD_S
        )  # 0.6 s alone, 2.7 s loaded
    except subprocess.TimeoutExpired:
        pytest.fail(f"still parsing after {HANG_GUARD_S:g} s")
    assert done.returncode == 2
    assert f"{OFFER}:" in done.stderr and "Traceback" not in done.stderr


# --- binary and non-UTF-8 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, needle",
    [
        (b"id: alpha\x00\x01\x02\n", "binary file"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary file"),
        (bytes(range(256)) * 64, "binary file"),
        ("id: alpha\nvendor: Alpha\n".encode("utf-16"), "binary file"),
    ],
    ids=["nul-bytes", "png", "all-bytes", "utf-16"],
)
def test_binary_offer_is_refused(workspace_copy, data, needle):
    ws = workspace_copy("basic")
    write(ws, OFFER, data)
    assert_refused(ws, OFFER, needle)


def test_latin_1_offer_is_refused_with_the_line_of_the_first_bad_byte(workspace_copy):
    ws = workspace_copy("basic")
    text = (ws / OFFER).read_text(encoding="utf-8").replace("vendor: Alpha Cloud", "vendor: Alpha Caf\u00e9")
    write(ws, OFFER, text.encode("latin-1"))
    assert_refused(ws, f"{OFFER}:2:", "not valid UTF-8")


def test_invalid_utf8_in_procure_yaml_is_refused_with_its_line(workspace_copy):
    ws = workspace_copy("basic")
    data = (ws / CONFIG).read_bytes().replace(b"name: test-chat", b"name: test-\xff\xfechat")
    write(ws, CONFIG, data)
    line = data.split(b"\xff")[0].count(b"\n") + 1
    assert_refused(ws, f"{CONFIG}:{line}:", "not valid UTF-8")


def test_utf8_bom_and_crlf_line_ends_are_read(workspace_copy):
    """A safe result, not an error: Windows editors write these."""
    ws = workspace_copy("basic")
    text = (ws / OFFER).read_text(encoding="utf-8").replace("\n", "\r\n")
    write(ws, OFFER, "\ufeff".encode("utf-8") + text.encode("utf-8"))
    assert validate(ws)().counts["offers"] == len(list((ws / "offers").glob("*.yaml")))


# --- duplicate keys -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target, old, new, first, second, field",
    [
        (OFFER, "region: us-east", "region: us-east\nvendor: Someone Else", 2, 6, "vendor"),
        (OFFER, "  gpu_hour: 4.00", "  gpu_hour: 4.00\n  gpu_hour: 0.01", 11, 12, "pricing.gpu_hour"),
        (
            OFFER,
            "  monitoring: provider",
            "  monitoring: provider\n  monitoring: customer",
            28,
            29,
            "responsibilities.monitoring",
        ),
        (CONFIG, "  utilization: 0.8", "  utilization: 0.8\n  'utilization': 0.1", 11, 12, "workload.utilization"),
        (GRADE, "rank: 1", "rank: 1\nrank: 9", 3, 4, "rank"),
    ],
    ids=["offer-top-level", "offer-nested", "offer-responsibility", "config-quoted-key", "grade"],
)
def test_duplicate_key_is_an_error_naming_both_lines(workspace_copy, target, old, new, first, second, field):
    ws = workspace_copy("basic")
    replace(ws, target, old, new)
    assert_refused(ws, f"{target}:{second}: {field}: duplicate key", f"line {first}", validate=True)


def test_duplicate_key_in_a_flow_mapping_is_an_error(workspace_copy):
    ws = workspace_copy("basic")
    replace(
        ws,
        OFFER,
        "sla: {availability: 0.995, node_replacement_hours: 24}",
        "sla: {availability: 0.995, node_replacement_hours: 24, availability: 0.5}",
    )
    assert_refused(ws, f"{OFFER}:16: service.sla.availability: duplicate key")


def test_a_duplicate_key_is_not_last_one_wins(workspace_copy):
    """The cheaper second price must never silently replace the first."""
    ws = workspace_copy("basic")
    replace(ws, OFFER, "  gpu_hour: 4.00", "  gpu_hour: 4.00\n  gpu_hour: 0.01")
    refused(compare(ws), f"{OFFER}:12: pricing.gpu_hour: duplicate key")


# --- tags that construct objects --------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        '!!python/object/apply:os.system ["touch {marker}"]\n',
        'vendor: !!python/object/apply:os.system ["touch {marker}"]\n',
        "vendor: !!python/object/apply:subprocess.check_output [[touch, {marker}]]\n",
        "vendor: !!python/name:os.system\n",
        "vendor: !!python/module:os\n",
        "vendor: !!python/object/new:pathlib.Path [{marker}]\n",
        "vendor: !!python/object:__main__.X {{a: 1}}\n",
        "vendor: !ruby/object:Gem::Installer {{i: x}}\n",
        "vendor: !custom {marker}\n",
    ],
    ids=["apply-top-level", "apply-field", "check-output", "name", "module", "new", "object", "ruby", "local-tag"],
)
def test_object_constructing_tags_are_refused_and_never_run(workspace_copy, tmp_path, template):
    ws = workspace_copy("basic")
    marker = tmp_path / "pwned"
    original = (ws / OFFER).read_text(encoding="utf-8")
    if template.startswith("vendor:"):
        text = original.replace("vendor: Alpha Cloud", template.format(marker=marker).rstrip("\n"))
    else:
        text = template.format(marker=marker)
    write(ws, OFFER, text)
    stderr = assert_refused(ws, f"{OFFER}:", validate=True)
    assert not marker.exists(), "a YAML tag ran a command"
    assert "malformed YAML" in stderr or "constructor" in stderr


@pytest.mark.parametrize(
    "value", ["!!binary /w==", "!!set {a, b}", "!!omap [a: 1]", "!!timestamp 2026-11-01", "!!float 3.95"]
)
def test_safe_but_unexpected_tags_are_field_errors_not_crashes(workspace_copy, value):
    """Tags the safe loader knows make the wrong type of value for the vendor name: a field error."""
    ws = workspace_copy("basic")
    replace(ws, OFFER, "vendor: Alpha Cloud", f"vendor: {value}")
    assert_refused(ws, f"{OFFER}:2: vendor:")


def test_tag_on_a_number_field_is_not_coerced(workspace_copy):
    ws = workspace_copy("basic")
    replace(ws, OFFER, "  gpu_hour: 4.00", "  gpu_hour: !!str 4.00")
    assert_refused(ws, f"{OFFER}:11: pricing.gpu_hour: must be a number")


# --- empty and wrong-shaped documents ------------------------------------------------------------------


EMPTY = {"empty": "", "blank": "\n\n   \n", "comment": "# only a comment\n", "marker": "---\n", "end-marker": "...\n"}


@pytest.mark.parametrize(
    "text, target",
    [*((text, OFFER) for text in EMPTY.values()), ("", GRADE), ("", CONFIG), ("# nothing\n", CONFIG)],
    ids=[*(f"offer-{name}" for name in EMPTY), "grade-empty", "config-empty", "config-comment"],
)
def test_empty_file_is_refused(workspace_copy, text, target):
    ws = workspace_copy("basic")
    write(ws, target, text)
    stderr = assert_refused(ws, target)
    assert any(word in stderr for word in ("empty", "expected a mapping", "malformed YAML")), stderr


def test_binary_tag_decoding_to_text_is_a_safe_result(workspace_copy):
    """`!!binary` that decodes to UTF-8 text becomes that text (pydantic reads bytes as str): safe."""
    ws = workspace_copy("basic")
    replace(ws, OFFER, "vendor: Alpha Cloud", "vendor: !!binary QWxwaGEgQmluYXJ5")  # "Alpha Binary"
    from procure.errors import InputError

    try:  # an InputError is exit 2; any other exception would be a traceback
        found = compare(ws)()
    except InputError as exc:
        assert exc.problems
    else:
        assert [o.vendor for o in found.workspace.offers if o.id == "alpha"] == ["Alpha Binary"]


@pytest.mark.parametrize(
    "text, shown",
    [
        ("- id: alpha\n- vendor: Alpha\n", "a list"),
        ("[1, 2, 3]\n", "a list"),
        ("just some text\n", "text"),
        ("42\n", "a number"),
        ("true\n", "true/false"),
        ("null\n", ""),
        ("~\n", ""),
    ],
    ids=["block-list", "flow-list", "text", "number", "bool", "null", "tilde"],
)
def test_wrong_document_type_is_refused(workspace_copy, text, shown):
    ws = workspace_copy("basic")
    target = OFFER
    write(ws, target, text)
    stderr = assert_refused(ws, f"{target}:1:", "expected a mapping")
    assert shown in stderr


@pytest.mark.parametrize("target", [GRADE, CONFIG])
def test_a_list_instead_of_procure_yaml_or_a_grade_is_refused(workspace_copy, target):
    ws = workspace_copy("basic")
    write(ws, target, "- currency: USD\n- workload: {}\n")
    assert_refused(ws, f"{target}:1:", "expected a mapping", "a list")


def test_several_documents_in_one_file_are_refused(workspace_copy):
    ws = workspace_copy("basic")
    text = (ws / OFFER).read_text(encoding="utf-8")
    write(ws, OFFER, text + "---\n" + text.replace("id: alpha", "id: alpha2"))
    assert_refused(ws, f"{OFFER}:", "malformed YAML")


@pytest.mark.parametrize(
    "old, new, line, field",
    [
        (
            "pricing:\n  currency: USD\n  gpu_hour: 4.00\n  fees:\n    - {name: onboarding, once: 87600}",
            "pricing: [USD, 4.00]",
            9,
            "pricing",
        ),
        (
            "responsibilities:\n  hardware_repair: provider",
            "responsibilities:\n  - hardware_repair\nold_responsibilities:\n  hardware_repair: provider",
            20,
            "responsibilities",
        ),
        ("  sla: {availability: 0.995, node_replacement_hours: 24}", "  sla: [0.995, 24]", 16, "service.sla"),
        ("  points: [[50, 400], [100, 300], [150, 100]]", "  points: {50: 400, 100: 300}", 34, "performance.points"),
    ],
    ids=["pricing", "responsibilities", "sla", "points"],
)
def test_list_where_a_mapping_is_expected_names_field_and_line(workspace_copy, old, new, line, field):
    ws = workspace_copy("basic")
    replace(ws, OFFER, old, new)
    stderr = assert_refused(ws, f"{OFFER}:")
    assert field in stderr, stderr
    assert f"{OFFER}:{line}: {field}" in stderr, stderr


def test_list_where_a_mapping_is_expected_in_procure_yaml(workspace_copy):
    ws = workspace_copy("basic")
    replace(ws, CONFIG, "policy:\n", "policy:\n  - nothing\nold_policy:\n")
    assert_refused(ws, f"{CONFIG}:", "policy")


def test_non_scalar_mapping_keys_are_refused(workspace_copy):
    ws = workspace_copy("basic")
    replace(ws, OFFER, "region: us-east", "region: us-east\n? [a, b]\n: complex")
    assert_refused(ws, f"{OFFER}:6:", "mapping keys must be plain values")


# --- tabs --------------------------------------------------------------------------------------------


def test_tab_indentation_is_refused_with_its_line(workspace_copy):
    ws = workspace_copy("basic")
    replace(ws, OFFER, "  gpu_hour: 4.00", "\tgpu_hour: 4.00")
    assert_refused(ws, f"{OFFER}:11:", "tab")


def test_tab_before_a_top_level_key_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    replace(ws, CONFIG, "currency: USD", "\tcurrency: USD")
    assert_refused(ws, f"{CONFIG}:", "malformed YAML")


def test_tab_inside_a_value_is_only_text(workspace_copy):
    """A tab inside a quoted value is data, not indentation: the offer stays valid."""
    ws = workspace_copy("basic")
    replace(ws, OFFER, "vendor: Alpha Cloud", 'vendor: "Alpha\\tCloud"')
    found = compare(ws)()
    assert [o.vendor for o in found.workspace.offers if o.id == "alpha"] == ["Alpha\tCloud"]


# --- malformed YAML in general -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "id: alpha\nvendor: 'unclosed\n",
        "id: [alpha\n",
        "id: alpha\n  vendor: indented\n",
        "id: *undefined\n",
        "id: &a alpha\nvendor: &a beta\nregion: *a\n",
        "%YAML 9.9\n---\nid: alpha\n",
        "id: alpha\n\u2028vendor: x\n",
        'key: "\\uD800"\n',
    ],
    ids=[
        "unclosed-quote",
        "unclosed-flow",
        "bad-indent",
        "undefined-alias",
        "redefined-anchor",
        "yaml-version",
        "line-separator",
        "lone-surrogate",
    ],
)
def test_malformed_yaml_is_an_error_not_a_crash(workspace_copy, text):
    ws = workspace_copy("basic")
    write(ws, OFFER, text)
    assert_refused(ws, OFFER)


def test_the_values_checked_while_walking_the_document_are_named_word_for_word(tmp_path):
    """Dates and whole numbers are read by the safe constructor's own rules (one instance for every value): a bad
    date, a date out of range, an implausible count and a duplicate key each give the message and line they gave
    when a loader was made for every value (lines counted by hand from the text below)."""
    text = (
        "id: alpha\n"  # 1
        "received: 2026-02-30\n"  # 2: February has no 30th
        "valid_until: 1850-01-01\n"  # 3: before 1900
        "gpus: 1" + "0" * 13 + "\n"  # 4: 10^13 > 10^12
        "max_gpus: 0x10\n"  # 5: a whole number in hexadecimal, 16: fine
        "id: beta\n"  # 6: set twice
    )
    path = tmp_path / "alpha.yaml"
    path.write_text(text)
    doc = yamlsafe.load_yaml(path, "offers/alpha.yaml", collect=True)
    assert [str(p) for p in doc.problems] == [
        "offers/alpha.yaml:2: received: not a valid date: day is out of range for month (got '2026-02-30')",
        "offers/alpha.yaml:3: valid_until: must be a date between 1900 and 2199 (got 1850-01-01)",
        "offers/alpha.yaml:4: gpus: is implausibly large (got 10000000000000; no figure here exceeds 1e+12)",
        "offers/alpha.yaml:6: id: duplicate key (first given on line 1)",
    ]
    assert doc.data["max_gpus"] == 16 and doc.data["id"] == "alpha" and doc.lines.line_of(("gpus",)) == 4
