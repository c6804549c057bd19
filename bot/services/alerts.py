"""Acknowledging and resolving an alert: open -> acknowledged -> resolved, each step an event
by the person who took it, for the API and the console.

A supervisor's "ACK 4821" by SMS is decided in the inbound pipeline
(`bot.conversation.alert_acks`, below this layer) by the same rule: only an open alert can be
acknowledged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from bot.services.refusal import Refused
from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertAcknowledged, AlertRaised, AlertResolved
from bot.store.event_types.messages import MessageFailed, MessageQueued, MessageSent
from bot.store.events import SYSTEM_STREAM, Event, EventData, NewEvent, participant_stream

Via = Literal["api", "console"]
NOTE_LIMIT = 4000
NOT_FOUND = "Alert not found"
ID_LIMIT = 36  # alert ids are UUIDs


def _row(store: EventStore, alert_id: str) -> dict[str, Any]:
    """The alert's row; an id no alert can have (a NUL, which PostgreSQL refuses to compare,
    or longer than an id) is not found, rather than a query that fails."""
    row = None
    if "\0" not in alert_id and len(alert_id) <= ID_LIMIT:
        row = store.projection_row("alerts", alert_id)
    if row is None:
        raise Refused(NOT_FOUND, "alert_id", "not_found")
    return row


def acknowledge(store: EventStore, alert_id: str, *, actor: str, via: Via) -> dict[str, Any]:
    """Take an open alert on; an alert already acknowledged or resolved is a conflict.
    Returns the alert's row afterwards."""

    def decide(row: dict[str, Any]) -> EventData:
        _not_a_review(row)
        if row["status"] != "open":
            raise Refused(_already(row["status"], row["acknowledged_by"]), "alert_id", "conflict")
        return AlertAcknowledged(alert_id=alert_id, by=actor, via=via)

    return _change(store, alert_id, decide, actor)


def resolve(store: EventStore, alert_id: str, note: str, *, actor: str, via: Via) -> dict[str, Any]:
    """Close an open or acknowledged alert with a note saying what was done; a resolved one
    is a conflict. Returns the alert's row afterwards."""
    note = note.strip()
    if not note or len(note) > NOTE_LIMIT:
        raise Refused(f"write what was done, in 1 to {NOTE_LIMIT} characters", "note")

    def decide(row: dict[str, Any]) -> EventData:
        _not_a_review(row)
        if row["status"] == "resolved":
            raise Refused(_already("resolved", row["resolved_by"]), "alert_id", "conflict")
        return AlertResolved(alert_id=alert_id, by=actor, via=via, note=note)

    return _change(store, alert_id, decide, actor)


def detail(store: EventStore, alert_id: str) -> dict[str, Any]:
    """The alert's row with `quote`, the message that raised it, read from the sealed event
    (`[erased]` once the participant is erased; None when no message raised it), and `texts`,
    the supervisor texts queued with it: to whom, when, and whether each was sent or failed."""
    row = _row(store, alert_id)
    pid = row["participant_id"]
    stream = store.load(participant_stream(pid)) if pid else []  # system: no message
    raised = next(
        (ev for ev in stream if isinstance(ev.data, AlertRaised) and ev.data.alert_id == alert_id),
        None,
    )
    if raised is None:
        return {**row, "quote": None, "texts": []}
    assert isinstance(raised.data, AlertRaised)
    return {**row, "quote": raised.data.quote, "texts": _texts(stream, raised)}


def _texts(stream: list[Event], raised: Event) -> list[dict[str, Any]]:
    """The alert texts to supervisors recorded in the same turn as `raised`, with their fate."""
    texts: dict[str, dict[str, Any]] = {}
    for ev in stream:
        data = ev.data
        if (
            isinstance(data, MessageQueued)
            and data.kind == "alert"
            and not data.to_participant
            and ev.recorded_at == raised.recorded_at
        ):
            texts[data.outbox_id] = {
                "to": data.to_address,
                "queued_at": ev.occurred_at,
                "status": "queued",
                "at": None,
            }
        elif isinstance(data, MessageSent | MessageFailed) and data.outbox_id in texts:
            sent = isinstance(data, MessageSent)
            texts[data.outbox_id].update(status="sent" if sent else "failed", at=ev.occurred_at)
    return list(texts.values())


def _change(
    store: EventStore, alert_id: str, decide: Callable[[dict[str, Any]], EventData], actor: str
) -> dict[str, Any]:
    """Decide on the alert as it stands under its stream's lock, so that two people pressing
    the same button append one event and the second is told why not."""
    found = _row(store, alert_id)
    pid = found["participant_id"]
    stream = participant_stream(pid) if pid else SYSTEM_STREAM
    projection = next(p for p in store.projections if p.name == "alerts")
    with store.transaction() as tx:
        tx.lock(stream)
        row = tx.row(projection, alert_id)
        assert row is not None  # alerts are never deleted
        tx.append(stream, [NewEvent(decide(dict(row)), meta={"actor": actor})])
    after = store.projection_row("alerts", alert_id)
    assert after is not None
    return after


def _already(status: str, by: str | None) -> str:
    return f"the alert is already {status}" + (f" (by {by})" if by else "")


def _not_a_review(row: dict[str, Any]) -> None:
    """A review item is cleared by its own two verdicts (bot.services.reviews), never by an
    acknowledgement or a note, so that it either escalates or is judged not a crisis."""
    if row["severity"] == "review":
        raise Refused(
            "a review item is cleared as not a crisis or escalated to an alert, in the "
            "console's review queue",
            "alert_id",
            "conflict",
        )
