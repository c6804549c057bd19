"""Erasing an unknown sender's messages (admins only), through the one sender-erasure service.

`bot.services.sender_erasure.erase_phone` does the act for `tandem erase --phone` and this page
alike: the number (typed twice), the reason, the key destroyed and `sender.erased` recorded with
the staff member as the actor. The number is never shown back nor logged.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import render_template, request

from bot.console.blueprint import console, services
from bot.console.guard import actor, requires
from bot.services import sender_erasure, withdrawal
from bot.services.refusal import Refused

log = logging.getLogger(__name__)
REASON_LIMIT = 2000
PHONE_LIMIT = 40
STATUS = {"invalid": 400, "conflict": 409, "not_found": 404}


def _page(problem: str | None = None, code: int = 200, done: Any = None) -> tuple[str, int]:
    settings = services().settings
    page = render_template(
        "console/senders.html",
        problem=problem,
        done=done,
        requesters=withdrawal.REQUESTERS,
        retention_days=settings.unknown_sender_retention_days,
        sealed=services().store.sealer.enabled,
    )
    return page, code


@console.route("/senders")
@requires("erase")
def senders() -> Any:
    return _page()


@console.route("/senders/erase", methods=["POST"])
@requires("erase")
def sender_erase() -> Any:
    form = request.form
    phone, again = form.get("phone", "").strip(), form.get("confirm", "").strip()
    reason = form.get("reason", "").strip()
    requested_by = form.get("requested_by", "")
    if len(phone) > PHONE_LIMIT or "\0" in phone or "\0" in reason:
        return _page("phone: not a phone number", 400)
    if len(reason) > REASON_LIMIT:
        return _page(f"reason: at most {REASON_LIMIT} characters", 400)
    if requested_by not in withdrawal.REQUESTERS:
        return _page(f"requested by: one of {', '.join(withdrawal.REQUESTERS)}", 400)
    if not phone or again != phone:
        return _page("Erasing cannot be undone: type the same number in both boxes.", 400)
    try:
        done = sender_erasure.erase_phone(
            services().store,
            phone,
            reason=reason,
            requested_by=requested_by,
            actor=actor(),
            default_region=services().settings.default_region,
        )
    except Refused as exc:
        return _page(str(exc), STATUS[exc.kind])
    log.info("console: unknown sender %s erased (%d events)", done.sender_id, done.sealed_events)
    return _page(done=done)
