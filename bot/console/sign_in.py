"""Signing in and out, and choosing a password: first with a one-time code, later by giving the
current one. Each sign-in opens a server-side session (`bot.console.sessions`)."""

from __future__ import annotations

import logging
from typing import Any

from flask import g, redirect, render_template, request, url_for

from bot.console import accounts, password_rules, roles, sessions, throttle, two_factor
from bot.console.blueprint import console, services
from bot.console.guard import csrf_token
from bot.store.event_types.staff import StaffSignedIn, StaffSignedOut
from bot.store.events import NewEvent
from bot.store.projections.staff import staff_stream

log = logging.getLogger(__name__)
REFUSED = "Wrong email or password, or the account is disabled."


@console.route("/login", methods=["GET", "POST"])
def login() -> Any:
    if request.method == "GET":
        if g.staff is not None:
            return redirect(url_for(roles.home(g.staff["role"])))
        return render_template("console/login.html", errors={}, email="")
    email = request.form.get("email", "")
    secret = request.form.get("password", "")
    svc = services()
    now = svc.clock.now()
    # The client's address: behind TRUSTED_PROXY_COUNT proxies, ProxyFix has set it from
    # X-Forwarded-For (bot.web.app); otherwise the peer's, whatever the header says.
    names = throttle.keys(email, request.remote_addr or "unknown")
    until = throttle.attempt(svc.store, names, now)
    if until is not None:
        message = f"Too many failed sign-ins. Try again after {until:%H:%M} UTC."
        return render_template("console/login.html", errors={"password": message}, email=email), 429
    signed = accounts.sign_in(svc.store, email, secret, now)
    # A one-time code opens one session: a second sign-in with it is refused like a wrong one.
    if signed is None or (
        signed.must_set_password and not sessions.begin(svc.store, signed.email, now, via_code=True)
    ):
        log.info("console: a sign-in was refused (account %s)", accounts.log_name(email))
        return render_template("console/login.html", errors={"password": REFUSED}, email=email), 401
    if not signed.must_set_password and two_factor.enabled(signed.email):
        # Not yet a session, nor a success: the code's tries count with the password's.
        return two_factor.ask_for_code(signed.email, now)
    if not signed.must_set_password:
        sessions.begin(svc.store, signed.email, now, via_code=False)
    throttle.succeeded(svc.store, names)
    log.info("console: signed in (account %s, %s)", accounts.log_name(signed.email), signed.role)
    event = NewEvent(StaffSignedIn(email=signed.email), meta={"actor": f"staff:{signed.email}"})
    svc.store.append(staff_stream(signed.email), [event])
    csrf_token()  # a new session, and a new CSRF token, for every sign-in
    if signed.must_set_password:
        return redirect(url_for("console.password"))
    target = request.args.get("next", "")
    if target.startswith("/console/") and not target.startswith("//"):
        return redirect(target)
    return redirect(url_for(roles.home(signed.role)))


@console.route("/logout", methods=["POST"])
def logout() -> Any:
    email = g.staff["email"]
    event = NewEvent(StaffSignedOut(email=email), meta={"actor": f"staff:{email}"})
    store = services().store
    store.append(staff_stream(email), [event])
    sessions.finish(store)
    return redirect(url_for("console.login"))


@console.route("/password", methods=["GET", "POST"])
def password() -> Any:
    """Choose a password. After a first sign-in with a code, the new one is enough; otherwise
    the current password is asked for, so that a session left open cannot take the account.
    Every session of the account ends, and this browser continues in a new one."""
    first = g.session.via_code
    if request.method == "GET":
        return _password_page(first, {}, 200)
    svc = services()
    email = g.staff["email"]
    now = svc.clock.now()
    new = request.form.get("password", "")
    if not first:
        names = throttle.keys(email, request.remote_addr or "unknown")
        if throttle.attempt(svc.store, names, now) is not None:
            return _password_page(first, {"current": "too many wrong passwords: try later"}, 429)
        if accounts.sign_in(svc.store, email, request.form.get("current", ""), now) is None:
            return _password_page(first, {"current": "this is not your current password"}, 400)
        throttle.succeeded(svc.store, names)
    weak = password_rules.weakness(new, email)
    if weak is not None:
        return _password_page(first, {"password": weak}, 400)
    try:
        accounts.set_password(svc.store, email, new, request.form.get("repeated", ""), now)
    except accounts.AccountError as exc:
        return _password_page(first, {exc.field: exc.message}, 400)
    ended = sessions.end_all(svc.store, email)
    sessions.begin(svc.store, email, now, via_code=False)
    csrf_token()
    log.info(
        "console: a password was set (account %s); %d session(s) ended",
        accounts.log_name(email),
        ended,
    )
    return redirect(url_for(roles.home(g.staff["role"])))


def _password_page(first: bool, errors: dict[str, str], code: int) -> tuple[str, int]:
    return render_template("console/password.html", first=first, errors=errors), code


@console.route("/")
def home() -> Any:
    return redirect(url_for(roles.home(g.staff["role"])))
