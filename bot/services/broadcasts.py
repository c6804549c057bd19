"""Broadcasts: one message to a filtered group of participants, for the API, the console and
`tandem broadcast` alike.

`create` checks the request, finds the audience and renders every recipient's text (or, for a
broadcast that starts a step, checks the step in every recipient's intervention,
bot.services.broadcast_steps); a dry run stops there and answers the count and three samples,
recording nothing. Otherwise it records
the broadcast and one planned recipient each (with the moment due, in their own timezone) in
one transaction (`bot.store.broadcast_plans`), so a restart finds every recipient still to
send. The broadcaster (`bot.services.broadcast_sending`, run by `bot.runtime.broadcaster`)
sends them later, at BROADCAST_RATE_PER_SECOND. `cancel` stops what has not been queued yet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jinja2

from bot.interventions.validation.catalogue import Catalogue
from bot.services import blinding, broadcast_steps
from bot.services import broadcast_audience as audiences
from bot.services.refusal import Refused
from bot.store.broadcast_plans import record_plan
from bot.store.event_store import EventStore
from bot.store.event_types.broadcasts import (
    BroadcastCancelled,
    BroadcastCreated,
    BroadcastPlanned,
    broadcast_stream,
)
from bot.store.events import NewEvent, new_id
from bot.store.reads import broadcasts as reads

SAMPLES = 3
TITLE_LIMIT = 200
TEMPLATE_SID = r"^HX[0-9a-fA-F]{32}$"


@dataclass(frozen=True)
class Planned:
    """What `create` found: the broadcast id (None for a dry run), how many participants it
    reaches, three rendered samples, and those whose text did not render (with why)."""

    broadcast_id: str | None
    recipients: int
    samples: list[dict[str, str]]
    unrenderable: list[dict[str, str]]


def create(
    store: EventStore,
    catalogue: Catalogue,
    request: dict[str, Any],
    *,
    actor: str,
    now: datetime,
    dry_run: bool = False,
    schedule: str | None = None,
    broadcast_id: str | None = None,
    viewer: blinding.Viewer | None = None,
) -> Planned:
    """Check `request` (message or step, filter, send_at, whatsapp_template, title), find who
    it reaches and render their texts; unless `dry_run`, record the broadcast and its plan
    (`schedule` names the study's declared broadcast that makes it, if one does, with the id
    it derives: recording it twice is refused, bot.store.broadcast_plans).
    Refused: a bad field, a step some recipient's intervention lacks, an audience of nobody,
    or (for a `viewer` whose role is blinded) an arm or an arm's intervention of a blinded
    study: its count and samples would sort participants by arm."""
    step = None
    if request.get("step") not in (None, ""):
        if request.get("message"):
            raise Refused("a message or a step to start, not both", "step")
        step = broadcast_steps.check_step(request["step"])
    else:
        template = audiences.compile_message(str(request.get("message") or ""))
    if viewer is not None:
        concealed = blinding.concealed_filter(viewer, request.get("filter") or {})
        if concealed:
            raise Refused(concealed, "filter.arm")
    audience = audiences.check_audience(request.get("filter") or {}, catalogue)
    send_at = audiences.check_send_at(request.get("send_at"))
    whatsapp = _template_sid(request.get("whatsapp_template"))
    if step and whatsapp:
        raise Refused(
            "a step's message is written when it is sent and cannot be a template",
            "whatsapp_template",
        )
    title = (str(request.get("title") or "").strip() or None) if request.get("title") else None
    if title and len(title) > TITLE_LIMIT:
        raise Refused(f"at most {TITLE_LIMIT} characters", "title")
    rows = reads.audience(
        store,
        study=audience.study,
        arm=audience.arm,
        intervention=audience.intervention,
        status=audience.status,
    )
    rows = [row for row in rows if audience.admits(row)]
    if step is not None:
        slugs = [row["intervention"] for row in rows] or [audience.intervention]
        found = broadcast_steps.interventions_with(catalogue, step, [s for s in slugs if s or rows])
        samples = broadcast_steps.samples(store, found, step, rows, now, SAMPLES)
        unrenderable: list[dict[str, str]] = []
    else:
        samples, unrenderable = _rendered(template, rows)
    if not dry_run and not rows:
        raise Refused("no participant matches the filter; nothing was recorded", "filter")
    if dry_run:
        return Planned(None, len(rows), samples, unrenderable)
    broadcast_id = broadcast_id or new_id()
    created = BroadcastCreated(
        broadcast_id=broadcast_id,
        created_by=actor,
        title=title,
        message="" if step else str(request["message"]),
        step=step,
        schedule=schedule,
        whatsapp_template=whatsapp,
        filter=audience.as_dict(),
        send_at=send_at,
        recipients=len(rows),
    )
    planned = [
        BroadcastPlanned(
            broadcast_id=broadcast_id,
            participant_id=row["participant_id"],
            due_at=audiences.due_at(send_at, row["timezone"], now),
        )
        for row in rows
    ]
    record_plan(store, created, planned, {"actor": actor})
    return Planned(broadcast_id, len(rows), samples, unrenderable)


def _template_sid(value: Any) -> str | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str) or not re.match(TEMPLATE_SID, value):
        raise Refused(
            "an approved WhatsApp template's content SID (HX + 32 hex)", "whatsapp_template"
        )
    return value


def _rendered(
    template: jinja2.Template, rows: list[dict[str, Any]]
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    samples: list[dict[str, str]] = []
    failed: list[dict[str, str]] = []
    for row in rows:
        try:
            text = audiences.render(template, row)
        except jinja2.TemplateError as exc:
            failed.append({"participant_id": row["participant_id"], "error": str(exc)})
            continue
        if len(samples) < SAMPLES:
            samples.append({"participant_id": row["participant_id"], "text": text})
    return samples, failed


def listing(
    store: EventStore, limit: int = 100, viewer: blinding.Viewer | None = None
) -> list[dict[str, Any]]:
    """The latest broadcasts, each with its progress (a filter as `viewer` may see it)."""
    rows = reads.broadcast_list(store, limit)
    return [_shown(_with_progress(store, row), viewer) for row in rows]


def show(
    store: EventStore, broadcast_id: str, viewer: blinding.Viewer | None = None
) -> dict[str, Any]:
    """One broadcast and its progress: sent, held, failed, pending (and cancelled)."""
    row = reads.broadcast(store, broadcast_id)
    if row is None:
        raise Refused("no such broadcast", "broadcast_id", "not_found")
    return _shown(_with_progress(store, row), viewer)


def recipients_concealed(row: dict[str, Any], viewer: blinding.Viewer | None) -> bool:
    """Whether the broadcast's recipients, listed, would show `viewer` who is in an arm of a
    study blinded for their role (it was sent to that arm, or to an arm's intervention)."""
    found = row.get("filter") or {}
    return viewer is not None and blinding.concealed_filter(viewer, found) is not None


def recipients(
    store: EventStore, broadcast_id: str, viewer: blinding.Viewer | None = None
) -> list[dict[str, Any]]:
    """Each recipient of the broadcast with their state and reason; Refused for a `viewer`
    from whom the list would reveal a blinded arm (recipients_concealed)."""
    row = reads.broadcast(store, broadcast_id)
    if row is None:
        raise Refused("no such broadcast", "broadcast_id", "not_found")
    if recipients_concealed(row, viewer):
        raise Refused(
            "this broadcast went to an arm of a study blinded for your role: its recipients "
            "are not listed",
            "broadcast_id",
            "conflict",
        )
    return [
        {
            "participant_id": r["participant_id"],
            "state": reads.recipient_state(
                r["status"], r["outbox_status"], r["broadcast_status"] == "cancelled"
            ),
            "reason": r["reason"]
            or (r["outbox_error"] if r["outbox_status"] == "suppressed" else None),
            "sent_at": r["sent_at"],
        }
        for r in reads.recipient_rows(store, broadcast_id)
    ]


def cancel(
    store: EventStore, broadcast_id: str, *, actor: str, reason: str | None = None
) -> dict[str, Any]:
    """Stop the broadcast: recipients not yet queued get nothing; refused if it is cancelled
    already or unknown."""
    row = reads.broadcast(store, broadcast_id)
    if row is None:
        raise Refused("no such broadcast", "broadcast_id", "not_found")
    if row["status"] == "cancelled":
        raise Refused("the broadcast is cancelled already", "broadcast_id", "conflict")
    given = (reason or "").strip()[:500] or None
    cancelled = BroadcastCancelled(broadcast_id=broadcast_id, by=actor, reason=given)
    store.append(
        broadcast_stream(broadcast_id),
        [NewEvent(cancelled, meta={"actor": actor})],
        idempotency_key="cancelled",
    )
    return show(store, broadcast_id)


def _shown(row: dict[str, Any], viewer: blinding.Viewer | None) -> dict[str, Any]:
    if viewer is None:
        return row
    return {**row, "filter": blinding.shown_filter(viewer, row.get("filter"))}


def _with_progress(store: EventStore, row: dict[str, Any]) -> dict[str, Any]:
    counts = reads.progress(store, row["broadcast_id"], row["status"] == "cancelled")
    return {**row, "progress": counts}
