"""The `timers` projection: every durable timer and where it stands."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.store.event_types.timers import (
    TimerCancelled,
    TimerDeferred,
    TimerFired,
    TimerScheduled,
    TimerSkipped,
)
from bot.store.events import Event
from bot.store.projections import Projection, Row

COLUMNS = (
    "timer_id",
    "participant_id",
    "kind",
    "due_at",
    "status",
    "scope",
    "payload",
    "local_time",
    "timezone",
    "scheduled_at",
    "fired_at",
    "late_seconds",
    "reason",
    "updated_at",
)
TYPES = {
    cls.event_type
    for cls in (TimerScheduled, TimerDeferred, TimerCancelled, TimerFired, TimerSkipped)
}
FINAL = {"fired", "skipped", "cancelled"}


def key(event: Event) -> str | None:
    return event.data.timer_id if event.event_type in TYPES else None  # type: ignore[attr-defined]  # every type in TYPES has it


def apply(row: Row | None, event: Event) -> Row | None:
    data = event.data
    at = event.recorded_at
    if isinstance(data, TimerScheduled):
        if row is not None:
            return row
        return {
            "timer_id": data.timer_id,
            "participant_id": event.participant_id,
            "kind": data.kind,
            "due_at": data.due_at,
            "status": "scheduled",
            "scope": data.scope,
            "payload": data.payload,
            "local_time": data.local_time,
            "timezone": data.timezone,
            "scheduled_at": at,
            "fired_at": None,
            "late_seconds": None,
            "reason": None,
            "updated_at": at,
        }
    if row is None:
        return row
    if isinstance(data, TimerSkipped) and row["status"] == "fired":
        # The worker found a fired timer no longer applies (its prompt was answered, or a newer
        # one superseded it): the row keeps fired_at and ends as skipped, with the reason.
        return {**row, "status": "skipped", "reason": data.reason, "updated_at": at}
    if row["status"] in FINAL:
        return row
    if isinstance(data, TimerDeferred):
        return {**row, "due_at": data.due_at, "reason": data.reason, "updated_at": at}
    if isinstance(data, TimerCancelled):
        return {**row, "status": "cancelled", "reason": data.reason, "updated_at": at}
    if isinstance(data, TimerFired):
        return {
            **row,
            "status": "fired",
            "fired_at": at,
            "late_seconds": data.late_seconds,
            "updated_at": at,
        }
    if isinstance(data, TimerSkipped):
        return {
            **row,
            "status": "skipped",
            "reason": data.reason,
            "late_seconds": data.late_seconds,
            "updated_at": at,
        }
    return row


PROJECTION = Projection("timers", "timer_id", COLUMNS, key, apply, types=frozenset(TYPES))


def pending_rows(
    events: Sequence[Event], start: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Timer rows still scheduled after `events`, folded by this projection's reducer over the
    rows in `start` (e.g. the table's pending rows) or, without them, from nothing."""
    rows: dict[str, Any] = {str(t["timer_id"]): dict(t) for t in start}
    for event in events:
        timer_id = key(event)
        if timer_id is not None:
            rows[timer_id] = apply(rows.get(timer_id), event)
    return [row for row in rows.values() if row and row["status"] == "scheduled"]
