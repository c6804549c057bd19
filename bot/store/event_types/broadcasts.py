"""Broadcast events: one message (or step) sent to a filtered group of participants.

The broadcast's own stream (`broadcast:<id>`) holds what was asked (`broadcast.created`), the
recipients planned for it (`broadcast.planned`, one per participant, so a restart finds every
one still to send) and `broadcast.cancelled`. Each recipient's outcome is on their own stream:
the `message.queued` that carries the broadcast id, or `broadcast.held` with the reason, or
`broadcast.deferred` until their quiet hours end.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.store.events import EventData, event, fields

BROADCAST_PREFIX = "broadcast:"


def broadcast_stream(broadcast_id: str) -> str:
    return f"{BROADCAST_PREFIX}{broadcast_id}"


@event("broadcast.created")
class BroadcastCreated(EventData):
    """What a researcher asked: the message template (Jinja2, rendered per participant) or the
    `step` each recipient's conversation moves to (its message is the step's), the WhatsApp
    template that may carry a message outside the 24-hour window, the filter, when to send
    (`send_at`: `{"mode": "now"}` or `{"mode": "local", "time": "HH:MM", "date": ...}`), how
    many participants matched, and for a study's declared broadcast, `schedule`
    (`<study>/<name>@<date>`)."""

    personal = fields()
    plain = fields(
        "created_by",
        "message",
        "whatsapp_template",
        "filter",
        "send_at",
        "title",
        "step",
        "schedule",
    )

    broadcast_id: str
    created_by: str
    title: str | None = None
    message: str = ""
    step: str | None = None
    schedule: str | None = None
    whatsapp_template: str | None = None
    filter: dict[str, Any]
    send_at: dict[str, Any]
    recipients: int


@event("broadcast.planned")
class BroadcastPlanned(EventData):
    """One recipient of a broadcast and the moment their message is due (UTC)."""

    personal = fields()
    plain = fields()

    broadcast_id: str
    participant_id: str
    due_at: datetime


@event("broadcast.cancelled")
class BroadcastCancelled(EventData):
    """Nothing more is sent for the broadcast; what was queued before stays queued."""

    personal = fields()
    plain = fields("by", "reason")

    broadcast_id: str
    by: str
    reason: str | None = None


@event("broadcast.held")
class BroadcastHeld(EventData):
    """The broadcast was not sent to this participant, and why (opted out, withdrawn, taken
    over, WhatsApp window closed without a template, a template that does not render)."""

    personal = fields()
    plain = fields("reason")

    broadcast_id: str
    reason: str


@event("broadcast.deferred")
class BroadcastDeferred(EventData):
    """The participant's message waits until `until` (the end of their quiet hours)."""

    personal = fields()
    plain = fields("reason")

    broadcast_id: str
    until: datetime
    reason: str


@event("broadcast.step_requested")
class BroadcastStepRequested(EventData):
    """The broadcast starts `step` for this participant: a work item whose turn moves their
    conversation there through the engine's ordinary transition and queues the step's message
    (carrying the broadcast id), or records `broadcast.held` if that cannot be done."""

    personal = fields()
    plain = fields("step")

    broadcast_id: str
    step: str


@event("broadcast.occurrence_failed")
class BroadcastOccurrenceFailed(EventData):
    """A study's declared broadcast (`schedule`, `<study>/<name>`) made no broadcast for the
    occurrence of `occurrence` (a local date), and why; an operator alert goes with it, and
    the schedule carries on with the next occurrence."""

    personal = fields()
    plain = fields("schedule", "occurrence", "reason")

    schedule: str
    occurrence: str
    reason: str
