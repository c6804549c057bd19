"""Twilio's webhooks: inbound messages and status callbacks, verified, recorded, answered at once.

Each request is one transaction: look the sender (or the outbox row) up, decide what to record
(`bot.channel.inbound`, `bot.channel.status_callbacks`), append it keyed by the MessageSid.
No LLM, no send.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any
from urllib.parse import quote

from flask import Response, abort, request
from flask_openapi3 import OpenAPI, Tag
from flask_openapi3.types import ResponseDict

from bot.channel import inbound, status_callbacks
from bot.channel.inbound import Append, InvalidForm
from bot.channel.keywords import Keyword
from bot.channel.signature import HEADER, check_signature
from bot.conversation import alert_acks
from bot.core.config import ConfigError, Settings
from bot.store.alert_reads import unresolved_alerts
from bot.store.errors import ConstraintRefused
from bot.store.event_store import (
    AppendResult,
    ConcurrencyError,
    ConstraintViolation,
    EventStore,
    Transaction,
)
from bot.store.events import participant_stream
from bot.store.queries import enrolled_with_phone, pending_timers, sender_with_phone
from bot.store.reads.outbox import reported_outbox_row
from bot.web.current import services

log = logging.getLogger(__name__)

TAG = Tag(name="twilio", description=f"Webhooks Twilio calls, signed with {HEADER}")
INBOUND_PATH = "/webhooks/twilio/inbound"
STATUS_PATH = "/webhooks/twilio/status"
EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>'
# A stream that moved (the worker appended) or a race on a new participant's phone: decide again.
ATTEMPTS = 5
RESPONSES: ResponseDict = {
    "200": {"description": "Recorded (or a redelivery, already recorded): an empty <Response/>"},
    "400": {"description": "The form is malformed; the message says how"},
    "403": {"description": f"Missing or wrong {HEADER}; nothing is recorded"},
    "413": {"description": "The body is larger than WEBHOOK_MAX_BODY_BYTES; nothing is recorded"},
    "503": {"description": "The database is unreachable; retry after Retry-After seconds"},
}
SIGNATURE = {
    "name": HEADER,
    "in": "header",
    "required": True,
    "description": "Twilio's HMAC-SHA1 of PUBLIC_BASE_URL + path + query and the sorted form "
    "fields, base64, with TWILIO_AUTH_TOKEN (not checked in TANDEM_INSECURE_LOCAL mode without "
    "a token).",
    "schema": {"type": "string"},
}


def _form(fields: dict[str, str], required: list[str]) -> dict[str, Any]:
    """An OpenAPI operation's form body and signature header (the handlers read the raw form,
    which the signature covers, so flask-openapi3 cannot derive them from a model)."""
    properties = {name: {"type": "string", "description": text} for name, text in fields.items()}
    schema = {"type": "object", "properties": properties, "required": required}
    return {
        "parameters": [SIGNATURE],
        "requestBody": {
            "required": True,
            "content": {"application/x-www-form-urlencoded": {"schema": schema}},
        },
    }


INBOUND_FORM = _form(
    {
        "MessageSid": "SM… (34 characters); the idempotency key",
        "From": "+E.164, or whatsapp:+E.164",
        "To": "our number, same channel as From",
        "Body": "the text (may be empty with media)",
        "NumMedia": "how many MediaUrlN/MediaContentTypeN pairs follow",
        "ProfileName": "WhatsApp profile name",
        "WaId": "WhatsApp id",
        "OptOutType": "STOP, START or HELP when Twilio's Advanced Opt-Out matched",
    },
    ["MessageSid", "From", "To"],
)
STATUS_FORM = _form(
    {
        "MessageSid": "the sid Twilio gave the send",
        "MessageStatus": "queued, sent, delivered, read, undelivered, failed, …",
        "ErrorCode": "Twilio's error code, a whole number",
    },
    ["MessageSid", "MessageStatus"],
)


def register(app: OpenAPI) -> None:
    """Register the webhooks; refuse to start when signatures cannot be checked."""
    settings: Settings = app.extensions["tandem"].settings
    verifying = _verifying(settings)
    supervisors = frozenset(settings.supervisors())

    @app.post(
        INBOUND_PATH,
        tags=[TAG],
        summary="An inbound SMS or WhatsApp message",
        responses=RESPONSES,
        openapi_extensions=INBOUND_FORM,
    )
    def twilio_inbound() -> Response:
        form = _verified_form("inbound", verifying)
        message = _parsed("inbound", inbound.parse_message, form)
        svc = services()
        if message.sender.e164 in supervisors:
            sender = message.sender.e164
            with svc.store.reading() as conn:
                is_participant = (
                    enrolled_with_phone(conn, sender, svc.store.sealer.phones) is not None
                )
            if not is_participant:
                _record_many(
                    svc.store,
                    lambda tx: alert_acks.decide(message, sender, unresolved_alerts(tx.conn)),
                    message.message.message_sid,
                )
                return _empty_twiml()

        def plan(tx: Transaction) -> Append:
            now = svc.clock.now()
            # One read: the participant by phone, under their stream's lock, to decide on.
            found = enrolled_with_phone(
                tx.conn, message.sender.e164, tx.store.sealer.phones, lock=True
            )
            if found is None:
                sender = sender_with_phone(tx.conn, message.sender.e164, tx.store.sealer.phones)
                return inbound.decide(message, None, [], svc.settings, now, sender_id=sender)
            pid = found["participant_id"]
            participant = tx.adopt_head(participant_stream(pid), found)
            # Only STOP and START act on pending timers; other messages need not read them.
            acts = message.keyword in (Keyword.STOP, Keyword.START)
            pending = pending_timers(tx.conn, pid) if acts else []
            history = partial(tx.load, participant_stream(pid))
            return inbound.decide(message, participant, pending, svc.settings, now, history)

        _record(svc.store, plan, message.message.message_sid)
        return _empty_twiml()

    @app.post(
        STATUS_PATH,
        tags=[TAG],
        summary="A delivery status callback",
        responses=RESPONSES,
        openapi_extensions=STATUS_FORM,
    )
    def twilio_status() -> Response:
        form = _verified_form("status", verifying)
        report = _parsed(
            "status",
            lambda f: status_callbacks.parse_status(f, request.args.get("outbox_id")),
            form,
        )
        svc = services()

        def plan(tx: Transaction) -> Append:
            row = reported_outbox_row(tx, report.outbox_id, report.message_sid)
            participant = None
            if row and row["participant_id"] and report.error_code == status_callbacks.UNSUBSCRIBED:
                participant = tx.lock(participant_stream(row["participant_id"]))
            pending = pending_timers(tx.conn, participant["participant_id"]) if participant else []
            return status_callbacks.decide(report, row, participant, pending, svc.clock.now())

        _record(svc.store, plan, report.message_sid)
        return _empty_twiml()


def _verifying(settings: Settings) -> tuple[str, str] | None:
    """(auth token, public base URL) to check signatures with; None only in insecure local mode."""
    token, base = settings.twilio_auth_token, settings.public_base_url
    if token and base:
        return token, base
    missing = [
        name for name, v in (("TWILIO_AUTH_TOKEN", token), ("PUBLIC_BASE_URL", base)) if not v
    ]
    if not settings.insecure_local:
        raise ConfigError(
            [f"{name} is needed to verify Twilio's webhook signatures" for name in missing]
            + ["(or set TANDEM_INSECURE_LOCAL=true for a local experiment without signatures)"]
        )
    log.warning(
        "TANDEM_INSECURE_LOCAL: Twilio webhook signatures are NOT checked (no %s)",
        " and no ".join(missing),
    )
    return None


def _verified_form(kind: str, verifying: tuple[str, str] | None) -> Mapping[str, str]:
    """The request's form, once its signature holds; otherwise answer 403 and log why."""
    form = request.form
    if verifying is not None:
        token, base = verifying
        query = request.query_string.decode("utf-8", "replace")
        check = check_signature(token, base, _raw_path(), query, form, request.headers.get(HEADER))
        if not check.ok:
            log.warning("twilio %s webhook refused (403): %s", kind, check.reason)
            abort(403, description=f"invalid {HEADER}")
    return form


def _raw_path() -> str:
    """The path as the client sent it, still percent-encoded (Werkzeug's `path` is decoded)."""
    raw = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI")
    if not raw:  # a WSGI server that keeps no raw URI: re-encode the decoded path
        return quote(request.script_root + request.path, safe="/:@!$&'()*+,;=-._~")
    path = raw.split("?", 1)[0]
    if not path.startswith("/"):  # an absolute-form request line: http://host/path
        path = "/" + path.split("://", 1)[-1].partition("/")[2]
    return path


def _parsed(kind: str, parse: Callable[[Mapping[str, str]], Any], form: Mapping[str, str]) -> Any:
    try:
        return parse(form)
    except InvalidForm as exc:
        log.warning("twilio %s webhook: malformed form (400): %s", kind, exc)
        abort(400, description=str(exc))


def _record(store: EventStore, plan: Callable[[Transaction], Append], sid: str) -> AppendResult:
    """Decide and append in one transaction; a redelivery appends nothing."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with store.transaction() as tx:
                step = plan(tx)
                result = tx.append(
                    step.stream_id, step.events, step.expected_version, step.idempotency_key
                )
        except (ConcurrencyError, ConstraintViolation, ConstraintRefused) as exc:
            if attempt == ATTEMPTS:
                raise
            log.info("twilio %s: %s, deciding again", sid, type(exc).__name__)
            continue
        if result.duplicate:
            log.info("twilio %s: already recorded, nothing appended", sid)
        else:
            types = ", ".join(e.event_type for e in result.events)
            log.info("twilio %s: recorded on %s: %s", sid, step.stream_id, types)
        return result
    raise AssertionError("unreachable")


def _record_many(store: EventStore, plan: Callable[[Transaction], list[Append]], sid: str) -> None:
    """Several appends in one transaction; the first carries the MessageSid, so a redelivery
    appends nothing at all."""
    with store.transaction() as tx:
        first, *rest = plan(tx)
        result = tx.append(first.stream_id, first.events, None, first.idempotency_key)
        if result.duplicate:
            log.info("twilio %s: already recorded, nothing appended", sid)
            return
        for step in rest:
            tx.append(step.stream_id, step.events, None, step.idempotency_key)
    log.info("twilio %s: a supervisor's message, %d append(s)", sid, 1 + len(rest))


def _empty_twiml() -> Response:
    return Response(EMPTY_TWIML, status=200, content_type="text/xml; charset=utf-8")
