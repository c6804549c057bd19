"""The table `tandem --help` lists its commands from (bot.cli.commands) against the commands
themselves, so that it cannot drift: names, modules and help, and the values the command
modules write out to stay light."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from bot.cli.commands import COMMANDS
from bot.cli.main import cli

# click lists a command with its help cut to fit: the widths it cuts to on 80 and wider
# terminals, and some longer ones (the whole summary).
LIMITS = (20, 45, 59, 66, 72, 120, 1000)


def _loaded() -> dict[str, click.Command]:
    """Every command, its module imported (as running it would)."""
    for entry in COMMANDS.values():
        importlib.import_module(entry.module)
    return dict(cli.commands)


def _first_paragraph(command: click.Command) -> str:
    text = command.short_help or command.help or ""
    end = text.find("\n\n")
    return " ".join((text if end == -1 else text[:end]).split())


def _walk(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            found += _walk(sub, (*path, name))
    return found


def test_the_table_names_every_command_and_its_module() -> None:
    loaded = _loaded()
    assert set(loaded) == set(COMMANDS)
    for name, command in loaded.items():
        assert command.callback is not None
        assert command.callback.__module__ == COMMANDS[name].module, name


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_summary_is_the_first_paragraph_of_the_commands_help(name: str) -> None:
    real = _loaded()[name]
    stand_in = click.Command(name, help=COMMANDS[name].summary)
    assert COMMANDS[name].summary == _first_paragraph(real)
    for limit in LIMITS:
        assert stand_in.get_short_help_str(limit) == real.get_short_help_str(limit), limit


def test_tandem_help_before_any_command_is_imported_is_what_the_commands_print() -> None:
    """A fresh process lists the commands from the table; this one, with every command
    imported, from the commands: the same text, at two widths."""
    _loaded()
    for width in (80, 200):
        eager = CliRunner().invoke(cli, ["--help"], terminal_width=width, prog_name="tandem")
        script = (
            "from click.testing import CliRunner; from bot.cli.main import cli; "
            f"print(CliRunner().invoke(cli, ['--help'], terminal_width={width}, "
            "prog_name='tandem').output, end='')"
        )
        lazy = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
        assert eager.exit_code == 0
        assert lazy.stdout == eager.output
        assert all(f"  {name} " in lazy.stdout for name in COMMANDS)


def test_every_command_and_subcommand_shows_its_help() -> None:
    paths = [path for command in _loaded().values() for path in _walk(command, (command.name,))]
    assert ("keys", "generate") in paths and ("users", "list") in paths
    for path in paths:
        shown = CliRunner().invoke(cli, [*path, "--help"], prog_name="tandem")
        assert shown.exit_code == 0, (path, shown.output)
        assert shown.output.startswith(f"Usage: tandem {' '.join(path)} "), path


def test_the_values_written_out_for_the_options_are_the_engines() -> None:
    from bot.cli.run import WORKER_NICENESS
    from bot.cli.users import ROLES
    from bot.cli.withdraw import REQUESTERS
    from bot.console.accounts import ROLES as ACCOUNT_ROLES
    from bot.runtime.background import NICENESS
    from bot.services.withdrawal import REQUESTERS as WITHDRAWAL_REQUESTERS

    assert REQUESTERS == WITHDRAWAL_REQUESTERS
    assert ROLES == ACCOUNT_ROLES
    assert WORKER_NICENESS["sqlite"] == NICENESS
