"""Search over message text, within one participant or across participants.

Message text is sealed per participant and never indexed in plaintext: a search opens, in
this process, the transcripts the staff member's role may read (every participant for a role
with `participants`; for a supervisor only those the participant page would show them) and
scans them. Matches are listed participant by participant, oldest message first, each linking
to the page of the transcript that ends with it.
"""

from __future__ import annotations

from typing import Any

from flask import g, render_template, request

from bot.console import roles
from bot.console.blueprint import console, services
from bot.console.guard import refused
from bot.reporting.message_search import MAX_MATCHES, Match, scan
from bot.store.reads.message_search import searchable_ids

MAX_QUERY = 200


@console.route("/search")
def search() -> Any:
    role = g.staff["role"]
    if not (roles.allowed(role, "participants") or roles.allowed(role, "alerts")):
        return refused(403, "Your role does not allow reading messages.")
    supervisor = not roles.allowed(role, "participants")
    text = request.args.get("q", "").strip()
    participant = request.args.get("participant", "").strip() or None
    store = services().store
    problem = None
    if len(text) > MAX_QUERY:
        problem = f"The search text is longer than {MAX_QUERY} characters."
    ids = searchable_ids(store, supervisor=supervisor, only=participant)
    if participant is not None and not ids:
        if store.projection_row("participants", participant) is None:
            return refused(404, "No participant with this id.")
        return refused(
            403, "Your role shows only the participants with a crisis alert or review item."
        )
    matches: list[Match] = []
    more = False
    if text and problem is None:
        matches, more = scan(store, ids, text)
    return render_template(
        "console/search.html",
        q=text,
        participant=participant,
        scanned=len(ids),
        matches=matches,
        more=more,
        limit=MAX_MATCHES,
        problem=problem,
    ), (400 if problem else 200)
