"""Participant lifecycle events: enrollment, updates, status, consent and unenrollment."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import Field, field_validator

from bot.store.events import EventData, event

Channel = Literal["sms", "whatsapp"]
Status = Literal["active", "paused", "completed", "withdrawn"]

EDITABLE_FIELDS = {
    "name": (str, type(None)),
    "gender": (str, type(None)),
    "ethnicity": (str, type(None)),
    "background": (str, type(None)),
    "timezone": (str,),
    "debug": (bool,),
    "intervention": (str,),
    "channel": (str,),
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
    source: Literal["api", "auto", "cli", "console"] = "api"
    # How `timezone` was chosen: given at enrollment, inferred from a number with one zone,
    # or DEFAULT_TIMEZONE (None in events recorded before this was kept).
    timezone_source: Literal["given", "inferred", "default"] | None = None


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
            if key == "channel" and value not in get_args(Channel):
                raise ValueError(f"'channel' must be one of {get_args(Channel)}")
        return changes


@event("participant.status_changed")
class ParticipantStatusChanged(EventData):
    status: Status
    reason: str | None = None


@event("participant.withdrawn")
class ParticipantWithdrawn(EventData):
    """The participant left the study: no more contact and no timers, and their data is kept
    (they may have consented to the use of what was collected). Erasure is a separate act."""

    reason: str
    requested_by: Literal["participant", "researcher", "ethics_board", "other"]


@event("participant.unenrolled")
class ParticipantUnenrolled(EventData):
    reason: str | None = None


@event("participant.opted_out")
class ParticipantOptedOut(EventData):
    """The participant asked for no more messages (STOP, OptOutType, or Twilio error 21610)."""

    source: Literal["keyword", "opt_out_type", "error_21610", "operator"]
    keyword: str | None = None


@event("participant.opted_in")
class ParticipantOptedIn(EventData):
    """The participant asked to receive messages again (START family)."""

    source: Literal["keyword", "opt_out_type", "operator"]
    keyword: str | None = None
