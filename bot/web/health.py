"""`GET /health`: is the process up, can it reach its database, and PromptPipe's fields.

Anyone may ask whether Tandem is up; only a caller with an API token is told more (how many
participants are active says how a study is going, which is not the public's to know)."""

from __future__ import annotations

import logging

from flask import Response, jsonify, request
from flask_openapi3 import OpenAPI, Tag

from bot.store.errors import StorageError
from bot.store.reads.participants import active_participants
from bot.web.auth import authenticate
from bot.web.current import services

log = logging.getLogger(__name__)
TAG = Tag(name="health", description="Liveness and database reachability")


def register(app: OpenAPI) -> None:
    @app.get("/health", tags=[TAG], summary="Liveness and database reachability")
    def health() -> Response | tuple[Response, int]:  # (flask-openapi3 evaluates it)
        """`status` (healthy|degraded) for anyone; with a bearer token, a superset of
        PromptPipe's answer (`timestamp`, `active_participants`, `error`), so that its
        monitors keep working once given a token."""
        current = services()
        trusted = authenticate(current.settings, request.headers.get("Authorization"))
        timestamp = current.clock.now().isoformat()
        try:
            active = active_participants(current.store)
        except StorageError as exc:
            log.warning("health check: database unreachable (%s)", type(exc).__name__)
            if trusted is None:
                return jsonify(status="degraded"), 503
            down = "database unreachable"
            body = dict(status="degraded", message=down, error=down, database="down")
            return jsonify(**body, timestamp=timestamp), 503
        if trusted is None:
            return jsonify(status="healthy")
        return jsonify(
            status="healthy",
            message="healthy",
            database="ok",
            timestamp=timestamp,
            active_participants=active,
        )
