"""`tandem withdraw`: a participant leaves the study; contact and timers stop, data is kept."""

from __future__ import annotations

import getpass

import click

from bot.cli.root import cli, database_errors, settings_from_env

# Who may ask for a withdrawal or an erasure: the values of the event's `requested_by`
# (bot.services.withdrawal.REQUESTERS, which tests/cli/test_command_table.py holds this to),
# written out so that the options are built without importing the event models.
REQUESTERS = ("participant", "researcher", "ethics_board", "other")


@cli.command()
@click.argument("participant")
@click.option("--reason", required=True, help="Why (kept with the withdrawal).")
@click.option(
    "--requested-by",
    type=click.Choice(REQUESTERS),
    required=True,
    help="Who asked for it.",
)
@database_errors
def withdraw(participant: str, reason: str, requested_by: str) -> None:
    """Withdraw PARTICIPANT (an id or a phone number): every unsent message is suppressed,
    every timer cancelled and an active takeover ended; nothing more is ever sent, and their
    data is kept. Erasing it is a separate act."""
    from bot.cli import participant_ref
    from bot.runtime.bootstrap import build_store
    from bot.services import withdrawal
    from bot.services.refusal import Refused

    settings = settings_from_env()
    store = build_store(settings)
    try:
        participant_id = participant_ref.resolve(store, settings, participant, "PARTICIPANT")
        try:
            withdrawal.withdraw(
                store,
                participant_id,
                reason=reason,
                requested_by=requested_by,
                actor=f"cli:{getpass.getuser()}",
                now=store.clock.now(),
            )
        except Refused as exc:
            if exc.kind == "not_found":
                raise click.ClickException(f"no participant {participant_id!r}") from None
            raise click.ClickException(str(exc)) from None
        click.echo(f"participant {participant_id} withdrawn: no further contact; data kept")
    finally:
        store.engine.dispose()
