"""Takeover: a staff member pauses the bot for one participant, texts them, and hands back.

While a takeover is active the worker leaves the participant's work items pending (so the
bot's turns wait); staff messages go through the same outbox as the bot's, so the dispatcher
applies opt-out and the WhatsApp window to them, and quiet hours are checked here before one
is queued.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import current_app, redirect, request, url_for

from bot.channel import outbound
from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.console.participant_page import show
from bot.core.localtime import parse_quiet_hours
from bot.interventions.interpreter.applied import quiet_hours_by_intervention
from bot.reporting.transcript import zone
from bot.store.event_types.takeover import TakeoverEnded, TakeoverStarted
from bot.store.events import EventData, NewEvent, participant_stream
from bot.timers import quiet_hours

log = logging.getLogger(__name__)
MESSAGE_LIMIT = 1600


@console.route("/participants/<participant_id>/takeover", methods=["POST"])
@requires("takeover")
def take_over(participant_id: str) -> Any:
    reason = request.form.get("reason", "").strip()[:500] or None

    def decide(row: dict[str, Any], held: dict[str, Any] | None) -> list[EventData] | str:
        if held is not None and held["status"] == "active":
            return f"Already taken over by {held['started_by']}."
        if row["status"] in ("unenrolled", "withdrawn", "erased"):
            return f"This participant is {row['status']}; there is nothing to take over."
        return [TakeoverStarted(by=actor(), reason=reason)]

    return _change(participant_id, decide)


@console.route("/participants/<participant_id>/handback", methods=["POST"])
@requires("takeover")
def hand_back(participant_id: str) -> Any:
    def decide(row: dict[str, Any], held: dict[str, Any] | None) -> list[EventData] | str:
        if held is None or held["status"] != "active":
            return "The bot already has this conversation; nothing to hand back."
        return [TakeoverEnded(by=actor())]

    return _change(participant_id, decide)


@console.route("/participants/<participant_id>/message", methods=["POST"])
@requires("takeover")
def send(participant_id: str) -> Any:
    text = request.form.get("text", "").strip()
    token = request.form.get("form_token", "")
    if not text or len(text) > MESSAGE_LIMIT:
        return show(participant_id, f"Write a message of 1 to {MESSAGE_LIMIT} characters.", 400)
    if not token:
        return show(participant_id, "The form is incomplete; reload the page.", 400)

    def decide(row: dict[str, Any], held: dict[str, Any] | None) -> list[EventData] | str:
        if held is None or held["status"] != "active":
            return "Take the conversation over before writing to the participant."
        if row["status"] in ("unenrolled", "withdrawn", "erased"):
            return f"The participant is {row['status']}; nothing can be sent to them."
        if row["opted_out"]:
            return "The participant has opted out (STOP); nothing can be sent to them."
        hours = _quiet_hours(row)
        now = services().clock.now()
        if hours is not None and hours.contains(now, zone(row["timezone"])):
            local = now.astimezone(zone(row["timezone"]))
            return (
                f"It is {local:%H:%M} for the participant, inside their quiet hours "
                f"({hours.start:%H:%M}-{hours.end:%H:%M}); the message was not queued."
            )
        return list(outbound.to_participant(row, text, kind="staff"))

    return _change(participant_id, decide, idempotency_key=f"staff-message:{token}")


def _change(participant_id: str, decide: Any, idempotency_key: str | None = None) -> Any:
    """Decide on the participant and their takeover as they stand under the stream's lock,
    and append the decision; a refusal is shown on the participant's page."""
    store = services().store
    stream = participant_stream(participant_id)
    takeovers = next(p for p in store.projections if p.name == "takeovers")
    heads = next(p for p in store.projections if p.name == "participants")
    with store.transaction() as tx:
        tx.lock(stream)
        row = tx.row(heads, participant_id)
        if row is None:
            return refused(404, "No participant with this id.")
        decided = decide(dict(row), tx.row(takeovers, participant_id))
        if not isinstance(decided, str):
            meta = {"actor": actor()}
            tx.append(stream, [NewEvent(e, meta=meta) for e in decided], None, idempotency_key)
    if isinstance(decided, str):
        return show(participant_id, decided, 409)
    log.info("console: %s for participant %s", decided[0].event_type, participant_id)
    return redirect(url_for("console.participant", participant_id=participant_id) + "#takeover")


def _quiet_hours(row: dict[str, Any]) -> Any:
    root = current_app.extensions["tandem_console"]["interventions"]
    default = parse_quiet_hours(services().settings.quiet_hours)
    return quiet_hours.for_participant(row, default, quiet_hours_by_intervention(root))
