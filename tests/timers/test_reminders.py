"""Reminders: sent only when the participant has not replied to the newest prompt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.channel import outbound
from bot.timers import one_shot
from bot.timers.schedules import create_daily
from tests.timers.conftest import Harness

NINE = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
DAILY = {"text": "Today's step", "reminder": {"after_minutes": 30, "text": "A nudge"}}


@pytest.fixture
def person(harness: Harness) -> dict:
    harness.clock.set(NINE - timedelta(hours=1))
    person = harness.enroll(timezone="UTC")
    harness.append(
        person["participant_id"],
        create_daily(person, "09:00", "daily", DAILY, harness.clock.now()),
    )
    harness.run_until(NINE + timedelta(minutes=1), timedelta(minutes=1))
    return person


def _sent(harness: Harness, person: dict) -> list[str]:
    return [e.data.kind for e in harness.events(person["participant_id"], "message.queued")]


def test_the_daily_prompt_sets_a_reminder_about_itself(harness: Harness, person: dict) -> None:
    (prompt,) = harness.events(person["participant_id"], "message.queued")
    reminders = [t for t in harness.timers(person["participant_id"]) if t["kind"] == "reminder"]
    assert [(r["scope"], r["due_at"]) for r in reminders] == [
        (prompt.data.outbox_id, NINE + timedelta(minutes=30))
    ]


def test_the_reminder_is_sent_when_there_is_no_reply(harness: Harness, person: dict) -> None:
    harness.run_until(NINE + timedelta(hours=1), timedelta(minutes=1))
    assert _sent(harness, person) == ["prompt", "reminder"]


def test_reply_cancels_the_pending_reminder(harness: Harness, person: dict) -> None:
    harness.clock.advance(timedelta(minutes=10))
    harness.receive(person["participant_id"])
    harness.run_until(NINE + timedelta(hours=1), timedelta(minutes=1))
    assert _sent(harness, person) == ["prompt"]
    (cancelled,) = harness.events(person["participant_id"], "timer.cancelled")
    assert cancelled.data.reason == "answered"


def test_a_reply_after_the_reminder_fired_but_before_it_was_handled_skips_it_as_answered(
    harness: Harness, person: dict
) -> None:
    harness.clock.advance(timedelta(minutes=31))
    harness.fire()  # the reminder fires; the worker has not handled it yet
    harness.receive(person["participant_id"])
    harness.work()
    assert _sent(harness, person) == ["prompt"]
    (reminder,) = [t for t in harness.timers(person["participant_id"]) if t["kind"] == "reminder"]
    assert (reminder["status"], reminder["reason"]) == ("skipped", "answered")
    assert reminder["fired_at"] is not None


def test_a_reminder_tied_to_an_older_prompt_never_fires_after_a_newer_prompt(
    harness: Harness,
) -> None:
    harness.clock.set(NINE)
    person = harness.enroll(timezone="UTC")
    older = outbound.to_participant(person, "First prompt", kind="prompt")
    nudge = one_shot.reminder(
        person, older[-1].outbox_id, timedelta(hours=2), "About the first", NINE
    )
    harness.append(person["participant_id"], [*older, nudge])
    harness.clock.advance(timedelta(hours=1))
    harness.append(
        person["participant_id"], outbound.to_participant(person, "Newer", kind="prompt")
    )
    harness.run_until(NINE + timedelta(hours=3), timedelta(minutes=5))
    assert _sent(harness, person) == ["prompt", "prompt"]
    assert (harness.timer(nudge.timer_id)["status"], harness.timer(nudge.timer_id)["reason"]) == (
        "skipped",
        "stale",
    )


def test_a_message_that_arrived_before_the_prompt_does_not_cancel_its_reminder(
    harness: Harness,
) -> None:
    harness.clock.set(NINE)
    person = harness.enroll(timezone="UTC")
    harness.work()
    harness.receive(person["participant_id"], "hello?")  # waits in the queue meanwhile
    harness.clock.advance(timedelta(seconds=5))
    prompt = outbound.to_participant(person, "Prompt", kind="prompt")
    nudge = one_shot.reminder(person, prompt[-1].outbox_id, timedelta(hours=1), "Nudge", NINE)
    harness.append(person["participant_id"], [*prompt, nudge])
    harness.work()
    assert harness.timer(nudge.timer_id)["status"] == "scheduled"
