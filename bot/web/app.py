"""The Flask app factory: the researcher API, the Twilio webhooks, health and the console."""

from __future__ import annotations

import logging

from flask import jsonify
from flask_openapi3 import Info, OpenAPI
from werkzeug.exceptions import HTTPException

from bot.console import app as console
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.store.services import Services
from bot.web import (
    auth,
    health,
    participant_api,
    participant_reads,  # noqa: F401  (its routes join the participants blueprint)
    participants,  # noqa: F401  (its routes join the participants blueprint)
    timers,
    twilio_webhooks,
)
from bot.web.api_models import ErrorResponse, validation_error_response

log = logging.getLogger(__name__)


def create_app(services: Services | None = None) -> OpenAPI:
    """Build the web app; without `services`, wire them from the environment."""
    if services is None:
        services = build_services(load_settings())
    app = OpenAPI(
        __name__,
        info=Info(
            title="Tandem",
            version="0.1.0",
            description="Researcher API and Twilio webhooks of Tandem.",
        ),
        doc_prefix="",
        doc_url="/openapi.json",
        security_schemes=auth.SECURITY_SCHEMES,
        # A request that fails validation is a 400 in PromptPipe's envelope naming the field.
        validation_error_status=400,
        validation_error_model=ErrorResponse,
        validation_error_callback=validation_error_response,
    )
    app.extensions["tandem"] = services
    health.register(app)
    participant_api.register(app)
    twilio_webhooks.register(app)
    timers.register(app)
    console.register(app, services)
    _json_errors(app)
    return app


def _json_errors(app: OpenAPI) -> None:
    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):  # noqa: ANN202
        return jsonify(status="error", message=exc.description or exc.name), exc.code

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):  # noqa: ANN202
        log.exception("unhandled error in request: %s", type(exc).__name__)
        return jsonify(status="error", message="internal error; it has been logged"), 500
