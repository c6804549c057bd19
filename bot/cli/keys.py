"""`tandem keys`: make a master key, and re-wrap every data key under a new one."""

from __future__ import annotations

import os

import click

from bot.cli.root import cli, database_errors, settings_from_env
from bot.core import keys as master_keys


@cli.group()
def keys() -> None:
    """The master key (TANDEM_MASTER_KEY) that wraps the participants' data keys (and seals
    the staff's TOTP secrets)."""


@keys.command()
def generate() -> None:
    """Print a new master key (32 random bytes, urlsafe base64) for TANDEM_MASTER_KEY."""
    click.echo(master_keys.generate_master_key())


@keys.command()
@click.option(
    "--new-key-env",
    default="TANDEM_NEW_MASTER_KEY",
    show_default=True,
    help="The environment variable holding the new master key (never a command-line value).",
)
@database_errors
def rotate(new_key_env: str) -> None:
    """Re-wrap every data key, re-key every phone lookup hash and re-seal every staff TOTP
    secret under the new master key (read from $TANDEM_NEW_MASTER_KEY), in one transaction;
    the old key is TANDEM_MASTER_KEY. Afterwards set TANDEM_MASTER_KEY to the new key and
    restart every process."""
    from bot.keys.rotation import rotate as rotate_keys
    from bot.runtime.bootstrap import build_store

    settings = settings_from_env()
    new_key = os.environ.get(new_key_env, "")
    if len(new_key) < master_keys.MIN_MASTER_KEY_LENGTH:
        raise click.ClickException(
            f"{new_key_env}: set it to the new master key (at least "
            f"{master_keys.MIN_MASTER_KEY_LENGTH} characters; `tandem keys generate` makes one)"
        )
    if not settings.master_key:
        raise click.ClickException("TANDEM_MASTER_KEY: set it to the current master key")
    store = build_store(settings)
    try:
        done = rotate_keys(store, new_key)
    finally:
        store.engine.dispose()
    click.echo(
        f"{done.rewrapped} data keys re-wrapped, {done.phones} phone hashes re-keyed and "
        f"{done.staff_secrets} staff TOTP secrets re-sealed under master key {done.key_id}; "
        "now set TANDEM_MASTER_KEY to the new key and restart"
    )
    for email in done.unopened:
        click.echo(
            f"the TOTP secret of {email} opens under neither key (a master key retired before "
            f"without rotating it): reset it with `tandem users reset-2fa {email}`",
            err=True,
        )
