"""The participants blueprint and what its read and write handlers share: authentication and
body checks, the error envelope, and the response helpers.

The writes are in `participants`, the reads in `participant_reads`; both add their routes to
`api`.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any, Protocol

from flask import Response, jsonify, request
from flask_openapi3 import APIBlueprint, OpenAPI, Tag
from flask_openapi3.types import ResponseDict
from pydantic import BaseModel

from bot.core.storable import unstorable_paths
from bot.services.blinding import API_ROLE, shown_row
from bot.store.services import Services
from bot.web import auth
from bot.web.api_models import (
    ErrorResponse,
    FieldError,
    ParticipantOut,
    ParticipantResponse,
    error_response,
)
from bot.web.current import services, studies

TAG = Tag(name="participants", description="Enroll participants and read their conversations")
MAX_BODY = 64 * 1024
ERRORS: ResponseDict = {400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse}
BODY_ERRORS: ResponseDict = {**ERRORS, 413: ErrorResponse, 415: ErrorResponse}

api = APIBlueprint(
    "participants",
    __name__,
    url_prefix="/conversation/participants",
    abp_tags=[TAG],
    abp_security=auth.SECURITY,
)


class Refused(Exception):
    """A request that cannot be carried out; becomes the error envelope with `code`."""

    def __init__(
        self,
        code: int,
        message: str,
        field: str | None = None,
        others: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = f"{field}: {message}" if field else message
        self.errors = [FieldError(field=field, message=message)] if field else None
        if field and others:  # every wrong field, the first one first
            more = [FieldError(field=f, message=m) for f, m in others.items() if f != field]
            self.errors = [*(self.errors or []), *more]


def register(app: OpenAPI) -> None:
    """Register the participants API on the app; refuses to without a token (see auth).

    The routes join `api` when `participants` (writes) and `participant_reads` are imported."""
    auth.check_startup(app)
    app.register_api(api)


def current_services() -> Services:
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
    for path in unstorable_paths(payload):
        return error_response(
            400, f"{path}: holds a NUL character (U+0000) or a lone surrogate; remove it"
        )
    return None


@api.errorhandler(Refused)
def _refused(exc: Refused) -> tuple[Response, int]:
    return error_response(exc.code, exc.message, exc.errors)


def ok(model: BaseModel, code: int = 200) -> tuple[Response, int]:
    body = model.model_dump(mode="json")
    for optional in ("message", "welcome_at"):  # left out rather than null
        if body.get(optional) is None:
            body.pop(optional, None)
    return jsonify(body), code


def participant_response(
    row: dict[str, Any],
    message: str | None = None,
    code: int = 200,
    welcome_at: datetime | None = None,
) -> tuple[Response, int]:
    result = participant_out(row)
    out = ParticipantResponse(status="ok", message=message, result=result, welcome_at=welcome_at)
    return ok(out, code)


def participant_out(row: dict[str, Any]) -> ParticipantOut:
    """A participants row as the API shows it: the arm of a blinded study left out."""
    settings = current_services().settings
    return ParticipantOut.from_row(shown_row(row, API_ROLE, studies(), settings.master_key))


def canonical_id(raw: str) -> str:
    """The id as stored, or a 404: a string that is not a UUID names no participant."""
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise Refused(404, "Participant not found", "participant_id") from None


class ProjectionRows(Protocol):
    """What reading a participant's row needs of the store."""

    def projection_row(self, projection_name: str, key: str) -> dict[str, Any] | None: ...


def participant_row(store: ProjectionRows, participant_id: str) -> dict[str, Any]:
    row = store.projection_row("participants", canonical_id(participant_id))
    if row is None:
        raise Refused(404, "Participant not found", "participant_id")
    return row
