"""The researcher API's blueprint and its writes: enroll, update and unenroll participants.

The reads are in `participant_reads`. Handlers only record events (in one transaction each);
the first message of an enrollment is written later by the worker, so no request ever waits
for an LLM.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

from flask import Response, g, jsonify, request
from flask_openapi3 import APIBlueprint, OpenAPI, Tag
from pydantic import BaseModel
from sqlalchemy import and_, select

from bot import lifecycle, outbound
from bot.event_types import (
    MessageSuppressed,
    ParticipantEnrolled,
    ParticipantStatusChanged,
    ParticipantUnenrolled,
    ParticipantUpdated,
)
from bot.events import EventData, NewEvent, new_id, participant_stream
from bot.messaging.addresses import InvalidPhoneNumber, canonical_phone
from bot.store import ConcurrencyError, ConstraintViolation, EventStore, Transaction
from bot.store.queries import enrolled_with_phone, pending_timers
from bot.store.schema import outbox
from bot.web import auth
from bot.web.api_models import (
    EnrollRequest,
    ErrorResponse,
    FieldError,
    ParticipantOut,
    ParticipantPath,
    ParticipantResponse,
    UpdateRequest,
    error_response,
)

log = logging.getLogger(__name__)
TAG = Tag(name="participants", description="Enroll participants and read their conversations")
MAX_BODY = 64 * 1024
ATTEMPTS = 3
PROFILE_FIELDS = ("name", "gender", "ethnicity", "background", "timezone", "debug", "intervention")
ERRORS: dict[int, type[BaseModel]] = {400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse}
BODY_ERRORS: dict[int, type[BaseModel]] = {**ERRORS, 413: ErrorResponse, 415: ErrorResponse}

api = APIBlueprint(
    "participants",
    __name__,
    url_prefix="/conversation/participants",
    abp_tags=[TAG],
    abp_security=auth.SECURITY,
)


class Refused(Exception):
    """A request that cannot be carried out; becomes the error envelope with `code`."""

    def __init__(self, code: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = f"{field}: {message}" if field else message
        self.errors = [FieldError(field=field, message=message)] if field else None


def register(app: OpenAPI) -> None:
    """Register the participants API on the app; refuses to without a token (see auth)."""
    from bot.web import participant_reads  # noqa: F401  (adds its routes to `api`)

    auth.check_startup(app.extensions["tandem"].settings)
    app.register_api(api)


def current_services() -> Any:
    from bot.web import services

    return services()


@api.before_request
def _guard() -> Response | tuple[Response, int] | None:
    """Authenticate first, then insist on a JSON object body where one is expected."""
    refused = auth.require_token(current_services().settings)
    if refused is not None:
        return refused
    if request.method not in ("POST", "PUT"):
        return None
    request.max_content_length = MAX_BODY  # also caps a body sent without Content-Length
    if (request.content_length or 0) > MAX_BODY:
        return error_response(413, f"body: larger than {MAX_BODY // 1024} KB")
    if not request.is_json:
        return error_response(415, "body: send JSON with Content-Type: application/json")
    try:
        payload = json.loads(request.get_data())
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        return error_response(400, f"body: invalid JSON ({exc})")
    except RecursionError:
        return error_response(400, "body: invalid JSON (nested too deeply)")
    if not isinstance(payload, dict):
        return error_response(400, "body: must be a JSON object")
    return None


@api.errorhandler(Refused)
def _refused(exc: Refused) -> tuple[Response, int]:
    return error_response(exc.code, exc.message, exc.errors)


def ok(model: BaseModel, code: int = 200) -> tuple[Response, int]:
    body = model.model_dump(mode="json")
    if body.get("message") is None:
        body.pop("message", None)
    return jsonify(body), code


def participant_response(
    row: dict[str, Any], message: str | None = None, code: int = 200
) -> tuple[Response, int]:
    out = ParticipantResponse(status="ok", message=message, result=ParticipantOut.from_row(row))
    return ok(out, code)


def _canonical_id(raw: str) -> str:
    """The id as stored, or a 404: a string that is not a UUID names no participant."""
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise Refused(404, "Participant not found", "participant_id") from None


def participant_row(store: EventStore, participant_id: str) -> dict[str, Any]:
    row = store.projection_row("participants", _canonical_id(participant_id))
    if row is None:
        raise Refused(404, "Participant not found", "participant_id")
    return row


@api.post(
    "",
    summary="Enroll a participant",
    responses={201: ParticipantResponse, 409: ErrorResponse, **BODY_ERRORS},
)
def enroll(body: EnrollRequest) -> tuple[Response, int]:
    """Record `participant.enrolled`; the worker sends the first message shortly after."""
    services = current_services()
    settings = services.settings
    try:
        phone = canonical_phone(body.phone_number, settings.default_region)
    except InvalidPhoneNumber as exc:
        raise Refused(400, f"invalid phone number: {exc}", "phone_number") from None
    if _phone_taken(services.store, phone):
        raise Refused(409, "Participant with this phone number already enrolled", "phone_number")
    data = ParticipantEnrolled(
        participant_id=new_id(),
        phone=phone,
        channel=body.channel,
        timezone=body.timezone or settings.default_timezone,
        intervention=body.intervention or settings.intervention,
        conversation_state="intake",
        name=body.name,
        gender=body.gender,
        ethnicity=body.ethnicity,
        background=body.background,
        debug=body.debug,
        source="api",
    )
    stream_id = participant_stream(data.participant_id)
    try:
        services.store.append(stream_id, [_new(data)], expected_version=0)
    except ConstraintViolation:
        # Enrolled by a concurrent request between the check and the append.
        raise Refused(
            409, "Participant with this phone number already enrolled", "phone_number"
        ) from None
    log.info("participant %s enrolled (%s)", data.participant_id, data.channel)
    row = services.store.projection_row("participants", data.participant_id)
    return participant_response(row, "Conversation participant enrolled successfully", 201)


@api.put(
    "/<participant_id>",
    summary="Update a participant",
    responses={200: ParticipantResponse, 409: ErrorResponse, **BODY_ERRORS},
)
def update_participant(path: ParticipantPath, body: UpdateRequest) -> tuple[Response, int]:
    """Change the given fields; a status change also pauses, resumes or ends their timers."""
    participant_id = _canonical_id(path.participant_id)
    services = current_services()

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData | NewEvent]:
        given = body.model_dump(include=body.model_fields_set)
        changes = {k: v for k, v in given.items() if k in PROFILE_FIELDS and row.get(k) != v}
        decided: list[EventData | NewEvent] = (
            [ParticipantUpdated(changes=changes)] if changes else []
        )
        status = given.get("status")
        if status is not None and status != row["status"]:
            decided.append(ParticipantStatusChanged(status=status, reason="researcher (API)"))
            after = {**row, **changes, "status": status}
            decided += lifecycle.on_status_change(
                after,
                pending_timers(tx.conn, participant_id),
                status,
                services.clock.now(),
                events=tx.load(participant_stream(participant_id)),
            )
        return decided

    row = _in_transaction(services.store, participant_id, decide)
    return participant_response(row, "Participant updated successfully")


@api.delete(
    "/<participant_id>",
    summary="Unenroll a participant",
    responses={200: ParticipantResponse, 409: ErrorResponse, **ERRORS},
)
def unenroll(path: ParticipantPath) -> tuple[Response, int]:
    """Cancel what is pending, send the unregister notice and mark them unenrolled; their
    events are kept. A second DELETE is a 404: they are no longer enrolled."""
    participant_id = _canonical_id(path.participant_id)
    services = current_services()
    notice_text = services.settings.unregister_notice

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData | NewEvent]:
        decided: list[EventData | NewEvent] = [
            MessageSuppressed(outbox_id=outbox_id, reason="unenrolled")
            for outbox_id in _pending_outbox(tx, participant_id)
        ]
        after = {**row, "status": "unenrolled"}
        decided += lifecycle.on_status_change(
            after,
            pending_timers(tx.conn, participant_id),
            "unenrolled",
            services.clock.now(),
            events=tx.load(participant_stream(participant_id)),
        )
        if notice_text.strip() and not row["opted_out"]:
            decided += outbound.to_participant(row, notice_text, kind="notice")
        decided.append(ParticipantUnenrolled(reason="researcher (API)"))
        return decided

    row = _in_transaction(services.store, participant_id, decide)
    log.info("participant %s unenrolled", participant_id)
    return participant_response(row, "Participant deleted successfully")


def _new(data: EventData | NewEvent) -> NewEvent:
    if isinstance(data, NewEvent):
        return data
    return NewEvent(data, meta={"actor": getattr(g, "actor", auth.INSECURE_ACTOR)})


def _in_transaction(
    store: EventStore,
    participant_id: str,
    decide: Callable[[Transaction, dict[str, Any]], list[EventData | NewEvent]],
) -> dict[str, Any]:
    """Decide on the participant's current row and append in one transaction; on a concurrent
    change, decide again (a few times) before answering 409."""
    projection = next(p for p in store.projections if p.name == "participants")
    stream_id = participant_stream(participant_id)
    for _attempt in range(ATTEMPTS):
        try:
            with store.transaction() as tx:
                row = tx.row(projection, participant_id)
                if row is None:
                    raise Refused(404, "Participant not found", "participant_id")
                if row["status"] == "unenrolled":
                    raise Refused(404, "Participant is no longer enrolled", "participant_id")
                decided = decide(tx, dict(row))
                if decided:
                    tx.append(stream_id, [_new(e) for e in decided], row["version"])
        except ConcurrencyError:
            continue
        found = store.projection_row("participants", participant_id)
        assert found is not None
        return found
    raise Refused(409, "the participant changed during the request; try again")


def _phone_taken(store: EventStore, phone: str) -> bool:
    with store.reading() as conn:
        return enrolled_with_phone(conn, phone) is not None


def _pending_outbox(tx: Transaction, participant_id: str) -> list[str]:
    query = select(outbox.c.outbox_id).where(
        and_(
            outbox.c.participant_id == participant_id, outbox.c.status.in_(("pending", "deferred"))
        )
    )
    return [r.outbox_id for r in tx.conn.execute(query.order_by(outbox.c.position))]
