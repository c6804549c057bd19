"""A participant's page: profile, transcript, timeline, the step on the graph, timers, alerts."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlsplit

from flask import current_app, g, render_template, request

from bot.channel import withdrawal
from bot.console import arm_view, form_panel, intervention_graph, roles
from bot.console.blueprint import console, services
from bot.console.guard import refused
from bot.reporting import transcript_window
from bot.reporting.transcript import zone
from bot.services import takeover as takeover_service
from bot.store.reads.participant_page import page_reads, participant_alerts

TRANSCRIPT_LINES = 100
TIMELINE_EVENTS = 200
# The timeline's filter: event-type families a researcher looks for.
ENDINGS = {"withdrawn": "participant.withdrawn", "erased": "participant.erased"}
FAMILIES = (
    "message", "participant", "step", "form", "judgement", "timer", "alert", "llm", "work", "staff",
    "instrument", "schedule",
)  # fmt: skip


@console.app_template_test("https_link")
def https_link(url: object) -> bool:
    """Whether a media URL may be a link: `https:` to a named host only. A webhook's media URL
    is outside data; `javascript:` or `data:` in an href would run in the console's origin."""
    if not isinstance(url, str) or any(c.isspace() or ord(c) < 32 for c in url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme == "https" and bool(parts.hostname)


@console.route("/participants/<participant_id>")
def participant(participant_id: str) -> Any:
    return show(participant_id)


def show(
    participant_id: str, problem: str | None = None, code: int = 200, at: str = "takeover"
) -> Any:
    """The page, with `problem` (a refused action) shown beside the form of section `at`."""
    row, participant_alerts, refusal = _visible(participant_id)
    if refusal is not None:
        return refusal
    family = request.args.get("family", "")
    if family and family not in FAMILIES:
        return refused(400, f"unknown event family {family!r}; one of {', '.join(FAMILIES)}")
    before = request.args.get("before", "")
    if before and not before.isdigit():
        return refused(400, "before must be an event number")
    page, bad = _transcript_page(participant_id)
    if page is None:
        return refused(400, bad)
    root = current_app.extensions["tandem_console"]["interventions"]
    drawn = intervention_graph.draw(root, row["intervention"])
    study = arm_view.view(row)
    reads = page_reads(
        services().store,
        participant_id,
        ending_type=ENDINGS.get(row["status"]),
        family=family,
        before=int(before) if before else None,
        limit=TIMELINE_EVENTS,
    )
    timeline = reads.timeline
    if study["hidden"]:  # nothing on the page may name the arm
        timeline = arm_view.masked_timeline(timeline, study["arm"])
        row = {**row, "intervention": arm_view.HIDDEN}
    return render_template(
        "console/participant.html",
        p=row,
        study=study,
        page=page,
        lines=page.lines,
        tz=zone(row["timezone"]),
        timeline=timeline,
        families=FAMILIES,
        family=family,
        timers=reads.timers,
        alerts=participant_alerts,
        graph=None
        if study["hidden"]
        else intervention_graph.highlighted(drawn, row["current_step"]),
        graph_problems=[] if study["hidden"] else drawn.problems,
        per_page=TIMELINE_EVENTS,
        takeover=services().store.projection_row("takeovers", participant_id),
        waiting=takeover_service.waiting_now(services().store, participant_id),
        form_token=secrets.token_urlsafe(16),  # a message form sent twice is queued once
        problem=problem,
        problem_at=at,
        ended=reads.ended,
        forms=[] if study["hidden"] else form_panel.panels(drawn.intervention, row),
        requesters=withdrawal.REQUESTERS,
    ), code


@console.route("/participants/<participant_id>/transcript")
def transcript(participant_id: str) -> Any:
    """The transcript alone: what the participant page polls for live updates."""
    row, _, refusal = _visible(participant_id)
    if refusal is not None:
        return refusal
    page, bad = _transcript_page(participant_id)
    if page is None:
        return refused(400, bad)
    return render_template(
        "console/transcript.html",
        p=row,
        page=page,
        lines=page.lines,
        tz=zone(row["timezone"]),
    )


def _transcript_page(participant_id: str) -> tuple[transcript_window.Window | None, str]:
    """The transcript page the query string asks for (`tbefore`/`tafter`), or why it is bad."""
    try:
        before = transcript_window.cursor(request.args.get("tbefore", ""), "tbefore")
        after = transcript_window.cursor(request.args.get("tafter", ""), "tafter")
    except ValueError as bad:
        return None, str(bad)
    if before is not None and after is not None:
        return None, "give tbefore or tafter, not both"
    return transcript_window.window(
        services().store, participant_id, before=before, after=after, count=TRANSCRIPT_LINES
    ), ""


def _visible(participant_id: str) -> tuple[Any, list[dict[str, Any]], Any]:
    """The participant, their alerts, and the 404/403 page to answer instead (or None): a
    supervisor sees only participants with an alert for supervisors (a crisis, a review item,
    or one they were texted about), never for an operational one alone (`turn_failed`)."""
    store = services().store
    row = store.projection_row("participants", participant_id)
    if row is None:
        return None, [], refused(404, "No participant with this id.")
    found = participant_alerts(store, participant_id)
    if not roles.allowed(g.staff["role"], "participants") and not (
        roles.allowed(g.staff["role"], "alerts") and any(for_supervisors(a) for a in found)
    ):
        return (
            row,
            [],
            refused(
                403, "Your role shows only the participants with a crisis alert or review item."
            ),
        )
    return row, found, None


def for_supervisors(alert: dict[str, Any]) -> bool:
    """An alert that asks supervisors to act: a crisis, a review item, or one texted to them."""
    return bool(
        alert["kind"] == "crisis" or alert["severity"] == "review" or alert["notify_supervisors"]
    )
