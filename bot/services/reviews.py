"""Clearing a review item: "not a crisis" (`review.dismissed`) or "escalate to alert"
(`review.escalated` and a crisis alert texted to the supervisors as a turn's crisis alert is),
each by the person who pressed it, for the console (and any later entry point).

Each decides under the participant's lock on the item as it stands, so two people pressing at
once, or a person and the escalation timer, append one verdict and the other is told why not
(the worker's turn conflicts on the stream's version and decides again).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from bot.conversation.memory import remembered
from bot.conversation.reviews import Routing, escalated, supervisor_events
from bot.core.config import Settings
from bot.interventions.interpreter.applied import AppliedByIntervention
from bot.services import participant_lock
from bot.services.refusal import Refused
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.alerts import ReviewDismissed
from bot.store.events import EventData
from bot.store.reads.reviews import raised_of

Via = Literal["api", "console"]
NOT_FOUND = "Review item not found"
ID_LIMIT = 36  # alert ids are UUIDs


def routing(settings: Settings, interventions: Path) -> Routing:
    """Who hears of a crisis alert an escalated item raises, as the worker's flow routes it:
    SUPERVISOR_PHONES and the participant's intervention's supervisors, the texting limit and
    the alert's own escalation (for the console and the API)."""
    applied = AppliedByIntervention(settings, root=interventions)
    return Routing(
        lambda participant: applied.of(participant).supervisors,
        tuple(settings.escalation()),
        timedelta(minutes=settings.supervisor_alert_window_minutes),
        timedelta(minutes=settings.alert_escalate_minutes),
        settings.public_base_url,
    )


def dismiss(store: EventStore, alert_id: str, *, actor: str, via: Via) -> dict[str, Any]:
    """Close an open review item as not a crisis; returns its row afterwards."""

    def decide(tx: Transaction, participant: dict[str, Any]) -> list[EventData]:
        _still_open(store, tx, alert_id)
        return [ReviewDismissed(alert_id=alert_id, by=actor, via=via)]

    return _change(store, alert_id, decide, actor)


def escalate(
    store: EventStore,
    alert_id: str,
    *,
    actor: str,
    via: Via,
    routing: Routing,
    now: datetime,
) -> dict[str, Any]:
    """Turn an open review item into a crisis alert quoting its message, texted to the
    participant's supervisors (within the texting limit) with its own escalation timer; the
    participant is sent nothing. Returns the review item's row afterwards."""

    raised = raised_of(store, [_item(store, alert_id)]).get(alert_id)
    if raised is None:  # the projection holds nothing its events did not raise
        raise Refused(NOT_FOUND, "alert_id", "not_found")

    def decide(tx: Transaction, participant: dict[str, Any]) -> list[EventData]:
        _still_open(store, tx, alert_id)
        record, crisis = escalated(raised, by=actor, via=via)
        memory = remembered(participant)
        return [record, crisis, *supervisor_events(participant, [crisis], routing, memory, now)]

    return _change(store, alert_id, decide, actor)


def _item(store: EventStore, alert_id: str) -> dict[str, Any]:
    """The review item's row: an unknown id is not found; an alert that is not a review item
    (a crisis or operational alert) is a conflict, it is cleared by acknowledging it."""
    row = None
    if "\0" not in alert_id and len(alert_id) <= ID_LIMIT:
        row = store.projection_row("alerts", alert_id)
    if row is None:
        raise Refused(NOT_FOUND, "alert_id", "not_found")
    if row["severity"] != "review" or row["participant_id"] is None:
        raise Refused("this alert is not a review item", "alert_id", "conflict")
    return row


def _change(
    store: EventStore, alert_id: str, decide: participant_lock.Decide, actor: str
) -> dict[str, Any]:
    participant_lock.change(store, _item(store, alert_id)["participant_id"], decide, actor=actor)
    after = store.projection_row("alerts", alert_id)
    assert after is not None  # alerts are never deleted
    return after


def _still_open(store: EventStore, tx: Transaction, alert_id: str) -> None:
    projection = next(p for p in store.projections if p.name == "alerts")
    row = tx.row(projection, alert_id)
    assert row is not None  # found before the lock, and alerts are never deleted
    if row["status"] == "resolved":
        raise Refused(
            f"the review item is already cleared ({row['resolution_note']}, by "
            f"{row['resolved_by']})",
            "alert_id",
            "conflict",
        )
