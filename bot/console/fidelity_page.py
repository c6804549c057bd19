"""Fidelity review: staff with the `rate` permission (reviewers, researchers, admins) rate the
bot's turns of a transcript 1 to 5, tick the intervention's checklist (`review_checklist:`) and
comment (bot.services.ratings). The pages are blind: a participant is shown by a review code,
never their id, phone or name (names, phone numbers and e-mail addresses in the messages are
redacted as a pseudonymised export redacts them, bot.reporting.redact), and nothing names
their arm or intervention."""

from __future__ import annotations

import logging
from typing import Any

from flask import current_app, g, redirect, render_template, request, url_for

from bot.console import intervention_graph
from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.reporting.redact import Redactor
from bot.reporting.transcript import TranscriptLine, read_lines
from bot.services import ratings as rating_service
from bot.services.refusal import Refused
from bot.store.event_types.ratings import TurnRated
from bot.store.events import EventData
from bot.store.reads import ratings

log = logging.getLogger(__name__)


@console.route("/fidelity", endpoint="fidelity")
@requires("rate")
def transcripts() -> Any:
    """Every transcript by review code, with how many turns the signed-in reviewer rated."""
    store = services().store
    rows = []
    for code, pid in ratings.reviewable(store):
        mine = [e for e in ratings.ratings(store, pid) if _by(e.data) == actor()]
        rows.append({"code": code, "rated": len(mine)})
    return render_template("console/fidelity.html", rows=rows)


@console.route("/fidelity/<code>", endpoint="fidelity_transcript")
@requires("rate")
def transcript(code: str) -> Any:
    return _page(code)


@console.route("/fidelity/<code>/<message_id>", methods=["POST"], endpoint="rate_turn")
@requires("rate")
def rate(code: str, message_id: str) -> Any:
    store = services().store
    pid = ratings.participant_of_code(store, code)
    if pid is None:
        return refused(404, "No transcript with this review code.")
    row = store.projection_row("participants", pid)
    assert row is not None  # the code was made from its id
    checklist = [item.key for item in _checklist(row)]
    try:
        rating_service.rate(
            store,
            pid,
            message_id,
            score=request.form.get("score", ""),
            checks={key: True for key in request.form.getlist("check")},
            checklist=checklist,
            comment=request.form.get("comment", ""),
            by=actor(),
            intervention=row["intervention"],
        )
    except Refused as exc:
        if exc.kind == "not_found":
            return refused(404, "No bot turn with this id in this transcript.")
        return _page(code, problem=(message_id, exc.message), status=400)
    log.info("console: turn %s rated", message_id)
    return redirect(url_for("console.fidelity_transcript", code=code) + f"#turn-{message_id}")


def _page(code: str, problem: tuple[str, str] | None = None, status: int = 200) -> Any:
    store = services().store
    pid = ratings.participant_of_code(store, code)
    if pid is None:
        return refused(404, "No transcript with this review code.")
    row = store.projection_row("participants", pid)
    assert row is not None
    redactor = Redactor.of(row)
    mine: dict[str, Any] = {}
    for event in ratings.ratings(store, pid):
        if isinstance(event.data, TurnRated) and event.data.by == actor():
            mine[event.data.message_id] = event.data
    lines = [_blind(line, redactor) for line in read_lines(store, pid)]
    rateable = {line["message_id"] for line in lines if line["bot"]}
    return render_template(
        "console/fidelity_transcript.html",
        code=code,
        lines=lines,
        checklist=_checklist(row),
        mine=mine,
        problem=problem if problem and problem[0] in rateable else None,
        page_problem=problem[1] if problem and problem[0] not in rateable else None,
        reviewer=g.staff["email"],
    ), status


def _blind(line: TranscriptLine, redactor: Redactor) -> dict[str, Any]:
    """What the blind page shows of a line: who wrote it, its redacted text, whether it is a
    bot turn that can be rated."""
    bot = line.direction == "outbound" and line.kind not in rating_service.NOT_BOT_TURNS
    return {
        "message_id": line.message_id,
        "inbound": line.direction == "inbound",
        "bot": bot,
        "text": redactor.text(line.text) if line.text else "(no text)",
    }


def _checklist(row: dict[str, Any]) -> list[Any]:
    """The checklist of the participant's intervention (none if it cannot be read)."""
    root = current_app.extensions["tandem_console"]["interventions"]
    drawn = intervention_graph.draw(root, row["intervention"])
    if drawn.intervention is None:
        return []
    return list(drawn.intervention.config.review_checklist)


def _by(data: EventData) -> str | None:
    return data.by if isinstance(data, TurnRated) else None
