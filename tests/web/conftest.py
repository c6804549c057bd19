"""Fixtures for the web layer: an app wired to a fresh database and a fake clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.core.config import Settings, load_settings
from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.services import Services
from bot.web import create_app

TOKEN = "test-token-123-0123456789abcdefghij"
AUTH_TOKEN = "test-auth-token"


def settings_for(database_url: str, **overrides: str) -> Settings:
    env = {
        "DATABASE_URL": database_url,
        "TANDEM_API_TOKENS": TOKEN,
        "PUBLIC_BASE_URL": "https://tandem.example.org",
        "TWILIO_ACCOUNT_SID": "AC" + "0" * 32,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_FROM_NUMBER": "+15005550006",
        "DEFAULT_REGION": "US",
        "DEFAULT_TIMEZONE": "America/Toronto",
    }
    env.update(overrides)
    return load_settings(env, env_file=None)


@pytest.fixture
def services(database_url: str, store: EventStore, clock: FakeClock) -> Iterator[Services]:
    yield build_services(settings_for(database_url), clock=clock, store=store)


@pytest.fixture
def client(services: Services) -> FlaskClient:
    app = create_app(services)
    app.testing = True
    return app.test_client()
