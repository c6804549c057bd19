"""The `tandem` group and what its commands share: settings from the environment and one clear
message for an unusable database.

The group is lazy: it knows its commands from the table in `bot.cli.commands` and imports a
command's module only when that command runs (or shows its own help), so that `tandem --help`
and light commands start without the engine's libraries. A command module imports what its
command needs inside the command, for the same reason.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from bot.cli.commands import COMMANDS

if TYPE_CHECKING:
    from bot.core.config import Settings


def settings_from_env() -> Settings:
    from bot.core.config import ConfigError, load_settings

    try:
        return load_settings()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def database_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn an unreachable, corrupt or unmigrated database, or a master key that is not the
    database's, into one clear message."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from bot.store.errors import DriverError, StorageError
        from bot.store.key_check import KeyCheckFailed

        try:
            return func(*args, **kwargs)
        except (DriverError, StorageError) as exc:
            raise click.ClickException(describe_database_error(exc)) from None
        except KeyCheckFailed as exc:  # one line naming the key ids
            raise click.ClickException(str(exc)) from None

    return wrapper


def describe_database_error(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    if "no such table" in text or "does not exist" in text and "relation" in text:
        return f"the database has no Tandem tables ({text}); run `tandem migrate` first"
    if "file is not a database" in text or "malformed" in text:
        return f"the database file is corrupt or not a SQLite database ({text})"
    return f"cannot use the database: {text}"


class LazyGroup(click.Group):
    """A group whose commands are imported when first used; their list and short help come
    from `bot.cli.commands.COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if cmd_name not in self.commands and entry is not None:
            importlib.import_module(entry.module)  # its decorators add it to this group
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands' list as click writes it, from the table's summaries: a command not
        imported yet is stood in for by one that has its help (and nothing else)."""
        listed = click.Group(self.name)
        for name in self.list_commands(ctx):
            loaded = self.commands.get(name)
            listed.add_command(loaded or click.Command(name, help=COMMANDS[name].summary))
        click.Group.format_commands(listed, ctx, formatter)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tandem")
def cli() -> None:
    """Tandem: an event-sourced SMS and WhatsApp conversation engine for research.

    Settings come from environment variables (or a .env file); see .env.example.
    """
