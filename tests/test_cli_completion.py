"""Shell completion: `procure --show-completion SHELL` prints a script, `--install-completion`
installs it, and the script completes commands, options, choices and offer ids."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from procure.cli import app


def complete(words: str, cwd=None, monkeypatch=None) -> list[str]:
    """What bash completion offers for the last word of `words`."""
    if cwd is not None and monkeypatch is not None:
        monkeypatch.chdir(cwd)
    parts = words.split(" ")
    env = {"_PROCURE_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1)}
    result = CliRunner().invoke(app, [], env=env, prog_name="procure")
    return result.stdout.split()


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o default -F _procure_completion procure"),
        ("zsh", "#compdef procure"),
        ("fish", "complete --command procure"),
    ],
)
def test_show_completion_prints_the_script_for_each_shell(shell, marker, monkeypatch):
    import shellingham

    monkeypatch.setattr(shellingham, "detect_shell", lambda: (shell, f"/bin/{shell}"))  # the user's shell
    result = CliRunner().invoke(app, ["--show-completion"], prog_name="procure")
    assert result.exit_code == 0, result.output
    assert marker in result.stdout
    assert "_PROCURE_COMPLETE" in result.stdout


def test_install_completion_writes_the_script_and_sources_it(tmp_path, monkeypatch):
    import shellingham

    monkeypatch.setattr(shellingham, "detect_shell", lambda: ("bash", "/bin/bash"))
    monkeypatch.setenv("HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["--install-completion"], prog_name="procure")
    assert result.exit_code == 0, result.output
    script = tmp_path / ".bash_completions" / "procure.sh"
    assert "_PROCURE_COMPLETE=complete_bash" in script.read_text()
    assert str(script) in (tmp_path / ".bashrc").read_text()


def test_commands_complete():
    assert complete("procure comp") == ["compare"]
    assert set(complete("procure re")) == {"report", "reevaluate"}


def test_options_and_their_choices_complete():
    assert "--format" in complete("procure compare --fo")
    assert complete("procure compare --format ") == ["table", "json", "csv", "markdown", "xlsx"]


def test_offer_ids_complete_from_the_workspace_found_upward(tmp_path, data_dir, monkeypatch):
    ws = tmp_path / "ws"
    shutil.copytree(data_dir / "basic", ws)
    (ws / "notes").mkdir()
    assert complete("procure hedge --offer ", cwd=ws / "notes", monkeypatch=monkeypatch) == [
        "alpha",
        "bravo",
        "charlie",
    ]
    assert complete("procure grade --offer b", cwd=ws, monkeypatch=monkeypatch) == ["bravo"]


def test_offer_ids_outside_a_workspace_complete_to_nothing(tmp_path, monkeypatch):
    assert complete("procure hedge --offer ", cwd=tmp_path, monkeypatch=monkeypatch) == []
