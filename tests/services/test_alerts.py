"""Acknowledging and resolving alerts (`bot.services.alerts`)."""

from __future__ import annotations

import pytest

from bot.services import alerts
from bot.services.refusal import Refused
from bot.store.event_store import EventStore
from tests.web.alert_fixtures import participant_with_alert

STAFF = "staff:a@example.org"


def test_an_open_alert_is_acknowledged_by_whoever_took_it_on(store: EventStore) -> None:
    _, alert_id = participant_with_alert(store)

    row = alerts.acknowledge(store, alert_id, actor=STAFF, via="console")

    assert (row["status"], row["acknowledged_by"], row["acknowledged_via"]) == (
        "acknowledged",
        STAFF,
        "console",
    )


def test_a_second_acknowledgement_is_a_conflict_naming_who_took_it(store: EventStore) -> None:
    _, alert_id = participant_with_alert(store)
    alerts.acknowledge(store, alert_id, actor=STAFF, via="api")

    with pytest.raises(Refused, match=f"already acknowledged \\(by {STAFF}\\)") as refused:
        alerts.acknowledge(store, alert_id, actor="staff:b@example.org", via="console")

    assert refused.value.kind == "conflict"


def test_resolving_needs_a_note_and_happens_once(store: EventStore) -> None:
    _, alert_id = participant_with_alert(store)

    with pytest.raises(Refused) as blank:
        alerts.resolve(store, alert_id, "  ", actor=STAFF, via="api")
    row = alerts.resolve(store, alert_id, "called them", actor=STAFF, via="api")
    with pytest.raises(Refused, match="already resolved") as again:
        alerts.resolve(store, alert_id, "again", actor=STAFF, via="api")

    assert (blank.value.field, blank.value.kind) == ("note", "invalid")
    assert (row["status"], row["resolution_note"]) == ("resolved", "called them")
    assert again.value.kind == "conflict"


def test_an_unknown_alert_is_not_found(store: EventStore) -> None:
    with pytest.raises(Refused) as refused:
        alerts.acknowledge(store, "nope", actor=STAFF, via="api")

    assert refused.value.kind == "not_found"
