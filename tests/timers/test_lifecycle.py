"""Status changes: paused, opted-out and unenrolled participants get nothing; resuming re-arms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.store.event_types.participants import (
    ParticipantOptedIn,
    ParticipantOptedOut,
    ParticipantStatusChanged,
    ParticipantUnenrolled,
)
from bot.store.events import EventData
from bot.timers import lifecycle, one_shot
from bot.timers.schedules import create_daily
from tests.timers.conftest import Harness

START = datetime(2026, 6, 1, 6, 0, tzinfo=UTC)
DAILY = {"text": "Step", "reminder": {"after_minutes": 30, "text": "Nudge"}}


@pytest.fixture
def person(harness: Harness) -> dict:
    """A participant with a 09:00 daily prompt and a delayed transition pending."""
    harness.clock.set(START)
    person = harness.enroll(timezone="UTC")
    pid = person["participant_id"]
    harness.append(pid, create_daily(person, "09:00", "daily", DAILY, START))
    harness.append(pid, [one_shot.transition(person, "feedback", timedelta(hours=5), START)])
    return person


def change(harness: Harness, person: dict, status: EventData, name: str, **kw: object) -> None:
    """Record a status change the way the API and webhook do: with on_status_change's events."""
    pid = person["participant_id"]
    row = harness.participant(pid)
    pending = harness.timers(pid, "scheduled")
    follow = lifecycle.on_status_change(row, pending, name, harness.clock.now(), **kw)
    harness.append(pid, [status, *follow])


def _messages(harness: Harness, person: dict) -> list[str]:
    return [e.data.kind for e in harness.events(person["participant_id"], "message.queued")]


def test_a_paused_participant_receives_nothing_from_timers(harness: Harness, person: dict) -> None:
    change(harness, person, ParticipantStatusChanged(status="paused"), "paused")
    harness.run_until(START + timedelta(days=3))
    assert _messages(harness, person) == []
    skipped = harness.events(person["participant_id"], "timer.skipped")
    assert [e.data.reason for e in skipped] == ["paused"] * 3  # one per day, each chained on
    (transition,) = harness.timers(person["participant_id"], "cancelled")
    assert (transition["kind"], transition["reason"]) == ("transition", "paused")


def test_resuming_rearms_the_daily_prompt_from_now_on(harness: Harness, person: dict) -> None:
    change(harness, person, ParticipantStatusChanged(status="paused"), "paused")
    harness.run_until(START + timedelta(days=2))
    change(harness, person, ParticipantStatusChanged(status="active"), "active")
    harness.run_until(START + timedelta(days=2, hours=4))
    queued = harness.events(person["participant_id"], "message.queued")
    assert [(e.data.kind, e.recorded_at) for e in queued] == [
        ("prompt", START + timedelta(days=2, hours=3)),  # 09:00 on the third day
        ("reminder", START + timedelta(days=2, hours=3, minutes=30)),
    ]


def test_an_unenrolled_participant_has_no_pending_timers_and_receives_nothing(
    harness: Harness, person: dict
) -> None:
    change(harness, person, ParticipantUnenrolled(), "unenrolled")
    assert harness.timers(person["participant_id"], "scheduled") == []
    harness.run_until(START + timedelta(days=2))
    assert _messages(harness, person) == []


def test_opting_out_suppresses_the_schedule_and_opting_in_resumes_it(
    harness: Harness, person: dict
) -> None:
    change(harness, person, ParticipantOptedOut(source="keyword", keyword="STOP"), "opted_out")
    harness.run_until(START + timedelta(days=1))
    change(harness, person, ParticipantOptedIn(source="keyword", keyword="START"), "opted_in")
    harness.run_until(START + timedelta(days=2))
    assert _messages(harness, person) == ["prompt", "reminder"]
    (skipped,) = harness.events(person["participant_id"], "timer.skipped")
    assert skipped.data.reason == "opted_out"


def test_reactivating_a_completed_participant_rearms_their_schedules_from_the_events(
    harness: Harness, person: dict
) -> None:
    change(harness, person, ParticipantStatusChanged(status="completed"), "completed")
    harness.run_until(START + timedelta(days=1))
    events = harness.events(person["participant_id"])
    change(harness, person, ParticipantStatusChanged(status="active"), "active", events=events)
    (occurrence,) = harness.timers(person["participant_id"], "scheduled")
    assert occurrence["due_at"] == START + timedelta(days=1, hours=3)


def test_resuming_while_still_opted_out_arms_nothing(harness: Harness, person: dict) -> None:
    row = {**harness.participant(person["participant_id"]), "opted_out": True}
    events = harness.events(person["participant_id"])
    assert lifecycle.on_status_change(row, [], "active", START, events=events) == []


def test_an_unknown_status_change_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown status change"):
        lifecycle.on_status_change({}, [], "frozen", START)
