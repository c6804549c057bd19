"""The users page, for admins: the staff accounts, adding one, changing a role, disabling one,
resetting a lost second factor.

Each change is an event on the account's stream naming the admin who made it (`staff.added`,
`staff.role_changed`, `staff.disabled`, `staff.two_factor_reset`); the rules live in `accounts`,
shared with `tandem users`. A role change or a disable ends every session of the account
(`bot.console.sessions`).
"""

from __future__ import annotations

import logging
from typing import Any

from flask import make_response, redirect, render_template, request, url_for

from bot.console import accounts, sessions
from bot.console.blueprint import console, services
from bot.console.guard import actor, requires

log = logging.getLogger(__name__)


@console.route("/users")
@requires("users")
def users() -> Any:
    return _page()


@console.route("/users", methods=["POST"])
@requires("users")
def add_user() -> Any:
    given = {"email": request.form.get("email", ""), "role": request.form.get("role", "")}
    svc = services()
    try:
        code = accounts.add(svc.store, given["email"], given["role"], actor(), svc.clock.now())
    except accounts.AccountError as exc:
        return _page(given=given, errors={exc.field: exc.message}, code=400)
    email = accounts.normalise(given["email"])
    log.info("console: a staff account was added (%s)", given["role"])
    # The code is shown once, on this answer only: never in a URL, never cached.
    response = make_response(_page(added={"email": email, "code": code}))
    response.headers["Cache-Control"] = "no-store"
    return response


@console.route("/users/role", methods=["POST"])
@requires("users")
def change_role() -> Any:
    email = request.form.get("email", "")
    store = services().store
    try:
        changed = accounts.change_role(store, email, request.form.get("role", ""), actor())
    except accounts.AccountError as exc:
        return _page(row_errors={email: exc.message}, code=_status(exc))
    if changed:  # the new role starts with a new sign-in
        sessions.end_all(store, accounts.normalise(email))
    log.info("console: a staff role was changed")
    return redirect(url_for("console.users"))


@console.route("/users/disable", methods=["POST"])
@requires("users")
def disable_user() -> Any:
    email = request.form.get("email", "")
    if request.form.get("confirm") != "yes":
        return _page(row_errors={email: "tick the box to confirm"}, code=400)
    store = services().store
    try:
        accounts.disable(store, email, actor())
    except accounts.AccountError as exc:
        return _page(row_errors={email: exc.message}, code=_status(exc))
    sessions.end_all(store, accounts.normalise(email))
    log.info("console: a staff account was disabled")
    return redirect(url_for("console.users"))


@console.route("/users/reset-2fa", methods=["POST"])
@requires("users")
def reset_two_factor() -> Any:
    """Clear a staff member's second factor (they lost their authenticator): they sign in with
    the password alone and enrol again."""
    email = request.form.get("email", "")
    if request.form.get("confirm") != "yes":
        return _page(row_errors={email: "tick the box to confirm the reset"}, code=400)
    try:
        done = accounts.reset_two_factor(services().store, email, actor())
    except accounts.AccountError as exc:
        return _page(row_errors={email: exc.message}, code=_status(exc))
    if not done:
        return _page(row_errors={email: "has no second factor: nothing to reset"}, code=409)
    log.info("console: a staff second factor was reset")
    return redirect(url_for("console.users"))


def _status(exc: accounts.AccountError) -> int:
    return 404 if isinstance(exc, accounts.NoAccount) else 400


def _page(
    *,
    given: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    row_errors: dict[str, str] | None = None,
    added: dict[str, str] | None = None,
    code: int = 200,
) -> tuple[str, int]:
    page = render_template(
        "console/users.html",
        rows=accounts.all_accounts(services().store),
        second_factor=accounts.with_second_factor(services().store),
        roles=accounts.ROLES,
        given=given or {"email": "", "role": "researcher"},
        errors=errors or {},
        row_errors=row_errors or {},
        added=added,
    )
    return page, code
