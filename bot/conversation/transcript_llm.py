"""The transcript the LLM sees (pure): a participant's messages, from events, as chat messages.

Every message to the participant is in it, marked by kind: replies and greetings as they were,
other kinds with a prefix ("[scheduled prompt] …", "[reminder] …", "[question] …"). What went
to anyone else (supervisor alerts, debug traces) is not, nor is the model's reasoning (only
`llm.called` holds it). A participant's media is noted in their message. The stored history is
never trimmed; `limit` only bounds how many earlier messages one LLM call is shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.store.event_types.messages import MessageQueued, MessageReceived
from bot.store.events import Event

DEFAULT_LIMIT = 50
PREFIXES = {
    "reply": "",
    "greeting": "",
    "prompt": "[scheduled prompt] ",
    "reminder": "[reminder] ",
    "question": "[question] ",
    "notice": "[notice] ",
    "help": "[help text] ",
}
HIDDEN_KINDS = {"alert", "debug"}
ChatMessage = dict[str, str]


def chat_messages(
    events: Sequence[Event], *, current: Event | None = None, limit: int = DEFAULT_LIMIT
) -> list[ChatMessage]:
    """The last `limit` messages before this turn (0 = none, -1 = all), then `current`, the inbound
    message being answered, if any. Inbound messages that arrived after `current` are left
    out: each is answered in its own turn, which will show this one's reply before it."""
    earlier: list[ChatMessage] = []
    previous: Event | None = None
    for ev in events:
        data = ev.data
        if isinstance(data, MessageReceived):
            if current is not None and ev.stream_version >= current.stream_version:
                continue
            earlier.append({"role": "user", "content": inbound_text(data)})
            previous = ev
        elif isinstance(data, MessageQueued) and shown(data):
            text = PREFIXES.get(data.kind, f"[{data.kind}] ") + (data.body or "")
            if _continues(previous, ev):
                earlier[-1]["content"] += " " + (data.body or "")
            else:
                earlier.append({"role": "assistant", "content": text})
            previous = ev
    window = earlier[-limit:] if limit > 0 else earlier if limit < 0 else []
    if current is not None and isinstance(current.data, MessageReceived):
        window.append({"role": "user", "content": inbound_text(current.data)})
    return window


def shown(message: MessageQueued) -> bool:
    """Whether an outbound message is part of the participant's conversation."""
    return message.to_participant and message.kind not in HIDDEN_KINDS


def inbound_text(message: MessageReceived) -> str:
    """The participant's text, with any attachments noted: "[sent an attachment: image/jpeg]"."""
    notes = [f"[sent an attachment: {m.content_type or 'unknown type'}]" for m in message.media]
    return " ".join(part for part in (message.body.strip(), *notes) if part) or "[empty message]"


def _continues(previous: Event | None, ev: Event) -> bool:
    """A later part of one long message, split for sending: same kind, same append, next seq."""
    if previous is None or not isinstance(previous.data, MessageQueued):
        return False
    return (
        previous.data.kind == ev.data.kind  # type: ignore[attr-defined]  # callers pass message.queued events
        and previous.recorded_at == ev.recorded_at
        and ev.seq == previous.seq + 1
    )
