"""Occasions of a recurring schedule (docs/schedules.md) that were not given: each is recorded,
so a schedule never loses a prompt silently (quiet hours with `quiet_hours: skip`, an occasion
deferred into one already due, a window that does not exist on a DST date)."""

from __future__ import annotations

from datetime import date, datetime

from bot.store.events import EventData, event, fields


@event("schedule.occasion_skipped")
class OccasionSkipped(EventData):
    """Occasion `index` of the series `series_id` (a `repeat:` of `what`: a question or an
    instrument) planned for `planned_at` on local date `local_date` was skipped: `reason`."""

    personal = fields()
    plain = fields("reason", "series_id", "what")

    series_id: str
    what: str
    index: int
    local_date: date
    planned_at: datetime
    reason: str
