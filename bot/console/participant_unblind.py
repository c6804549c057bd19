"""Unblinding one participant of a blinded study from their page: an admin act with a reason,
recorded as `participant.unblinded` (bot.services.unblinding); the page then shows the arm."""

from __future__ import annotations

import logging
from typing import Any

from flask import redirect, request, url_for

from bot.console import arm_view
from bot.console.blueprint import console, services
from bot.console.guard import actor, requires
from bot.console.participant_page import show
from bot.services import unblinding
from bot.services.refusal import Refused

log = logging.getLogger(__name__)


@console.route("/participants/<participant_id>/unblind", methods=["POST"])
@requires("unblind")
def unblind(participant_id: str) -> Any:
    try:
        unblinding.unblind(
            services().store,
            participant_id,
            reason=request.form.get("reason", ""),
            by=actor(),
            studies=arm_view.catalogue(),
        )
    except Refused as exc:
        code = {"not_found": 404, "conflict": 409}.get(exc.kind, 400)
        return show(participant_id, exc.message, code, at="unblind")
    log.info("console: participant %s unblinded", participant_id)
    return redirect(url_for("console.participant", participant_id=participant_id))
