"""The welcome of an enrollment made inside the participant's quiet hours: it waits for their
end, as a `greeting` timer recorded with the enrollment, so the engine never texts anyone in
their quiet hours on its own (docs/api.md, "Enrolling a participant").

Outside quiet hours the worker greets at once (the `enrolled` work item). Inside them the
enrollment's transaction also appends `timer.scheduled` (kind `greeting`, due when their quiet
hours end, in their timezone); the `enrolled` turn then sends nothing, and the timer's firing
greets. A text from the participant before then cancels it (their message is answered instead,
as for someone enrolled by their own first message).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from bot.core.config import Settings
from bot.core.localtime import QuietHours, parse_quiet_hours
from bot.interventions.validation.catalogue import Catalogue
from bot.services.broadcast_sending import QuietRules
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import new_id
from bot.timers import quiet_hours
from bot.timers.one_shot import zone_of

KIND = "greeting"  # the timer kind (bot.timers.kinds)
REASON = "quiet_hours"


def rules(settings: Settings, interventions: Catalogue) -> QuietRules:
    """QUIET_HOURS and, read when first asked for (one intervention, not all of them), the
    quiet hours of an intervention that has its own, as the scheduler applies them."""
    return QuietRules(parse_quiet_hours(settings.quiet_hours), OwnQuietHours(interventions))


class OwnQuietHours(Mapping[str, QuietHours | None]):
    """The interventions' own quiet hours, by slug, read from the catalogue on demand: a slug
    is in it only if its intervention declares `quiet_hours` (the others keep QUIET_HOURS)."""

    def __init__(self, interventions: Catalogue) -> None:
        self.interventions = interventions

    def __getitem__(self, slug: str) -> QuietHours | None:
        own = self.interventions.quiet_hours(slug)
        if own is None:
            raise KeyError(slug)
        return parse_quiet_hours(own)

    def __contains__(self, slug: object) -> bool:
        return isinstance(slug, str) and self.interventions.quiet_hours(slug) is not None

    def __iter__(self) -> Iterator[str]:
        return (slug for slug in self.interventions.slugs() if slug in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


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
