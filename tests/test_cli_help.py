"""Every command documents itself: its --help has an example, and the README shows it."""

from pathlib import Path

import pytest
from clihelp import run

from procure.cli import app

README = (Path(__file__).parent.parent / "README.md").read_text()
COMMANDS = sorted(c.name or c.callback.__name__ for c in app.registered_commands)


def test_commands_are_registered():
    assert {"validate", "grade", "compare", "schema"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_an_example(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "Example" in result.stdout and f"procure {command}" in result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_documents_the_command(command):
    assert f"procure {command}" in README


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.startswith("procure ")


SUBCOMMANDS = [
    (group.name, c.name) for group in app.registered_groups for c in group.typer_instance.registered_commands
]


def test_subcommands_are_registered():
    assert {("index", "build"), ("perf", "import")} <= set(SUBCOMMANDS)


@pytest.mark.parametrize(("group", "command"), SUBCOMMANDS)
def test_subcommand_help_has_an_example_and_readme_documents_it(group, command):
    result = run(group, command, "--help")
    assert result.exit_code == 0
    assert "Example" in result.stdout and f"procure {group} {command}" in result.stdout
    assert f"procure {group} {command}" in README
