"""Crisis language gets the safety reply and texts the supervisors before any LLM call."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.conversation.crisis import ALERTED_TEXT
from bot.core.config import DEFAULT_HELPLINE_TEXT
from tests.conversation.flow.conftest import PHONE, SUPERVISOR, Conversation
from tests.fakes.openai_api import ScriptedReply

CRISIS = "honestly I want to kill myself"


def test_a_crisis_message_gets_the_safety_reply_and_alerts_supervisors_without_the_llm(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    conversation.receive(CRISIS)

    conversation.run()

    assert conversation.fake.requests == []
    (notice,) = conversation.queued("notice")
    assert notice.to_participant and DEFAULT_HELPLINE_TEXT in notice.body
    (alert,) = conversation.data("alert.raised")
    assert (alert.kind, alert.severity, alert.rule, alert.notify_supervisors) == (
        "crisis",
        "critical",
        "en.suicide.direct",
        True,
    )
    assert "kill" not in alert.summary
    (text,) = conversation.queued("alert")
    assert (text.to_address, text.to_participant) == (SUPERVISOR, False)
    assert f"tandem events --participant {conversation.pid}" in text.body
    assert f"/conversation/participants/{conversation.pid}/messages" in text.body
    assert PHONE not in text.body and "kill" not in text.body
    assert conversation.queued("reply") == []


@pytest.mark.parametrize(
    "everyday",
    ["this workout is killing me", "I could kill for a coffee right now", "dead tired today"],
)
def test_everyday_phrases_go_to_the_llm_as_usual(conversation: Conversation, everyday: str) -> None:
    conversation.enroll(source="auto")
    conversation.receive(everyday)
    conversation.fake.script(ScriptedReply.text("Ha, I hear you!"))

    conversation.run()

    assert len(conversation.fake.requests) == 1
    assert conversation.data("alert.raised") == []
    assert conversation.bodies() == ["Ha, I hear you!"]


def test_supervisors_are_texted_at_most_once_per_window_but_every_alert_is_recorded(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    for minutes in (0, 10, 15):  # at 0, 10 and 25 minutes
        conversation.clock.advance(timedelta(minutes=minutes))
        conversation.receive(CRISIS)
        conversation.run()
    assert len(conversation.data("alert.raised")) == 3
    assert len(conversation.queued("alert")) == 1

    conversation.clock.advance(timedelta(minutes=6))  # 31 minutes after the first text
    conversation.receive(CRISIS)
    conversation.run()
    assert len(conversation.queued("alert")) == 2
    assert len(conversation.queued("notice")) == 4  # the participant always gets the reply


def test_with_safety_continue_turn_the_llm_answers_after_the_safety_reply(
    make_conversation,
) -> None:
    conversation = make_conversation(SAFETY_CONTINUE_TURN="true")
    conversation.enroll(source="auto")
    conversation.receive(CRISIS)
    conversation.fake.script(ScriptedReply.text("I'm really glad you told me."))

    conversation.run()

    assert [m.kind for m in conversation.queued() if m.to_participant] == ["notice", "reply"]
    (request,) = conversation.fake.requests
    assert request.messages[-2] == {"role": "user", "content": CRISIS}
    assert request.messages[-1]["role"] == "system"
    assert "already been sent" in request.messages[-1]["content"]


def test_the_safety_message_and_helpline_are_settings(make_conversation) -> None:
    conversation = make_conversation(
        SAFETY_MESSAGE="Please reach out now. {helpline}", HELPLINE_TEXT="Call 116 123."
    )
    conversation.enroll(source="auto")
    conversation.receive(CRISIS)

    conversation.run()

    assert conversation.bodies("notice") == ["Please reach out now. Call 116 123."]


def test_an_alert_raised_by_the_model_texts_the_supervisors(conversation: Conversation) -> None:
    conversation.enroll(source="auto")
    conversation.receive("I need to talk to a real person about the study")
    conversation.fake.script(
        ScriptedReply.tool_calls(
            [("alert_supervisor", {"summary": "Asks to talk to a person about the study."})]
        ),
        ScriptedReply.text("I've asked the study team to get in touch."),
    )

    conversation.run()

    (text,) = conversation.queued("alert")
    assert text.to_address == SUPERVISOR
    assert "tool (warning): Asks to talk to a person about the study." in text.body


def test_without_supervisor_phones_the_alert_is_still_recorded(make_conversation) -> None:
    conversation = make_conversation(SUPERVISOR_PHONES="")
    conversation.enroll(source="auto")
    conversation.receive(CRISIS)

    conversation.run()

    assert len(conversation.data("alert.raised")) == 1
    assert conversation.queued("alert") == []
    assert len(conversation.queued("notice")) == 1


def test_with_a_supervisor_route_the_safety_reply_says_the_team_was_alerted(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    conversation.receive(CRISIS)

    conversation.run()

    (body,) = conversation.bodies("notice")
    assert body.endswith(f"{DEFAULT_HELPLINE_TEXT} {ALERTED_TEXT}")


@pytest.mark.parametrize("phones", ["", "none"])
def test_without_a_supervisor_route_the_safety_reply_gives_only_the_resources(
    make_conversation, phones: str
) -> None:
    conversation = make_conversation(SUPERVISOR_PHONES=phones)
    conversation.enroll(source="auto")
    conversation.receive(CRISIS)

    conversation.run()

    (body,) = conversation.bodies("notice")
    assert body.endswith(DEFAULT_HELPLINE_TEXT)
    assert "study team" not in body


def test_without_a_supervisor_route_the_continued_turn_is_told_nobody_was_alerted(
    make_conversation,
) -> None:
    conversation = make_conversation(SAFETY_CONTINUE_TURN="true", SUPERVISOR_PHONES="")
    conversation.enroll(source="auto")
    conversation.receive(CRISIS)
    conversation.fake.script(ScriptedReply.text("I'm really glad you told me."))

    conversation.run()

    (request,) = conversation.fake.requests
    assert "do not say they were" in request.messages[-1]["content"]
