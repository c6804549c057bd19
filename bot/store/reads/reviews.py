"""Named reads of review items (alerts of severity `review`): the console's queue with the
message each quotes, the count for the nav, and one item's quote."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select

from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import participant_stream
from bot.store.schema import alerts, events, participants
from bot.store.stored_rows import row_to_event

REVIEW = "review"
LIMIT = 200


def queue_rows(store: EventStore, cleared: bool = False) -> list[dict[str, Any]]:
    """Open review items, oldest first (the one nearest its escalation on top), or with
    `cleared` the closed ones, newest first; each with the participant's name and `quote`
    (the message, opened with their key: `[erased]` after erasure); at most LIMIT."""
    query = (
        select(alerts, participants.c.name)
        .join(participants, participants.c.participant_id == alerts.c.participant_id, isouter=True)
        .where(alerts.c.severity == REVIEW)
        .limit(LIMIT)
    )
    if cleared:
        query = query.where(alerts.c.status == "resolved").order_by(alerts.c.resolved_at.desc())
    else:
        query = query.where(alerts.c.status != "resolved").order_by(alerts.c.raised_at)
    with store.reading() as conn:
        rows = [dict(r._mapping) for r in conn.execute(query)]
    quotes = raised_of(store, rows)
    return [{**r, "quote": q.quote if (q := quotes.get(r["alert_id"])) else None} for r in rows]


def raised_of(store: EventStore, rows: Sequence[dict[str, Any]]) -> dict[str, AlertRaised]:
    """The `alert.raised` events of these alerts rows, opened, by alert id."""
    wanted = {r["alert_id"] for r in rows if r["participant_id"]}
    streams = {participant_stream(r["participant_id"]) for r in rows if r["participant_id"]}
    if not wanted:
        return {}
    query = select(events).where(
        events.c.stream_id.in_(sorted(streams)),
        events.c.event_type == AlertRaised.event_type,
        events.c.data["alert_id"].as_string().in_(sorted(wanted)),
    )
    found: dict[str, AlertRaised] = {}
    with store.reading() as conn:
        for row in conn.execute(query):
            data = row_to_event(row, store.sealer, conn).data
            if isinstance(data, AlertRaised):
                found[data.alert_id] = data
    return found


def open_count(store: EventStore) -> int:
    """How many review items wait for a person (for the console's nav)."""
    query = (
        select(func.count())
        .select_from(alerts)
        .where(alerts.c.severity == REVIEW, alerts.c.status != "resolved")
    )
    with store.reading() as conn:
        return int(conn.execute(query).scalar() or 0)
