"""`/broadcasts`: create (or dry-run), list, show and cancel broadcasts (researcher API); the
service (`bot.services.broadcasts`) is the console's and `tandem broadcast`'s too."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Literal

from flask import Response, current_app, g, jsonify
from flask_openapi3 import APIBlueprint, OpenAPI, Tag
from pydantic import BaseModel, ConfigDict, Field

from bot.services import broadcasts
from bot.services.blinding import API_ROLE, Viewer
from bot.services.refusal import Refused
from bot.web import auth
from bot.web.api_models import ErrorResponse, error_response
from bot.web.current import services, studies

log = logging.getLogger(__name__)

TAG = Tag(name="broadcasts", description="One message to a filtered group of participants")
CODES = {"invalid": 400, "conflict": 409, "not_found": 404}
ERRORS: dict[Any, Any] = {400: ErrorResponse, 401: ErrorResponse}

api = APIBlueprint(
    "broadcasts", __name__, url_prefix="/broadcasts", abp_tags=[TAG], abp_security=auth.SECURITY
)


class Filter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    study: str | None = Field(None, max_length=100)
    arm: str | None = Field(None, max_length=100)
    intervention: str | None = Field(None, max_length=100)
    status: str | None = Field(None, max_length=16, description="Participants' status (active).")
    condition: str | None = Field(
        None, max_length=500, description="A profile condition, e.g. `profile.intensity == 'high'`."
    )


class SendAt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["now", "local"] = "now"
    time: str | None = Field(None, description="HH:MM in each participant's own timezone.")
    date: str | None = Field(None, description="YYYY-MM-DD (default: the next such time).")


class CreateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str | None = Field(
        None, min_length=1, max_length=1600, description="A Jinja2 template (or give `step`)."
    )
    step: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="A step of the recipients' intervention to start instead of a message.",
    )
    title: str | None = Field(None, max_length=200)
    filter: Filter = Filter()
    send_at: SendAt = SendAt()
    whatsapp_template: str | None = Field(
        None, description="An approved WhatsApp template (HX...) carrying the text as {{1}}."
    )
    dry_run: bool = False


class Envelope(BaseModel):
    """`{"status": "ok", "result": ...}`: a broadcast (with `progress`), a list, or a plan."""

    status: Literal["ok"]
    result: Any


class BroadcastPath(BaseModel):
    broadcast_id: str = Field(max_length=36)


class CancelBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(None, max_length=500)


class ListQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(100, ge=1, le=1000)


def register(app: OpenAPI) -> None:
    """Register the broadcasts API on the app."""
    auth.check_startup(app)
    app.register_api(api)


@api.before_request
def _guard() -> Response | None:
    return auth.require_token(services().settings)


@api.post(
    "",
    summary="Create a broadcast, or dry-run one",
    responses={201: Envelope, 200: Envelope, **ERRORS},
)
def broadcast_create(body: CreateBody) -> tuple[Response, int]:
    """Check the message (or the step to start: one every recipient's intervention has) and
    the filter, find the recipients and render their texts. With `dry_run: true` answer the
    count and three samples and record nothing; otherwise record the broadcast (201) for the
    broadcaster to send at BROADCAST_RATE_PER_SECOND."""
    s = services()
    request = body.model_dump(exclude={"dry_run"})
    try:
        planned = broadcasts.create(
            s.store,
            current_app.extensions["tandem.interventions"],
            request,
            actor=_actor(),
            now=s.clock.now(),
            dry_run=body.dry_run,
            viewer=_viewer(),
        )
    except Refused as exc:
        return error_response(CODES[exc.kind], str(exc))
    result: dict[str, Any] = {
        "broadcast_id": planned.broadcast_id,
        "dry_run": body.dry_run,
        "recipients": planned.recipients,
        "samples": planned.samples,
        "unrenderable": len(planned.unrenderable),
        "unrenderable_sample": planned.unrenderable[:3],
    }
    if planned.broadcast_id:
        log.info("broadcast %s created for %d", planned.broadcast_id, planned.recipients)
    return jsonify({"status": "ok", "result": result}), 200 if body.dry_run else 201


@api.get("", summary="Broadcasts, newest first", responses={200: Envelope, **ERRORS})
def broadcast_list(query: ListQuery) -> tuple[Response, int]:
    """The latest broadcasts, each with its progress (sent, held, failed, pending)."""
    rows = broadcasts.listing(services().store, query.limit, _viewer())
    return jsonify({"status": "ok", "result": [_out(r) for r in rows]}), 200


@api.get(
    "/<broadcast_id>",
    summary="One broadcast and its progress",
    responses={200: Envelope, 404: ErrorResponse, **ERRORS},
)
def broadcast_show(path: BroadcastPath) -> tuple[Response, int]:
    """The broadcast, its progress, and each recipient held with the reason (`held` null for
    a broadcast to an arm of a blinded study: the list would show who is in the arm)."""
    store, viewer = services().store, _viewer()
    try:
        row = broadcasts.show(store, path.broadcast_id, viewer)
        stored = broadcasts.show(store, path.broadcast_id)
    except Refused as exc:
        return error_response(CODES[exc.kind], str(exc))
    held = None
    if not broadcasts.recipients_concealed(stored, viewer):
        listed = broadcasts.recipients(store, path.broadcast_id)
        held = [r for r in listed if r["state"] == "held"]
    return jsonify({"status": "ok", "result": {**_out(row), "held": held}}), 200


@api.post(
    "/<broadcast_id>/cancel",
    summary="Stop a broadcast",
    responses={200: Envelope, 404: ErrorResponse, 409: ErrorResponse, **ERRORS},
)
def broadcast_cancel(path: BroadcastPath, body: CancelBody) -> tuple[Response, int]:
    """Nothing more is queued; a broadcast already cancelled is a 409."""
    try:
        row = broadcasts.cancel(
            services().store, path.broadcast_id, actor=_actor(), reason=body.reason
        )
    except Refused as exc:
        return error_response(CODES[exc.kind], str(exc))
    log.info("broadcast %s cancelled", path.broadcast_id)
    return jsonify({"status": "ok", "result": _out(row)}), 200


def _actor() -> str:
    return str(getattr(g, "actor", auth.INSECURE_ACTOR))


def _viewer() -> Viewer:
    """An API token acts as a researcher: no arm of a blinded study."""
    return Viewer(API_ROLE, studies(), services().settings.master_key)


def _out(row: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "broadcast_id",
        "title",
        "created_by",
        "message",
        "step",
        "schedule",
        "whatsapp_template",
        "filter",
    )
    out = {key: row[key] for key in keep}
    out |= {
        "send_at": row["send_at"],
        "recipients": row["recipients"],
        "status": row["status"],
        "created_at": _iso(row["created_at"]),
        "cancelled_at": _iso(row["cancelled_at"]),
        "progress": row["progress"],
    }
    return out


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
