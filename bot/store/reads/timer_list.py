"""Named reads for `tandem timers list` and `cancel`: timers by due time, and one timer's row."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from bot.store.event_store import EventStore
from bot.store.schema import timers


def timers_by_due(
    store: EventStore,
    *,
    limit: int,
    status: str | None = None,
    participant_id: str | None = None,
) -> list[dict[str, Any]]:
    """Up to `limit` timers, soonest due first, of `status` and of `participant_id` if given."""
    query = select(timers).order_by(timers.c.due_at, timers.c.timer_id).limit(limit)
    if status:
        query = query.where(timers.c.status == status)
    if participant_id is not None:
        query = query.where(timers.c.participant_id == participant_id)
    with store.reading() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]
