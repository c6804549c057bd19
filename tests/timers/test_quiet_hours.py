"""Quiet hours: a timer due inside them is deferred or skipped per its kind, as an event."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core.localtime import QuietHours, parse_quiet_hours
from bot.timers import one_shot
from bot.timers.firing import FiringPolicy, decide
from bot.timers.quiet_hours import for_participant
from bot.timers.schedules import create_daily
from tests.timers.conftest import Harness

TORONTO = ZoneInfo("America/Toronto")
NIGHT = QuietHours(time(22, 0), time(8, 0))


@pytest.fixture
def policy() -> FiringPolicy:
    return FiringPolicy(quiet_hours=NIGHT)


def _local(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=TORONTO).astimezone(UTC)


def test_a_prompt_due_in_quiet_hours_is_deferred_to_their_end_and_the_deferral_is_an_event(
    harness: Harness,
) -> None:
    harness.clock.set(_local("2026-03-07T12:00"))
    person = harness.enroll(timezone="America/Toronto")
    now = harness.clock.now()
    harness.append(
        person["participant_id"], create_daily(person, "23:00", "daily", {"text": "Hi"}, now)
    )
    harness.run_until(_local("2026-03-08T09:00"), timedelta(minutes=5))

    deferred = harness.events(person["participant_id"], "timer.deferred")
    assert [(e.data.reason, e.data.due_at) for e in deferred] == [
        ("quiet_hours", _local("2026-03-08T08:00"))  # 08:00 EDT, the morning after DST began
    ]
    assert deferred[0].recorded_at == _local("2026-03-07T23:00")
    (prompt,) = harness.events(person["participant_id"], "message.queued")
    assert prompt.recorded_at == _local("2026-03-08T08:00")


def test_a_reminder_due_in_quiet_hours_is_skipped_not_deferred(harness: Harness) -> None:
    harness.clock.set(_local("2026-03-02T21:50"))
    person = harness.enroll(timezone="America/Toronto")
    timer = one_shot.reminder(
        person, "none", timedelta(minutes=20), "Still there?", harness.clock.now()
    )
    harness.append(person["participant_id"], [timer])
    harness.clock.advance(timedelta(minutes=20))
    assert [(d.outcome, d.reason) for d in harness.fire()] == [("skipped", "quiet_hours")]


def test_a_measurement_answer_window_ends_even_in_quiet_hours() -> None:
    person = {"status": "active", "opted_out": False, "timezone": "America/Toronto"}
    due = _local("2026-03-02T23:30")
    timer = {"timer_id": "t", "kind": "measurement_timeout", "status": "scheduled", "due_at": due}
    decision = decide(timer, person, due, FiringPolicy(quiet_hours=NIGHT))
    assert decision.outcome == "fired"


def test_a_participants_own_quiet_hours_override_the_studys() -> None:
    person = {
        "status": "active",
        "opted_out": False,
        "timezone": "America/Toronto",
        "profile": {"quiet_hours": "21:00-07:00"},
    }
    due = _local("2026-03-02T21:30")
    timer = {"timer_id": "t", "kind": "daily", "status": "scheduled", "due_at": due, "payload": {}}
    decision = decide(timer, person, due, FiringPolicy(quiet_hours=NIGHT))
    assert decision.outcome == "deferred"
    assert decision.events[0].due_at == _local("2026-03-03T07:00")


def test_an_empty_participant_override_means_no_quiet_hours_for_them() -> None:
    person = {"profile": {"quiet_hours": ""}, "intervention": "demo"}
    assert for_participant(person, NIGHT, {"demo": NIGHT}) is None


def test_an_interventions_quiet_hours_apply_when_the_participant_has_none() -> None:
    evening = QuietHours(time(20, 0), time(9, 0))
    person = {"profile": {}, "intervention": "demo"}
    assert for_participant(person, NIGHT, {"demo": evening}) == evening


def test_quiet_hours_setting_parses_and_rejects_nonsense() -> None:
    assert parse_quiet_hours("22:00-08:00") == NIGHT
    assert parse_quiet_hours("") is None
    for bad in ("22:00", "22:00-22:00", "25:00-08:00", "late-early"):
        with pytest.raises(ValueError):
            parse_quiet_hours(bad)
