"""Tool tests, and the builders they share: a participant, a context, a stream, timer rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from bot.conversation.tooling import Completer, ToolContext
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import Event, EventData

NOW = datetime(2026, 5, 4, 14, 0, tzinfo=UTC)  # 10:00 EDT in Toronto


def participant(**changes: Any) -> dict[str, Any]:
    """A participants row in Toronto, in intake, with an empty profile."""
    row: dict[str, Any] = {
        "participant_id": "p1",
        "phone": "+14165550123",
        "channel": "sms",
        "status": "active",
        "opted_out": False,
        "timezone": "America/Toronto",
        "intervention": "demo",
        "conversation_state": "intake",
        "current_step": None,
        "profile": {},
    }
    row.update(changes)
    return row


def stream(*payloads: EventData | tuple[EventData, datetime]) -> list[Event]:
    """Recorded events of participant p1, in order; a (payload, instant) pair sets its time."""
    events = []
    for n, item in enumerate(payloads, start=1):
        data, at = item if isinstance(item, tuple) else (item, NOW)
        events.append(Event(n, f"e{n}", "participant:p1", n, data, {}, None, at, at))
    return events


def timer_rows(events: Iterable[EventData]) -> list[dict[str, Any]]:
    """The pending timers rows the `timer.scheduled` payloads among `events` project to."""
    return [
        {**e.model_dump(), "status": "scheduled", "scheduled_at": NOW}
        for e in events
        if isinstance(e, TimerScheduled)
    ]


def context(
    who: Mapping[str, Any] | None = None,
    now: datetime = NOW,
    history: list[Event] | None = None,
    pending: list[dict[str, Any]] | None = None,
    options: Mapping[str, Any] | None = None,
    complete: Completer | None = None,
) -> ToolContext:
    return ToolContext(
        participant=dict(who if who is not None else participant()),
        now=now,
        history=history or [],
        pending_timers=pending or [],
        options=dict(options or {}),
        complete=complete,
    )
