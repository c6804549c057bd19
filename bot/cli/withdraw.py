"""`tandem withdraw`: a participant leaves the study; contact and timers stop, data is kept."""

from __future__ import annotations

import getpass

import click

from bot.channel import withdrawal
from bot.cli import participant_ref
from bot.cli.root import cli, database_errors, settings_from_env
from bot.runtime.bootstrap import build_store
from bot.store.events import NewEvent, participant_stream
from bot.store.queries import pending_outbox, pending_timers


@cli.command()
@click.argument("participant")
@click.option("--reason", required=True, help="Why (kept with the withdrawal).")
@click.option(
    "--requested-by",
    type=click.Choice(withdrawal.REQUESTERS),
    required=True,
    help="Who asked for it.",
)
@database_errors
def withdraw(participant: str, reason: str, requested_by: str) -> None:
    """Withdraw PARTICIPANT (an id or a phone number): every unsent message is suppressed and
    every timer cancelled, nothing more is ever sent, and their data is kept. Erasing it is a
    separate act."""
    settings = settings_from_env()
    store = build_store(settings)
    try:
        participant_id = participant_ref.resolve(store, settings, participant, "PARTICIPANT")
        with store.transaction() as tx:
            stream = participant_stream(participant_id)
            row = tx.lock(stream)
            if row is None:
                raise click.ClickException(f"no participant {participant_id!r}")
            try:
                decided = withdrawal.withdraw(
                    row,
                    pending_timers(tx.conn, participant_id),
                    pending_outbox(tx.conn, participant_id),
                    reason,
                    requested_by,
                    store.clock.now(),
                )
            except ValueError as exc:
                raise click.ClickException(str(exc)) from None
            meta = {"actor": f"cli:{getpass.getuser()}"}
            tx.append(stream, [NewEvent(e, meta=meta) for e in decided], row["version"])
        click.echo(f"participant {participant_id} withdrawn: no further contact; data kept")
    finally:
        store.engine.dispose()
