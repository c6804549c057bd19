"""How timers react to the participant: a reply cancels pending reminders (pure).

The webhook only records the message; the worker calls `on_inbound` when it processes the
message's work item and appends what it returns with the rest of the turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.store.event_types.timers import TimerCancelled
from bot.store.events import Event, EventData
from bot.timers.kinds import KindPolicy, policy_for


def on_inbound(
    participant: Mapping[str, Any],
    pending_timers: Sequence[Mapping[str, Any]],
    now: datetime,
    inbound: Event | None = None,
    policies: Mapping[str, KindPolicy] | None = None,
) -> list[EventData]:
    """`timer.cancelled` (reason "answered") for each pending timer of a kind a reply cancels
    (reminders, measurement answer windows) that was set before the message arrived.

    `inbound` is the `message.received` being processed; a timer scheduled after it was
    recorded (a prompt queued while the message waited in the queue) is not about it and stays.
    Without `inbound`, every such pending timer is cancelled.
    """
    cancelled: list[EventData] = []
    for timer in pending_timers:
        if timer.get("status", "scheduled") != "scheduled":
            continue
        if not policy_for(str(timer["kind"]), policies).cancelled_by_reply:
            continue
        if inbound is not None and timer["scheduled_at"] > inbound.recorded_at:
            continue
        cancelled.append(TimerCancelled(timer_id=str(timer["timer_id"]), reason="answered"))
    return cancelled
