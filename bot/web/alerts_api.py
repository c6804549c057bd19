"""`/alerts`: list alerts with filters, acknowledge and resolve them, and clear review items as
the console's review queue does: dismiss ("not a crisis") or escalate to a crisis alert
(researcher API)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from flask import Response, current_app, g, jsonify
from flask_openapi3 import APIBlueprint, OpenAPI, Tag
from pydantic import BaseModel, ConfigDict, Field

from bot.conversation.reviews import Routing
from bot.conversation.supervisors import short_code
from bot.services import alerts, reviews
from bot.services.refusal import Refused
from bot.store.alert_reads import list_alerts
from bot.web import auth
from bot.web.api_models import ErrorResponse, error_response
from bot.web.current import interventions, services

log = logging.getLogger(__name__)

TAG = Tag(name="alerts", description="Alerts for supervisors: open, acknowledged, resolved")
Status = Literal["open", "acknowledged", "resolved"]

api = APIBlueprint(
    "alerts", __name__, url_prefix="/alerts", abp_tags=[TAG], abp_security=auth.SECURITY
)


# Ids are UUIDs and kinds are words: anything else (a NUL, which PostgreSQL refuses to
# compare, or junk) is a 400 naming the field, never a query that fails with a 500.
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"


class AlertsQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Status | None = Field(None, description="Only alerts in this status.")
    participant_id: str | None = Field(None, pattern=UUID_PATTERN, description="A UUID.")
    kind: str | None = Field(None, pattern=r"^[a-z_]{1,32}$", description="e.g. crisis")
    severity: Literal["info", "warning", "critical", "review"] | None = None
    limit: int = Field(100, ge=1, le=1000)


class AlertPath(BaseModel):
    alert_id: str = Field(pattern=UUID_PATTERN, description="The alert's id (a UUID).")


class ResolveBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note: str = Field(min_length=1, max_length=2000, description="What was done about it.")


class AlertOut(BaseModel):
    alert_id: str
    code: str = Field(description='The code a supervisor replies with by SMS ("ACK 4821").')
    participant_id: str | None
    kind: str
    severity: str
    rule: str | None
    summary: str
    status: Status
    raised_at: datetime
    acknowledged_by: str | None
    acknowledged_via: str | None
    acknowledged_at: datetime | None
    resolved_by: str | None
    resolved_at: datetime | None
    resolution_note: str | None
    quote: str | None = Field(
        None,
        description="The participant's message that raised it (GET /alerts/{id} only; "
        "`[erased]` once the participant is erased).",
    )


class AlertsResponse(BaseModel):
    status: Literal["ok"]
    result: list[AlertOut]


class AlertResponse(BaseModel):
    status: Literal["ok"]
    result: AlertOut


def register(app: OpenAPI) -> None:
    """Register the alerts API on the app."""
    auth.check_startup(app)
    app.register_api(api)


@api.before_request
def _guard() -> Response | None:
    return auth.require_token(services().settings)


ERRORS: dict[Any, Any] = {400: ErrorResponse, 401: ErrorResponse}
CODES = {"invalid": 400, "conflict": 409, "not_found": 404}


@api.get("", summary="Alerts, newest first", responses={200: AlertsResponse, **ERRORS})
def alerts_list(query: AlertsQuery) -> tuple[Response, int]:
    """Alerts matching every filter given (status, participant_id, kind, severity), newest
    first, at most `limit`."""
    with services().store.reading() as conn:
        rows = list_alerts(conn, **query.model_dump())
    body = AlertsResponse(status="ok", result=[_out(row) for row in rows])
    return jsonify(body.model_dump(mode="json")), 200


@api.get(
    "/<alert_id>",
    summary="One alert, quoting the message that raised it",
    responses={200: AlertResponse, 404: ErrorResponse, **ERRORS},
)
def alert_get(path: AlertPath) -> tuple[Response, int]:
    """The alert with `quote`, the message that raised it (sealed like the message)."""
    try:
        row = alerts.detail(services().store, path.alert_id)
    except Refused as exc:
        return error_response(CODES[exc.kind], str(exc))
    body = AlertResponse(status="ok", result=_out(row))
    return jsonify(body.model_dump(mode="json")), 200


@api.post(
    "/<alert_id>/acknowledge",
    summary="Take an open alert on",
    responses={200: AlertResponse, 404: ErrorResponse, 409: ErrorResponse, **ERRORS},
)
def alert_acknowledge(path: AlertPath) -> tuple[Response, int]:
    """Acknowledge an open alert; an alert already acknowledged or resolved is a 409."""
    return _answer(
        path.alert_id,
        lambda actor: alerts.acknowledge(services().store, path.alert_id, actor=actor, via="api"),
    )


@api.post(
    "/<alert_id>/resolve",
    summary="Close an alert with a note",
    responses={200: AlertResponse, 404: ErrorResponse, 409: ErrorResponse, **ERRORS},
)
def alert_resolve(path: AlertPath, body: ResolveBody) -> tuple[Response, int]:
    """Resolve an open or acknowledged alert with a note; a resolved one is a 409."""
    note = body.note.strip()
    if not note:
        return error_response(400, "note: a resolution note is required")
    return _answer(
        path.alert_id,
        lambda actor: alerts.resolve(services().store, path.alert_id, note, actor=actor, via="api"),
    )


@api.post(
    "/<alert_id>/dismiss",
    summary="Clear an open review item as not a crisis",
    responses={200: AlertResponse, 404: ErrorResponse, 409: ErrorResponse, **ERRORS},
)
def alert_dismiss(path: AlertPath) -> tuple[Response, int]:
    """Close an open review item (`review.dismissed`, by the caller); the participant is sent
    nothing. An alert that is not a review item, or an item already cleared, is a 409."""
    return _answer(
        path.alert_id,
        lambda actor: reviews.dismiss(services().store, path.alert_id, actor=actor, via="api"),
    )


@api.post(
    "/<alert_id>/escalate",
    summary="Escalate an open review item to a crisis alert",
    responses={200: AlertResponse, 404: ErrorResponse, 409: ErrorResponse, **ERRORS},
)
def alert_escalate(path: AlertPath) -> tuple[Response, int]:
    """Escalate an open review item (`review.escalated`, by the caller): a crisis alert quoting
    the same message is raised and texted to the supervisors, as a turn's crisis alert is; the
    participant is sent nothing. An alert that is not a review item, or an item already
    cleared, is a 409. Returns the review item."""
    return _answer(
        path.alert_id,
        lambda actor: reviews.escalate(
            services().store,
            path.alert_id,
            actor=actor,
            via="api",
            routing=_routing(),
            now=services().clock.now(),
        ),
    )


def _routing() -> Routing:
    """Who hears of an escalated item's crisis alert (bot.services.reviews.routing), once per
    app."""
    found = current_app.extensions.get("tandem.review_routing")
    if found is None:
        found = reviews.routing(services().settings, interventions().root)
        current_app.extensions["tandem.review_routing"] = found
    routing: Routing = found
    return routing


def _answer(alert_id: str, act: Callable[[str], dict[str, Any]]) -> tuple[Response, int]:
    """Carry out the act as the caller; a refusal becomes the error envelope."""
    try:
        row = act(getattr(g, "actor", auth.INSECURE_ACTOR))
    except Refused as exc:
        return error_response(CODES[exc.kind], str(exc))
    log.info("alert %s: %s by the API", alert_id, row["status"])
    body = AlertResponse(status="ok", result=_out(row))
    return jsonify(body.model_dump(mode="json")), 200


def _out(row: dict[str, Any]) -> AlertOut:
    fields = set(AlertOut.model_fields) - {"code"}
    return AlertOut(code=short_code(row["alert_id"]), **{name: row.get(name) for name in fields})
