"""The catalogue of event payloads: participant lifecycle and messages."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.events import EventData, event

Channel = Literal["sms", "whatsapp"]
Status = Literal["active", "paused", "completed", "withdrawn"]
MessageKind = Literal[
    "reply", "greeting", "prompt", "reminder", "question", "notice", "alert", "debug", "help"
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

EDITABLE_FIELDS = {
    "name": (str, type(None)),
    "gender": (str, type(None)),
    "ethnicity": (str, type(None)),
    "background": (str, type(None)),
    "timezone": (str,),
    "debug": (bool,),
    "intervention": (str,),
}


@event("participant.enrolled")
class ParticipantEnrolled(EventData):
    participant_id: str
    phone: str = Field(pattern=r"^\+[1-9]\d{6,14}$")
    channel: Channel = "sms"
    timezone: str
    intervention: str
    conversation_state: str = "intake"
    name: str | None = None
    gender: str | None = None
    ethnicity: str | None = None
    background: str | None = None
    debug: bool = False
    source: Literal["api", "auto", "cli"] = "api"


@event("participant.updated")
class ParticipantUpdated(EventData):
    changes: dict[str, Any]

    @field_validator("changes")
    @classmethod
    def _known_fields(cls, changes: dict[str, Any]) -> dict[str, Any]:
        if not changes:
            raise ValueError("no changes")
        for key, value in changes.items():
            allowed = EDITABLE_FIELDS.get(key)
            if allowed is None:
                raise ValueError(f"{key!r} cannot be updated")
            if not isinstance(value, allowed):
                raise ValueError(f"{key!r} has the wrong type")
        return changes


@event("participant.status_changed")
class ParticipantStatusChanged(EventData):
    status: Status
    reason: str | None = None


@event("participant.unenrolled")
class ParticipantUnenrolled(EventData):
    reason: str | None = None


class Media(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    content_type: str | None = None


@event("message.received")
class MessageReceived(EventData):
    message_sid: str
    from_address: str
    to_address: str
    channel: Channel
    body: str = ""
    media: list[Media] = []
    profile_name: str | None = None
    wa_id: str | None = None


@event("message.queued")
class MessageQueued(EventData):
    outbox_id: str
    to_address: str
    channel: Channel
    kind: MessageKind = "reply"
    body: str | None = None
    content_sid: str | None = None
    content_variables: dict[str, str] | None = None
    to_participant: bool = True


@event("message.sent")
class MessageSent(EventData):
    outbox_id: str
    provider_sid: str
    segments: int | None = None
    attempt: int = 1


@event("message.failed")
class MessageFailed(EventData):
    outbox_id: str
    error_code: int | None = None
    error_message: str
    permanent: bool = True
    outcome_unknown: bool = False
    attempt: int = 1


@event("message.status")
class MessageStatus(EventData):
    provider_sid: str
    status: DeliveryStatus
    outbox_id: str | None = None
    error_code: int | None = None
