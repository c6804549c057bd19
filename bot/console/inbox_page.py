"""The inbox of messages that need a human (`/console/inbox`): from unknown numbers, from
participants who withdrew or opted out, and those that arrived during a takeover; newest first,
paged, each markable as handled (`bot.services.inbox`, recorded with who and when).

Admins and researchers see every entry; a supervisor sees only the messages of participants
they may see (an alert for supervisors), never unknown senders' texts."""

from __future__ import annotations

import logging
from typing import Any

from flask import g, redirect, render_template, request, url_for

from bot.console import roles
from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.services import inbox
from bot.services.refusal import Refused
from bot.store.reads.human_inbox import supervised_participants

log = logging.getLogger(__name__)
PAGE = 50


def visible() -> list[inbox.Entry]:
    """The entries the signed-in staff member may see, newest first."""
    found = inbox.entries(services().store)
    if roles.allowed(g.staff["role"], "participants"):
        return found
    mine = supervised_participants(services().store)
    return [e for e in found if e.participant_id is not None and e.participant_id in mine]


@console.app_context_processor
def _nav_count() -> dict[str, object]:
    """The nav's count of messages waiting for the signed-in staff member."""
    return {"inbox_count": lambda: len(visible())}


@console.route("/inbox", endpoint="inbox")
@requires("inbox")
def inbox_page() -> Any:
    raw = request.args.get("page", "1")
    if not (raw.isascii() and raw.isdigit() and int(raw) >= 1):
        return refused(
            400,
            f"The page {raw!r} is not a page number: give a whole number from 1.",
            back=url_for("console.inbox"),
            back_label="The inbox",
        )
    page = int(raw)
    rows = visible()
    pages = max(1, -(-len(rows) // PAGE))
    shown = rows[(page - 1) * PAGE : page * PAGE]
    return render_template(
        "console/inbox.html", rows=shown, total=len(rows), page=page, pages=pages
    )


@console.route("/inbox/<message_id>/handled", methods=["POST"])
@requires("inbox")
def mark_handled(message_id: str) -> Any:
    if not any(e.message_id == message_id for e in visible()):
        return refused(
            404,
            "No message needing a human with this id that your role may see (it may have been "
            "handled already).",
            back=url_for("console.inbox"),
            back_label="The inbox",
        )
    try:
        inbox.mark_handled(services().store, message_id, actor=actor())
    except Refused:
        return refused(404, "No message with this id.")
    log.info("console: message %s marked handled", message_id)
    return redirect(url_for("console.inbox", page=request.form.get("page", "1")))
