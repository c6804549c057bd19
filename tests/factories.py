"""Small builders of event payloads for tests."""

from __future__ import annotations

import uuid

from bot.store.event_types import MessageReceived, ParticipantEnrolled


def enrolled(phone: str = "+14155552671", **changes: object) -> ParticipantEnrolled:
    values: dict[str, object] = {
        "participant_id": str(uuid.uuid4()),
        "phone": phone,
        "timezone": "America/Toronto",
        "intervention": "demo",
    }
    values.update(changes)
    return ParticipantEnrolled(**values)


def received(sid: str = "SM0001", body: str = "hi", phone: str = "+14155552671") -> MessageReceived:
    return MessageReceived(
        message_sid=sid,
        from_address=phone,
        to_address="+15005550006",
        channel="sms",
        body=body,
    )
