"""Fixtures for the console: an app with a signing key, staff accounts, a signed-in client."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from bot.console import accounts
from bot.core.clock import FakeClock
from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.services import Services
from bot.web import create_app
from tests.web.conftest import settings_for

MASTER_KEY = "k" * 40
PASSWORD = "correct horse battery"
# The console's cookie is Secure: the test client speaks https, as a browser behind TLS would.
BASE_URL = "https://tandem.example.org"


@pytest.fixture
def services(database_url: str, store: EventStore, clock: FakeClock) -> Services:
    settings = settings_for(database_url, TANDEM_MASTER_KEY=MASTER_KEY, QUIET_HOURS="22:00-08:00")
    return build_services(settings, clock=clock, store=store)


@pytest.fixture
def app(services: Services):  # noqa: ANN201
    app = create_app(services)
    app.testing = True
    return app


@pytest.fixture
def anonymous(app) -> FlaskClient:  # noqa: ANN001
    return app.test_client()


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, "the page has a form with a CSRF token"
    return found.group(1)


def sign_in(client: FlaskClient, email: str, secret: str):  # noqa: ANN201
    page = client.get("/console/login", base_url=BASE_URL).get_data(as_text=True)
    return client.post(
        "/console/login",
        data={"email": email, "password": secret, "csrf_token": csrf_of(page)},
        base_url=BASE_URL,
    )


def staff_member(services: Services, email: str, role: str) -> None:
    """An account with PASSWORD already chosen."""
    now = services.clock.now()
    accounts.add(services.store, email, role, by="cli", now=now)
    accounts.set_password(services.store, email, PASSWORD, PASSWORD, now)


@pytest.fixture
def signed_in(app, services: Services) -> Callable[[str], FlaskClient]:  # noqa: ANN001
    """A client signed in as a new staff member of `role`."""

    def make(role: str) -> FlaskClient:
        email = f"{role}@example.org"
        staff_member(services, email, role)
        client = app.test_client()
        response = sign_in(client, email, PASSWORD)
        assert response.status_code == 302
        return client

    return make


def post(client: FlaskClient, path: str, data: dict | None = None, **kwargs):  # noqa: ANN003, ANN201
    """A console POST with the session's CSRF token, as the page's form sends it."""
    with client.session_transaction(base_url=BASE_URL + "/console/") as session:
        token = session.get("csrf", "")
    form = {"csrf_token": token, **(data or {})}
    return client.post(path, data=form, base_url=BASE_URL, **kwargs)


def get(client: FlaskClient, path: str, **kwargs):  # noqa: ANN003, ANN201
    return client.get(path, base_url=BASE_URL, **kwargs)
