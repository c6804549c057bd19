"""What a participant's status change does to their pending timers (filled in by the timers work).

Called by every path that changes status (API PUT/DELETE, STOP/START, error 21610) inside the
same transaction, so that the timer events commit with the status change.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from bot.events import EventData


def on_status_change(
    participant: Mapping[str, Any],
    pending_timers: list[Mapping[str, Any]],
    change: str,
    now: datetime,
) -> list[EventData]:
    """Events that follow a status change.

    `change` is one of "paused", "active" (resumed), "completed", "withdrawn", "unenrolled",
    "opted_out", "opted_in"; `pending_timers` are the participant's timers rows with status
    "scheduled". Returns e.g. timer.cancelled for each pending timer, or re-armed daily timers.
    """
    return []
