"""Timer turns through the flow: delayed transitions, the daily prompt, and replies to it."""

from __future__ import annotations

from datetime import timedelta

from bot.store.event_types.conversation import ProfileSaved, StateTransitioned
from bot.timers import one_shot
from bot.timers.schedules import create_daily
from tests.conversation.flow.conftest import Conversation
from tests.fakes.openai_api import ScriptedReply
from tools.scheduler import FALLBACK_TEXT

PROMPT = "After your coffee, walk for one minute — it clears your head. Would that feel doable?"
PROFILE = {
    "habit_domain": "walking",
    "motivational_frame": "clear head",
    "preferred_time": "07:30",
    "prompt_anchor": "after coffee",
}


def test_a_delayed_transition_moves_the_conversation_when_its_timer_fires(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    conversation.receive("ask me tomorrow how it went")
    conversation.fake.script(
        ScriptedReply.tool_calls(
            [("transition_state", {"target_state": "feedback", "delay_minutes": 30})]
        ),
        ScriptedReply.text("Will do!"),
    )
    conversation.run()
    assert conversation.participant()["conversation_state"] == "intake"

    conversation.clock.advance(timedelta(minutes=31))
    conversation.fire_timers()
    conversation.run()

    (requested,) = conversation.data("transition.requested")
    assert conversation.data("state.transitioned") == [
        StateTransitioned(from_state="intake", to_state="feedback", source="timer")
    ]
    assert requested.to_state == "feedback"
    assert conversation.participant()["conversation_state"] == "feedback"
    assert len(conversation.fake.requests) == 2  # a timer turn makes no LLM call of its own


def test_a_transition_to_where_the_conversation_already_is_changes_nothing(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    participant = conversation.participant()
    conversation.append(
        one_shot.transition(participant, "intake", timedelta(minutes=5), conversation.clock.now())
    )

    conversation.clock.advance(timedelta(minutes=6))
    conversation.fire_timers()
    conversation.run()

    assert len(conversation.data("transition.requested")) == 1
    assert conversation.data("state.transitioned") == []


def test_a_reply_cancels_the_pending_reminder(conversation: Conversation) -> None:
    conversation.enroll(source="auto")
    participant = conversation.participant()
    reminder = one_shot.reminder(
        participant, "about", timedelta(hours=5), "Friendly check-in", conversation.clock.now()
    )
    conversation.append(reminder)
    conversation.receive("hi")
    conversation.fake.script(ScriptedReply.text("Hello!"))

    conversation.run()

    (cancelled,) = conversation.data("timer.cancelled")
    assert (cancelled.timer_id, cancelled.reason) == (reminder.timer_id, "answered")


def test_the_daily_prompt_its_answer_and_the_feedback_turn_after_it(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")  # 07:00 in Toronto
    conversation.append(ProfileSaved(changes=PROFILE))
    payload = {"purpose": "habit_prompt", "type": "fixed", "habit_time": "07:30"}
    payload |= {"prep_minutes": 10, "text": FALLBACK_TEXT}
    now = conversation.clock.now()
    conversation.append(*create_daily(conversation.participant(), "07:20", "daily", payload, now))
    conversation.fake.script(ScriptedReply.text(PROMPT))

    conversation.clock.advance(timedelta(minutes=20))
    conversation.fire_timers()
    conversation.run()
    assert conversation.bodies("prompt") == [PROMPT]
    conversation.send()  # "Did you do it?" reaches the participant: it can be answered
    conversation.clock.advance(timedelta(minutes=6))
    conversation.fire_timers()
    conversation.run()
    assert conversation.participant()["conversation_state"] == "feedback"

    conversation.receive("1")
    conversation.fake.script(ScriptedReply.text("Brilliant! What helped today?"))
    conversation.run()

    (reported,) = conversation.data("habit.reported")
    assert reported.done
    assert conversation.participant()["profile"]["success_count"] == 1
    request = conversation.fake.requests[-1]
    system = request.messages[0]["content"]
    assert "feedback coach" in system
    assert 'Their answer to "Did you do it?": Done.' in system
    assert "Daily prompts sent so far: 1; done: 1." in system
    shown = [m["content"] for m in request.messages[1:]]
    assert f"[scheduled prompt] {PROMPT}" in shown
    assert shown[-1] == "1"
    assert any(m.startswith("[question] Did you do it?") for m in shown)
    reasons = [c.reason for c in conversation.data("timer.cancelled")]
    assert "answered" in reasons  # the no-reply reminder
    assert conversation.bodies("reply") == ["Brilliant! What helped today?"]
