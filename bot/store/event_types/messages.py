"""Message events: received, queued for sending, sent, failed, suppressed, and delivery status."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bot.store.event_types.participants import Channel
from bot.store.events import EventData, event, fields

MessageKind = Literal[
    "reply",
    "greeting",
    "prompt",
    "reminder",
    "question",
    "notice",
    "alert",
    "debug",
    "help",
    "staff",  # written by a staff member during a takeover (bot.console)
    "broadcast",  # one recipient's message of a broadcast (bot.services.broadcasts)
]
DeliveryStatus = Literal[
    "accepted",
    "scheduled",
    "queued",
    "sending",
    "sent",
    "delivered",
    "read",
    "receiving",
    "received",
    "undelivered",
    "failed",
    "canceled",
    "partially_delivered",
]


class Media(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    content_type: str | None = None


@event("message.received")
class MessageReceived(EventData):
    """An inbound SMS or WhatsApp message. A keyword (STOP/START/HELP) is handled by the
    webhook itself and creates no work item."""

    personal = fields("from_address", "body", "media", "profile_name", "wa_id")
    plain = fields("to_address")

    message_sid: str
    from_address: str
    to_address: str
    channel: Channel
    body: str = ""
    media: list[Media] = []
    profile_name: str | None = None
    wa_id: str | None = None
    keyword: Literal["STOP", "START", "HELP"] | None = None


@event("message.queued")
class MessageQueued(EventData):
    """A message to send; `broadcast_id` names the broadcast it belongs to, if any."""

    personal = fields("to_address", "body", "content_variables")
    plain = fields("broadcast_id")

    outbox_id: str
    to_address: str
    channel: Channel
    kind: MessageKind = "reply"
    body: str | None = None
    content_sid: str | None = None
    content_variables: dict[str, str] | None = None
    to_participant: bool = True
    broadcast_id: str | None = None
    # An alert text to supervisors: the severity of the most severe alert it is about, so the
    # texting limit applies within a severity and never holds back a more severe alert.
    alert_severity: Literal["info", "warning", "critical"] | None = None


@event("message.sent")
class MessageSent(EventData):
    outbox_id: str
    provider_sid: str
    segments: int | None = None
    attempt: int = 1


@event("message.failed")
class MessageFailed(EventData):
    personal = fields("error_message")

    outbox_id: str
    error_code: int | None = None
    error_message: str
    permanent: bool = True
    outcome_unknown: bool = False
    attempt: int = 1
    retry_at: datetime | None = None


@event("message.status")
class MessageStatus(EventData):
    provider_sid: str
    status: DeliveryStatus
    outbox_id: str | None = None
    error_code: int | None = None


@event("message.suppressed")
class MessageSuppressed(EventData):
    """A queued message that will not be sent (opted out, unenrolled, paused), and why."""

    personal = fields()
    plain = fields("reason")

    outbox_id: str
    reason: str


@event("message.deferred")
class MessageDeferred(EventData):
    """A queued message held back (e.g. the WhatsApp 24-hour window is closed) until `until`
    or until the participant writes again."""

    personal = fields()
    plain = fields("reason")

    outbox_id: str
    reason: str
    until: datetime | None = None
