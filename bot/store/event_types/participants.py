"""Participant lifecycle events: enrollment, updates, status, consent and unenrollment."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import Field, field_validator

from bot.store.events import EventData, event, fields

Channel = Literal["sms", "whatsapp"]
Status = Literal["active", "paused", "completed", "withdrawn"]
Requester = Literal["participant", "researcher", "ethics_board", "other"]

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
    personal = fields("phone", "name", "gender", "ethnicity", "background")
    plain = fields("timezone", "intervention", "conversation_state")

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
    personal = fields("changes")

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
    personal = fields("reason")

    status: Status
    reason: str | None = None


@event("participant.withdrawn")
class ParticipantWithdrawn(EventData):
    """The participant left the study: no more contact and no timers, and their data is kept
    (they may have consented to the use of what was collected). Erasure is a separate act."""

    personal = fields("reason")

    reason: str
    requested_by: Requester


@event("participant.erased")
class ParticipantErased(EventData):
    """The participant's data key was destroyed: every personal field of their events reads
    `[erased]` from now on, their projections were rebuilt without it, and nothing more is
    sent. Who asked and why stay readable (so say nothing personal in `reason`)."""

    personal = fields()
    plain = fields("reason")

    reason: str
    requested_by: Requester
    # How many of the participant's events had sealed personal fields when the key went.
    sealed_events: int = 0


@event("participant.unenrolled")
class ParticipantUnenrolled(EventData):
    personal = fields("reason")

    reason: str | None = None


@event("participant.opted_out")
class ParticipantOptedOut(EventData):
    """The participant asked for no more messages (STOP, OptOutType, or Twilio error 21610)."""

    personal = fields()
    plain = fields("keyword")

    source: Literal["keyword", "opt_out_type", "error_21610", "operator"]
    keyword: str | None = None


@event("participant.opted_in")
class ParticipantOptedIn(EventData):
    """The participant asked to receive messages again (START family)."""

    personal = fields()
    plain = fields("keyword")

    source: Literal["keyword", "opt_out_type", "operator"]
    keyword: str | None = None
