"""Withdrawing a participant from their page: the form's checks, then `bot.services.withdrawal`.

The act (every unsent message suppressed, every timer cancelled, an active takeover ended,
`participant.withdrawn` with the reason and who asked, the staff member in `meta.actor`) is
the same as the API's and `tandem withdraw`'s; this page adds the confirmation box.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import redirect, request, url_for

from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.console.participant_page import show
from bot.services import withdrawal
from bot.services.refusal import Refused

log = logging.getLogger(__name__)
REASON_LIMIT = withdrawal.REASON_LIMIT


@console.route("/participants/<participant_id>/withdraw", methods=["POST"])
@requires("withdraw")
def withdraw(participant_id: str) -> Any:
    form = request.form
    reason = form.get("reason", "").strip()
    requested_by = form.get("requested_by", "")
    problems = []
    if not reason or len(reason) > REASON_LIMIT:
        problems.append(f"reason: say why, in 1 to {REASON_LIMIT} characters")
    if requested_by not in withdrawal.REQUESTERS:
        problems.append(f"requested by: one of {', '.join(withdrawal.REQUESTERS)}")
    if form.get("confirm") != "yes":
        problems.append("tick the box to confirm: nothing more will ever be sent to them")
    if problems:
        return show(participant_id, "; ".join(problems), 400, at="withdraw")
    try:
        withdrawal.withdraw(
            services().store,
            participant_id,
            reason=reason,
            requested_by=requested_by,
            actor=actor(),
            now=services().clock.now(),
        )
    except Refused as exc:
        if exc.kind == "not_found":
            return refused(404, "No participant with this id.")
        return show(participant_id, f"Not withdrawn: {exc.message}.", 409, at="withdraw")
    log.info("console: participant %s withdrawn", participant_id)
    return redirect(url_for("console.participant", participant_id=participant_id))
