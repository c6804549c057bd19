"""Work queue events: what happened to a unit of work (an inbound message, a timer, a greeting)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from bot.store.events import EventData, event, fields


@event("work.requested")
class WorkRequested(EventData):
    """Explicit work for the participant's worker (an operator command); the work id is this
    event's id. Inbound messages, enrollments and timer firings create work implicitly."""

    personal = fields("payload")

    kind: Literal["command"] = "command"
    payload: dict[str, Any] = {}


@event("work.completed")
class WorkCompleted(EventData):
    """The item was handled; `skipped` says why the handler was not run (e.g. "unenrolled")."""

    personal = fields()
    plain = fields("skipped")

    work_id: str
    skipped: str | None = None


@event("work.failed")
class WorkFailed(EventData):
    """An attempt failed; the item is retried at `retry_at`."""

    personal = fields("error")

    work_id: str
    error: str
    attempt: int
    retry_at: datetime


@event("work.parked")
class WorkParked(EventData):
    """The item failed too often and is no longer retried; an alert accompanies it."""

    personal = fields("error")

    work_id: str
    error: str
    attempts: int
