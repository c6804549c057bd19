"""`--participant` in the commands: a participant's id or phone number, resolved to the id."""

from __future__ import annotations

import click

from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.core.config import Settings
from bot.store.event_store import EventStore
from bot.store.reads.participant_ids import participant_id_by_id_or_phone


def resolve(store: EventStore, settings: Settings, ref: str, what: str = "--participant") -> str:
    """The id of the participant `ref` names: their id, or their phone in any format
    (read with DEFAULT_REGION). A phone enrolled more than once names the latest enrollment.
    No such participant is an error (exit 1) that says so."""
    text = ref.strip()
    try:
        phone: str | None = canonical_phone(text, settings.default_region)
    except InvalidPhoneNumber:
        phone = None
    found = participant_id_by_id_or_phone(store, text, phone)
    if found is None:
        raise click.ClickException(f"{what}: no participant has the id or phone {ref!r}")
    return found
