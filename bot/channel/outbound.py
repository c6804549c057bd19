"""Building outbound messages: a text becomes one or more `message.queued` events, in order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from bot.core.addresses import format_address
from bot.core.segments import MAX_BODY, split_body
from bot.store.event_types.messages import MessageKind, MessageQueued
from bot.store.events import new_id


def to_participant(
    participant: Mapping[str, Any], body: str, kind: MessageKind = "reply"
) -> list[MessageQueued]:
    """Queue `body` for a participant on their channel; bodies over 1600 characters are split
    on sentence boundaries into several messages, in order."""
    return to_address(
        format_address(participant["channel"], participant["phone"]),
        participant["channel"],
        body,
        kind,
        to_participant=True,
    )


def to_address(
    address: str,
    channel: str,
    body: str,
    kind: MessageKind,
    *,
    to_participant: bool = False,
    alert_severity: Literal["info", "warning", "critical"] | None = None,
) -> list[MessageQueued]:
    """Queue `body` for any address (a supervisor's or a developer's phone, say)."""
    return [
        MessageQueued(
            outbox_id=new_id(),
            to_address=address,
            channel=channel,
            kind=kind,
            body=part,
            to_participant=to_participant,
            alert_severity=alert_severity,
        )
        for part in split_body(body, MAX_BODY)
    ]
