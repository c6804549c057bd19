"""The LLM is shown the conversation from events: all outbound kinds, within CHAT_HISTORY_LIMIT."""

from __future__ import annotations

from bot.channel import outbound
from tests.conversation.flow.conftest import SUPERVISOR, Conversation
from tests.fakes.openai_api import ScriptedReply


def chat(conversation: Conversation) -> list[dict]:
    """The last request's messages after the system prompt."""
    return conversation.fake.requests[-1].messages[1:]


def test_the_llm_sees_the_scheduled_prompt_the_participant_is_answering(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto", conversation_state="feedback")
    participant = conversation.participant()
    conversation.append(
        *outbound.to_participant(participant, "After coffee, walk for 1 minute.", kind="prompt"),
        *outbound.to_address(participant["phone"], "sms", "🐛 DEBUG: x", kind="debug"),
        *outbound.to_address(SUPERVISOR, "sms", "Tandem alert about participant", kind="alert"),
    )
    conversation.receive("did it!")
    conversation.fake.script(ScriptedReply.text("Brilliant! What helped?"))

    conversation.run()

    assert chat(conversation) == [
        {"role": "assistant", "content": "[scheduled prompt] After coffee, walk for 1 minute."},
        {"role": "user", "content": "did it!"},
    ]


def test_chat_history_limit_bounds_the_earlier_messages_shown(make_conversation) -> None:
    conversation = make_conversation(CHAT_HISTORY_LIMIT="2")
    conversation.enroll(source="auto")
    conversation.fake.script(*[ScriptedReply.text(f"answer {n}") for n in range(3)])
    for n in range(3):
        conversation.receive(f"message {n}")
        conversation.run()

    assert chat(conversation) == [
        {"role": "user", "content": "message 1"},
        {"role": "assistant", "content": "answer 1"},
        {"role": "user", "content": "message 2"},
    ]
    assert len(conversation.events("message.received")) == 3  # nothing stored is trimmed


def test_chat_history_limit_zero_shows_only_the_current_message(make_conversation) -> None:
    conversation = make_conversation(CHAT_HISTORY_LIMIT="0")
    conversation.enroll(source="auto")
    conversation.fake.script(ScriptedReply.text("first answer"), ScriptedReply.text("second"))
    conversation.receive("one")
    conversation.run()
    conversation.receive("two")
    conversation.run()

    assert chat(conversation) == [{"role": "user", "content": "two"}]


def test_chat_history_limit_minus_one_shows_every_earlier_message_as_in_promptpipe(
    make_conversation,
) -> None:
    conversation = make_conversation(CHAT_HISTORY_LIMIT="-1")
    conversation.enroll(source="auto")
    conversation.fake.script(*[ScriptedReply.text(f"answer {n}") for n in range(30)])
    for n in range(30):
        conversation.receive(f"message {n}")
        conversation.run()

    shown = chat(conversation)
    assert len(shown) == 59  # 29 earlier exchanges and the current message: more than 50
    assert shown[0] == {"role": "user", "content": "message 0"}
