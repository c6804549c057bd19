"""From an alert's page, a supervisor writes to the participant and hands back: the takeover
acts of `bot.services.takeover` (the same opt-out and one holder at a time; the same quiet
hours, except in answer to a crisis alert, which they never hold back), open to the `alerts`
role for the participant of an alert for supervisors only."""

from __future__ import annotations

import logging
import secrets
from typing import Any

from flask import current_app, redirect, render_template, request, url_for

from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.console.participant_page import for_supervisors
from bot.core.localtime import parse_quiet_hours
from bot.interventions.interpreter.applied import quiet_hours_by_intervention
from bot.services import alerts, takeover
from bot.services.refusal import Refused

log = logging.getLogger(__name__)


@console.route("/alerts/<alert_id>/message", methods=["POST"])
@requires("alerts")
def alert_message(alert_id: str) -> Any:
    """Take the conversation over (unless this staff member holds it) and queue the text."""
    pid, answer = _participant(alert_id)
    if pid is None:
        return answer
    store, me = services().store, actor()
    row = store.projection_row("alerts", alert_id)
    crisis = row is not None and row["kind"] == "crisis"
    root = current_app.extensions["tandem_console"]["interventions"]
    try:
        held = store.projection_row("takeovers", pid)
        if not (held and held["status"] == "active" and held["started_by"] == me):
            takeover.take_over(store, pid, actor=me, reason=f"alert {alert_id}")
        takeover.send_as_staff(
            store,
            pid,
            request.form.get("text", ""),
            actor=me,
            form_token=request.form.get("form_token", ""),
            now=services().clock.now(),
            default_quiet_hours=parse_quiet_hours(services().settings.quiet_hours),
            quiet_hours_by_intervention=quiet_hours_by_intervention(root),
            crisis_alert_id=alert_id if crisis else None,  # quiet hours never hold it back
        )
    except Refused as exc:
        return _page(alert_id, exc.message, 409 if exc.kind == "conflict" else 400)
    log.info("console: staff message from alert %s", alert_id)
    return redirect(url_for("console.alert", alert_id=alert_id))


@console.route("/alerts/<alert_id>/handback", methods=["POST"])
@requires("alerts")
def alert_hand_back(alert_id: str) -> Any:
    pid, answer = _participant(alert_id)
    if pid is None:
        return answer
    try:
        done = takeover.hand_back(
            services().store, pid, actor=actor(), waiting=request.form.get("waiting") or None
        )
    except Refused as exc:
        return _page(alert_id, exc.message, 409 if exc.kind == "conflict" else 400)
    target = url_for("console.alert", alert_id=alert_id)
    return redirect(target if done.handed_back else target + "#contact")


def _participant(alert_id: str) -> tuple[str | None, Any]:
    row = services().store.projection_row("alerts", alert_id)
    if row is None or row["participant_id"] is None:
        return None, refused(404, "No alert about a participant with this id.")
    if not for_supervisors(row):
        return None, refused(403, "This alert does not ask supervisors to act.")
    return row["participant_id"], None


def _page(alert_id: str, problem: str, code: int) -> tuple[str, int]:
    row = alerts.detail(services().store, alert_id)
    no_phones = not services().settings.supervisor_phones
    html = render_template(
        "console/alert.html", a=row, no_phones=no_phones, problem=problem, **contact(row)
    )
    return html, code


def contact(row: dict[str, Any]) -> dict[str, Any]:
    """What the page's contact form needs: whether it applies, and who holds the conversation."""
    pid = row["participant_id"]
    held = services().store.projection_row("takeovers", pid) if pid else None
    active = held is not None and held["status"] == "active"
    return {
        "can_contact": bool(pid) and for_supervisors(row),
        "held_by": held["started_by"] if active and held else None,
        "waiting": takeover.waiting_now(services().store, pid).unanswered if active else [],
        "form_token": secrets.token_urlsafe(16),  # a form sent twice is queued once
    }
