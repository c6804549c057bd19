"""`GET /ready`: readiness, not only liveness. 200 `ready` when nothing is degraded, else 503
`degraded` naming each degraded state (bot.services.readiness); with a bearer token, what was
counted for every state. `/health` stays the liveness check."""

from __future__ import annotations

import logging

from flask import Response, jsonify, request
from flask_openapi3 import OpenAPI, Tag

from bot.core.clock import is_simulated
from bot.services import readiness
from bot.store.errors import StorageError
from bot.web.auth import authenticate
from bot.web.current import services

log = logging.getLogger(__name__)
TAG = Tag(name="health", description="Liveness and database reachability")


def register(app: OpenAPI) -> None:
    @app.get("/ready", tags=[TAG], summary="Readiness: the degraded states, if any")
    def ready() -> tuple[Response, int]:
        """`status` (ready|degraded) and `degraded` (the states) for anyone; with a bearer
        token, `checks`: each state, whether it is degraded and what was counted."""
        current = services()
        trusted = authenticate(current.settings, request.headers.get("Authorization"))
        try:
            found = readiness.states(current.store, current.settings, current.clock.now())
        except StorageError as exc:
            log.warning("ready check: database unreachable (%s)", type(exc).__name__)
            return jsonify(status="degraded", degraded=["database"]), 503
        degraded = [s.name for s in found if s.degraded]
        body: dict[str, object] = {
            "status": "degraded" if degraded else "ready",
            "degraded": degraded,
        }
        if is_simulated(current.clock):  # a benchmark's shared clock (TANDEM_CLOCK), said loudly
            body["clock"] = {"simulated": True, "now": current.clock.now().isoformat()}
        if trusted is not None:
            body["checks"] = {s.name: {"degraded": s.degraded, "detail": s.detail} for s in found}
        return jsonify(body), 503 if degraded else 200
