"""`tandem erase`: destroy a participant's data key (or an unknown sender's, `--phone`), so that
their personal data reads `[erased]` everywhere; it cannot be undone."""

from __future__ import annotations

import getpass

import click

from bot.cli.root import cli, database_errors, settings_from_env
from bot.cli.withdraw import REQUESTERS


@cli.command()
@click.argument("participant", required=False)
@click.option(
    "--phone",
    metavar="NUMBER",
    help="Erase instead what the unknown sender with this number sent (a number that matches "
    "no participant; E.164, or national in DEFAULT_REGION).",
)
@click.option("--reason", required=True, help="Why (kept with the erasure: nothing personal).")
@click.option(
    "--requested-by",
    type=click.Choice(REQUESTERS),
    required=True,
    help="Who asked for it.",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (for scripts).")
@database_errors
def erase(
    participant: str | None, phone: str | None, reason: str, requested_by: str, yes: bool
) -> None:
    """Erase PARTICIPANT (an id or a phone number): their data key is destroyed, so every
    personal field of their events (phone, name, messages, profile, LLM prompts) reads
    `[erased]` in the API, transcripts, exports and replay; their stored rows are rebuilt
    without it, unsent messages are suppressed and timers cancelled. With --phone NUMBER
    instead: the messages of an unknown sender (a number that matches no participant, or an
    erased participant texting again) are erased the same way, their key destroyed and
    recorded as `sender.erased`. Needs TANDEM_MASTER_KEY. It cannot be undone: you are asked
    to type the participant id (or the number) unless --yes."""
    if (participant is None) == (phone is None):
        raise click.UsageError("give PARTICIPANT or --phone NUMBER (one of them)")
    if phone is not None:
        _erase_phone(phone, reason, requested_by, yes)
        return
    assert participant is not None
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


def _erase_phone(phone: str, reason: str, requested_by: str, yes: bool) -> None:
    """`tandem erase --phone NUMBER`: an unknown sender's messages."""
    from bot.runtime.bootstrap import build_store
    from bot.services import sender_erasure
    from bot.services.refusal import Refused

    if not yes:
        typed = click.prompt(
            "Erasing this number's messages cannot be undone. Type the number again to confirm"
        ).strip()
        if typed != phone.strip():
            raise click.ClickException("the number typed differs: nothing was erased")
    settings = settings_from_env()
    store = build_store(settings)
    try:
        try:
            done = sender_erasure.erase_phone(
                store,
                phone,
                reason=reason,
                requested_by=requested_by,
                actor=f"cli:{getpass.getuser()}",
                default_region=settings.default_region,
            )
        except Refused as exc:
            raise click.ClickException(str(exc)) from None
        later = (
            "; its old row version stays in the database files until the next `tandem "
            "maintenance` run by the schema owner"
            if done.pending_maintenance
            else ""
        )
        click.echo(
            f"unknown sender {done.sender_id} erased: {done.sealed_events} events now read "
            f"[erased], {done.suppressed} messages suppressed; their data key is destroyed "
            f"now{later}"
        )
    finally:
        store.engine.dispose()
