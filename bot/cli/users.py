"""`tandem users add|list|disable|reset-2fa`: the researcher console's staff accounts."""

from __future__ import annotations

import click

from bot.cli.root import cli, database_errors, settings_from_env

# The console's roles (bot.console.accounts.ROLES, which tests/cli/test_command_table.py holds
# this to), written out so that the options are built without importing the console.
ROLES = ("admin", "researcher", "statistician", "supervisor", "reviewer")


@cli.group(name="users")
def users_group() -> None:
    """Add, list or disable the staff accounts of the researcher console (/console/), or reset
    a lost second factor."""


@users_group.command(name="add")
@click.argument("email")
@click.option(
    "--role",
    type=click.Choice(ROLES),
    required=True,
    help="admin: everything; researcher: participants, exports, takeover; statistician: "
    "exports with a blinded study's arm codes and the study page, nothing else; supervisor: "
    "alerts and the transcripts of alerted participants; reviewer: rates bot turns on blind "
    "transcripts, nothing else.",
)
@database_errors
def add_user(email: str, role: str) -> None:
    """Create an account and print its one-time code (valid 7 days): the staff member signs
    in at /console/login with it once, then chooses a password."""
    from bot.console import accounts
    from bot.core.clock import SystemClock
    from bot.runtime.bootstrap import build_store

    store = build_store(settings_from_env())
    try:
        code = accounts.add(store, email, role, by="cli", now=SystemClock().now())
    except accounts.AccountError as exc:
        raise click.ClickException(exc.message) from None
    finally:
        store.engine.dispose()
    click.echo(f"added {accounts.normalise(email)} ({role})")
    click.echo(f"one-time code for the first sign-in (valid 7 days): {code}")


@users_group.command(name="list")
@database_errors
def list_users() -> None:
    """Every account: email, role, status, when the password was set, the last sign-in."""
    from bot.console import accounts
    from bot.runtime.bootstrap import build_store

    store = build_store(settings_from_env())
    try:
        rows = accounts.all_accounts(store)
    finally:
        store.engine.dispose()
    if not rows:
        click.echo("no staff accounts; add one with `tandem users add EMAIL --role admin`")
    for row in rows:
        password = "password set" if row["password_set_at"] else "first sign-in pending"
        last = row["last_signed_in_at"]
        seen = f"last sign-in {last:%Y-%m-%d %H:%M} UTC" if last else "never signed in"
        click.echo(f"{row['email']}\t{row['role']}\t{row['status']}\t{password}\t{seen}")


@users_group.command(name="disable")
@click.argument("email")
@database_errors
def disable_user(email: str) -> None:
    """Stop an account from signing in (its sessions end at their next request)."""
    from bot.console import accounts
    from bot.runtime.bootstrap import build_store

    store = build_store(settings_from_env())
    try:
        accounts.disable(store, email, by="cli")
    except accounts.AccountError as exc:
        raise click.ClickException(exc.message) from None
    finally:
        store.engine.dispose()
    click.echo(f"disabled {accounts.normalise(email)}")


@users_group.command(name="reset-2fa")
@click.argument("email")
@database_errors
def reset_two_factor(email: str) -> None:
    """Clear the account's second factor (TOTP) when its owner lost their authenticator: they
    sign in with their password alone and enrol again on /console/two-factor (an admin at once
    when CONSOLE_REQUIRE_2FA=true). Recorded as staff.two_factor_reset by `cli`."""
    from bot.console import accounts
    from bot.runtime.bootstrap import build_store

    store = build_store(settings_from_env())
    try:
        done = accounts.reset_two_factor(store, email, by="cli")
    except accounts.AccountError as exc:
        raise click.ClickException(exc.message) from None
    finally:
        store.engine.dispose()
    if done:
        click.echo(f"reset the second factor of {accounts.normalise(email)}: they enrol again")
    else:
        click.echo(f"{accounts.normalise(email)} has no second factor: nothing to reset")
