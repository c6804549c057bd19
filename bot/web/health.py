"""`GET /health`: is the process up, can it reach its database, and PromptPipe's fields."""

from __future__ import annotations

import logging

from flask import Response, jsonify
from flask_openapi3 import OpenAPI, Tag

from bot.store.errors import StorageError
from bot.store.reads.participants import active_participants
from bot.web.current import services

log = logging.getLogger(__name__)
TAG = Tag(name="health", description="Liveness and database reachability")


def register(app: OpenAPI) -> None:
    @app.get("/health", tags=[TAG], summary="Liveness and database reachability")
    def health() -> Response | tuple[Response, int]:  # (flask-openapi3 evaluates it)
        """A superset of PromptPipe's answer (`status` healthy|degraded, `timestamp`,
        `active_participants`, `error`), so that its monitors keep working."""
        current = services()
        timestamp = current.clock.now().isoformat()
        try:
            active = active_participants(current.store)
        except StorageError as exc:
            log.warning("health check: database unreachable (%s)", type(exc).__name__)
            down = "database unreachable"
            body = dict(status="degraded", message=down, error=down, database="down")
            return jsonify(**body, timestamp=timestamp), 503
        return jsonify(
            status="healthy",
            message="healthy",
            database="ok",
            timestamp=timestamp,
            active_participants=active,
        )
