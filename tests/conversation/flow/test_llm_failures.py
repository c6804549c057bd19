"""When the LLM fails the participant still gets a sensible reply, and the events say why."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.conversation.flow import ConversationFlow
from bot.conversation.module import PromptModule
from bot.conversation.prompts import load_prompt
from bot.conversation.safety import CrisisScreen
from bot.runtime.tool_registry import TOOLS
from modules import intake
from tests.conversation.flow.conftest import Conversation
from tests.fakes.openai_api import ScriptedReply
from tests.llm_clients import chat_client

FALLBACK = intake.MODULE.prompt.fallback


def start(make_conversation, **env: str) -> Conversation:  # noqa: ANN001
    conversation = make_conversation(**env)
    conversation.enroll(source="auto")
    conversation.receive("hello")
    return conversation


@pytest.mark.parametrize(
    ("reply", "reason", "answered"),
    [
        (
            ScriptedReply.error(500, "internal error"),
            "LLM call failed: HTTP 500: internal error",
            False,
        ),
        (ScriptedReply.hang(5), "LLM call failed: timed out: no answer within 0.5 s", False),
        (ScriptedReply.empty(), "empty reply", True),
        (
            ScriptedReply.text('{"thinking": "they said hello", "content": "Hi'),
            "LLM call failed: malformed reply",
            False,
        ),
    ],
    ids=["http-500", "timeout", "empty", "malformed-wrapper"],
)
def test_a_failed_llm_call_sends_the_fallback_and_records_turn_failed(
    make_conversation, reply: ScriptedReply, reason: str, answered: bool
) -> None:
    conversation = start(make_conversation, LLM_TIMEOUT_SECONDS=reply.client_timeout)
    conversation.fake.script(reply)

    conversation.run()

    assert conversation.bodies() == [FALLBACK]
    (failed,) = conversation.data("turn.failed")
    assert failed.reason.startswith(reason)
    assert failed.fallback == FALLBACK
    (call,) = conversation.data("llm.called")
    assert call.ok is answered  # an empty answer is a valid call that said nothing


@pytest.mark.parametrize(
    ("call", "told"),
    [
        (("save_user_profile", '{"habit_domain": "walk'), "arguments are not valid JSON"),
        (("book_appointment", {"when": "today"}), "unknown tool 'book_appointment'"),
        (
            ("transition_state", {"target_state": "feedback", "delay_minutes": "soon"}),
            "delay_minutes",
        ),
    ],
    ids=["malformed-json", "unknown-tool", "wrong-type"],
)
def test_a_bad_tool_call_is_told_to_the_model_and_its_next_reply_is_sent(
    make_conversation, call: tuple[str, object], told: str
) -> None:
    conversation = start(make_conversation)
    conversation.fake.script(
        ScriptedReply.tool_calls([call]), ScriptedReply.text("Sorry, what habit would you like?")
    )

    conversation.run()

    (failure,) = conversation.data("tool.failed")
    assert told in failure.error
    tool_message = conversation.fake.requests[1].messages[-1]
    assert tool_message["role"] == "tool" and told in tool_message["content"]
    assert conversation.bodies() == ["Sorry, what habit would you like?"]
    assert conversation.data("turn.failed") == []


@pytest.mark.parametrize(
    "call",
    [
        ("save_user_profile", '{"habit_domain": "walk'),
        ("book_appointment", {"when": "today"}),
        ("transition_state", {"target_state": "feedback", "delay_minutes": "soon"}),
    ],
    ids=["malformed-json", "unknown-tool", "wrong-type"],
)
def test_a_bad_tool_call_followed_by_silence_sends_the_fallback(
    make_conversation, call: tuple[str, object]
) -> None:
    conversation = start(make_conversation)
    conversation.fake.script(ScriptedReply.tool_calls([call]), ScriptedReply.empty())

    conversation.run()

    assert [e.event_type for e in conversation.events()][-7:] == [
        "llm.called",
        "tool.failed",
        "llm.called",
        "turn.failed",
        "timer.scheduled",  # the retry (test_turn_retry.py)
        "message.queued",
        "work.completed",
    ]
    assert conversation.bodies() == [FALLBACK]


def test_the_models_reasoning_is_never_sent(make_conversation) -> None:
    conversation = start(make_conversation)
    conversation.fake.script(ScriptedReply.text("<think>they seem unsure; push gently</think>Hi!"))

    conversation.run()

    assert conversation.bodies() == ["Hi!"]
    (call,) = conversation.data("llm.called")
    assert call.response["thinking"] == "they seem unsure; push gently"


def test_a_prompt_edited_with_a_mistake_sends_the_fallback_without_calling_the_llm(
    conversation: Conversation, tmp_path: Path
) -> None:
    path = tmp_path / "intake.md"
    path.write_text(
        "---\ntools: [save_user_profile]\nfallback: One moment please.\n---\n{{ nmae }}"
    )
    module = PromptModule("intake", load_prompt(path))
    client = chat_client(conversation.fake)
    settings = conversation.services.settings
    flow = ConversationFlow(
        client, CrisisScreen.from_default(), settings, {"intake": module}, tools=TOOLS
    )
    conversation.worker.handler = flow.handle
    conversation.enroll(source="auto")
    conversation.receive("hello")

    conversation.run()
    client.close()

    assert conversation.fake.requests == []
    assert conversation.bodies() == ["One moment please."]
    (failed,) = conversation.data("turn.failed")
    assert failed.reason == "prompt 'intake': 'nmae' is undefined"
