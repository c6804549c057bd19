"""`GET /health`: is the process up and can it reach its database."""

from __future__ import annotations

import logging

from flask import jsonify
from flask_openapi3 import OpenAPI, Tag
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from bot.web.current import services

log = logging.getLogger(__name__)
TAG = Tag(name="health", description="Liveness and database reachability")


def register(app: OpenAPI) -> None:
    @app.get("/health", tags=[TAG], summary="Liveness and database reachability")
    def health():  # noqa: ANN202
        try:
            with services().store.reading() as conn:
                conn.execute(text("SELECT 1"))
        except SQLAlchemyError as exc:
            log.warning("health check: database unreachable (%s)", type(exc).__name__)
            return jsonify(status="error", message="database unreachable", database="down"), 503
        return jsonify(status="ok", message="healthy", database="ok")
