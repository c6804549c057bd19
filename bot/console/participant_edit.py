"""Changing a participant from their page: name, timezone and status, refused when stale.

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
from bot.store.event_types import ParticipantStatusChanged, ParticipantUpdated
from bot.store.events import EventData, NewEvent, participant_stream
from bot.store.queries import pending_timers
from bot.timers import lifecycle

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
    store = services().store
    stream = participant_stream(participant_id)
    heads = next(p for p in store.projections if p.name == "participants")
    with store.transaction() as tx:
        row = tx.lock(stream) or tx.row(heads, participant_id)
        if row is None:
            return show(participant_id)
        if row["status"] in ("withdrawn", "unenrolled", "erased"):
            problem: str | None = f"The participant is {row['status']}; nothing was applied."
        elif row["version"] != int(version):
            stale = (
                "The participant changed since this page was drawn (version "
                f"{version}, now {row['version']}); nothing was applied. Check and try again."
            )
            problem = stale
        else:
            problem = None
            decided = _decide(tx, dict(row), name, timezone, status)
            if decided:
                meta = {"actor": actor()}
                tx.append(stream, [NewEvent(e, meta=meta) for e in decided], row["version"])
    if problem is not None:
        return show(participant_id, problem, 409)
    log.info("console: participant %s changed", participant_id)
    return redirect(url_for("console.participant", participant_id=participant_id))


def _decide(tx: Any, row: dict[str, Any], name: str | None, tz: str, status: str) -> list:
    given = {"name": name, "timezone": tz}
    changes = {k: v for k, v in given.items() if row.get(k) != v}
    decided: list[EventData] = [ParticipantUpdated(changes=changes)] if changes else []
    if status != row["status"]:
        decided.append(ParticipantStatusChanged(status=status, reason="researcher (console)"))
        decided += lifecycle.on_status_change(
            {**row, **changes, "status": status},
            pending_timers(tx.conn, row["participant_id"]),
            status,
            services().clock.now(),
            events=tx.load(participant_stream(row["participant_id"])),
        )
    return decided
