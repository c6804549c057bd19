"""The researcher API's pydantic models (requests, responses, the envelope) and its 400s."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal

from flask import Response, jsonify
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bot.core.localtime import validate_timezone

Channel = Literal["sms", "whatsapp"]
SettableStatus = Literal["active", "paused", "completed", "withdrawn"]
Status = Literal["active", "paused", "completed", "withdrawn", "unenrolled", "erased"]
SLUG = r"^[a-z0-9][a-z0-9_-]{0,99}$"
MAX_OFFSET = 1_000_000
MAX_SEQ = 2**53


def _blank_is_none(value: object) -> object:
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _iana(value: str | None) -> str | None:
    if value is not None:
        validate_timezone(value)
    return value


class _Body(BaseModel):
    """A JSON body: exact types (no "true" for true), unknown fields refused."""

    model_config = ConfigDict(extra="forbid", strict=True, str_strip_whitespace=True)


class EnrollRequest(_Body):
    """Enroll a participant: only `phone_number` is required."""

    phone_number: str = Field(
        min_length=1,
        max_length=64,
        description="E.164 (+14155552671) or national format read in DEFAULT_REGION.",
    )
    channel: Channel = Field("sms", description="How the participant is messaged.")
    name: str | None = Field(None, max_length=200)
    gender: str | None = Field(None, max_length=200)
    ethnicity: str | None = Field(None, max_length=200)
    background: str | None = Field(None, max_length=4000)
    timezone: str | None = Field(
        None, max_length=64, description="IANA name (America/Toronto); default DEFAULT_TIMEZONE."
    )
    debug: bool = Field(False, description="Send this participant's debug traces.")
    intervention: str | None = Field(
        None, pattern=SLUG, description="Intervention slug; default INTERVENTION."
    )
    study: str | None = Field(
        None,
        pattern=SLUG,
        description="Study slug (studies/<slug>/); the arm drawn decides the intervention. "
        "Default STUDY when neither study nor intervention is given.",
    )
    baseline: dict[str, Any] | None = Field(
        None,
        description="The study's baseline fields, typed as declared (choice codes as text, "
        "int and number as numbers, bool as true/false).",
    )

    _blank = field_validator("name", "gender", "ethnicity", "background", mode="before")(
        _blank_is_none
    )
    _tz = field_validator("timezone")(_iana)


def _not_nullable(schema: dict[str, Any], names: tuple[str, ...]) -> None:
    """Document `names` as the non-null type they accept, without `null` or `default: null`."""
    for name in names:
        prop = schema["properties"][name]
        options = [o for o in prop.pop("anyOf", []) if o.get("type") != "null"]
        if len(options) == 1:
            prop.update(options[0])
        elif options:
            prop["anyOf"] = options
        prop.pop("default", None)


class UpdateRequest(_Body):
    """Change some of a participant's fields; a field left out is left as it is."""

    name: str | None = Field(None, max_length=200, description='null or "" clears it.')
    gender: str | None = Field(None, max_length=200)
    ethnicity: str | None = Field(None, max_length=200)
    background: str | None = Field(None, max_length=4000)
    model_config = ConfigDict(
        json_schema_extra=lambda schema: _not_nullable(schema, UpdateRequest.NOT_NULL)
    )
    NOT_NULL: ClassVar[tuple[str, ...]] = (
        "timezone",
        "status",
        "debug",
        "intervention",
        "channel",
    )

    # Left out means "unchanged"; null is refused for these (`_not_null`; the schema agrees).
    timezone: str | None = Field(None, max_length=64, description="IANA name.")
    status: SettableStatus | None = None
    debug: bool | None = None
    intervention: str | None = Field(None, pattern=SLUG)
    channel: Channel | None = Field(
        None, description="Where replies go from now on (recorded as participant.updated)."
    )

    _blank = field_validator("name", "gender", "ethnicity", "background", mode="before")(
        _blank_is_none
    )
    _tz = field_validator("timezone")(_iana)

    @field_validator("timezone", "status", "debug", "intervention", "channel", mode="before")
    @classmethod
    def _not_null(cls, value: object) -> object:
        if value is None:
            raise ValueError("cannot be null")
        return value


class WithdrawRequest(_Body):
    """Withdraw a participant: nothing more is sent and their timers end; their data is kept."""

    reason: str = Field(min_length=1, max_length=2000, description="Why, as it will be kept.")
    requested_by: Literal["participant", "researcher", "ethics_board", "other"] = Field(
        description="Who asked for the withdrawal."
    )


class EraseRequest(_Body):
    """Erase a participant's personal data: their data key is destroyed, so every personal
    field of their events reads `[erased]` from then on. It cannot be undone."""

    confirm: str | None = Field(
        None,
        max_length=100,
        description="The participant's id, repeated: an erasure cannot be undone.",
    )
    reason: str = Field(
        min_length=1,
        max_length=2000,
        description="Why, as it will be kept (readable after the erasure: nothing personal).",
    )
    requested_by: Literal["participant", "researcher", "ethics_board", "other"] = Field(
        description="Who asked for the erasure."
    )


class ErasedOut(BaseModel):
    participant_id: str
    sealed_events: int = Field(description="Events whose personal fields now read [erased].")
    rows_rewritten: int = Field(description="Projection rows rebuilt without the plaintext.")
    suppressed: int = Field(description="Unsent messages suppressed.")
    cancelled: int = Field(description="Pending timers cancelled.")
    files_scrubbed: bool = Field(
        description="The database files were rewritten so no freed page keeps the old text "
        "(SQLite: VACUUM and WAL truncated; PostgreSQL: VACUUM, when the role owns the tables)."
    )
    pending_maintenance: bool = Field(
        False,
        description="PostgreSQL as the app role: the destroyed data key's old row version stays "
        "in the database files until the next `tandem maintenance` (run by the schema owner).",
    )


class EraseResponse(BaseModel):
    status: Literal["ok"]
    message: str
    result: ErasedOut


class ParticipantPath(BaseModel):
    participant_id: str = Field(
        description="The participant's id (a UUID).", json_schema_extra={"format": "uuid"}
    )


class ListQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Status | None = Field(
        None, description="Only this status; without it, everyone not unenrolled."
    )
    limit: int = Field(50, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class CursorQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    after: int = Field(
        0, ge=0, le=MAX_SEQ, description="Only entries after this seq (the previous next_after)."
    )
    limit: int = Field(100, ge=1, le=1000)


class ParticipantOut(BaseModel):
    id: str
    phone_number: str = Field(description="E.164.")
    channel: Channel
    status: Status
    opted_out: bool = Field(description="The participant texted STOP (and not START since).")
    timezone: str
    intervention: str | None = Field(
        description="The intervention they run (null: a blinded study's, not shown)."
    )
    study: str | None = Field(None, description="The study they were allocated in.")
    arm: str | None = Field(
        None, description="Their arm (null: in no study, or a blinded study's, not shown)."
    )
    conversation_state: str
    current_step: str | None
    name: str | None
    gender: str | None
    ethnicity: str | None
    background: str | None
    profile: dict[str, Any] = Field(
        default_factory=dict,
        description="Profile fields (set by tools, intake and interventions' `set:` actions).",
    )
    debug: bool
    enrolled_at: datetime
    created_at: datetime = Field(description="Same as enrolled_at (PromptPipe's name).")
    updated_at: datetime
    last_inbound_at: datetime | None
    version: int = Field(description="The participant's stream version.")

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ParticipantOut:
        return cls(
            id=row["participant_id"],
            phone_number=row["phone"],
            created_at=row["enrolled_at"],
            **{k: row[k] for k in cls.model_fields if k in row and k not in ("id",)},
        )


class MessageOut(BaseModel):
    """One message of the transcript, inbound or outbound."""

    seq: int = Field(description="Global seq of the event that recorded it (the cursor).")
    message_id: str = Field(description="Twilio MessageSid (inbound) or outbox id (outbound).")
    direction: Literal["inbound", "outbound"]
    channel: Channel
    kind: str = Field(description='Outbound kind (reply, prompt, notice…); inbound "message".')
    keyword: str | None = Field(description="STOP, START or HELP when the inbound was one.")
    text: str | None
    media: list[str]
    status: str = Field(description="received, pending, sent, delivered, read, failed…")
    error_code: int | None
    error_message: str | None
    segments: int | None
    provider_sid: str | None
    created_at: datetime
    created_at_local: datetime = Field(description="created_at in the participant's timezone.")
    sent_at: datetime | None
    status_at: datetime | None = Field(description="When the status last changed.")


class EventOut(BaseModel):
    seq: int
    event_id: str
    stream_version: int
    type: str
    schema_version: int
    occurred_at: datetime
    recorded_at: datetime
    idempotency_key: str | None
    data: dict[str, Any]
    meta: dict[str, Any]


class OffsetPage(BaseModel):
    limit: int
    offset: int
    total: int
    next_offset: int | None = Field(description="The offset of the next page; null at the end.")
    more: bool = Field(False, description="Whether there are entries after this page.")
    next: str | None = Field(None, description="The path of the next page; null at the end.")


class CursorPage(BaseModel):
    limit: int
    after: int
    next_after: int | None = Field(
        description="Pass as `after` for the next page; null at the end."
    )


class FieldError(BaseModel):
    field: str
    message: str


class ErrorResponse(BaseModel):
    """Every error: `message` names the field when a field is wrong."""

    status: Literal["error"]
    message: str
    errors: list[FieldError] | None = None


class ParticipantResponse(BaseModel):
    status: Literal["ok"]
    message: str | None = None
    result: ParticipantOut
    welcome_at: datetime | None = Field(
        None,
        description="Enrollment only: enrolled inside the participant's quiet hours, the "
        "welcome is held until this instant (UTC), the end of those hours; absent: it goes "
        "at once.",
    )


class ParticipantListResponse(BaseModel):
    status: Literal["ok"]
    message: str | None = Field(
        None, description="Says when there are more participants than this page holds."
    )
    result: list[ParticipantOut]
    page: OffsetPage


class MessageListResponse(BaseModel):
    status: Literal["ok"]
    result: list[MessageOut]
    page: CursorPage


class EventListResponse(BaseModel):
    status: Literal["ok"]
    result: list[EventOut]
    page: CursorPage


class FormFieldOut(BaseModel):
    key: str
    value: Any = Field(None, description="The latest value (null: not known yet).")
    type: str = Field(description="text, int, number, bool, choice, list, date or time.")
    domain: str | None
    critical: bool
    added: bool = Field(description="A field the model proposed and the engine accepted.")
    options: list[str] = Field(description="A choice's options.")
    set_at: datetime | None = Field(description="When the latest value was set.")
    message_id: str | None = Field(description="The message.received it came from.")
    message_seq: int | None


class FormOut(BaseModel):
    name: str
    title: str
    complete: bool
    fields: list[FormFieldOut]
    clock: dict[str, Any] = Field(
        description="known, wanted, critical_known, critical_total, others_known, missing, "
        "missing_critical, turns, target, left, domains ({title, turns, target, complete, "
        "known, wanted} each), domains_completed, domains_open, complete, text."
    )


class FormListResponse(BaseModel):
    status: Literal["ok"]
    result: list[FormOut]


def error_response(
    code: int, message: str, errors: list[FieldError] | None = None
) -> tuple[Response, int]:
    """The PromptPipe error envelope with an HTTP status."""
    body = ErrorResponse(status="error", message=message, errors=errors)
    return jsonify(body.model_dump(mode="json", exclude_none=True)), code


def field_errors(exc: ValidationError) -> list[FieldError]:
    """Each pydantic error as the field it concerns and a sentence about it."""
    found = []
    for err in exc.errors(include_url=False, include_input=False):
        field = ".".join(str(part) for part in err.get("loc", ())) or "body"
        kind = err.get("type")
        if kind == "missing":
            text = "is required"
        elif kind == "extra_forbidden":
            text = "is not a field of this request"
        else:
            text = str(err.get("msg", "is invalid")).removeprefix("Value error, ")
        found.append(FieldError(field=field, message=text))
    return found


def validation_error_response(exc: ValidationError) -> Response:
    """flask-openapi3's hook: a 400 envelope naming every wrong field (instead of its 422)."""
    errors = field_errors(exc)
    message = "; ".join(f"{e.field}: {e.message}" for e in errors)
    response, code = error_response(400, message, errors)
    response.status_code = code
    return response
