"""Timer events: durable timers are scheduled, deferred, cancelled, fired or skipped; and the
facts a fired timer produces for the conversation (a transition due, a measurement asked or missed).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import field_validator

from bot.store.events import EventData, event, fields


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("must be timezone-aware")
    return value


@event("timer.scheduled")
class TimerScheduled(EventData):
    """A timer, due at `due_at` (UTC); `local_time`/`timezone` record what it was computed from
    and `scope` identifies the situation it belongs to, so a stale timer is recognised."""

    personal = fields("payload")
    plain = fields("kind", "local_time", "scope", "timezone")

    timer_id: str
    kind: str
    due_at: datetime
    scope: str = ""
    payload: dict[str, Any] = {}
    local_time: str | None = None
    timezone: str | None = None

    _due_aware = field_validator("due_at")(_aware)


@event("timer.deferred")
class TimerDeferred(EventData):
    """The timer moved to a later instant (e.g. out of quiet hours)."""

    personal = fields()
    plain = fields("reason")

    timer_id: str
    due_at: datetime
    reason: str

    _due_aware = field_validator("due_at")(_aware)


@event("timer.cancelled")
class TimerCancelled(EventData):
    personal = fields()
    plain = fields("reason")

    timer_id: str
    reason: str


@event("timer.fired")
class TimerFired(EventData):
    timer_id: str
    late_seconds: float = 0.0


@event("timer.skipped")
class TimerSkipped(EventData):
    """The timer will not act: the participant is inactive, it was missed during downtime, it
    fell in quiet hours, or (after `timer.fired`) its prompt was answered or superseded."""

    personal = fields()
    plain = fields("reason")

    timer_id: str
    reason: str
    late_seconds: float | None = None


@event("transition.requested")
class TransitionRequested(EventData):
    """A delayed-transition timer came due: the conversation should move to `to_state`."""

    personal = fields("reason")
    plain = fields("to_state")

    timer_id: str
    to_state: str
    reason: str | None = None


@event("measurement.asked")
class MeasurementAsked(EventData):
    """A timed measurement's question was queued; an answer is expected by `answer_by`. A
    decision point's outcome question names its point (`decision`, `index`): the answer to
    this message (`measurement.recorded` with its `outbox_id`) is that point's outcome."""

    personal = fields()
    plain = fields("measurement", "decision")

    measurement: str
    timer_id: str
    outbox_id: str
    answer_by: datetime
    decision: str | None = None
    index: int | None = None

    _by_aware = field_validator("answer_by")(_aware)


@event("measurement.missed")
class MeasurementMissed(EventData):
    """No reply came within a measurement's answer window."""

    personal = fields()
    plain = fields("measurement")

    measurement: str
    timer_id: str
    outbox_id: str
