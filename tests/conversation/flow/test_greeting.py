"""On enrollment the active module greets from an explicit trigger, recorded as the greeting."""

from __future__ import annotations

from collections.abc import Callable

from bot.conversation.module import ENROLLED
from modules import intake
from tests.conversation.flow.conftest import Conversation
from tests.fakes.openai_api import ScriptedReply


def test_enrollment_is_greeted_from_a_system_trigger_not_a_fake_user_message(
    conversation: Conversation,
) -> None:
    conversation.fake.script(
        ScriptedReply.text("Hi Ana! I'm your habit coach. What would you like to work on?")
    )
    conversation.enroll(name="Ana")

    assert conversation.run() == 1

    (request,) = conversation.fake.requests
    roles = [m["role"] for m in request.messages]
    assert roles == ["system", "system"]
    assert request.messages[-1]["content"] == ENROLLED
    assert "Name: Ana" in request.messages[0]["content"]
    greeting = conversation.queued()
    assert [(m.kind, m.body) for m in greeting] == [
        ("greeting", "Hi Ana! I'm your habit coach. What would you like to work on?")
    ]


def test_a_greeting_that_cannot_be_retried_is_the_greeting_fallback_and_is_recorded(
    make_conversation: Callable[..., Conversation],
) -> None:
    conversation = make_conversation(TURN_RETRY_MINUTES="off")
    conversation.fake.script(ScriptedReply.error(503, "overloaded"))
    conversation.enroll()

    conversation.run()

    greeting = intake.MODULE.prompt.greeting_fallback
    assert greeting is not None and greeting != intake.MODULE.prompt.fallback
    assert [(m.kind, m.body) for m in conversation.queued()] == [("greeting", greeting)]
    (failed,) = conversation.data("turn.failed")
    assert failed.reason == "LLM call failed: HTTP 503: overloaded"
    assert failed.fallback == greeting


def test_a_participant_enrolled_by_their_own_message_gets_one_answer_not_a_greeting_too(
    conversation: Conversation,
) -> None:
    conversation.fake.script(ScriptedReply.text("Welcome! Walking is a great habit to build."))
    conversation.enroll(source="auto")
    conversation.receive("I want to walk more")

    assert conversation.run() == 2

    assert [(m.kind, m.body) for m in conversation.queued()] == [
        ("reply", "Welcome! Walking is a great habit to build.")
    ]
    (request,) = conversation.fake.requests
    assert request.messages[-1] == {"role": "user", "content": "I want to walk more"}
    assert "start of the conversation" in request.messages[0]["content"]
