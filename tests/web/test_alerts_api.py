"""`/alerts`: list with filters, acknowledge and resolve over the researcher API."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from bot.conversation.supervisors import short_code
from bot.store.event_store import EventStore
from tests.web.alert_fixtures import participant_with_alert
from tests.web.researcher import AUTH, events_of


def test_open_alerts_are_listed_with_their_sms_code(client: FlaskClient, store: EventStore):
    pid, alert_id = participant_with_alert(store)

    response = client.get("/alerts?status=open", headers=AUTH)

    assert response.status_code == 200
    (alert,) = response.get_json()["result"]
    assert (alert["alert_id"], alert["participant_id"], alert["status"]) == (alert_id, pid, "open")
    assert alert["code"] == short_code(alert_id)


def test_filters_leave_out_alerts_that_do_not_match(client: FlaskClient, store: EventStore):
    participant_with_alert(store)
    other_pid, _ = participant_with_alert(store, "+14155550100")

    by_participant = client.get(f"/alerts?participant_id={other_pid}", headers=AUTH)
    by_status = client.get("/alerts?status=resolved", headers=AUTH)

    assert [a["participant_id"] for a in by_participant.get_json()["result"]] == [other_pid]
    assert by_status.get_json()["result"] == []


def test_an_unknown_filter_value_is_a_400(client: FlaskClient):
    assert client.get("/alerts?status=closed", headers=AUTH).status_code == 400
    assert client.get("/alerts?colour=red", headers=AUTH).status_code == 400


def test_the_alerts_api_needs_a_token(client: FlaskClient):
    assert client.get("/alerts").status_code == 401


def test_acknowledging_records_who_and_how_and_moves_the_alert(
    client: FlaskClient, store: EventStore
):
    pid, alert_id = participant_with_alert(store)

    response = client.post(f"/alerts/{alert_id}/acknowledge", headers=AUTH)

    assert response.status_code == 200
    result = response.get_json()["result"]
    assert result["status"] == "acknowledged" and result["acknowledged_via"] == "api"
    assert result["acknowledged_by"].startswith("api:")
    (event,) = events_of(store, pid, "alert.acknowledged")
    assert event.data.alert_id == alert_id


def test_acknowledging_twice_is_a_409_that_changes_nothing(client: FlaskClient, store: EventStore):
    pid, alert_id = participant_with_alert(store)
    client.post(f"/alerts/{alert_id}/acknowledge", headers=AUTH)

    again = client.post(f"/alerts/{alert_id}/acknowledge", headers=AUTH)

    assert again.status_code == 409
    assert len(events_of(store, pid, "alert.acknowledged")) == 1


def test_resolving_needs_a_note_and_closes_the_alert(client: FlaskClient, store: EventStore):
    pid, alert_id = participant_with_alert(store)

    missing = client.post(f"/alerts/{alert_id}/resolve", json={}, headers=AUTH)
    blank = client.post(f"/alerts/{alert_id}/resolve", json={"note": "   "}, headers=AUTH)
    done = client.post(f"/alerts/{alert_id}/resolve", json={"note": "Called, safe."}, headers=AUTH)

    assert (missing.status_code, blank.status_code, done.status_code) == (400, 400, 200)
    assert done.get_json()["result"]["resolution_note"] == "Called, safe."
    assert len(events_of(store, pid, "alert.resolved")) == 1
    closed = client.post(f"/alerts/{alert_id}/resolve", json={"note": "x"}, headers=AUTH)
    assert closed.status_code == 409


def test_an_unknown_alert_is_a_404(client: FlaskClient):
    unknown = "00000000-0000-4000-8000-000000000000"
    assert client.post(f"/alerts/{unknown}/acknowledge", headers=AUTH).status_code == 404
    assert client.get(f"/alerts/{unknown}", headers=AUTH).status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "/alerts?participant_id=%00",
        "/alerts?participant_id=not-an-id",
        "/alerts?kind=a%00b",
        "/alerts/%00",
        "/alerts/a%00b",
        "/alerts/junk",
    ],
)
def test_a_nul_or_junk_id_is_a_400_never_a_500(client: FlaskClient, url: str) -> None:
    response = client.get(url, headers=AUTH)

    assert response.status_code == 400, response.get_data(as_text=True)


@pytest.mark.parametrize("action", ["acknowledge", "resolve"])
def test_acting_on_a_junk_alert_id_is_a_400(client: FlaskClient, action: str) -> None:
    response = client.post(f"/alerts/%00x/{action}", headers=AUTH, json={"note": "done"})

    assert response.status_code == 400
