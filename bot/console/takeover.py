"""The console's takeover buttons: take over, hand back, and write as staff.

The acts and their rules (quiet hours, opt-out, who holds the conversation) are
`bot.services.takeover`; this page turns a form into a call and a refusal into the message on
the participant's page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import current_app, redirect, request, url_for

from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.console.participant_page import show
from bot.core.localtime import parse_quiet_hours
from bot.interventions.interpreter.applied import quiet_hours_by_intervention
from bot.services import takeover
from bot.services.refusal import Refused

log = logging.getLogger(__name__)


@console.route("/participants/<participant_id>/takeover", methods=["POST"])
@requires("takeover")
def take_over(participant_id: str) -> Any:
    reason = request.form.get("reason", "")
    return _answer(
        participant_id,
        "takeover.started",
        lambda: takeover.take_over(services().store, participant_id, actor=actor(), reason=reason),
    )


@console.route("/participants/<participant_id>/handback", methods=["POST"])
@requires("takeover")
def hand_back(participant_id: str) -> Any:
    """Hand back with the choice for the waiting messages (`waiting`: answer, bot, handled);
    "answer" keeps the takeover and takes the staff member to the message form."""
    choice = request.form.get("waiting") or None
    done: list[takeover.HandBack] = []
    answer = _answer(
        participant_id,
        "takeover.ended",
        lambda: done.append(
            takeover.hand_back(services().store, participant_id, actor=actor(), waiting=choice)
        ),
    )
    if done and not done[0].handed_back:
        target = url_for("console.participant", participant_id=participant_id)
        return redirect(target + "#staff-text")
    return answer


@console.route("/participants/<participant_id>/message", methods=["POST"])
@requires("takeover")
def send(participant_id: str) -> Any:
    root = current_app.extensions["tandem_console"]["interventions"]
    return _answer(
        participant_id,
        "staff message",
        lambda: takeover.send_as_staff(
            services().store,
            participant_id,
            request.form.get("text", ""),
            actor=actor(),
            form_token=request.form.get("form_token", ""),
            now=services().clock.now(),
            default_quiet_hours=parse_quiet_hours(services().settings.quiet_hours),
            quiet_hours_by_intervention=quiet_hours_by_intervention(root),
        ),
    )


def _answer(participant_id: str, what: str, act: Callable[[], object]) -> Any:
    """Carry out the act; a refusal is shown on the participant's page."""
    try:
        act()
    except Refused as exc:
        if exc.kind == "not_found":
            return refused(404, "No participant with this id.")
        return show(participant_id, exc.message, 409 if exc.kind == "conflict" else 400)
    log.info("console: %s for participant %s", what, participant_id)
    return redirect(url_for("console.participant", participant_id=participant_id) + "#takeover")
