"""The transcript the LLM sees: every message to the participant, marked by kind; nothing else."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.conversation.transcript_llm import chat_messages
from bot.store.event_types.conversation import LLMCalled
from bot.store.event_types.messages import Media, MessageQueued, MessageReceived
from bot.store.events import Event, EventData, new_id

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def stream(*items: EventData | tuple[EventData, int]) -> list[Event]:
    """Events in order; a (data, minute) pair sets when it was recorded."""
    events = []
    for n, item in enumerate(items, start=1):
        data, minute = item if isinstance(item, tuple) else (item, n)
        at = T0 + timedelta(minutes=minute)
        events.append(Event(n, new_id(), "participant:p", n, data, {}, None, at, at))
    return events


def inbound(body: str, media: list[Media] | None = None) -> MessageReceived:
    return MessageReceived(
        message_sid=new_id(),
        from_address="+1",
        to_address="+2",
        channel="sms",
        body=body,
        media=media or [],
    )


def outbound(body: str, kind: str = "reply", to_participant: bool = True) -> MessageQueued:
    return MessageQueued(
        outbox_id=new_id(),
        to_address="+1",
        channel="sms",
        kind=kind,
        body=body,
        to_participant=to_participant,
    )


def test_scheduled_prompts_reminders_and_questions_are_shown_marked_by_kind() -> None:
    events = stream(
        outbound("Hi! What habit?", "greeting"),
        inbound("walking"),
        outbound("After coffee, walk 1 minute.", "prompt"),
        outbound("Did you do it? 1 Done 2 Next time", "question"),
        outbound("Friendly check-in", "reminder"),
        outbound("Study closes Friday", "notice"),
    )

    assert chat_messages(events) == [
        {"role": "assistant", "content": "Hi! What habit?"},
        {"role": "user", "content": "walking"},
        {"role": "assistant", "content": "[scheduled prompt] After coffee, walk 1 minute."},
        {"role": "assistant", "content": "[question] Did you do it? 1 Done 2 Next time"},
        {"role": "assistant", "content": "[reminder] Friendly check-in"},
        {"role": "assistant", "content": "[notice] Study closes Friday"},
    ]


def test_debug_traces_supervisor_alerts_and_model_reasoning_are_left_out() -> None:
    thinking = LLMCalled(
        call_id="c", purpose="intake", model="m", response={"thinking": "secret plan"}
    )
    events = stream(
        inbound("hi"),
        thinking,
        outbound("Hello!"),
        outbound("🐛 DEBUG: state intake", "debug", to_participant=False),
        outbound("Tandem alert about participant p", "alert", to_participant=False),
    )

    assert chat_messages(events) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello!"},
    ]


def test_the_current_message_comes_last_and_later_ones_wait_for_their_own_turn() -> None:
    events = stream(inbound("first"), inbound("second"))
    assert chat_messages(events, current=events[0]) == [{"role": "user", "content": "first"}]

    events = stream(inbound("first"), inbound("second"), outbound("Answer to first"))
    assert chat_messages(events, current=events[1]) == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "Answer to first"},
        {"role": "user", "content": "second"},
    ]


def test_media_is_noted_in_the_participants_message() -> None:
    photo = Media(url="https://m.example/1", content_type="image/jpeg")
    events = stream(inbound("my walk", [photo]), inbound("", [photo]))

    assert [m["content"] for m in chat_messages(events)] == [
        "my walk [sent an attachment: image/jpeg]",
        "[sent an attachment: image/jpeg]",
    ]


def test_a_long_message_split_for_sending_is_shown_whole() -> None:
    events = stream((outbound("Part one."), 1), (outbound("Part two."), 1), inbound("ok"))

    assert chat_messages(events)[0] == {"role": "assistant", "content": "Part one. Part two."}


def test_the_limit_keeps_the_latest_earlier_messages_and_zero_keeps_none() -> None:
    events = stream(*[inbound(f"m{n}") for n in range(6)])
    current = events[-1]

    assert [m["content"] for m in chat_messages(events, current=current, limit=2)] == [
        "m3",
        "m4",
        "m5",
    ]
    assert chat_messages(events, current=current, limit=0) == [{"role": "user", "content": "m5"}]
