"""Schedule events: a participant's recurring daily schedule is created or deleted.

Each occurrence of a schedule is an ordinary one-shot timer (`timer.scheduled`) chained to the
next; these two events say which schedules exist, so that re-arming knows what to re-arm.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import time
from typing import Any, Literal

from pydantic import field_validator

from bot.core.localtime import parse_local_time
from bot.store.events import EventData, event, fields

ScheduleKind = Literal["daily", "measurement"]


@dataclass(frozen=True)
class When:
    """A daily local time ("09:00"), or a window ("09:00-12:00") to draw a time from."""

    at: time | None = None
    window: tuple[time, time] | None = None

    def __str__(self) -> str:
        if self.window is not None:
            return f"{self.window[0]:%H:%M}-{self.window[1]:%H:%M}"
        assert self.at is not None
        return f"{self.at:%H:%M}"


def parse_when(text: str) -> When:
    """Parse "HH:MM" (a fixed local time) or "HH:MM-HH:MM" (a window; may cross midnight)."""
    if not isinstance(text, str):
        raise ValueError(f"invalid schedule time {text!r}")
    start, sep, end = text.strip().partition("-")
    if not sep:
        return When(at=parse_local_time(start.strip()))
    window = (parse_local_time(start.strip()), parse_local_time(end.strip()))
    if window[0] == window[1]:
        raise ValueError(f"empty window {text!r}: start and end are the same")
    return When(window=window)


@event("schedule.created")
class ScheduleCreated(EventData):
    """A daily schedule: each day at `when` (participant-local) a timer of `kind` fires with
    `payload` (e.g. {"text": ..., "reminder": {"after_minutes": 30, "text": ...}})."""

    personal = fields("payload")
    plain = fields("when")

    schedule_id: str
    kind: ScheduleKind = "daily"
    when: str
    payload: dict[str, Any] = {}

    @field_validator("when")
    @classmethod
    def _when(cls, value: str) -> str:
        return str(parse_when(value))


@event("schedule.deleted")
class ScheduleDeleted(EventData):
    personal = fields()
    plain = fields("reason")

    schedule_id: str
    reason: str = "deleted"
