"""Consent: the events of a participant opting out of messages and opting back in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from bot.store.event_types.participants import ParticipantOptedIn, ParticipantOptedOut
from bot.store.events import Event, EventData
from bot.timers import lifecycle

OptOutSource = Literal["keyword", "opt_out_type", "error_21610", "operator"]
OptInSource = Literal["keyword", "opt_out_type", "operator"]


def opt_out(
    participant: Mapping[str, Any],
    pending_timers: Sequence[Mapping[str, Any]],
    source: OptOutSource,
    now: datetime,
    keyword: str | None = None,
) -> list[EventData]:
    """`participant.opted_out` and what it does to pending timers; nothing if already out."""
    if participant["opted_out"]:
        return []
    return [
        ParticipantOptedOut(source=source, keyword=keyword),
        *lifecycle.on_status_change(participant, list(pending_timers), "opted_out", now),
    ]


def opt_in(
    participant: Mapping[str, Any],
    pending_timers: Sequence[Mapping[str, Any]],
    source: OptInSource,
    now: datetime,
    keyword: str | None = None,
    events: Sequence[Event] | None = None,
) -> list[EventData]:
    """`participant.opted_in` and what it does to timers; nothing unless opted out. With the
    participant's `events`, schedules left without a pending occurrence are re-armed too."""
    if not participant["opted_out"]:
        return []
    return [
        ParticipantOptedIn(source=source, keyword=keyword),
        *lifecycle.on_status_change(
            participant, list(pending_timers), "opted_in", now, events=events
        ),
    ]
