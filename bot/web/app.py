"""The Flask app factory: the researcher API, the Twilio webhooks, health and the console."""

from __future__ import annotations

from flask_openapi3 import Info, OpenAPI
from werkzeug.middleware.proxy_fix import ProxyFix

from bot.console import app as console
from bot.conversation.supervisors import check_supervisor_route
from bot.interventions.validation.catalogue import Catalogue
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import check_interventions, check_study, intervention_catalogue
from bot.runtime.startup import startup_settings
from bot.store.services import Services
from bot.studies.catalogue import STUDIES, StudyCatalogue
from bot.web import (
    alerts_api,
    auth,
    broadcasts_api,
    guards,
    health,
    home,
    key_guard,
    metrics,
    participant_api,
    participant_forms,  # noqa: F401  (its routes join the participants blueprint)
    participant_reads,  # noqa: F401  (its routes join the participants blueprint)
    participants,  # noqa: F401  (its routes join the participants blueprint)
    ready,
    timers,
    twilio_webhooks,
)
from bot.web.api_models import ErrorResponse, validation_error_response


def create_app(
    services: Services | None = None,
    catalogue: Catalogue | None = None,
    studies: StudyCatalogue | None = None,
) -> OpenAPI:
    """Build the web app; without `services`, wire them from the environment. `catalogue` is
    the interventions participants may be enrolled in (default: those under interventions/),
    `studies` the studies (default: those under studies/); ConfigError if any intervention,
    `INTERVENTION` or `STUDY` does not validate; KeyCheckFailed if TANDEM_MASTER_KEY is not
    the database's."""
    catalogue = catalogue or intervention_catalogue()
    if services is None:  # every problem of the settings and interventions in one message
        services = build_services(startup_settings(catalogue))
    check_supervisor_route(services.settings)
    check_interventions(services.settings, catalogue)
    studies = studies or StudyCatalogue(STUDIES, catalogue)
    check_study(services.settings, studies)
    app = OpenAPI(
        __name__,
        info=Info(
            title="Tandem",
            version="0.1.0",
            description="Researcher API and Twilio webhooks of Tandem.",
        ),
        # flask-openapi3's own "/" only says to install a UI plugin; bot/web/home.py serves
        # "/", "/docs/" (Swagger UI from vendored assets) and /openapi.json instead.
        doc_ui=False,
        security_schemes=auth.SECURITY_SCHEMES,
        # A request that fails validation is a 400 in PromptPipe's envelope naming the field.
        validation_error_status=400,
        validation_error_model=ErrorResponse,
        validation_error_callback=validation_error_response,
    )
    app.extensions["tandem"] = services
    key_guard.check_at_start(app, services)  # KeyCheckFailed: the key is not the database's
    app.extensions["tandem.interventions"] = catalogue
    app.extensions["tandem.studies"] = studies
    health.register(app)
    ready.register(app)
    metrics.register(app)
    home.register(app)
    alerts_api.register(app)
    broadcasts_api.register(app)
    participant_api.register(app)
    twilio_webhooks.register(app)
    timers.register(app)
    console.register(app, services)
    guards.install(app, services.settings)
    if services.settings.trusted_proxy_count:
        # Only the address: the proxies' own hops are dropped, and a client's forged entries
        # sit left of the one the nearest trusted proxy appended.
        n = services.settings.trusted_proxy_count
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n)  # type: ignore[method-assign]
    return app
