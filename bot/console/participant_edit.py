"""Changing a participant from their page: name, timezone and status, refused when stale
(the act is `bot.services.participant_update`, the API's too).

The form carries the participant's version; if anything was recorded for them since the page
was drawn (a message, a judgement, another researcher's change), nothing is applied and the
page says so, so no change is made on a picture of the participant that is no longer true.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import redirect, request, url_for

from bot.console.blueprint import console, services
from bot.console.guard import actor, requires
from bot.console.participant_page import show
from bot.core.localtime import validate_timezone
from bot.services import participant_update
from bot.services.refusal import Refused

log = logging.getLogger(__name__)
# Withdrawing has its own form (a reason and who asked are required): participant_withdraw.
STATUSES = ("active", "paused", "completed")


@console.route("/participants/<participant_id>/edit", methods=["POST"])
@requires("enroll")
def edit(participant_id: str) -> Any:
    form = request.form
    version = form.get("version", "")
    name = form.get("name", "").strip() or None
    timezone = form.get("timezone", "").strip()
    status = form.get("status", "")
    problems = []
    if not version.isdigit():
        problems.append("The form is incomplete; reload the page.")
    try:
        validate_timezone(timezone)
    except ValueError as exc:
        problems.append(f"timezone: {exc}")
    if status not in STATUSES:
        problems.append(
            f"status must be one of {', '.join(STATUSES)} (withdraw with the Withdraw form)"
        )
    if name is not None and len(name) > 200:
        problems.append("name: at most 200 characters")
    if problems:
        return show(participant_id, "; ".join(problems), 400)
    try:
        participant_update.update(
            services().store,
            participant_id,
            {"name": name, "timezone": timezone, "status": status},
            actor=actor(),
            now=services().clock.now(),
            reason="researcher (console)",
            expected_version=int(version),
            leave_withdrawn=True,
        )
    except Refused as exc:
        if exc.kind == "not_found":
            return show(participant_id)
        return show(participant_id, exc.message, 409)
    log.info("console: participant %s changed", participant_id)
    return redirect(url_for("console.participant", participant_id=participant_id))
