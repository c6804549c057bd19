"""Researcher API authentication: bearer tokens from TANDEM_API_TOKENS, checked in constant time."""

from __future__ import annotations

import hashlib
import hmac
import logging

from flask import Flask, Response, g, request
from flask_openapi3.types import SecuritySchemesDict

from bot.core.config import ConfigError, Settings
from bot.web.api_models import error_response

log = logging.getLogger(__name__)

SCHEME = "bearerAuth"
SECURITY_SCHEMES: SecuritySchemesDict = {
    SCHEME: {
        "type": "http",
        "scheme": "bearer",
        "description": "One of the tokens in TANDEM_API_TOKENS: `Authorization: Bearer <token>`.",
    }
}
SECURITY: list[dict[str, list[str]]] = [{SCHEME: []}]
INSECURE_ACTOR = "api:insecure-local"
WARNED = "tandem.auth.warned"


def check_startup(app: Flask) -> None:
    """Refuse to serve the researcher API without a token, unless explicitly insecure; each
    API registers through here, and the warning for running without authentication is
    logged once per app."""
    settings: Settings = app.extensions["tandem"].settings
    if settings.api_tokens:
        return
    if settings.insecure_local:
        if not app.extensions.get(WARNED):
            app.extensions[WARNED] = True
            log.warning("researcher API runs WITHOUT authentication (TANDEM_INSECURE_LOCAL=true)")
        return
    raise ConfigError(
        [
            "TANDEM_API_TOKENS: the researcher API needs at least one bearer token "
            "(or TANDEM_INSECURE_LOCAL=true, for a local experiment only)"
        ]
    )


def fingerprint(token: str) -> str:
    """A short, non-reversible name for a token, recorded as the actor of the events it causes."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def matches(presented: str, tokens: list[str]) -> bool:
    """Whether `presented` is one of `tokens`; every token is compared, in constant time."""
    given = presented.encode()
    found = False
    for token in tokens:
        found |= hmac.compare_digest(given, token.encode())
    return found


def authenticate(settings: Settings, header: str | None) -> str | None:
    """The actor ("api:<fingerprint>") for an Authorization header, or None if it is refused."""
    if not settings.api_tokens and settings.insecure_local:
        return INSECURE_ACTOR
    scheme, _, presented = (header or "").strip().partition(" ")
    presented = presented.strip()
    if scheme.lower() != "bearer" or not presented:
        return None
    if not matches(presented, settings.api_tokens):
        return None
    return f"api:{fingerprint(presented)}"


def require_token(settings: Settings) -> Response | None:
    """A `before_request` check: None to go on (with `g.actor` set), or the 401 response."""
    actor = authenticate(settings, request.headers.get("Authorization"))
    if actor is not None:
        g.actor = actor
        return None
    missing = not request.headers.get("Authorization")
    log.info("researcher API: %s token on %s", "missing" if missing else "wrong", request.path)
    message = "missing bearer token" if missing else "invalid bearer token"
    response, code = error_response(401, f"Authorization: {message}")
    response.status_code = code
    response.headers["WWW-Authenticate"] = 'Bearer realm="tandem"'
    return response
