"""The alerts inbox: open → acknowledged → resolved with a note, each step an event by the
staff member, linked to the participant's transcript."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import redirect, render_template, request, url_for
from sqlalchemy import case, select

from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.store.event_types.alerts import AlertAcknowledged, AlertResolved
from bot.store.events import SYSTEM_STREAM, EventData, NewEvent, participant_stream
from bot.store.schema import alerts, participants

log = logging.getLogger(__name__)
STATUSES = ("open", "acknowledged", "resolved")
NOTE_LIMIT = 4000


@console.route("/alerts", endpoint="alerts")
@requires("alerts")
def alerts_inbox() -> Any:
    status = request.args.get("status", "")
    if status and status not in STATUSES:
        return refused(400, f"unknown alert status {status!r}; one of {', '.join(STATUSES)}")
    return render_template("console/alerts.html", rows=_rows(status), status=status, errors={})


@console.route("/alerts/<alert_id>/acknowledge", methods=["POST"])
@requires("alerts")
def acknowledge(alert_id: str) -> Any:
    def decide(row: dict[str, Any]) -> AlertAcknowledged | str:
        if row["status"] != "open":
            return f"This alert is already {row['status']} (by {row['acknowledged_by']})."
        return AlertAcknowledged(alert_id=alert_id, by=actor(), via="console")

    return _change(alert_id, decide)


@console.route("/alerts/<alert_id>/resolve", methods=["POST"])
@requires("alerts")
def resolve(alert_id: str) -> Any:
    note = request.form.get("note", "").strip()
    if not note or len(note) > NOTE_LIMIT:
        errors = {alert_id: f"Write what was done (1 to {NOTE_LIMIT} characters)."}
        return render_template("console/alerts.html", rows=_rows(""), status="", errors=errors), 400

    def decide(row: dict[str, Any]) -> AlertResolved | str:
        if row["status"] == "resolved":
            return f"This alert was already resolved by {row['resolved_by']}."
        return AlertResolved(alert_id=alert_id, by=actor(), via="console", note=note)

    return _change(alert_id, decide)


def _change(alert_id: str, decide: Callable[[dict[str, Any]], EventData | str]) -> Any:
    """Decide on the alert as it stands under the stream's lock, so that two staff members
    pressing the same button append one event, and the second is told why not."""
    store = services().store
    found = store.projection_row("alerts", alert_id)
    if found is None:
        return refused(404, "No alert with this id.")
    pid = found["participant_id"]
    stream = participant_stream(pid) if pid else SYSTEM_STREAM
    with store.transaction() as tx:
        tx.lock(stream)
        row = tx.conn.execute(select(alerts).where(alerts.c.alert_id == alert_id)).one()
        decided = decide(dict(row._mapping))
        if isinstance(decided, str):
            problem = decided
        else:
            problem = None
            tx.append(stream, [NewEvent(decided, meta={"actor": actor()})])
    if problem is not None:
        return _stale(problem)
    assert not isinstance(decided, str)  # a refusal was returned just above
    log.info("console: alert %s %s", alert_id, decided.event_type)
    return redirect(url_for("console.alerts"))


def _stale(message: str) -> tuple[str, int]:
    return render_template(
        "console/alerts.html", rows=_rows(""), status="", errors={}, problem=message
    ), 409


def _rows(status: str) -> list[dict[str, Any]]:
    order = case({"open": 0, "acknowledged": 1}, value=alerts.c.status, else_=2)
    query = (
        select(alerts, participants.c.name, participants.c.phone)
        .join(participants, participants.c.participant_id == alerts.c.participant_id, isouter=True)
        .order_by(order, alerts.c.raised_at.desc())
        .limit(500)
    )
    if status:
        query = query.where(alerts.c.status == status)
    with services().store.reading() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]
