"""The `takeovers` projection: whether a staff member holds a participant's conversation."""

from __future__ import annotations

from bot.store.event_types.takeover import TakeoverEnded, TakeoverStarted
from bot.store.events import Event
from bot.store.projections import Projection, Row

COLUMNS = (
    "participant_id",
    "status",
    "started_by",
    "reason",
    "started_at",
    "ended_by",
    "ended_at",
    "updated_at",
)
TYPES = {TakeoverStarted.event_type, TakeoverEnded.event_type}


def key(event: Event) -> str | None:
    return event.participant_id if event.event_type in TYPES else None


def apply(row: Row | None, event: Event) -> Row | None:
    data, at = event.data, event.recorded_at
    if isinstance(data, TakeoverStarted):
        if row is not None and row["status"] == "active":
            return row  # already held: the first holder keeps it
        return {
            "participant_id": event.participant_id,
            "status": "active",
            "started_by": data.by,
            "reason": data.reason,
            "started_at": at,
            "ended_by": None,
            "ended_at": None,
            "updated_at": at,
        }
    if isinstance(data, TakeoverEnded) and row is not None and row["status"] == "active":
        return {**row, "status": "ended", "ended_by": data.by, "ended_at": at, "updated_at": at}
    return row


PROJECTION = Projection("takeovers", "participant_id", COLUMNS, key, apply, types=frozenset(TYPES))
