"""The alerts inbox: open → acknowledged → resolved with a note, each step an event by the
staff member, linked to the participant's transcript."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import redirect, render_template, request, url_for

from bot.console.alert_contact import contact
from bot.console.blueprint import console, services, supervisor_only
from bot.console.guard import actor, refused, requires
from bot.console.participant_page import for_supervisors
from bot.services import alerts
from bot.services.refusal import Refused
from bot.store.reads.alerts_inbox import inbox_rows

log = logging.getLogger(__name__)
STATUSES = ("open", "acknowledged", "resolved")
NOTE_LIMIT = alerts.NOTE_LIMIT


@console.route("/alerts", endpoint="alerts")
@requires("alerts")
def alerts_inbox() -> Any:
    status = request.args.get("status", "")
    if status and status not in STATUSES:
        return refused(
            400,
            f"The status filter {status!r} is not an alert status: show alerts that are "
            f"{', '.join(STATUSES)}, or all of them.",
            back=url_for("console.alerts"),
            back_label="All alerts",
        )
    return render_template("console/alerts.html", rows=_rows(status), status=status, errors={})


@console.route("/alerts/<alert_id>", endpoint="alert")
@requires("alerts")
def alert_page(alert_id: str) -> Any:
    """One alert, quoting the message that raised it, and who was texted about it and when
    (or plainly that nobody could be)."""
    try:
        row = alerts.detail(services().store, alert_id)
    except Refused:
        return refused(404, "No alert with this id.")
    if not _may_see(row):
        return _not_for_supervisors(row)
    no_phones = not services().settings.supervisor_phones
    return render_template("console/alert.html", a=row, no_phones=no_phones, **contact(row))


@console.route("/alerts/<alert_id>/acknowledge", methods=["POST"])
@requires("alerts")
def acknowledge(alert_id: str) -> Any:
    return _answer(
        alert_id,
        lambda: alerts.acknowledge(services().store, alert_id, actor=actor(), via="console"),
    )


@console.route("/alerts/<alert_id>/resolve", methods=["POST"])
@requires("alerts")
def resolve(alert_id: str) -> Any:
    note = request.form.get("note", "").strip()
    if not note or len(note) > NOTE_LIMIT:
        errors = {alert_id: f"Write what was done (1 to {NOTE_LIMIT} characters)."}
        return render_template("console/alerts.html", rows=_rows(""), status="", errors=errors), 400
    return _answer(
        alert_id,
        lambda: alerts.resolve(services().store, alert_id, note, actor=actor(), via="console"),
    )


def _answer(alert_id: str, act: Callable[[], object]) -> Any:
    """Carry out the act; a refusal is shown above the inbox."""
    row = services().store.projection_row("alerts", alert_id)
    if row is not None and not _may_see(row):
        return _not_for_supervisors(row)
    try:
        act()
    except Refused as exc:
        if exc.kind == "not_found":
            return refused(404, "No alert with this id.")
        return _stale(f"This alert: {exc.message}.")
    log.info("console: alert %s changed", alert_id)
    return redirect(url_for("console.alerts"))


def _stale(message: str) -> tuple[str, int]:
    return render_template(
        "console/alerts.html", rows=_rows(""), status="", errors={}, problem=message
    ), 409


def _rows(status: str) -> list[dict[str, Any]]:
    return inbox_rows(services().store, status, supervisor=supervisor_only())


def _may_see(row: dict[str, Any]) -> bool:
    """A supervisor sees the alerts that ask supervisors to act; a review item is for the
    review queue; an operational alert is for the research team and operators."""
    return not supervisor_only() or (for_supervisors(row) and row["severity"] != "review")


def _not_for_supervisors(row: dict[str, Any]) -> tuple[str, int]:
    if row["severity"] == "review":
        return refused(
            403,
            "This is a review item: clear it in the review queue.",
            back=url_for("console.reviews"),
            back_label="Review queue",
        )
    return refused(
        403,
        "This is an operational alert, for the research team and operators; your role sees "
        "the alerts that ask supervisors to act.",
        back=url_for("console.alerts"),
        back_label="Alerts",
    )
