"""Researcher API authentication: bearer tokens, and refusing to start without one."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.core.config import ConfigError
from bot.store.event_store import EventStore
from bot.web.auth import fingerprint
from tests.web.conftest import TOKEN
from tests.web.researcher import AUTH, BASE, client_with, enroll, events_of


def test_a_request_without_a_token_is_a_401_in_the_envelope(client: FlaskClient) -> None:
    response = client.get(BASE)
    assert response.status_code == 401
    assert response.get_json() == {
        "status": "error",
        "message": "Authorization: missing bearer token",
    }
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    "header",
    ["Bearer wrong-token", f"Bearer {TOKEN}x", f"Basic {TOKEN}", "Bearer ", TOKEN, "Bearer é☃"],
)
def test_a_wrong_token_is_a_401(client: FlaskClient, header: str) -> None:
    response = client.get(BASE, headers={"Authorization": header})
    assert response.status_code == 401
    assert response.get_json()["status"] == "error"


def test_a_wrong_token_is_refused_before_the_body_is_looked_at(client: FlaskClient) -> None:
    response = client.post(BASE, data="{not json", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401


def test_the_configured_token_is_accepted(client: FlaskClient) -> None:
    assert client.get(BASE, headers=AUTH).status_code == 200


def test_any_of_several_configured_tokens_is_accepted(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    tokens = "first-token-0123456789abcdefghijklm, second-token-0123456789abcdefghijkl"
    client = client_with(database_url, store, clock, TANDEM_API_TOKENS=tokens)
    for token in ("first-token-0123456789abcdefghijklm", "second-token-0123456789abcdefghijkl"):
        response = client.get(BASE, headers={"Authorization": f"bearer {token}"})
        assert response.status_code == 200
    assert client.get(BASE, headers=AUTH).status_code == 401


def test_events_record_which_token_acted_without_storing_it(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client)
    (enrolled,) = events_of(store, participant["id"], "participant.enrolled")
    assert enrolled.meta["actor"] == f"api:{fingerprint(TOKEN)}"
    assert TOKEN not in str(enrolled.meta)


def test_the_api_refuses_to_start_without_a_token(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    with pytest.raises(ConfigError) as refused:
        client_with(database_url, store, clock, TANDEM_API_TOKENS="")
    assert any("TANDEM_API_TOKENS" in problem for problem in refused.value.problems)


def test_insecure_local_mode_serves_without_a_token(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    client = client_with(
        database_url, store, clock, TANDEM_API_TOKENS="", TANDEM_INSECURE_LOCAL="true"
    )
    response = client.post(BASE, json={"phone_number": "+14155552671"})
    assert response.status_code == 201
    (enrolled,) = events_of(store, response.get_json()["result"]["id"], "participant.enrolled")
    assert enrolled.meta["actor"] == "api:insecure-local"


def test_insecure_local_mode_still_checks_tokens_that_are_configured(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    client = client_with(database_url, store, clock, TANDEM_INSECURE_LOCAL="true")
    assert client.get(BASE).status_code == 401
    assert client.get(BASE, headers=AUTH).status_code == 200


def test_health_needs_no_token(client: FlaskClient) -> None:
    assert client.get("/health").status_code == 200
