"""Timer events: durable timers are scheduled, deferred, cancelled, fired or skipped."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import field_validator

from bot.events import EventData, event


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("must be timezone-aware")
    return value


@event("timer.scheduled")
class TimerScheduled(EventData):
    """A timer, due at `due_at` (UTC); `local_time`/`timezone` record what it was computed from
    and `scope` identifies the situation it belongs to, so a stale timer is recognised."""

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

    timer_id: str
    due_at: datetime
    reason: str

    _due_aware = field_validator("due_at")(_aware)


@event("timer.cancelled")
class TimerCancelled(EventData):
    timer_id: str
    reason: str


@event("timer.fired")
class TimerFired(EventData):
    timer_id: str
    late_seconds: float = 0.0


@event("timer.skipped")
class TimerSkipped(EventData):
    timer_id: str
    reason: str
