"""The participants row keeps each open decision point's outcome question by its message
(`step_counters.outcome_questions`): the answer to that message and no other, a reply to the
question last asked, the entry gone once the point's outcome is recorded; and the end of an
earlier question's answer window leaves a later question of the same name waiting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bot.store.event_types.decisions import DecisionOutcome
from bot.store.event_types.interventions import MeasurementRecorded
from bot.store.event_types.participants import ParticipantEnrolled
from bot.store.event_types.timers import MeasurementAsked, MeasurementMissed
from bot.store.events import Event, EventData
from bot.store.projections import participants

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ENROLLED = ParticipantEnrolled(
    participant_id="p-1", phone="+14155552671", channel="sms", timezone="UTC", intervention="w"
)


def fold(*datas: EventData) -> dict[str, Any]:
    row: dict[str, Any] | None = None
    for n, data in enumerate((ENROLLED, *datas), start=1):
        at = T0 + timedelta(minutes=n)
        row = participants.apply(
            row, Event(n, f"e-{n}", "participant:p-1", n, data, {}, None, at, at)
        )
    assert row is not None
    return row


def asked(outbox_id: str, index: int | None) -> MeasurementAsked:
    return MeasurementAsked(
        measurement="walked",
        timer_id=f"t-{outbox_id}",
        outbox_id=outbox_id,
        answer_by=T0 + timedelta(hours=2),
        decision=None if index is None else "walk_prompt",
        index=index,
    )


def recorded(outbox_id: str, value: str) -> MeasurementRecorded:
    return MeasurementRecorded(measurement="walked", value=value, outbox_id=outbox_id)


def questions(row: dict[str, Any]) -> dict[str, Any]:
    return dict(row["step_counters"].get("outcome_questions") or {})


def test_an_answer_is_kept_for_the_point_whose_question_it_answers() -> None:
    row = fold(asked("q0", 0), recorded("q0", "Yes"), asked("q1", 1), recorded("q1", "No"))
    assert questions(row) == {
        "walk_prompt:0": {"outbox_id": "q0", "value": "Yes"},
        "walk_prompt:1": {"outbox_id": "q1", "value": "No"},
    }


def test_a_reply_after_the_next_question_went_out_answers_that_one() -> None:
    row = fold(asked("q0", 0), asked("q1", 1), recorded("q1", "Yes"))
    assert questions(row) == {
        "walk_prompt:0": {"outbox_id": "q0"},
        "walk_prompt:1": {"outbox_id": "q1", "value": "Yes"},
    }


def test_an_answer_to_another_message_is_no_points_answer() -> None:
    row = fold(asked("q0", 0), recorded("elsewhere", "Yes"))
    assert questions(row) == {"walk_prompt:0": {"outbox_id": "q0"}}


def test_a_question_asked_by_no_decision_point_keeps_no_entry() -> None:
    row = fold(asked("q0", None), recorded("q0", "Yes"))
    assert questions(row) == {} and row["step_counters"]["measurements"] == {"walked": "Yes"}


def test_the_points_outcome_removes_its_entry_and_only_its_own() -> None:
    done = DecisionOutcome(decision="walk_prompt", index=0, status="observed", value="Yes")
    row = fold(asked("q0", 0), recorded("q0", "Yes"), asked("q1", 1), done)
    assert questions(row) == {"walk_prompt:1": {"outbox_id": "q1"}}


def test_an_earlier_questions_missed_window_leaves_the_later_question_asking() -> None:
    missed = MeasurementMissed(measurement="walked", timer_id="t-x", outbox_id="q0")
    row = fold(asked("q0", 0), asked("q1", 1), missed)
    assert row["step_counters"]["asking"]["outbox_id"] == "q1"
    assert (
        fold(asked("q1", 1), MeasurementMissed(**{**missed.model_dump(), "outbox_id": "q1"}))[
            "step_counters"
        ]["asking"]
        is None
    )
