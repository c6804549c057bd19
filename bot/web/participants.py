"""The researcher API's writes: enroll, update and unenroll participants.

The blueprint is in `participant_api`, the reads in `participant_reads`. Handlers only record
events (in one transaction each);
the first message of an enrollment is written later by the worker, so no request ever waits
for an LLM.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from flask import Response, g

from bot.channel import erasure, outbound, withdrawal
from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.core.phone_zone import choose_timezone
from bot.store.event_store import ConcurrencyError, ConstraintViolation, EventStore, Transaction
from bot.store.event_types import (
    MessageSuppressed,
    ParticipantEnrolled,
    ParticipantStatusChanged,
    ParticipantUnenrolled,
    ParticipantUpdated,
)
from bot.store.events import EventData, NewEvent, new_id, participant_stream
from bot.store.queries import enrolled_with_phone, pending_outbox, pending_timers
from bot.timers import lifecycle
from bot.web import auth
from bot.web.api_models import (
    EnrollRequest,
    ErasedOut,
    EraseRequest,
    EraseResponse,
    ErrorResponse,
    ParticipantPath,
    ParticipantResponse,
    UpdateRequest,
    WithdrawRequest,
)
from bot.web.current import interventions
from bot.web.participant_api import (
    BODY_ERRORS,
    ERRORS,
    Refused,
    api,
    canonical_id,
    current_services,
    ok,
    participant_response,
)

log = logging.getLogger(__name__)
ATTEMPTS = 3
PROFILE_FIELDS = (
    "name",
    "gender",
    "ethnicity",
    "background",
    "timezone",
    "debug",
    "intervention",
    "channel",
)


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
    _check_intervention(body.intervention or settings.intervention)
    if _phone_taken(services.store, phone):
        raise Refused(409, "Participant with this phone number already enrolled", "phone_number")
    timezone, timezone_source = choose_timezone(body.timezone, phone, settings.default_timezone)
    data = ParticipantEnrolled(
        participant_id=new_id(),
        phone=phone,
        channel=body.channel,
        timezone=timezone,
        timezone_source=timezone_source,
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
    assert row is not None  # appended just above
    return participant_response(row, "Conversation participant enrolled successfully", 201)


def _check_intervention(slug: str) -> None:
    """A 400 naming the usable slugs unless `slug` exists and validates."""
    refusal = interventions().refusal(slug)
    if refusal is not None:
        raise Refused(400, refusal, "intervention")


@api.put(
    "/<participant_id>",
    summary="Update a participant",
    responses={200: ParticipantResponse, 409: ErrorResponse, **BODY_ERRORS},
)
def update_participant(path: ParticipantPath, body: UpdateRequest) -> tuple[Response, int]:
    """Change the given fields; a status change also pauses, resumes or ends their timers."""
    participant_id = canonical_id(path.participant_id)
    services = current_services()
    if body.intervention is not None:
        _check_intervention(body.intervention)

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
    participant_id = canonical_id(path.participant_id)
    services = current_services()
    notice_text = services.settings.unregister_notice

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData | NewEvent]:
        decided: list[EventData | NewEvent] = [
            MessageSuppressed(outbox_id=outbox_id, reason="unenrolled")
            for outbox_id in pending_outbox(tx.conn, participant_id)
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
    return participant_response(
        row,
        "Participant unenrolled (not deleted): nothing more is sent, pending timers are "
        "cancelled, and their data is kept",
    )


@api.post(
    "/<participant_id>/withdraw",
    summary="Withdraw a participant (stop all contact, keep the data)",
    responses={200: ParticipantResponse, 409: ErrorResponse, **BODY_ERRORS},
)
def withdraw(path: ParticipantPath, body: WithdrawRequest) -> tuple[Response, int]:
    """Record who asked and why; suppress every unsent message and cancel every timer. Their
    data stays readable (a withdrawal is not an erasure). A second withdrawal is a 409."""
    participant_id = canonical_id(path.participant_id)
    services = current_services()

    def decide(tx: Transaction, row: dict[str, Any]) -> Sequence[EventData | NewEvent]:
        try:
            return withdrawal.withdraw(
                row,
                pending_timers(tx.conn, participant_id),
                pending_outbox(tx.conn, participant_id),
                body.reason,
                body.requested_by,
                services.clock.now(),
            )
        except withdrawal.NotWithdrawable as exc:
            raise Refused(409, str(exc), "participant_id") from None

    row = _in_transaction(services.store, participant_id, decide)
    log.info("participant %s withdrawn", participant_id)
    return participant_response(row, "Participant withdrawn: no further contact; data kept")


@api.post(
    "/<participant_id>/erase",
    summary="Erase a participant's personal data (crypto-shredding; cannot be undone)",
    responses={200: EraseResponse, 409: ErrorResponse, **BODY_ERRORS},
)
def erase(path: ParticipantPath, body: EraseRequest) -> tuple[Response, int]:
    """Destroy the participant's data key: every personal field of their events (phone, name,
    messages, profile, LLM prompts) reads `[erased]` from then on, in this API, the transcript,
    exports and replay; their stored rows are rebuilt without it; unsent messages are
    suppressed and timers cancelled. `confirm` must repeat the participant id (400 otherwise).
    Who asked and why are recorded. 409: already erased, no TANDEM_MASTER_KEY, or events
    recorded before the key was set."""
    participant_id = canonical_id(path.participant_id)
    services = current_services()
    try:
        done = erasure.erase(
            services.store,
            participant_id,
            confirm=body.confirm,
            reason=body.reason,
            requested_by=body.requested_by,
            actor=getattr(g, "actor", auth.INSECURE_ACTOR),
        )
    except erasure.NotErasable as exc:
        raise Refused(exc.status, str(exc), exc.field) from None
    result = ErasedOut(
        participant_id=done.participant_id,
        sealed_events=done.sealed_events,
        rows_rewritten=done.rows_rewritten,
        suppressed=done.suppressed,
        cancelled=done.cancelled,
        files_scrubbed=bool(done.files.get("vacuumed")) and done.files.get("wal_truncated", True),
    )
    message = "Participant erased: their personal data reads [erased] everywhere"
    return ok(EraseResponse(status="ok", message=message, result=result), 200)


def _new(data: EventData | NewEvent) -> NewEvent:
    if isinstance(data, NewEvent):
        return data
    return NewEvent(data, meta={"actor": getattr(g, "actor", auth.INSECURE_ACTOR)})


def _in_transaction(
    store: EventStore,
    participant_id: str,
    decide: Callable[[Transaction, dict[str, Any]], Sequence[EventData | NewEvent]],
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
                if row["status"] == "erased":
                    raise Refused(409, "the participant was erased: nothing can change", "status")
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
        return enrolled_with_phone(conn, phone, store.sealer.phones) is not None
