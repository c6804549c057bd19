"""Timer and schedule events round-trip, and the timers projection replays to what is stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.store.event_types.schedules import ScheduleCreated, ScheduleDeleted
from bot.store.event_types.timers import (
    MeasurementAsked,
    MeasurementMissed,
    TimerSkipped,
    TransitionRequested,
)
from bot.store.events import EventData, decode, encode
from bot.store.replay import compare, rebuild
from bot.timers import one_shot
from bot.timers.schedules import create_daily
from tests.timers.conftest import Harness

AT = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "data",
    [
        ScheduleCreated(schedule_id="s", kind="measurement", when="20:00", payload={"text": "?"}),
        ScheduleCreated(schedule_id="s", when="09:00-12:00"),
        ScheduleDeleted(schedule_id="s", reason="participant asked"),
        TimerSkipped(timer_id="t", reason="missed", late_seconds=12.5),
        TransitionRequested(timer_id="t", to_state="feedback", reason="30 min after prompt"),
        MeasurementAsked(measurement="mood", timer_id="t", outbox_id="o", answer_by=AT),
        MeasurementMissed(measurement="mood", timer_id="t", outbox_id="o"),
    ],
)
def test_timer_and_schedule_events_round_trip(data: EventData) -> None:
    assert decode(data.event_type, data.schema_version, encode(data)) == data


def test_a_schedule_time_is_stored_in_its_canonical_form() -> None:
    assert ScheduleCreated(schedule_id="s", when=" 9:05 - 17:00 ").when == "09:05-17:00"


def test_the_timers_projection_replays_to_exactly_what_was_stored(harness: Harness) -> None:
    harness.clock.set(AT - timedelta(hours=1))
    person = harness.enroll(timezone="UTC")
    payload = {"text": "Step", "reminder": {"after_minutes": 30, "text": "Nudge"}}
    now = harness.clock.now()
    harness.append(person["participant_id"], create_daily(person, "09:00", "daily", payload, now))
    nudge_at = AT + timedelta(minutes=31)
    harness.append(person["participant_id"], [one_shot.at(person, nudge_at, "Also")])
    harness.run_until(AT + timedelta(minutes=25), timedelta(minutes=5))
    harness.clock.advance(timedelta(minutes=6))
    harness.fire()  # the reminder fires ...
    harness.receive(person["participant_id"])  # ... a reply arrives before it is handled
    harness.run_until(AT + timedelta(days=2))
    report = rebuild(harness.store)
    compare(harness.store, report)
    assert report.clean, [d.describe() for d in report.differences]
    statuses = {
        (t["kind"], t["status"], t["reason"]) for t in harness.timers(person["participant_id"])
    }
    assert ("reminder", "skipped", "answered") in statuses
