"""The researcher API under /conversation/participants (to be built)."""

from __future__ import annotations

from flask_openapi3 import OpenAPI


def register(app: OpenAPI) -> None:
    """Register the participants API on the app."""
