"""The master key checked at the web's start (bot.store.key_check): the app factory refuses a
key that is not the database's. A database unreachable at start is not a refusal (the web
answers 503 during an outage, bot.web.guards): the check then runs at the first request that
finds the database up, and until it passes every request but /health is answered 503."""

from __future__ import annotations

import logging
import threading

from flask import Flask, Response, request

from bot.runtime.bootstrap import verify_keys
from bot.store.errors import DatabaseUnavailable
from bot.store.key_check import KeyCheckFailed
from bot.store.services import Services

log = logging.getLogger(__name__)


def check_at_start(app: Flask, services: Services) -> None:
    """Verify now (KeyCheckFailed refuses the start), or at the first request if the database
    cannot be reached now."""
    try:
        verify_keys(services.store)
        return
    except DatabaseUnavailable:
        log.warning("master key not checked at start (no database yet): checked at a request")
    lock = threading.Lock()
    state = {"checked": False}

    def check() -> Response | None:
        if state["checked"] or request.path == "/health":  # health says degraded itself
            return None
        with lock:
            if state["checked"]:
                return None
            try:
                verify_keys(services.store)
            except KeyCheckFailed as exc:
                log.error("%s", exc)  # key ids only: nothing personal
                return Response("the master key is not the database's", 503)
            state["checked"] = True  # DatabaseUnavailable goes on to the outage's 503
        return None

    app.before_request(check)
