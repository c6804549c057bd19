"""Erasing a participant from their page (admins only), through the one erasure service.

`bot.services.erasure.erase` does the act for the API, `tandem erase` and this page alike:
the confirmation (the participant id, typed), the reason, the data key destroyed and the rows
rebuilt. The page names the staff member as the actor and shows `[erased]` afterwards.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import redirect, request, url_for

from bot.console.blueprint import console, services
from bot.console.guard import actor, requires
from bot.console.participant_page import show
from bot.services import erasure, withdrawal
from bot.services.refusal import Refused

log = logging.getLogger(__name__)
REASON_LIMIT = 2000
STATUS = {"invalid": 400, "conflict": 409, "not_found": 404}


@console.route("/participants/<participant_id>/erase", methods=["POST"])
@requires("erase")
def erase(participant_id: str) -> Any:
    form = request.form
    reason = form.get("reason", "").strip()
    requested_by = form.get("requested_by", "")
    if len(reason) > REASON_LIMIT:
        return show(participant_id, f"reason: at most {REASON_LIMIT} characters", 400, at="erase")
    if requested_by not in withdrawal.REQUESTERS:
        problem = f"requested by: one of {', '.join(withdrawal.REQUESTERS)}"
        return show(participant_id, problem, 400, at="erase")
    if form.get("confirm", "").strip() != participant_id:  # the service's words name its field
        problem = (
            f"Erasing cannot be undone: type the participant id, {participant_id}, in the "
            "confirmation box to erase this participant."
        )
        return show(participant_id, problem, 400, at="erase")
    try:
        done = erasure.erase(
            services().store,
            participant_id,
            confirm=form.get("confirm", "").strip(),
            reason=reason,
            requested_by=requested_by,
            actor=actor(),
        )
    except Refused as exc:
        return show(participant_id, str(exc), STATUS[exc.kind], at="erase")
    log.info("console: participant %s erased (%d events)", participant_id, done.sealed_events)
    return redirect(url_for("console.participant", participant_id=participant_id))
