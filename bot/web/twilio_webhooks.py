"""Twilio's inbound-message and status-callback webhooks (to be built)."""

from __future__ import annotations

from flask_openapi3 import OpenAPI


def register(app: OpenAPI) -> None:
    """Register the webhooks on the app."""
