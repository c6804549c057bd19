"""The flow answers with the module of the conversation state; an unknown state goes to intake."""

from __future__ import annotations

import pytest

from bot.store.event_types.conversation import StateTransitioned
from tests.conversation.flow.conftest import Conversation
from tests.fakes.openai_api import ScriptedReply


def offered_tools(conversation: Conversation) -> list[str]:
    return [tool["function"]["name"] for tool in conversation.fake.requests[-1].tools]


def system_prompt(conversation: Conversation) -> str:
    return conversation.fake.requests[-1].messages[0]["content"]


def test_a_message_in_intake_is_answered_by_the_intake_module(conversation: Conversation) -> None:
    conversation.enroll(source="auto")
    conversation.receive("hi")
    conversation.fake.script(ScriptedReply.text("Welcome! What habit would you like to build?"))

    conversation.run()

    assert "intake coach" in system_prompt(conversation)
    assert "generate_habit_prompt" in offered_tools(conversation)
    assert conversation.bodies("reply") == ["Welcome! What habit would you like to build?"]
    assert conversation.data("state.transitioned") == []


def test_a_message_in_feedback_is_answered_by_the_feedback_module(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto", conversation_state="feedback")
    conversation.receive("I did it!")
    conversation.fake.script(ScriptedReply.text("Great work! What helped?"))

    conversation.run()

    assert "feedback coach" in system_prompt(conversation)
    assert offered_tools(conversation) == [
        "save_user_profile",
        "scheduler",
        "transition_state",
        "alert_supervisor",
    ]
    assert conversation.bodies("reply") == ["Great work! What helped?"]


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        ("PROMPT_GENERATOR", "unknown conversation state 'PROMPT_GENERATOR'; routed to intake"),
    ],
)
def test_a_state_without_a_module_is_routed_to_intake_and_the_move_recorded(
    conversation: Conversation, state: str, reason: str
) -> None:
    conversation.enroll(source="auto", conversation_state=state)
    conversation.receive("hello?")
    conversation.fake.script(ScriptedReply.text("Hi! What would you like to work on?"))

    conversation.run()

    assert conversation.data("state.transitioned") == [
        StateTransitioned(from_state=state, to_state="intake", reason=reason, source="flow")
    ]
    assert conversation.participant()["conversation_state"] == "intake"
    assert "intake coach" in system_prompt(conversation)
    assert conversation.bodies("reply") == ["Hi! What would you like to work on?"]
