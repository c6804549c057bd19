"""Helpers for the researcher API tests: authorised requests, enrollment, a stream's events."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.events import Event, participant_stream
from bot.web import create_app
from tests.web.conftest import TOKEN, settings_for

BASE = "/conversation/participants"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def enroll(client: FlaskClient, phone: str = "+14155552671", **fields: Any) -> dict[str, Any]:
    """Enroll through the API and return the participant it answered with."""
    response = client.post(BASE, json={"phone_number": phone, **fields}, headers=AUTH)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["result"]


def event_types(store: EventStore, participant_id: str) -> list[str]:
    return [e.event_type for e in store.load(participant_stream(participant_id))]


def events_of(store: EventStore, participant_id: str, event_type: str) -> list[Event]:
    stream = store.load(participant_stream(participant_id))
    return [e for e in stream if e.event_type == event_type]


def client_with(
    database_url: str, store: EventStore, clock: FakeClock, **settings: str
) -> FlaskClient:
    """A client of an app built with these settings over the test's database."""
    services = build_services(settings_for(database_url, **settings), clock=clock, store=store)
    app = create_app(services)
    app.testing = True
    return app.test_client()
