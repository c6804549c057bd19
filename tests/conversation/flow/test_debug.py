"""Debug traces: only for participants in debug mode, and always after the reply."""

from __future__ import annotations

from datetime import timedelta

from bot.timers import one_shot
from tests.conversation.flow.conftest import PHONE, Conversation
from tests.fakes.openai_api import ScriptedReply


def feedback_turn(conversation: Conversation) -> None:
    conversation.receive("all set, check on me tomorrow")
    conversation.fake.script(
        ScriptedReply.tool_calls(
            [("transition_state", {"target_state": "feedback", "reason": "intake complete"})]
        ),
        ScriptedReply.text("Great, talk tomorrow!"),
    )
    conversation.run()


def test_a_participant_in_debug_mode_gets_the_trace_after_the_reply(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto", debug=True)

    feedback_turn(conversation)

    reply, trace = conversation.queued()
    assert (reply.kind, reply.body) == ("reply", "Great, talk tomorrow!")
    assert (trace.kind, trace.to_address, trace.to_participant) == ("debug", PHONE, False)
    lines = trace.body.splitlines()
    assert lines[0] == "🐛 DEBUG: state intake → feedback · module intake"
    assert lines[1].startswith("tool transition_state ok: Conversation state transitioned")
    assert lines[2].startswith("llm: 2 call(s), ") and lines[2].endswith(" ms")


def test_a_participant_not_in_debug_mode_never_gets_a_trace(conversation: Conversation) -> None:
    conversation.enroll(source="auto", debug=False)

    feedback_turn(conversation)

    assert [m.kind for m in conversation.queued()] == ["reply"]


def test_a_phone_in_debug_phones_gets_traces_without_the_flag(make_conversation) -> None:
    conversation = make_conversation(DEBUG_PHONES=PHONE)
    conversation.enroll(source="auto", debug=False)

    feedback_turn(conversation)

    assert [m.kind for m in conversation.queued()] == ["reply", "debug"]


def test_the_trace_of_a_failed_turn_says_why_the_fallback_was_sent(make_conversation) -> None:
    conversation = make_conversation(DEBUG_PHONES="+14155550000," + PHONE)
    conversation.enroll(source="auto")
    conversation.receive("hello")
    conversation.fake.script(ScriptedReply.error(500, "down"))

    conversation.run()

    fallback, trace = conversation.queued()
    assert fallback.kind == "reply"
    assert "tools: none" in trace.body
    assert "llm: 1 call(s), 0+0 tokens" in trace.body and "1 failed" in trace.body
    assert trace.body.endswith("turn failed: LLM call failed: HTTP 500; fallback sent")
    assert "down" not in trace.body  # the provider's error body stays in the event
    [called] = conversation.data("llm.called")
    assert called.error == "HTTP 500: down"


def test_the_trace_never_shows_the_llms_internal_address_when_it_is_down(
    make_conversation,
) -> None:
    conversation = make_conversation(
        DEBUG_PHONES=PHONE, OPENAI_BASE_URL="http://127.0.0.1:9/internal/v1"
    )
    conversation.enroll(source="auto")
    conversation.receive("hello")

    conversation.run()

    fallback, trace = conversation.queued()
    assert fallback.kind == "reply"
    assert "could not connect to the server" in trace.body
    assert "127.0.0.1" not in trace.body and ":9" not in trace.body
    assert "internal" not in trace.body


def test_a_timer_that_messages_the_participant_is_traced_after_its_message(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto", debug=True)
    due = conversation.clock.now() + timedelta(minutes=5)
    conversation.append(one_shot.at(conversation.participant(), due, "Study closes Friday"))

    conversation.clock.advance(timedelta(minutes=6))
    conversation.fire_timers()
    conversation.run()

    notice, trace = conversation.queued()
    assert (notice.kind, trace.kind) == ("notice", "debug")
    assert trace.body.startswith("🐛 DEBUG: state intake · module timer at\ntools: none")
