"""Withdrawing a participant from their page, with the same rules as the API and `tandem withdraw`.

`bot.channel.withdrawal.withdraw` decides the events (every unsent message suppressed, every
timer cancelled, `participant.withdrawn` with the reason and who asked); this page adds a
required reason and confirmation, ends an active takeover, and names the staff member in
`meta.actor` of every event.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import redirect, request, url_for

from bot.channel import withdrawal
from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.console.participant_page import show
from bot.store.event_types.takeover import TakeoverEnded
from bot.store.events import EventData, NewEvent, participant_stream
from bot.store.queries import pending_outbox, pending_timers

log = logging.getLogger(__name__)
REASON_LIMIT = 2000  # as POST /conversation/participants/{id}/withdraw allows


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
    store = services().store
    stream = participant_stream(participant_id)
    heads = next(p for p in store.projections if p.name == "participants")
    takeovers = next(p for p in store.projections if p.name == "takeovers")
    with store.transaction() as tx:
        row = tx.lock(stream) or tx.row(heads, participant_id)
        if row is None:
            return refused(404, "No participant with this id.")
        try:
            decided: list[EventData] = withdrawal.withdraw(
                row,
                pending_timers(tx.conn, participant_id),
                pending_outbox(tx.conn, participant_id),
                reason,
                requested_by,
                services().clock.now(),
            )
        except withdrawal.NotWithdrawable as exc:
            problem: str | None = f"Not withdrawn: {exc}."
        else:
            problem = None
            held = tx.row(takeovers, participant_id)
            if held is not None and held["status"] == "active":
                decided.append(TakeoverEnded(by=actor()))
            meta = {"actor": actor()}
            tx.append(stream, [NewEvent(e, meta=meta) for e in decided], row["version"])
    if problem is not None:
        return show(participant_id, problem, 409, at="withdraw")
    log.info("console: participant %s withdrawn", participant_id)
    return redirect(url_for("console.participant", participant_id=participant_id))
