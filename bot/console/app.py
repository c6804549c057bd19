"""Mounts the console on the Flask app: the blueprint, its session cookie and its pages."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Flask, Request
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface

from bot.console import (  # noqa: F401  (each page module adds its routes to the blueprint)
    alerts_pages,
    broadcasts_page,
    decisions_page,
    enrollment,
    exports,
    fidelity_page,
    guard,
    inbox_page,
    interventions_pages,
    message_search,
    participant_edit,
    participant_erase,
    participant_list,
    participant_page,
    participant_unblind,
    participant_withdraw,
    reviews_page,
    sender_erase,
    sign_in,
    simulation_page,
    study_page,
    takeover,
    timeline_lines,
    two_factor,
    users,
    words,
)
from bot.console.blueprint import console
from bot.console.sessions import ABSOLUTE
from bot.interventions.interpreter.applied import INTERVENTIONS
from bot.store.services import Services


class ConsoleSessions(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions, with no signing work for a request that sends no
    session cookie: a webhook or an API call (the cookie's path is /console) gets an empty
    session at once, where Flask builds its signing serializer for every request (most of the
    session's CPU per webhook). A request with the
    cookie is verified as by Flask; a session filled in by a request without one (a sign-in)
    is signed as by Flask."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if self.get_cookie_name(app) not in request.cookies:
            return self.session_class()
        return super().open_session(app, request)


def register(app: Flask, services: Services, interventions: Path = INTERVENTIONS) -> None:
    """Serve the console under /console/; without a signing key every page says why it is off."""
    key = guard.session_key(services)
    app.extensions["tandem_console"] = {"interventions": interventions}
    if key is None:
        console_off = Blueprint("console_off", __name__, url_prefix="/console")

        @console_off.route("/", defaults={"rest": ""})
        @console_off.route("/<path:rest>", methods=["GET", "POST"])
        def off(rest: str) -> tuple[str, int]:
            return "The console is off: set TANDEM_MASTER_KEY (see .env.example).", 503

        app.register_blueprint(console_off)
        return
    app.secret_key = key
    app.session_interface = ConsoleSessions()
    app.config.update(
        SESSION_COOKIE_NAME="tandem_console",
        SESSION_COOKIE_PATH="/console",
        SESSION_COOKIE_SECURE=not services.settings.insecure_local,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        # The cookie expires with its session's absolute lifetime and is not re-sent (so not
        # extended) by every request; the server-side record is what ends a session.
        PERMANENT_SESSION_LIFETIME=ABSOLUTE,
        SESSION_REFRESH_EACH_REQUEST=False,
    )
    app.register_blueprint(console)
