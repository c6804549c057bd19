"""The `alerts` projection: every alert and where it stands (open → acknowledged → resolved).
A review item is resolved by its dismissal or escalation, the note saying which."""

from __future__ import annotations

from bot.store.event_types.alerts import (
    AlertAcknowledged,
    AlertRaised,
    AlertResolved,
    ReviewDismissed,
    ReviewEscalated,
)
from bot.store.events import Event
from bot.store.projections import Projection, Row

COLUMNS = (
    "alert_id",
    "participant_id",
    "kind",
    "severity",
    "rule",
    "summary",
    "notify_supervisors",
    "status",
    "raised_at",
    "acknowledged_by",
    "acknowledged_via",
    "acknowledged_at",
    "resolved_by",
    "resolved_at",
    "resolution_note",
    "updated_at",
)
TYPES = {
    cls.event_type
    for cls in (AlertRaised, AlertAcknowledged, AlertResolved, ReviewDismissed, ReviewEscalated)
}
NOT_A_CRISIS = "not a crisis"


def key(event: Event) -> str | None:
    return event.data.alert_id if event.event_type in TYPES else None  # type: ignore[attr-defined]  # every type in TYPES has it


def apply(row: Row | None, event: Event) -> Row | None:
    data, at = event.data, event.recorded_at
    if isinstance(data, AlertRaised):
        if row is not None:
            return row
        return {
            "alert_id": data.alert_id,
            "participant_id": event.participant_id,
            "kind": data.kind,
            "severity": data.severity,
            "rule": data.rule,
            "summary": data.summary,
            "notify_supervisors": data.notify_supervisors,
            "status": "open",
            "raised_at": at,
            "acknowledged_by": None,
            "acknowledged_via": None,
            "acknowledged_at": None,
            "resolved_by": None,
            "resolved_at": None,
            "resolution_note": None,
            "updated_at": at,
        }
    if row is None or row["status"] == "resolved":
        return row  # a lifecycle event for an unknown or closed alert changes nothing
    if isinstance(data, AlertAcknowledged) and row["status"] == "open":
        return {
            **row,
            "status": "acknowledged",
            "acknowledged_by": data.by,
            "acknowledged_via": data.via,
            "acknowledged_at": at,
            "updated_at": at,
        }
    if isinstance(data, AlertResolved):
        return {
            **row,
            "status": "resolved",
            "resolved_by": data.by,
            "resolved_at": at,
            "resolution_note": data.note,
            "updated_at": at,
        }
    if isinstance(data, ReviewDismissed | ReviewEscalated):  # only ever about a review item
        note = (
            NOT_A_CRISIS
            if isinstance(data, ReviewDismissed)
            else f"escalated to crisis alert {data.crisis_alert_id}"
            + (f" (unreviewed after {data.minutes:g} minutes)" if data.minutes is not None else "")
        )
        return {
            **row,
            "status": "resolved",
            "resolved_by": data.by,
            "resolved_at": at,
            "resolution_note": note,
            "updated_at": at,
        }
    return row


PROJECTION = Projection("alerts", "alert_id", COLUMNS, key, apply, types=frozenset(TYPES))
