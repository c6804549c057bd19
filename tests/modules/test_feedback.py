"""The feedback module: its prompt shows the latest habit prompt and how it was answered."""

from __future__ import annotations

from datetime import timedelta

from bot.store.event_types.habits import HabitReported
from bot.store.event_types.messages import MessageQueued
from bot.store.events import Event, EventData, new_id
from modules import feedback
from tests.modules.stub import NOW, Recorder, context


def stream(*items: EventData) -> list[Event]:
    at = NOW - timedelta(hours=3)
    return [
        Event(n, new_id(), "participant:p1", n, data, {}, None, at, at)
        for n, data in enumerate(items, start=1)
    ]


def prompt(body: str) -> MessageQueued:
    return MessageQueued(
        outbox_id=new_id(), to_address="+1", channel="sms", kind="prompt", body=body
    )


def test_the_prompt_shows_the_latest_habit_prompt_and_its_answer() -> None:
    recorder = Recorder()
    history = stream(
        prompt("Old prompt"),
        prompt("After coffee, walk one minute."),
        HabitReported(question_id="q", done=False, answer="Next time"),
    )

    feedback.MODULE.run(context({}, recorder, history=history))

    assert 'Their latest habit prompt (Monday 06:00): "After coffee, walk one minute."' in (
        recorder.system
    )
    assert 'Their answer to "Did you do it?": Next time.' in recorder.system


def test_an_unanswered_prompt_says_so_and_no_prompt_says_nothing() -> None:
    answered_before, none = Recorder(), Recorder()
    history = stream(
        HabitReported(question_id="q", done=True, answer="Done"), prompt("Walk after lunch.")
    )

    feedback.MODULE.run(context({}, answered_before, history=history))
    feedback.MODULE.run(context({}, none))

    assert 'They have not answered "Did you do it?" yet.' in answered_before.system
    assert "latest habit prompt" not in none.system


def test_feedback_does_not_offer_the_habit_prompt_generator() -> None:
    recorder = Recorder()

    feedback.MODULE.run(context({}, recorder))

    assert "generate_habit_prompt" not in recorder.calls[0]["tools"]
    assert recorder.calls[0]["purpose"] == "feedback"
