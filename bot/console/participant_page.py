"""A participant's page: profile, transcript, timeline, the step on the graph, timers, alerts."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlsplit

from flask import current_app, g, render_template, request
from sqlalchemy import and_, select

from bot.channel import withdrawal
from bot.console import form_panel, intervention_graph, roles
from bot.console.blueprint import console, services
from bot.console.guard import refused
from bot.reporting.transcript import LINE_TYPES, TranscriptLine, read_page, zone
from bot.store.events import participant_stream
from bot.store.queries import pending_timers
from bot.store.schema import alerts, events
from bot.store.stored_rows import opened_row

TRANSCRIPT_LINES = 100
TIMELINE_EVENTS = 200
# The timeline's filter: event-type families a researcher looks for.
ENDINGS = {"withdrawn": "participant.withdrawn", "erased": "participant.erased"}
FAMILIES = (
    "message", "participant", "step", "form", "judgement", "timer", "alert", "llm", "work", "staff",
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
    root = current_app.extensions["tandem_console"]["interventions"]
    drawn = intervention_graph.draw(root, row["intervention"])
    with services().store.reading() as conn:
        timers = pending_timers(conn, participant_id)
        timeline = [
            opened_row(r, services().store.sealer, conn)
            for r in _timeline(conn, participant_id, family, int(before) if before else None)
        ]
        ended = _ending(conn, participant_id, row["status"])
    return render_template(
        "console/participant.html",
        p=row,
        lines=last_lines(participant_id),
        tz=zone(row["timezone"]),
        timeline=timeline,
        families=FAMILIES,
        family=family,
        timers=timers,
        alerts=participant_alerts,
        graph=intervention_graph.highlighted(drawn, row["current_step"]),
        graph_problems=drawn.problems,
        per_page=TIMELINE_EVENTS,
        takeover=services().store.projection_row("takeovers", participant_id),
        form_token=secrets.token_urlsafe(16),  # a message form sent twice is queued once
        problem=problem,
        problem_at=at,
        ended=ended,
        forms=form_panel.panels(drawn.intervention, row),
        requesters=withdrawal.REQUESTERS,
    ), code


@console.route("/participants/<participant_id>/transcript")
def transcript(participant_id: str) -> Any:
    """The transcript alone: what the participant page polls for live updates."""
    row, _, refusal = _visible(participant_id)
    if refusal is not None:
        return refusal
    return render_template(
        "console/transcript.html",
        p=row,
        lines=last_lines(participant_id),
        tz=zone(row["timezone"]),
    )


def _visible(participant_id: str) -> tuple[Any, list[dict[str, Any]], Any]:
    """The participant, their alerts, and the 404/403 page to answer instead (or None): a
    supervisor sees only participants with an alert."""
    store = services().store
    row = store.projection_row("participants", participant_id)
    if row is None:
        return None, [], refused(404, "No participant with this id.")
    with store.reading() as conn:
        found = conn.execute(
            select(alerts)
            .where(alerts.c.participant_id == participant_id)
            .order_by(alerts.c.raised_at.desc())
        ).all()
    participant_alerts = [dict(r._mapping) for r in found]
    if not roles.allowed(g.staff["role"], "participants") and not (
        roles.allowed(g.staff["role"], "alerts") and participant_alerts
    ):
        return row, [], refused(403, "Your role shows only the participants with an alert.")
    return row, participant_alerts, None


def last_lines(participant_id: str, count: int = TRANSCRIPT_LINES) -> list[TranscriptLine]:
    """The newest `count` lines of the transcript, oldest first."""
    store = services().store
    with store.reading() as conn:
        seqs = conn.execute(
            select(events.c.seq)
            .where(
                and_(
                    events.c.stream_id == participant_stream(participant_id),
                    events.c.event_type.in_(LINE_TYPES),
                )
            )
            .order_by(events.c.seq.desc())
            .limit(count)
        ).all()
    if not seqs:
        return []
    lines, _ = read_page(store, participant_id, seqs[-1].seq - 1, count)
    return lines


def _ending(conn: Any, participant_id: str, status: str) -> Any:
    """For a withdrawn or erased participant, the event that made them so: when, why, who
    asked, who recorded it (a withdrawal's reason is sealed personal data: opened here)."""
    event_type = ENDINGS.get(status)
    if event_type is None:
        return None
    found = conn.execute(
        select(
            events.c.event_id,
            events.c.stream_id,
            events.c.event_type,
            events.c.recorded_at,
            events.c.data,
            events.c.meta,
        )
        .where(
            and_(
                events.c.stream_id == participant_stream(participant_id),
                events.c.event_type == event_type,
            )
        )
        .order_by(events.c.seq.desc())
        .limit(1)
    ).first()
    return None if found is None else opened_row(found, services().store.sealer, conn)


def _timeline(conn: Any, participant_id: str, family: str, before: int | None) -> list[Any]:
    """The newest events (of one family if asked), before event `before` if given."""
    clauses = [events.c.stream_id == participant_stream(participant_id)]
    if family:
        clauses.append(events.c.event_type.like(f"{family}.%"))
    if before is not None:
        clauses.append(events.c.seq < before)
    query = (
        select(
            events.c.seq,
            events.c.event_id,
            events.c.stream_id,
            events.c.event_type,
            events.c.recorded_at,
            events.c.data,
            events.c.meta,
        )
        .where(and_(*clauses))
        .order_by(events.c.seq.desc())
        .limit(TIMELINE_EVENTS)
    )
    return conn.execute(query).all()
