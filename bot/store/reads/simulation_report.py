"""The simulation report recorded in a run's database (`simulation.reported`), for the console."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from bot.store.event_store import EventStore
from bot.store.schema import events

REPORTED = "simulation.reported"


def recorded(store: EventStore) -> bool:
    """Whether the database holds a simulation report (one indexed look-up)."""
    query = select(events.c.seq).where(events.c.event_type == REPORTED).limit(1)
    with store.reading() as conn:
        return conn.execute(query).first() is not None


def latest(store: EventStore) -> dict[str, Any] | None:
    """The last simulation report recorded: its payload and when it was recorded, or None."""
    query = (
        select(events.c.data, events.c.occurred_at)
        .where(events.c.event_type == REPORTED)
        .order_by(events.c.seq.desc())
        .limit(1)
    )
    with store.reading() as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    return {**dict(row.data), "recorded_at": row.occurred_at}
