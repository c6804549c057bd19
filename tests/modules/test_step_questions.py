"""Questions: asked by a timer, answered deterministically where possible and by the LLM
otherwise, validated, recorded as `measurement.recorded`, clarified when invalid."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.interventions.interpreter.questions import numbered, parse
from bot.interventions.language.format import Question
from bot.store.event_types.interventions import (
    MeasurementRecorded,
    MeasurementRejected,
    StepTurnTaken,
)
from bot.store.event_types.messages import MessageQueued
from bot.store.event_types.timers import MeasurementAsked, TimerCancelled, TimerScheduled
from bot.store.projections.timers import pending_rows
from tests.interventions.variants import variant
from tests.modules.step_harness import Run, in_explore

MOOD = "How is your mood today, from 1 (very low) to 10 (very good)?"


def asked(run: Run) -> Run:
    """The daily mood question of the good fixture has just gone out at 20:00."""
    run.later(hours=11)
    sent = run.fire("measurement")
    assert [m.body for m in sent if isinstance(m, MessageQueued)] == [MOOD]
    assert [type(e) for e in sent][-2:] == [MeasurementAsked, TimerScheduled]
    return run


def test_a_clear_answer_is_recorded_without_the_llm_and_thanked() -> None:
    run = asked(in_explore(Run()))
    turns_before, calls_before = len(run.data(StepTurnTaken)), len(run.llm.calls)

    reply = run.say("7")

    assert reply == "Thanks, noted."
    assert [(m.measurement, m.value, m.method) for m in run.data(MeasurementRecorded)] == [
        ("mood", 7, "parsed")
    ]
    assert run.row["step_counters"]["measurements"] == {"mood": 7}
    assert len(run.data(StepTurnTaken)) == turns_before and len(run.llm.calls) == calls_before


def test_an_answer_in_words_is_read_by_the_llm() -> None:
    run = asked(in_explore(Run()))
    run.llm.answers("question:mood", 8)

    run.say("pretty good today, I'd say")

    assert [(m.value, m.method) for m in run.data(MeasurementRecorded)] == [(8, "llm")]
    prompt = run.llm.call("question:mood")["messages"][0]["content"]
    assert "They replied: pretty good today, I'd say" in prompt


def test_an_invalid_answer_is_clarified_then_left_to_the_step() -> None:
    run = asked(in_explore(Run()))
    run.llm.answers("question:mood", None)
    run.llm.says("step:explore:reply", "Let's keep going.")

    clarify = run.say("what do you mean?")
    carry_on = run.say("no idea")

    assert clarify == f"Sorry, I didn't catch that. {MOOD}"
    assert carry_on == "Let's keep going."
    rejected = [(r.attempt, r.final) for r in run.data(MeasurementRejected)]
    assert rejected == [(1, False), (2, True)]
    assert run.row["step_counters"]["asking"] is None


def test_after_the_answer_window_a_message_is_an_ordinary_turn() -> None:
    run = asked(in_explore(Run()))
    run.later(hours=2, minutes=1)
    run.llm.says("step:explore:reply", "Good evening!")

    assert run.say("7") == "Good evening!"
    assert run.data(MeasurementRecorded) == []


def test_an_ask_action_asks_a_question_later_through_a_timer(tmp_path: Path) -> None:
    folder = variant(
        tmp_path,
        "steps/welcome.md",
        replace=("  - schedule: mood", "  - ask: mood\n    after: 30m"),
    )
    run = Run(folder)

    run.start()

    timer = [t for t in run.data(TimerScheduled) if t.kind == "measurement"][0]
    assert (timer.due_at - run.now).total_seconds() == 30 * 60
    assert timer.payload == {"measurement": "mood", "text": MOOD, "answer_minutes": 120.0}


def test_scheduling_a_question_that_is_already_scheduled_does_nothing(tmp_path: Path) -> None:
    folder = variant(
        tmp_path,
        "steps/explore.md",
        replace=("notes: [summary]", "notes: [summary]\non_enter:\n  - schedule: mood"),
    )
    run = in_explore(Run(folder))  # welcome and explore both schedule the mood question

    schedules = [t for t in run.data(TimerScheduled) if t.kind == "measurement"]
    assert len(schedules) == 1


def test_an_ask_leaves_a_daily_schedule_of_the_same_question_alone(tmp_path: Path) -> None:
    folder = variant(
        tmp_path,
        "steps/explore.md",
        replace=("notes: [summary]", "notes: [summary]\non_enter:\n  - ask: mood\n    after: 1h"),
    )
    run = in_explore(Run(folder))  # welcome schedules mood daily; explore asks it once

    pending = [t for t in pending_rows(run.events) if t["kind"] == "measurement"]
    assert sorted(bool(t["payload"].get("schedule_id")) for t in pending) == [False, True]
    assert run.data(TimerCancelled) == []


OPTIONS = Question(title="Feeling", text="How do you feel?", answer="options",
                   options=["Calm", "Worried", "Very low"])  # fmt: skip
SCALE = Question(title="Mood", text="Mood 1-10?", answer="scale", min=1, max=10)


@pytest.mark.parametrize(
    ("question", "reply", "value"),
    [
        (OPTIONS, "2", "Worried"),
        (OPTIONS, "very low!", "Very low"),
        (OPTIONS, "4", None),
        (OPTIONS, "a bit anxious", None),
        (SCALE, "7", 7),
        (SCALE, "7/10", 7),
        (SCALE, "about a 6 out of 10", None),
        (SCALE, "between 6 and 7", None),
        (SCALE, "11", None),
    ],
)
def test_answers_read_without_the_llm(question: Question, reply: str, value: object) -> None:
    assert parse(question, reply) == value


def test_an_options_question_is_sent_with_its_options_numbered() -> None:
    assert numbered(OPTIONS, "How do you feel?") == (
        "How do you feel?\n1. Calm\n2. Worried\n3. Very low"
    )


def test_a_message_while_the_question_is_held_waits_for_the_question_not_a_second_copy() -> None:
    """The message that opens WhatsApp's window is not the answer to a question not yet seen,
    and the step does not answer it with the question again: the held one is on its way."""
    run = in_explore(Run())
    run.sending = False  # WhatsApp's window is closed: the question waits in the outbox
    asked(run)
    run.llm.says("step:explore:reply", "Good evening!")

    assert not run.say("7")
    assert run.data(MeasurementRecorded) == []

    run.send()
    assert run.say("7") == "Thanks, noted."
    assert [m.value for m in run.data(MeasurementRecorded)] == [7]
