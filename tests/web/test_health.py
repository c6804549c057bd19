"""/health reports the process and its database."""

from __future__ import annotations

from datetime import datetime

from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.runtime.bootstrap import build_services
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types import ParticipantStatusChanged
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.web import create_app
from tests.web.conftest import TOKEN, settings_for
from tests.web.twilio_requests import enroll

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_health_reports_a_reachable_database(client: FlaskClient) -> None:
    response = client.get("/health", headers=AUTH)
    assert response.status_code == 200
    assert response.get_json()["database"] == "ok"


def test_health_without_a_token_tells_the_status_only(
    client: FlaskClient, services: Services
) -> None:
    enroll(services, "+14155552671")

    for headers in ({}, {"Authorization": "Bearer not-a-token-of-ours"}):
        response = client.get("/health", headers=headers)
        assert (response.status_code, response.get_json()) == (200, {"status": "healthy"})


def test_health_has_promptpipes_fields_for_its_monitors(
    client: FlaskClient, services: Services, clock: FakeClock
) -> None:
    enroll(services, "+14155552671")
    paused = enroll(services, "+14155552672")
    services.store.append(
        participant_stream(paused["participant_id"]), [ParticipantStatusChanged(status="paused")]
    )

    body = client.get("/health", headers=AUTH).get_json()

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


def test_a_database_outage_is_degraded_for_anyone_and_explained_to_a_token(
    clock: FakeClock,
) -> None:
    # Nothing listens on port 9 of this machine: every connection is refused at once.
    url = "postgresql+psycopg://nobody@127.0.0.1:9/none"
    down = build_services(
        settings_for(url), clock=clock, store=EventStore(make_engine(url), clock=clock)
    )
    client = create_app(down).test_client()

    anonymous = client.get("/health")
    trusted = client.get("/health", headers=AUTH)

    assert (anonymous.status_code, anonymous.get_json()) == (503, {"status": "degraded"})
    assert trusted.status_code == 503 and trusted.get_json()["error"] == "database unreachable"
