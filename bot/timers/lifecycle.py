"""What a participant's status change does to their pending timers (pure).

Called by every path that changes status (API PUT/DELETE, STOP/START, error 21610) inside the
same transaction, so that the timer events commit with the status change.

- completed, withdrawn, unenrolled: every pending timer is cancelled.
- paused, opted_out: pending one-shot timers (reminders, transitions, measurements, `at`) are
  cancelled — they belong to a moment that has passed. Occurrences of daily schedules stay and
  are suppressed: while the participant is inactive each is recorded as `timer.skipped` (reason
  "paused"/"opted_out") when due and the next one is chained, so nothing is sent.
- active, opted_in: suppressed schedules simply fire again from the next occurrence. Given the
  participant's `events`, every live schedule without a pending occurrence (e.g. after
  "completed" -> "active") is also re-armed from now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.store.event_types.timers import TimerCancelled
from bot.store.events import Event, EventData
from bot.timers.kinds import records
from bot.timers.schedules import rearm

ENDING = {"completed", "withdrawn", "unenrolled", "erased"}
SUSPENDING = {"paused", "opted_out"}
RESUMING = {"active", "opted_in"}


def on_status_change(
    participant: Mapping[str, Any],
    pending_timers: Sequence[Mapping[str, Any]],
    change: str,
    now: datetime,
    events: Sequence[Event] | None = None,
) -> list[EventData]:
    """Events that follow a status change.

    `change` is one of "paused", "active" (resumed), "completed", "withdrawn", "unenrolled",
    "opted_out", "opted_in"; `pending_timers` are the participant's timers rows with status
    "scheduled"; `participant` may be the row before or after the change. `events` (the
    participant's stream) lets a resume re-arm schedules that have no pending occurrence.
    """
    if change in ENDING:
        return [
            TimerCancelled(timer_id=t["timer_id"], reason=change)
            for t in pending_timers
            if not (change == "withdrawn" and records(str(t.get("kind")), change))
        ]
    if change in SUSPENDING:
        return [
            TimerCancelled(timer_id=t["timer_id"], reason=change)
            for t in pending_timers
            if not (t.get("payload") or {}).get("schedule_id")
            and not records(str(t.get("kind")), "paused")
        ]
    if change in RESUMING:
        # Judge the other half of "may receive messages": the row may predate this change.
        blocked = participant.get("opted_out") if change == "active" else None
        if change == "opted_in" and participant.get("status") != "active":
            blocked = True
        if events is None or blocked:
            return []
        return rearm(participant, events, pending_timers, now)
    raise ValueError(f"unknown status change {change!r}")
