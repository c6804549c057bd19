"""The `work_items` projection: the per-participant queue the workers drain in order."""

from __future__ import annotations

from bot.store.event_types.broadcasts import BroadcastStepRequested
from bot.store.event_types.messages import MessageReceived
from bot.store.event_types.participants import ParticipantEnrolled
from bot.store.event_types.timers import TimerFired
from bot.store.event_types.work import WorkCompleted, WorkFailed, WorkParked, WorkRequested
from bot.store.events import Event
from bot.store.projections import Projection, Row

COLUMNS = (
    "work_id",
    "participant_id",
    "kind",
    "ref",
    "seq",
    "status",
    "attempts",
    "last_error",
    "available_at",
    "created_at",
    "updated_at",
)
DONE = {WorkCompleted.event_type, WorkFailed.event_type, WorkParked.event_type}


def _kind_and_ref(event: Event) -> tuple[str, str] | None:
    """Which events create work: a message (not a keyword), an enrollment, a timer, a command,
    a broadcast starting a step."""
    data = event.data
    if isinstance(data, MessageReceived):
        return None if data.keyword else ("inbound", event.event_id)
    if isinstance(data, ParticipantEnrolled):
        return ("enrolled", event.event_id)
    if isinstance(data, TimerFired):
        return ("timer", data.timer_id)
    if isinstance(data, WorkRequested):
        return (data.kind, event.event_id)
    if isinstance(data, BroadcastStepRequested):
        return ("broadcast", event.event_id)
    return None


def key(event: Event) -> str | None:
    if event.event_type in DONE:
        return event.data.work_id  # type: ignore[attr-defined]  # every type in DONE has it
    if event.participant_id is None or _kind_and_ref(event) is None:
        return None
    return event.event_id


def apply(row: Row | None, event: Event) -> Row | None:
    data = event.data
    if row is None:
        created = _kind_and_ref(event)
        if created is None:
            return None
        kind, ref = created
        return {
            "work_id": event.event_id,
            "participant_id": event.participant_id,
            "kind": kind,
            "ref": ref,
            "seq": event.seq,
            "status": "pending",
            "attempts": 0,
            "last_error": None,
            "available_at": event.recorded_at,
            "created_at": event.recorded_at,
            "updated_at": event.recorded_at,
        }
    if isinstance(data, WorkCompleted):
        return {**row, "status": "done", "updated_at": event.recorded_at}
    if isinstance(data, WorkFailed):
        return {
            **row,
            "attempts": data.attempt,
            "last_error": data.error,
            "available_at": data.retry_at,
            "updated_at": event.recorded_at,
        }
    if isinstance(data, WorkParked):
        return {
            **row,
            "status": "parked",
            "attempts": data.attempts,
            "last_error": data.error,
            "updated_at": event.recorded_at,
        }
    return row


# The types that create work (`_kind_and_ref`) and those that settle it.
CREATING = {
    cls.event_type
    for cls in (
        MessageReceived,
        ParticipantEnrolled,
        TimerFired,
        WorkRequested,
        BroadcastStepRequested,
    )
}
PROJECTION = Projection(
    "work_items", "work_id", COLUMNS, key, apply, types=frozenset(CREATING | DONE)
)
