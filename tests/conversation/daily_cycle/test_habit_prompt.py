"""Scenario 11: a scheduled habit prompt goes out with its question and what follows it."""

from __future__ import annotations

from datetime import UTC, timedelta

from bot.conversation.daily_cycle.prompt import REMINDER_TEXT
from bot.timers.schedules import create_daily
from tests.conversation.daily_cycle.conftest import GENERATED, CycleHarness, FakeCompleter, local

DID = "Did you do it?\n1. Done\n2. Next time"
INTENSITY = "How's the intensity?\n1. Decrease\n2. Keep current\n3. Increase"


def _prompted(cycle: CycleHarness) -> str:
    person = cycle.enroll_with_profile()
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    return person["participant_id"]


def test_the_prompt_goes_out_ten_minutes_early_with_its_questions(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    assert cycle.queued(pid) == [GENERATED, DID, INTENSITY]
    kinds = [e.data.kind for e in cycle.events(pid, "message.queued")]
    assert kinds == ["prompt", "question", "question"]
    asked = cycle.events(pid, "question.asked")
    assert [(q.data.kind, q.data.options) for q in asked] == [
        ("did_you_do_it", ["Done", "Next time"]),
        ("intensity", ["Decrease", "Keep current", "Increase"]),
    ]


def test_the_generator_is_asked_for_a_scheduled_prompt_from_the_profile(
    cycle: CycleHarness, completer: FakeCompleter
) -> None:
    pid = _prompted(cycle)
    (request,) = completer.requests
    assert "scheduled daily prompt" in request.system
    assert "Anchor: after coffee" in request.user
    (called,) = cycle.events(pid, "llm.called")
    assert called.data.purpose == request.purpose == "daily_habit_prompt"


def test_the_prompt_counts_and_is_remembered_in_the_profile(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    profile = cycle.participant(pid)["profile"]
    assert profile["total_prompts"] == 1
    assert profile["last_prompt"] == GENERATED
    assert profile["last_prompt_at"] == local("09:20").astimezone(UTC).isoformat()


def test_a_reminder_in_five_hours_and_a_move_to_feedback_in_five_minutes_are_set(
    cycle: CycleHarness,
) -> None:
    pid = _prompted(cycle)
    (prompt,) = cycle.events(pid, "message.queued")[:1]
    pending = {t["kind"]: t for t in cycle.timers(pid, "scheduled")}
    assert pending["reminder"]["due_at"] == local("14:20")
    assert pending["reminder"]["scope"] == prompt.data.outbox_id
    assert pending["reminder"]["payload"]["text"] == REMINDER_TEXT
    assert pending["transition"]["due_at"] == local("09:25")
    assert pending["transition"]["payload"]["to_state"] == "feedback"
    assert pending["daily"]["due_at"] == local("09:20") + timedelta(days=1)


def test_the_next_day_brings_a_freshly_generated_prompt(
    cycle: CycleHarness, completer: FakeCompleter
) -> None:
    completer.replies = [GENERATED, '"Before lunch, try 5 squats — it keeps you going."']
    pid = _prompted(cycle)
    cycle.until(local("09:20") + timedelta(days=1), timedelta(minutes=30))
    prompts = cycle.queued(pid, "prompt")
    assert prompts == [GENERATED, "Before lunch, try 5 squats — it keeps you going."]
    assert cycle.participant(pid)["profile"]["total_prompts"] == 2


def test_other_daily_timers_keep_the_built_in_handler(cycle: CycleHarness) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.append(pid, create_daily(person, "09:00", "daily", {"text": "Step 2"}, cycle.clock.now()))
    cycle.until(local("09:00"))
    assert cycle.queued(pid) == ["Step 2"]
    assert cycle.events(pid, "question.asked", "llm.called") == []
