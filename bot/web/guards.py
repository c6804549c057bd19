"""Guards every request passes: insecure mode only for loopback clients, a capped webhook body,
and a database outage answered 503 with Retry-After (one log line a minute, no tracebacks)."""

from __future__ import annotations

import ipaddress
import logging
import threading
import time

from flask import Response, jsonify, request
from flask.typing import ResponseReturnValue
from flask_openapi3 import OpenAPI
from werkzeug.exceptions import HTTPException

from bot.core.config import Settings
from bot.store.errors import DatabaseUnavailable, DriverError

log = logging.getLogger(__name__)

WEBHOOK_PREFIX = "/webhooks/"
RETRY_AFTER_SECONDS = 30
OUTAGE_LOG_EVERY_SECONDS = 60.0


def install(app: OpenAPI, settings: Settings) -> None:
    """Add the guards and the error handlers to `app`."""
    if settings.insecure_local:
        app.before_request(_loopback_only)
    limit = settings.webhook_max_body_bytes
    app.before_request(lambda: _capped_webhook_body(limit))
    outage = _OutageLog()

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> ResponseReturnValue:
        response = jsonify(status="error", message=exc.description or exc.name)
        # Keep what the error's own headers say (a 405's `Allow`), in the JSON body's type.
        for name, value in exc.get_headers():
            if name.lower() != "content-type":
                response.headers[name] = value
        return response, exc.code or 500  # (an HTTPException raised by Flask has its code)

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> ResponseReturnValue:
        if is_outage(exc):
            outage.report(exc)
            answer = jsonify(status="error", message="database unavailable; try again shortly")
            answer.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return answer, 503
        if isinstance(exc, DriverError):
            # The driver's message can quote the values of the failed statement (PostgreSQL's
            # DETAIL and CONTEXT lines): log what failed, never the message.
            log.error(
                "database error in request: %s (sqlstate %s)", type(exc).__name__, _state(exc)
            )
        else:
            log.exception("unhandled error in request: %s", type(exc).__name__)
        return jsonify(status="error", message="internal error; it has been logged"), 500


def is_loopback(address: str | None) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


# SQLSTATEs of a connection that failed or was cut, and of a server shutting down.
OUTAGE_STATES = frozenset({"08000", "08001", "08003", "08004", "08006", "57P01", "57P02", "57P03"})
# SQLite reports no SQLSTATE: only these say the file could not be used just now (a missing
# table, say, is a deployment mistake and stays a 500 that is logged).
SQLITE_OUTAGES = ("unable to open database", "database is locked", "disk i/o error")


def is_outage(exc: BaseException) -> bool:
    """Whether the database could not be reached (as opposed to refusing a statement)."""
    if isinstance(exc, DriverError) and exc.connection_invalidated:
        return True
    if not isinstance(exc, DatabaseUnavailable):
        return False
    orig = getattr(exc, "orig", None)
    if type(orig).__module__.startswith("sqlite3"):
        return any(text in str(orig).lower() for text in SQLITE_OUTAGES)
    # psycopg sets a SQLSTATE for every error the server sent; none means no connection.
    return _state(exc) is None or _state(exc) in OUTAGE_STATES


def _state(exc: BaseException) -> str | None:
    return getattr(getattr(exc, "orig", None), "sqlstate", None)


def _loopback_only() -> tuple[Response, int] | None:
    """TANDEM_INSECURE_LOCAL serves without authentication: only to this machine's clients."""
    if is_loopback(request.remote_addr):
        return None
    log.warning("insecure local mode: refused a request from a non-loopback client (403)")
    return (
        jsonify(
            status="error",
            message="TANDEM_INSECURE_LOCAL=true serves only clients on this machine (loopback)",
        ),
        403,
    )


def _capped_webhook_body(limit: int) -> tuple[Response, int] | None:
    """413 for a webhook body over `limit`, before the form is parsed; a body sent without a
    Content-Length is cut off at the limit by Werkzeug (also a 413)."""
    if not request.path.startswith(WEBHOOK_PREFIX):
        return None
    request.max_content_length = limit
    if (request.content_length or 0) > limit:
        return jsonify(status="error", message=f"body: larger than {limit} bytes"), 413
    return None


class _OutageLog:
    """One warning a minute while the database is unreachable, however many requests fail."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0.0
        self._missed = 0

    def report(self, exc: BaseException) -> None:
        with self._lock:
            now = time.monotonic()
            if now - self._last < OUTAGE_LOG_EVERY_SECONDS and self._last:
                self._missed += 1
                return
            missed, self._missed, self._last = self._missed, 0, now
        log.warning(
            "database unreachable (%s, sqlstate %s): answering 503; %d more since the last line",
            type(exc).__name__,
            _state(exc),
            missed,
        )
