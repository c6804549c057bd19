"""/health reports the process and its database."""

from __future__ import annotations

from datetime import datetime

from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.store.event_types import ParticipantStatusChanged
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.web.twilio_requests import enroll


def test_health_reports_a_reachable_database(client: FlaskClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.get_json()["database"] == "ok"


def test_health_has_promptpipes_fields_for_its_monitors(
    client: FlaskClient, services: Services, clock: FakeClock
) -> None:
    enroll(services, "+14155552671")
    paused = enroll(services, "+14155552672")
    services.store.append(
        participant_stream(paused["participant_id"]), [ParticipantStatusChanged(status="paused")]
    )

    body = client.get("/health").get_json()

    assert body["status"] == "healthy"
    assert body["active_participants"] == 1
    assert datetime.fromisoformat(body["timestamp"]) == clock.now()


def test_the_openapi_document_is_served(client: FlaskClient) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert "/health" in response.get_json()["paths"]


def test_an_unknown_path_is_a_json_404(client: FlaskClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert response.get_json()["status"] == "error"


def test_a_method_a_path_does_not_take_is_a_405_naming_the_allowed_ones(
    client: FlaskClient, services: Services
) -> None:
    participant = enroll(services)
    path = f"/conversation/participants/{participant['participant_id']}"

    response = client.patch(path, json={"name": "Ana"})

    assert response.status_code == 405
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "PUT", "DELETE"}
    assert response.get_json()["status"] == "error"
