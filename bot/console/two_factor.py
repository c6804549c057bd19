"""The optional TOTP second factor: enrolment from the account page, the code asked for after
the password, and turning it off. Codes come from any authenticator app (pyotp computes them).

The secret is stored sealed under a key derived from the master key (AES-GCM, the email as
associated data: bot.core.keys.StaffSecrets, which `tandem keys rotate` re-seals under the new
one), so a copy of the database holds no usable secret. A code is accepted once: the time step
of the last accepted code is kept and only a later step passes.
"""

from __future__ import annotations

import hmac
import logging
from datetime import datetime, timedelta
from typing import Any

import pyotp
from flask import g, redirect, render_template, request, session, url_for

from bot.console import accounts, roles, sessions, throttle
from bot.console.blueprint import console, services
from bot.console.guard import csrf_token
from bot.core import keys
from bot.store import staff_totp
from bot.store.event_types.staff import (
    StaffSignedIn,
    StaffTwoFactorDisabled,
    StaffTwoFactorEnabled,
)
from bot.store.events import NewEvent
from bot.store.projections.staff import staff_stream

log = logging.getLogger(__name__)
ISSUER = "Tandem"
STEP = 30
# A password accepted this long ago still lets its browser give the code.
PENDING = timedelta(minutes=5)


def _secrets() -> keys.StaffSecrets:
    master = services().settings.master_key
    if not master:  # the console is off without one (bot.console.guard)
        raise RuntimeError("TANDEM_MASTER_KEY is needed to seal a TOTP secret")
    return keys.StaffSecrets.for_master_key(master)


def seal(email: str, secret: str) -> str:
    return _secrets().seal(email, secret)


def unseal(email: str, sealed: str) -> str:
    """The secret; `keys.SealedElsewhere` if it was sealed under another master key."""
    return _secrets().unseal(email, sealed)


def accept(email: str, code: str, now: datetime, *, confirming: bool = False) -> bool:
    """Whether `code` is the account's for now (a step either side allowed for clock drift)
    and no code of its step or later was accepted before; records its step if so. Checks an
    enabled factor, or with `confirming` one being enrolled (and then enables it)."""
    record = staff_totp.find(services().store, email)
    code = code.strip().replace(" ", "")
    if record is None or record.enabled == confirming or not code.isdigit():
        return False
    try:
        totp = pyotp.TOTP(unseal(email, record.sealed))
    except keys.SealedElsewhere:  # a master key retired unrotated: docs/console.md
        log.warning("console: a TOTP secret does not open with this master key")
        return False
    current = int(now.timestamp()) // STEP
    for step in (current - 1, current, current + 1):
        if hmac.compare_digest(totp.at(step * STEP), code):
            return staff_totp.use_step(services().store, email, step, enable=confirming, now=now)
    return False


def enabled(email: str) -> bool:
    record = staff_totp.find(services().store, email)
    return record is not None and record.enabled


def ask_for_code(email: str, now: datetime) -> Any:
    """The password was right and the account has a second factor: no session yet, only a
    signed note in the cookie that this browser may give the code for a few minutes."""
    session.clear()
    session["pending_email"] = email
    session["pending_at"] = now.isoformat()
    return redirect(url_for("console.login_code", next=request.args.get("next", "")))


@console.route("/login/code", methods=["GET", "POST"])
def login_code() -> Any:
    svc = services()
    now = svc.clock.now()
    email = session.get("pending_email")
    at = session.get("pending_at")
    if not isinstance(email, str) or not isinstance(at, str):
        return redirect(url_for("console.login"))
    if now - datetime.fromisoformat(at) > PENDING:
        session.clear()
        return redirect(url_for("console.login"))
    if request.method == "GET":
        return render_template("console/login_code.html", errors={})
    names = throttle.keys(email, request.remote_addr or "unknown")
    until = throttle.attempt(svc.store, names, now)
    if until is not None:
        message = f"Too many wrong codes. Try again after {until:%H:%M} UTC."
        return render_template("console/login_code.html", errors={"code": message}), 429
    if not accept(email, request.form.get("code", ""), now):
        error = {"code": "Wrong or already used code: wait for the next one."}
        return render_template("console/login_code.html", errors=error), 401
    throttle.succeeded(svc.store, names)
    sessions.begin(svc.store, email, now, via_code=False)
    event = NewEvent(StaffSignedIn(email=email), meta={"actor": f"staff:{email}"})
    svc.store.append(staff_stream(email), [event])
    csrf_token()
    target = request.args.get("next", "")
    if target.startswith("/console/") and not target.startswith("//"):
        return redirect(target)
    account = svc.store.projection_row("staff", email)
    return redirect(url_for(roles.home(account["role"] if account else "researcher")))


@console.route("/two-factor", methods=["GET", "POST"])
def two_factor() -> Any:
    """Turn the second factor on (a new secret shown as text, confirmed with a code) or off
    (the password and a code)."""
    svc = services()
    email = g.staff["email"]
    now = svc.clock.now()
    if enabled(email):
        if request.method == "GET":
            return _page(True, None, {}, 200)
        names = throttle.keys(email, request.remote_addr or "unknown")
        if throttle.attempt(svc.store, names, now) is not None:
            return _page(True, None, {"code": "too many tries: wait and try again"}, 429)
        if accounts.sign_in(svc.store, email, request.form.get("current", ""), now) is None:
            return _page(True, None, {"current": "this is not your current password"}, 400)
        if not accept(email, request.form.get("code", ""), now):
            return _page(True, None, {"code": "wrong or already used code"}, 400)
        throttle.succeeded(svc.store, names)
        staff_totp.remove(svc.store, email)
        event = NewEvent(StaffTwoFactorDisabled(email=email), meta={"actor": f"staff:{email}"})
        svc.store.append(staff_stream(email), [event])
        return _page(False, None, {}, 200, done="The second factor is off.")
    record = staff_totp.find(svc.store, email)
    secret = _pending(email, record) if request.method == "POST" else None
    if secret is None:
        secret = pyotp.random_base32()
        staff_totp.start(svc.store, email, seal(email, secret), now)
        return _page(False, secret, {}, 200)
    if not accept(email, request.form.get("code", ""), now, confirming=True):
        return _page(
            False, secret, {"code": "wrong code: check the app's clock, try the next"}, 400
        )
    event = NewEvent(StaffTwoFactorEnabled(email=email), meta={"actor": f"staff:{email}"})
    svc.store.append(staff_stream(email), [event])
    return _page(True, None, {}, 200, done="The second factor is on: sign-in now asks for a code.")


def _pending(email: str, record: staff_totp.TotpRecord | None) -> str | None:
    """The secret being enrolled (None: none, or one sealed under another master key)."""
    if record is None:
        return None
    try:
        return unseal(email, record.sealed)
    except keys.SealedElsewhere:
        return None


def _page(on: bool, secret: str | None, errors: dict[str, str], code: int, done: str = "") -> Any:
    uri = None
    if secret is not None:
        uri = pyotp.TOTP(secret).provisioning_uri(name=g.staff["email"], issuer_name=ISSUER)
    return (
        render_template(
            "console/two_factor.html", on=on, secret=secret, uri=uri, errors=errors, done=done
        ),
        code,
    )
