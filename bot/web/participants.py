"""The researcher API's writes: enroll, update, unenroll, withdraw and erase participants.

The blueprint is in `participant_api`, the reads in `participant_reads`. Each handler turns
the request into a call of the act in `bot.services` and its result (or `Refused`) into the
response; the first message of an enrollment is written later by the worker, so no request
ever waits for an LLM.
"""

from __future__ import annotations

import logging

from flask import Response, g

from bot.services import enrollment, erasure, participant_update, unenrollment, withdrawal
from bot.services.refusal import Refused as ServiceRefused
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
from bot.web.current import interventions, studies
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
CODES = {"invalid": 400, "conflict": 409, "not_found": 404}
API_FIELDS = {"phone": "phone_number"}  # the service's field names as this API's body says them


@api.post(
    "",
    summary="Enroll a participant",
    responses={201: ParticipantResponse, 409: ErrorResponse, **BODY_ERRORS},
)
def enroll(body: EnrollRequest) -> tuple[Response, int]:
    """Record `participant.enrolled` (in a study, with `participant.allocated`: the arm is
    drawn then, and answered unless the study is blinded); the worker sends the first
    message shortly after, or, inside the participant's quiet hours, at their end
    (`welcome_at`)."""
    services = current_services()
    fields = body.model_dump()
    asked = enrollment.Enrollment(phone=fields.pop("phone_number"), **fields)
    try:
        done = enrollment.enroll(
            services.store,
            services.settings,
            interventions(),
            asked,
            source="api",
            actor=_actor(),
            studies=studies(),
        )
    except ServiceRefused as exc:
        raise _refused(exc) from None
    enrolled = done.enrolled
    log.info("participant %s enrolled (%s)", enrolled.participant_id, enrolled.channel)
    row = services.store.projection_row("participants", enrolled.participant_id)
    assert row is not None  # just recorded
    said = "Conversation participant enrolled successfully"
    if done.welcome_at is not None:
        said += (
            f"; it is their quiet hours, so the welcome is held until "
            f"{done.welcome_at.isoformat()} (see welcome_at)"
        )
    return participant_response(row, said, 201, welcome_at=done.welcome_at)


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
        refusal = interventions().refusal(body.intervention) or enrollment.unmet_needs(
            interventions(), body.intervention, services.settings, None
        )
        if refusal is not None:
            raise Refused(400, refusal, "intervention")
    try:
        row = participant_update.update(
            services.store,
            participant_id,
            body.model_dump(include=body.model_fields_set),
            actor=_actor(),
            now=services.clock.now(),
            reason="researcher (API)",
        )
    except ServiceRefused as exc:
        raise _refused(exc) from None
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
    try:
        row = unenrollment.unenroll(
            services.store,
            participant_id,
            notice=services.settings.unregister_notice,
            reason="researcher (API)",
            actor=_actor(),
            now=services.clock.now(),
        )
    except ServiceRefused as exc:
        raise _refused(exc) from None
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
    """Record who asked and why; suppress every unsent message, cancel every timer and end an
    active takeover. Their data stays readable (a withdrawal is not an erasure). A second
    withdrawal is a 409."""
    participant_id = canonical_id(path.participant_id)
    services = current_services()
    try:
        done = withdrawal.withdraw(
            services.store,
            participant_id,
            reason=body.reason,
            requested_by=body.requested_by,
            actor=_actor(),
            now=services.clock.now(),
        )
    except ServiceRefused as exc:
        raise _refused(exc) from None
    log.info("participant %s withdrawn", participant_id)
    return participant_response(done.row, "Participant withdrawn: no further contact; data kept")


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
            actor=_actor(),
        )
    except ServiceRefused as exc:
        raise _refused(exc) from None
    result = ErasedOut(
        participant_id=done.participant_id,
        sealed_events=done.sealed_events,
        rows_rewritten=done.rows_rewritten,
        suppressed=done.suppressed,
        cancelled=done.cancelled,
        files_scrubbed=bool(done.files.get("vacuumed")) and done.files.get("wal_truncated", True),
        pending_maintenance=done.pending_maintenance,
    )
    message = f"Participant erased: their personal data reads [erased] everywhere; {done.finality}"
    return ok(EraseResponse(status="ok", message=message, result=result), 200)


def _actor() -> str:
    return getattr(g, "actor", auth.INSECURE_ACTOR)


def _refused(exc: ServiceRefused) -> Refused:
    """The service's refusal as this API's error envelope."""
    field = API_FIELDS.get(exc.field, exc.field) if exc.field else None
    others = {API_FIELDS.get(f, f): m for f, m in (exc.problems or {}).items()}
    return Refused(CODES[exc.kind], exc.message, field, others)
