"""Handlers per kind: what a fired transition, measurement or unknown timer produces."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.conversation import timer_turns
from bot.conversation.timer_turns import FiredTimer, handle_fired
from bot.store.event_types.work import WorkRequested
from bot.timers import one_shot
from bot.timers.schedules import create_daily, delete_schedule
from tests.timers.conftest import Harness

NOON = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


@pytest.fixture
def person(harness: Harness) -> dict:
    harness.clock.set(NOON)
    return harness.enroll(timezone="UTC")


def test_a_delayed_transition_asks_the_conversation_to_move_on(
    harness: Harness, person: dict
) -> None:
    timer = one_shot.transition(person, "feedback", timedelta(minutes=30), NOON, "after prompt")
    harness.append(person["participant_id"], [timer])
    harness.run_until(NOON + timedelta(hours=1))
    (requested,) = harness.events(person["participant_id"], "transition.requested")
    assert (requested.data.to_state, requested.data.timer_id) == ("feedback", timer.timer_id)


def test_a_transition_set_before_the_conversation_moved_is_stale(
    harness: Harness, person: dict
) -> None:
    timer = one_shot.transition(person, "feedback", timedelta(minutes=30), NOON)
    moved = {**person, "conversation_state": "step", "status": "active"}
    fired = {**harness_row(timer), "status": "fired"}
    assert handle_fired(moved, fired, [], NOON) == [
        timer_turns.FiredTimer(moved, fired, [], NOON).skipped("stale")
    ]


def test_a_measurement_asks_then_records_a_miss_when_no_reply_comes(
    harness: Harness, person: dict
) -> None:
    ask = one_shot.measurement(
        person, NOON + timedelta(hours=8), "mood", "Mood 1-5?", timedelta(hours=1)
    )
    harness.append(person["participant_id"], [ask])
    harness.run_until(NOON + timedelta(hours=10))
    (asked,) = harness.events(person["participant_id"], "measurement.asked")
    (missed,) = harness.events(person["participant_id"], "measurement.missed")
    (question,) = harness.events(person["participant_id"], "message.queued")
    assert question.data.kind == "question"
    assert asked.data.answer_by == NOON + timedelta(hours=9)
    assert (missed.data.measurement, missed.data.outbox_id) == ("mood", question.data.outbox_id)


def test_a_reply_within_the_answer_window_means_the_measurement_is_not_missed(
    harness: Harness, person: dict
) -> None:
    ask = one_shot.measurement(person, NOON, "mood", "Mood 1-5?", timedelta(hours=1))
    harness.append(person["participant_id"], [ask])
    harness.step(timedelta(minutes=1))
    harness.receive(person["participant_id"], "4")
    harness.run_until(NOON + timedelta(hours=2))
    assert harness.events(person["participant_id"], "measurement.missed") == []
    (timeout,) = harness.timers(person["participant_id"], "skipped")
    assert (timeout["kind"], timeout["reason"]) == ("measurement_timeout", "answered")


def test_replies_that_were_only_rejected_as_answers_leave_the_measurement_missed(
    harness: Harness, person: dict
) -> None:
    from bot.store.event_types.interventions import MeasurementRejected

    ask = one_shot.measurement(person, NOON, "mood", "Mood 1-5?", timedelta(hours=1))
    harness.append(person["participant_id"], [ask])
    harness.step(timedelta(minutes=1))
    harness.receive(person["participant_id"], "banana")
    harness.append(
        person["participant_id"], [MeasurementRejected(measurement="mood", reason="not 1-5")]
    )
    harness.run_until(NOON + timedelta(hours=2))
    (missed,) = harness.events(person["participant_id"], "measurement.missed")
    assert missed.data.measurement == "mood"


def test_a_timer_of_a_kind_nobody_handles_is_skipped_with_the_reason(
    harness: Harness, person: dict
) -> None:
    odd = one_shot.scheduled(person, "mystery", NOON + timedelta(minutes=1))
    harness.append(person["participant_id"], [odd])
    harness.run_until(NOON + timedelta(minutes=20))
    row = harness.timer(odd.timer_id)
    assert (row["status"], row["reason"]) == ("skipped", "no handler for kind 'mystery'")


def test_the_engine_can_register_its_own_handler_for_a_kind(
    harness: Harness, person: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(timer_turns.HANDLERS, "mystery", lambda fired: [WorkRequested()])
    odd = one_shot.scheduled(person, "mystery", NOON + timedelta(minutes=1))
    harness.append(person["participant_id"], [odd])
    harness.step(timedelta(minutes=1))
    assert len(harness.events(person["participant_id"], "work.requested")) == 1


def test_an_occurrence_of_a_deleted_schedule_is_stale_and_ends_the_chain(
    harness: Harness, person: dict
) -> None:
    pid = person["participant_id"]
    created = create_daily(person, "12:30", "daily", {"text": "Hi"}, NOON)
    harness.append(pid, created)
    harness.clock.advance(timedelta(minutes=30))
    harness.fire()  # fired (and chained) just before the schedule is deleted
    harness.append(pid, delete_schedule(created[0].schedule_id, []))
    harness.work()
    assert harness.events(pid, "message.queued") == []
    assert harness.timers(pid, "scheduled") == []
    assert harness.timer(created[1].timer_id)["reason"] == "stale"


def test_a_timer_fired_for_a_participant_who_has_since_opted_out_sends_nothing(
    harness: Harness, person: dict
) -> None:
    timer = {**harness_row(one_shot.at(person, NOON, "hi")), "status": "fired"}
    out = {**person, "opted_out": True}
    assert handle_fired(out, timer, [], NOON) == [
        FiredTimer(out, timer, [], NOON).skipped("opted_out")
    ]


def harness_row(timer: object) -> dict:
    """A timers row as the projection would hold it, for pure handler calls."""
    data = timer.model_dump()  # type: ignore[attr-defined]
    return {**data, "status": "scheduled", "scheduled_at": NOON}
