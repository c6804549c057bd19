"""The welcome of an enrollment made inside the participant's quiet hours: it waits for their
end, as a `greeting` timer recorded with the enrollment, so the engine never texts anyone in
their quiet hours on its own (docs/participants.md, "The welcome").

Outside quiet hours the worker greets at once (the `enrolled` work item). Inside them the
enrollment's transaction also appends `timer.scheduled` (kind `greeting`, due when their quiet
hours end, in their timezone); the `enrolled` turn then sends nothing, and the timer's firing
greets. A text from the participant before then cancels it (their message is answered instead,
as for someone enrolled by their own first message).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.core.config import Settings
from bot.core.localtime import parse_quiet_hours
from bot.services.broadcast_sending import QuietRules
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import new_id
from bot.timers import quiet_hours
from bot.timers.one_shot import zone_of

KIND = "greeting"  # the timer kind (bot.timers.kinds)
REASON = "quiet_hours"


def rules(settings: Settings, interventions: Path) -> QuietRules:
    """QUIET_HOURS and the quiet hours of each intervention under `interventions` that has
    its own, as the scheduler applies them."""
    from bot.interventions.interpreter.applied import quiet_hours_by_intervention

    return QuietRules(
        parse_quiet_hours(settings.quiet_hours), quiet_hours_by_intervention(interventions)
    )


def held_until(participant: Mapping[str, Any], now: datetime, quiet: QuietRules) -> datetime | None:
    """When the welcome of `participant` (timezone, intervention, profile) enrolled at `now`
    may go: the end of their quiet hours if `now` is inside them, else None (at once)."""
    window = quiet_hours.for_participant(participant, quiet.default, quiet.by_intervention)
    tz = zone_of(participant)
    if window is None or not window.contains(now, tz):
        return None
    return window.end_after(now, tz)


def welcome_timer(
    participant: Mapping[str, Any], now: datetime, quiet: QuietRules
) -> TimerScheduled | None:
    """The `greeting` timer that holds the welcome past quiet hours, or None (greet at once)."""
    until = held_until(participant, now, quiet)
    if until is None:
        return None
    return TimerScheduled(
        timer_id=new_id(),
        kind=KIND,
        due_at=until,
        payload={"reason": REASON},
        timezone=str(participant.get("timezone") or "UTC"),
    )
