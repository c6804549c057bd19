"""When a queued message reached its provider, read from a participant's stream (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.store.event_types.messages import MessageSent, MessageStatus
from bot.store.events import Event

# A status callback can arrive before `message.sent` is recorded (Twilio is fast, the
# dispatcher's transaction slow); any of these says the provider had the message.
SENT = frozenset({"sent", "delivered", "read"})


def sent_version(events: Sequence[Event], outbox_id: str) -> int | None:
    """The stream version at which the message queued as `outbox_id` was first known sent
    (`message.sent`, or a status callback saying sent, delivered or read), or None."""
    for ev in events:
        data = ev.data
        if isinstance(data, MessageSent) and data.outbox_id == outbox_id:
            return ev.stream_version
        if isinstance(data, MessageStatus) and data.outbox_id == outbox_id and data.status in SENT:
            return ev.stream_version
    return None


def sent_before(events: Sequence[Event], outbox_id: str, version: int | None) -> bool:
    """Whether the message queued as `outbox_id` had been sent before stream version `version`
    (None: at all). A reply recorded at `version` can only answer a message the participant
    had received."""
    sent = sent_version(events, outbox_id)
    return sent is not None and (version is None or sent < version)
