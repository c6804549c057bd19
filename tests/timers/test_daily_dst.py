"""A daily 09:00 prompt stays at 09:00 local through DST changes, in both hemispheres."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.timers.schedules import create_daily
from tests.timers.conftest import Harness

TICK = timedelta(minutes=10)


@pytest.mark.parametrize(
    ("zone", "first_day"),
    [
        ("America/Toronto", "2026-03-03"),  # clocks spring forward on 8 March
        ("America/Toronto", "2026-10-28"),  # and fall back on 1 November
        ("Australia/Sydney", "2026-03-31"),  # fall back on 5 April
        ("Australia/Sydney", "2026-09-29"),  # spring forward on 4 October
    ],
)
def test_daily_nine_oclock_prompt_fires_at_nine_local_on_ten_days_across_a_dst_change(
    harness: Harness, zone: str, first_day: str
) -> None:
    tz = ZoneInfo(zone)
    start = datetime.fromisoformat(f"{first_day}T06:00").replace(tzinfo=tz).astimezone(UTC)
    harness.clock.set(start)
    person = harness.enroll(timezone=zone)
    harness.append(
        person["participant_id"],
        create_daily(person, "09:00", "daily", {"text": "Time for today's step"}, start),
    )

    harness.run_until(start + timedelta(days=10), TICK)

    fired = harness.events(person["participant_id"], "timer.fired")
    timers = {t["timer_id"]: t for t in harness.timers(person["participant_id"])}
    local_days = []
    for event in fired:
        timer = timers[event.data.timer_id]
        due_local = timer["due_at"].astimezone(tz)
        assert due_local.time() == time(9, 0)
        assert timedelta(0) <= event.recorded_at - timer["due_at"] < TICK
        local_days.append(due_local.date())
    first = datetime.fromisoformat(first_day).date()
    assert local_days == [first + timedelta(days=n) for n in range(10)]
    offsets = {timers[e.data.timer_id]["due_at"].astimezone(tz).utcoffset() for e in fired}
    assert len(offsets) == 2  # the ten days really straddle a change of UTC offset
    prompts = harness.events(person["participant_id"], "message.queued")
    assert [p.data.kind for p in prompts] == ["prompt"] * 10
