"""What a participant's events say about their timers: messages, replies, live schedules.

Pure folds over a stream (a list of recorded events in stream order); handlers use them to tell
an answered or superseded timer from one that should act.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.store.event_types.messages import MessageQueued, MessageReceived
from bot.store.event_types.schedules import ScheduleCreated, ScheduleDeleted
from bot.store.event_types.timers import (
    TimerScheduled,
)
from bot.store.events import Event
from bot.store.projections.timers import pending_rows


@dataclass(frozen=True)
class Queued:
    """Where a queued message sits in the stream."""

    version: int
    kind: str


def queued(events: Sequence[Event], outbox_id: str) -> Queued | None:
    """The stream position and kind of the message queued as `outbox_id`."""
    for ev in events:
        if isinstance(ev.data, MessageQueued) and ev.data.outbox_id == outbox_id:
            return Queued(ev.stream_version, ev.data.kind)
    return None


def scheduled_version(events: Sequence[Event], timer_id: str) -> int:
    """The stream version at which `timer_id` was scheduled (0 if not in these events)."""
    for ev in events:
        if isinstance(ev.data, TimerScheduled) and ev.data.timer_id == timer_id:
            return ev.stream_version
    return 0


def replied_after(events: Sequence[Event], version: int) -> bool:
    """Whether the participant sent a message (not a STOP/START/HELP keyword) after `version`."""
    return any(
        isinstance(ev.data, MessageReceived)
        and ev.data.keyword is None
        and ev.stream_version > version
        for ev in events
    )


def superseded(events: Sequence[Event], version: int, kind: str) -> bool:
    """Whether a newer message of the same kind went to the participant after `version`."""
    return any(
        isinstance(ev.data, MessageQueued)
        and ev.data.to_participant
        and ev.data.kind == kind
        and ev.stream_version > version
        for ev in events
    )


def live_schedules(events: Sequence[Event]) -> dict[str, ScheduleCreated]:
    """The schedules created and not deleted, by id, in order of creation."""
    live: dict[str, ScheduleCreated] = {}
    for ev in events:
        if isinstance(ev.data, ScheduleCreated):
            live[ev.data.schedule_id] = ev.data
        elif isinstance(ev.data, ScheduleDeleted):
            live.pop(ev.data.schedule_id, None)
    return live


def pending_timers(events: Sequence[Event]) -> dict[str, TimerScheduled]:
    """Timers scheduled and not yet fired, skipped or cancelled, with deferrals applied (the
    timers projection's own fold)."""
    return as_scheduled(pending_rows(events))


def as_scheduled(rows: Sequence[Mapping[str, Any]]) -> dict[str, TimerScheduled]:
    """Pending timers rows (the `timers` table's, or folded) as the events that scheduled them."""
    return {
        row["timer_id"]: TimerScheduled(
            timer_id=row["timer_id"],
            kind=row["kind"],
            due_at=row["due_at"],
            scope=row["scope"],
            payload=row["payload"],
            local_time=row["local_time"],
            timezone=row["timezone"],
        )
        for row in rows
    }
