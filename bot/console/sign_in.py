"""Signing in and out, and choosing a password after the first sign-in with a one-time code."""

from __future__ import annotations

import logging
from typing import Any

from flask import g, redirect, render_template, request, session, url_for

from bot.console import accounts, roles, throttle
from bot.console.blueprint import console, services
from bot.console.guard import csrf_token
from bot.store.event_types.staff import StaffSignedIn, StaffSignedOut
from bot.store.events import NewEvent
from bot.store.projections.staff import staff_stream

log = logging.getLogger(__name__)


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
    names = throttle.keys(email, request.remote_addr or "unknown")
    until = throttle.locked_until(svc.store, names, now)
    if until is not None:
        message = f"Too many failed sign-ins. Try again after {until:%H:%M} UTC."
        return render_template("console/login.html", errors={"password": message}, email=email), 429
    signed = accounts.sign_in(svc.store, email, secret, now)
    if signed is None:
        throttle.failed(svc.store, names, now)
        log.info("console: a sign-in was refused")
        errors = {"password": "Wrong email or password, or the account is disabled."}
        return render_template("console/login.html", errors=errors, email=email), 401
    throttle.succeeded(svc.store, names[0])
    event = NewEvent(StaffSignedIn(email=signed.email), meta={"actor": f"staff:{signed.email}"})
    svc.store.append(staff_stream(signed.email), [event])
    session.clear()  # a new session (and CSRF token) for every sign-in
    session.permanent = True
    session["email"] = signed.email
    session["must_set_password"] = signed.must_set_password
    csrf_token()
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
    services().store.append(staff_stream(email), [event])
    session.clear()
    return redirect(url_for("console.login"))


@console.route("/password", methods=["GET", "POST"])
def password() -> Any:
    if request.method == "GET":
        return render_template("console/password.html", errors={})
    svc = services()
    try:
        accounts.set_password(
            svc.store,
            g.staff["email"],
            request.form.get("password", ""),
            request.form.get("repeated", ""),
            svc.clock.now(),
        )
    except accounts.AccountError as exc:
        return render_template("console/password.html", errors={exc.field: exc.message}), 400
    session["must_set_password"] = False
    return redirect(url_for(roles.home(g.staff["role"])))


@console.route("/")
def home() -> Any:
    return redirect(url_for(roles.home(g.staff["role"])))
