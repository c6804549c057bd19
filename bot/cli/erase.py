"""`tandem erase`: destroy a participant's data key, so that their personal data reads
`[erased]` everywhere; it cannot be undone."""

from __future__ import annotations

import getpass

import click

from bot.cli.root import cli, database_errors, settings_from_env
from bot.cli.withdraw import REQUESTERS


@cli.command()
@click.argument("participant")
@click.option("--reason", required=True, help="Why (kept with the erasure: nothing personal).")
@click.option(
    "--requested-by",
    type=click.Choice(REQUESTERS),
    required=True,
    help="Who asked for it.",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (for scripts).")
@database_errors
def erase(participant: str, reason: str, requested_by: str, yes: bool) -> None:
    """Erase PARTICIPANT (an id or a phone number): their data key is destroyed, so every
    personal field of their events (phone, name, messages, profile, LLM prompts) reads
    `[erased]` in the API, transcripts, exports and replay; their stored rows are rebuilt
    without it, unsent messages are suppressed and timers cancelled. Needs TANDEM_MASTER_KEY.
    It cannot be undone: you are asked to type the participant id unless --yes."""
    from bot.cli import participant_ref
    from bot.runtime.bootstrap import build_store
    from bot.services import erasure
    from bot.services.refusal import Refused

    settings = settings_from_env()
    store = build_store(settings)
    try:
        participant_id = participant_ref.resolve(store, settings, participant, "PARTICIPANT")
        confirm = participant_id
        if not yes:
            confirm = click.prompt(
                f"Erasing {participant_id} cannot be undone. Type the participant id to confirm"
            ).strip()
        try:
            done = erasure.erase(
                store,
                participant_id,
                confirm=confirm,
                reason=reason,
                requested_by=requested_by,
                actor=f"cli:{getpass.getuser()}",
            )
        except Refused as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(
            f"participant {participant_id} erased: {done.sealed_events} events now read "
            f"[erased], {done.rows_rewritten} stored rows rebuilt, {done.suppressed} messages "
            f"suppressed, {done.cancelled} timers cancelled; {done.finality}"
        )
    finally:
        store.engine.dispose()
