"""The alerts projection: open, then acknowledged, then resolved; nothing moves it back."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from bot.store.event_types.alerts import AlertAcknowledged, AlertRaised, AlertResolved
from bot.store.events import Event, EventData
from bot.store.projections.alerts import PROJECTION

START = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def _event(data: EventData, minute: int, participant: str = "p-1") -> Event:
    at = START + timedelta(minutes=minute)
    return Event(
        seq=minute + 1,
        event_id=str(uuid.uuid4()),
        stream_id=f"participant:{participant}",
        stream_version=minute + 1,
        data=data,
        meta={},
        idempotency_key=None,
        occurred_at=at,
        recorded_at=at,
    )


def _fold(*datas: EventData) -> dict | None:
    row = None
    for minute, data in enumerate(datas):
        event = _event(data, minute)
        assert PROJECTION.key(event) == "a-1"
        row = PROJECTION.apply(row, event)
    return row


RAISED = AlertRaised(alert_id="a-1", kind="crisis", summary="crisis language", severity="critical")
ACK = AlertAcknowledged(alert_id="a-1", by="supervisor:+15005550111", via="sms")
RESOLVED = AlertResolved(alert_id="a-1", by="staff:ana@example.org", via="console", note="called")


def test_a_raised_alert_is_open_for_its_participant() -> None:
    row = _fold(RAISED)
    assert row is not None
    assert (row["status"], row["participant_id"], row["severity"]) == ("open", "p-1", "critical")
    assert row["raised_at"] == START and row["acknowledged_at"] is None


def test_an_acknowledgement_records_who_how_and_when() -> None:
    row = _fold(RAISED, ACK)
    assert row is not None
    assert row["status"] == "acknowledged"
    assert (row["acknowledged_by"], row["acknowledged_via"]) == ("supervisor:+15005550111", "sms")
    assert row["acknowledged_at"] == START + timedelta(minutes=1)


def test_resolving_closes_the_alert_with_its_note_even_unacknowledged() -> None:
    row = _fold(RAISED, RESOLVED)
    assert row is not None
    assert (row["status"], row["resolution_note"], row["resolved_by"]) == (
        "resolved",
        "called",
        "staff:ana@example.org",
    )


def test_nothing_reopens_or_re_acknowledges_a_resolved_alert() -> None:
    resolved = _fold(RAISED, RESOLVED)
    assert _fold(RAISED, RESOLVED, ACK) == resolved
    assert _fold(RAISED, RESOLVED, RAISED) == resolved


def test_a_second_acknowledgement_keeps_the_first() -> None:
    later = AlertAcknowledged(alert_id="a-1", by="api:abc", via="api")
    assert _fold(RAISED, ACK, later) == _fold(RAISED, ACK)


def test_a_lifecycle_event_for_an_unknown_alert_makes_no_row() -> None:
    assert _fold(ACK) is None
    assert _fold(RESOLVED) is None
