"""The `tandem` group and what its commands share: settings from the environment and one clear
message for an unusable database."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from bot.core.config import ConfigError, Settings, load_settings
from bot.store.errors import DriverError, StorageError
from bot.store.key_check import KeyCheckFailed


def settings_from_env() -> Settings:
    try:
        return load_settings()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def database_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn an unreachable, corrupt or unmigrated database, or a master key that is not the
    database's, into one clear message."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tandem")
def cli() -> None:
    """Tandem: an event-sourced SMS and WhatsApp conversation engine for research.

    Settings come from environment variables (or a .env file); see .env.example.
    """
