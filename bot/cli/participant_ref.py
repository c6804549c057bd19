"""`--participant` in the commands: a participant's id or phone number, resolved to the id."""

from __future__ import annotations

import click
from sqlalchemy import select

from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.core.config import Settings
from bot.store.event_store import EventStore
from bot.store.schema import participants


def resolve(store: EventStore, settings: Settings, ref: str, what: str = "--participant") -> str:
    """The id of the participant `ref` names: their id, or their phone in any format
    (read with DEFAULT_REGION). A phone enrolled more than once names the latest enrollment.
    No such participant is an error (exit 1) that says so."""
    text = ref.strip()
    with store.reading() as conn:
        found = conn.execute(
            select(participants.c.participant_id).where(participants.c.participant_id == text)
        ).scalar()
        if found is None:
            try:
                phone = canonical_phone(text, settings.default_region)
            except InvalidPhoneNumber:
                phone = None
            if phone is not None:
                found = conn.execute(
                    select(participants.c.participant_id)
                    .where(participants.c.phone == phone)
                    .order_by(participants.c.enrolled_at.desc())
                    .limit(1)
                ).scalar()
    if found is None:
        raise click.ClickException(f"{what}: no participant has the id or phone {ref!r}")
    return str(found)
