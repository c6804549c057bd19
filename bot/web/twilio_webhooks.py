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
from sqlalchemy import Connection, select
from sqlalchemy.exc import IntegrityError

from bot.channel import inbound, status_callbacks
from bot.channel.inbound import Append, InvalidForm
from bot.channel.keywords import Keyword
from bot.channel.signature import HEADER, check_signature
from bot.core.config import ConfigError, Settings
from bot.store.event_store import (
    AppendResult,
    ConcurrencyError,
    ConstraintViolation,
    EventStore,
    Transaction,
)
from bot.store.events import participant_stream
from bot.store.queries import enrolled_with_phone, pending_timers
from bot.store.schema import outbox
from bot.web.current import services

log = logging.getLogger(__name__)

TAG = Tag(name="twilio", description=f"Webhooks Twilio calls, signed with {HEADER}")
INBOUND_PATH = "/webhooks/twilio/inbound"
STATUS_PATH = "/webhooks/twilio/status"
EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>'
# A stream that moved (the worker appended) or a race on a new participant's phone: decide again.
ATTEMPTS = 5
RESPONSES: dict[str, Any] = {
    "200": {"description": "Recorded (or a redelivery, already recorded): an empty <Response/>"},
    "400": {"description": "The form is malformed; the message says how"},
    "403": {"description": f"Missing or wrong {HEADER}; nothing is recorded"},
}


def register(app: OpenAPI) -> None:
    """Register the webhooks; refuse to start when signatures cannot be checked."""
    settings: Settings = app.extensions["tandem"].settings
    verifying = _verifying(settings)

    @app.post(
        INBOUND_PATH, tags=[TAG], summary="An inbound SMS or WhatsApp message", responses=RESPONSES
    )
    def twilio_inbound():  # noqa: ANN202
        form = _verified_form("inbound", verifying)
        message = _parsed("inbound", inbound.parse_message, form)
        svc = services()

        def plan(tx: Transaction) -> Append:
            now = svc.clock.now()
            # One read: the participant by phone, under their stream's lock, to decide on.
            found = enrolled_with_phone(tx.conn, message.sender.e164, lock=True)
            if found is None:
                return inbound.decide(message, None, [], svc.settings, now)
            pid = found["participant_id"]
            participant = tx.adopt_head(participant_stream(pid), found)
            # Only STOP and START act on pending timers; other messages need not read them.
            acts = message.keyword in (Keyword.STOP, Keyword.START)
            pending = pending_timers(tx.conn, pid) if acts else []
            history = partial(tx.load, participant_stream(pid))
            return inbound.decide(message, participant, pending, svc.settings, now, history)

        _record(svc.store, plan, message.message.message_sid)
        return _empty_twiml()

    @app.post(STATUS_PATH, tags=[TAG], summary="A delivery status callback", responses=RESPONSES)
    def twilio_status():  # noqa: ANN202
        form = _verified_form("status", verifying)
        report = _parsed(
            "status",
            lambda f: status_callbacks.parse_status(f, request.args.get("outbox_id")),
            form,
        )
        svc = services()

        def plan(tx: Transaction) -> Append:
            row = _outbox_row(tx.conn, report.outbox_id, report.message_sid)
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
        except (ConcurrencyError, ConstraintViolation, IntegrityError) as exc:
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


def _empty_twiml() -> Response:
    return Response(EMPTY_TWIML, status=200, content_type="text/xml; charset=utf-8")


def _outbox_row(conn: Connection, outbox_id: str | None, sid: str) -> dict[str, Any] | None:
    """The outbox row a callback reports on: by the outbox_id we put in the StatusCallback URL,
    else by the MessageSid Twilio gave when we sent it."""
    for column, value in ((outbox.c.outbox_id, outbox_id), (outbox.c.provider_sid, sid)):
        if value:
            row = conn.execute(select(outbox).where(column == value)).first()
            if row:
                return dict(row._mapping)
    return None
