"""`POST /alerts/{id}/dismiss` and `/escalate`: clearing a review item over the researcher API,
by the same service as the console's review queue, recorded with the API caller."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.web import create_app
from tests.factories import enrolled
from tests.web.alert_fixtures import participant_with_alert
from tests.web.conftest import settings_for
from tests.web.researcher import AUTH

WORDS = "gave my console to my cousin, won't need it"
SUPERVISOR = "+15005550111"
REVIEW_ID = "7c1e2a3b-4d5f-4a6b-8c7d-9e0f1a2b3c4d"
UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def services(database_url: str, store: EventStore, clock) -> Services:  # noqa: ANN001
    settings = settings_for(database_url, TANDEM_MASTER_KEY="k" * 40, SUPERVISOR_PHONES=SUPERVISOR)
    return build_services(settings, clock=clock, store=store)


@pytest.fixture
def client(services: Services) -> FlaskClient:
    app = create_app(services)
    app.testing = True
    return app.test_client()


def _with_review(services: Services) -> str:
    person = enrolled("+14155550123", name="Ada")
    review = AlertRaised(
        alert_id=REVIEW_ID,
        kind="review",
        severity="review",
        rule="learned",
        summary="The learned line scored a message 0.60.",
        quote=WORDS,
    )
    services.store.append(participant_stream(person.participant_id), [person, review], 0)
    return person.participant_id


def _events(services: Services, pid: str, event_type: str) -> list:
    return [e for e in services.store.load(participant_stream(pid)) if e.event_type == event_type]


def test_dismissing_closes_the_item_as_not_a_crisis_recorded_with_the_caller(
    client: FlaskClient, services: Services
) -> None:
    pid = _with_review(services)

    answer = client.post(f"/alerts/{REVIEW_ID}/dismiss", headers=AUTH)

    assert answer.status_code == 200, answer.get_json()
    result = answer.get_json()["result"]
    assert (result["status"], result["resolution_note"]) == ("resolved", "not a crisis")
    (dismissed,) = _events(services, pid, "review.dismissed")
    assert dismissed.data.via == "api" and dismissed.data.by.startswith("api:")
    assert dismissed.meta["actor"] == dismissed.data.by
    assert _events(services, pid, "message.queued") == []


def test_escalating_raises_a_crisis_alert_quoting_the_message_and_texts_supervisors(
    client: FlaskClient, services: Services
) -> None:
    pid = _with_review(services)

    answer = client.post(f"/alerts/{REVIEW_ID}/escalate", headers=AUTH)

    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["result"]["alert_id"] == REVIEW_ID
    (escalated,) = [e.data for e in _events(services, pid, "review.escalated")]
    assert escalated.via == "api" and escalated.by.startswith("api:")
    crisis = _events(services, pid, "alert.raised")[-1].data
    assert (crisis.alert_id, crisis.kind, crisis.quote) == (
        escalated.crisis_alert_id,
        "crisis",
        WORDS,
    )
    texts = [e.data for e in _events(services, pid, "message.queued")]
    assert [(t.to_address, t.to_participant) for t in texts] == [(SUPERVISOR, False)]


def test_an_unknown_id_is_a_404(client: FlaskClient) -> None:
    for verb in ("dismiss", "escalate"):
        assert client.post(f"/alerts/{UNKNOWN_ID}/{verb}", headers=AUTH).status_code == 404


def test_a_cleared_item_is_a_409_that_changes_nothing(
    client: FlaskClient, services: Services
) -> None:
    pid = _with_review(services)
    client.post(f"/alerts/{REVIEW_ID}/dismiss", headers=AUTH)

    again = client.post(f"/alerts/{REVIEW_ID}/escalate", headers=AUTH)

    assert again.status_code == 409 and "already cleared" in again.get_json()["message"]
    assert _events(services, pid, "review.escalated") == []
    assert len(_events(services, pid, "review.dismissed")) == 1


def test_a_crisis_alert_is_not_a_review_item_a_409(client: FlaskClient, services: Services) -> None:
    pid, alert_id = participant_with_alert(services.store)

    for verb in ("dismiss", "escalate"):
        answer = client.post(f"/alerts/{alert_id}/{verb}", headers=AUTH)
        assert answer.status_code == 409 and "not a review item" in answer.get_json()["message"]
    assert services.store.projection_row("alerts", alert_id)["status"] == "open"
    assert _events(services, pid, "review.dismissed") == []


def test_clearing_needs_a_token(client: FlaskClient, services: Services) -> None:
    _with_review(services)

    assert client.post(f"/alerts/{REVIEW_ID}/dismiss").status_code == 401
    assert services.store.projection_row("alerts", REVIEW_ID)["status"] == "open"


def test_both_operations_are_in_the_openapi_document(client: FlaskClient) -> None:
    paths = client.get("/openapi.json").get_json()["paths"]

    for verb in ("dismiss", "escalate"):
        operation = paths[f"/alerts/{{alert_id}}/{verb}"]["post"]
        assert {"200", "404", "409"} <= set(operation["responses"])
        assert operation["security"] == [{"bearerAuth": []}]
