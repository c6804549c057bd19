"""Named reads that find a participant's id: by id, or by phone (the latest enrollment)."""

from __future__ import annotations

from sqlalchemy import select

from bot.store.event_store import EventStore
from bot.store.schema import participants


def participant_id_by_id_or_phone(store: EventStore, text: str, phone: str | None) -> str | None:
    """The participant whose id is `text`, else the latest enrolled with phone `phone` (E.164,
    if given); None if neither."""
    with store.reading() as conn:
        found = conn.execute(
            select(participants.c.participant_id).where(participants.c.participant_id == text)
        ).scalar()
        if found is None and phone is not None:
            found = conn.execute(
                select(participants.c.participant_id)
                .where(participants.c.phone == phone)
                .order_by(participants.c.enrolled_at.desc())
                .limit(1)
            ).scalar()
    return None if found is None else str(found)
