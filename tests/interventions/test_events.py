"""Intervention events round-trip, and the participants projection folds them into the step
columns: where the participant is, what was judged, noted and measured."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.store.event_types.interventions import (
    JudgementRecorded,
    MeasurementRecorded,
    MeasurementRejected,
    NoteTaken,
    StepEntered,
    StepTurnTaken,
)
from bot.store.event_types.timers import MeasurementAsked, MeasurementMissed
from bot.store.events import EventData, decode, encode
from tests.modules.step_harness import Run

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
EXAMPLES = [
    StepEntered(intervention="good", step="explore", from_step="welcome", condition="x", turns=0),
    StepTurnTaken(step="explore", turn=2),
    JudgementRecorded(judgement="ready", result={"answer": "yes"}, step="welcome"),
    NoteTaken(note="summary", values={"SUMMARY": "Walks daily."}),
    MeasurementRecorded(measurement="mood", value=7),
    MeasurementRejected(measurement="mood", reason="no number", attempt=1),
]


@pytest.mark.parametrize("data", EXAMPLES, ids=lambda d: d.event_type)
def test_an_intervention_event_round_trips_through_its_stored_form(data: EventData) -> None:
    assert decode(data.event_type, data.schema_version, encode(data)) == data


def test_entering_steps_counts_visits_and_resets_the_turns_of_the_visit() -> None:
    run = Run()
    run.record([StepEntered(intervention="good", step="welcome", via="root")])
    run.record([StepTurnTaken(step="welcome", turn=1), StepTurnTaken(step="welcome", turn=2)])
    run.record([StepEntered(intervention="good", step="explore", from_step="welcome")])
    run.record([StepEntered(intervention="good", step="welcome", from_step="explore")])

    counters = run.row["step_counters"]
    assert run.row["current_step"] == "welcome"
    assert (counters["turns"], counters["total_turns"]) == (0, 2)
    assert counters["visits"] == {"welcome": 2, "explore": 1}


def test_judgements_and_notes_keep_their_latest_values() -> None:
    run = Run()
    run.record([JudgementRecorded(judgement="ready", result={"answer": "no"})])
    run.record([JudgementRecorded(judgement="ready", result={"answer": "yes"})])
    run.record([NoteTaken(note="summary", values={"SUMMARY": "one", "OTHER": "two"})])
    run.record([NoteTaken(note="summary", values={"SUMMARY": "three"})])

    assert run.row["judgements"] == {"ready": {"answer": "yes"}}
    assert run.row["notes"] == {"SUMMARY": "three", "OTHER": "two"}


def test_a_question_waits_for_its_answer_until_recorded_missed_or_given_up() -> None:
    run = Run()
    asked = MeasurementAsked(measurement="mood", timer_id="t", outbox_id="o", answer_by=NOW)
    run.record([asked, MeasurementRejected(measurement="mood", reason="?", attempt=1)])
    assert run.row["step_counters"]["asking"]["attempts"] == 1

    run.record([MeasurementRecorded(measurement="mood", value=6)])
    assert run.row["step_counters"]["asking"] is None
    assert run.row["step_counters"]["measurements"] == {"mood": 6}

    run.record([asked, MeasurementMissed(measurement="mood", timer_id="t2", outbox_id="o")])
    assert run.row["step_counters"]["asking"] is None
