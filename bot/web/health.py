"""`GET /health`: is the process up, can it reach its database, and PromptPipe's fields.

Anyone may ask whether Tandem is up; only a caller with an API token is told more (how many
participants are active says how a study is going, which is not the public's to know)."""

from __future__ import annotations

import logging

from flask import jsonify, request
from flask_openapi3 import OpenAPI, Tag
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from bot.store.schema import participants
from bot.web.auth import authenticate
from bot.web.current import services

log = logging.getLogger(__name__)
TAG = Tag(name="health", description="Liveness and database reachability")


def register(app: OpenAPI) -> None:
    @app.get("/health", tags=[TAG], summary="Liveness and database reachability")
    def health():  # noqa: ANN202
        """`status` (healthy|degraded) for anyone; with a bearer token, a superset of
        PromptPipe's answer (`timestamp`, `active_participants`, `error`), so that its
        monitors keep working once given a token."""
        current = services()
        trusted = authenticate(current.settings, request.headers.get("Authorization"))
        timestamp = current.clock.now().isoformat()
        try:
            with current.store.reading() as conn:
                active = conn.execute(
                    select(func.count())
                    .select_from(participants)
                    .where(participants.c.status == "active")
                ).scalar()
        except SQLAlchemyError as exc:
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
            active_participants=int(active or 0),
        )
