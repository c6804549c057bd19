"""The console's alerts inbox: alerts with their participant's name and phone, open first."""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, func, select

from bot.store.event_store import EventStore
from bot.store.schema import alerts, participants

LIMIT = 500


def inbox_rows(store: EventStore, status: str = "") -> list[dict[str, Any]]:
    """Alerts (of `status`, or all), open then acknowledged then resolved, newest first in
    each, with the participant's name and phone; at most LIMIT."""
    order = case({"open": 0, "acknowledged": 1}, value=alerts.c.status, else_=2)
    query = (
        select(alerts, participants.c.name, participants.c.phone)
        .join(participants, participants.c.participant_id == alerts.c.participant_id, isouter=True)
        .order_by(order, alerts.c.raised_at.desc())
        .limit(LIMIT)
    )
    if status:
        query = query.where(alerts.c.status == status)
    with store.reading() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def open_count(store: EventStore) -> int:
    """How many alerts are open (for the console's nav)."""
    query = select(func.count()).select_from(alerts).where(alerts.c.status == "open")
    with store.reading() as conn:
        return int(conn.execute(query).scalar() or 0)
