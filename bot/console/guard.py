"""Who is asking: the signed session, its CSRF token, and the role checks of every page."""

from __future__ import annotations

import functools
import hmac
import logging
import secrets
from collections.abc import Callable
from typing import Any

from flask import current_app, g, redirect, render_template, request, session, url_for

from bot.console import roles, sessions
from bot.core import keys
from bot.store import staff_totp
from bot.store.services import Services

log = logging.getLogger(__name__)
OPEN_ENDPOINTS = {"console.login", "console.login_code", "console.static"}


def session_key(services: Services) -> str | None:
    """The cookie-signing key, derived from TANDEM_MASTER_KEY (never the key itself)."""
    master = services.settings.master_key
    if master:
        return keys.derive(master, "session").hex()
    if services.settings.insecure_local:
        log.warning("console sessions signed with a random key: TANDEM_MASTER_KEY is not set")
        return secrets.token_hex(32)
    return None


def csrf_token() -> str:
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(24)
    return token


def csrf_ok() -> bool:
    given = request.form.get("csrf_token") or request.headers.get("X-CSRF-Token") or ""
    expected = session.get("csrf") or ""
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


def before_request() -> Any:
    """Every console request: the staff member of a live server-side session, and CSRF on
    every POST. A cookie whose session was ended or expired signs nobody in."""
    services: Services = current_app.extensions["tandem"]
    g.staff = None
    g.session = None
    if request.endpoint == "console.static":
        return None
    email = session.get("email")
    if email:
        account = services.store.projection_row("staff", email)
        passive = request.endpoint in sessions.PASSIVE_ENDPOINTS
        record = sessions.current(services.store, email, services.clock.now(), passive=passive)
        if account is None or account["status"] != "active" or record is None:
            session.clear()
        else:
            g.staff = account
            g.session = record
            g.actor = f"staff:{email}"
    if request.method == "POST" and not csrf_ok():
        log.info("console: POST without a valid CSRF token on %s", request.endpoint)
        return refused(
            403,
            "This form has expired or did not come from the console. "
            "Go back, reload the page and try again.",
        )
    if request.endpoint in OPEN_ENDPOINTS:
        return None
    if g.staff is None:
        if request.headers.get("HX-Request"):  # a poll: the whole page goes to the sign-in
            return "", 204, {"HX-Redirect": url_for("console.login")}
        return redirect(url_for("console.login", next=request.path))
    if g.session.via_code and request.endpoint not in {
        "console.password",
        "console.logout",
    }:
        return redirect(url_for("console.password"))
    if (
        services.settings.console_require_2fa
        and g.staff["role"] == "admin"
        and request.endpoint not in {"console.two_factor", "console.logout", "console.password"}
        and not _has_second_factor(services, g.staff["email"])
    ):
        return redirect(url_for("console.two_factor"))
    return None


def _has_second_factor(services: Services, email: str) -> bool:
    record = staff_totp.find(services.store, email)
    return record is not None and record.enabled


def requires(need: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A page for roles allowed `need`; anyone else gets a 403 page."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not roles.allowed(g.staff["role"], need):
                return refused(403, "Your role does not allow this page.")
            return view(*args, **kwargs)

        return wrapper

    return decorate


HEADINGS = {
    400: "This request cannot be answered",
    403: "Not allowed",
    404: "Not found",
    409: "Changed in the meantime",
    413: "Too large",
    429: "Too many tries",
    503: "Not available",
}


def refused(
    code: int, message: str, back: str | None = None, back_label: str = "Back"
) -> tuple[str, int]:
    """A page headed by what went wrong (not only its code), with a way back if given."""
    page = render_template(
        "console/refused.html",
        code=code,
        heading=HEADINGS.get(code, "Refused"),
        message=message,
        back=back,
        back_label=back_label,
    )
    return page, code


def actor() -> str:
    return g.actor
