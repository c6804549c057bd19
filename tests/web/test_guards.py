"""Probed holes, closed: insecure mode serves only loopback clients, webhook bodies are capped,
NUL and lone surrogates never cause a 500, a database outage is a 503 with Retry-After, and a
database error's values never reach the logs."""

from __future__ import annotations

import logging

import pytest
from flask.testing import FlaskClient
from sqlalchemy.exc import DBAPIError

from bot.core.clock import FakeClock
from bot.core.storable import original
from bot.runtime.bootstrap import build_services
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.web import create_app
from tests.web.conftest import TOKEN, settings_for
from tests.web.twilio_requests import (
    INBOUND,
    PHONE,
    STATUS,
    client_with,
    enroll,
    message,
    new_sid,
    post,
    rows,
    status,
    types,
)

API = "/conversation/participants"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def insecure(services: Services) -> FlaskClient:
    return client_with(
        services, TANDEM_INSECURE_LOCAL="true", TANDEM_API_TOKENS="", TWILIO_AUTH_TOKEN=""
    )


@pytest.mark.parametrize("path", [API, INBOUND, "/health"])
def test_insecure_mode_refuses_a_client_that_is_not_on_this_machine(
    insecure: FlaskClient, services: Services, path: str
) -> None:
    # gunicorn puts the TCP peer in REMOTE_ADDR, as the test client does here.
    answer = insecure.post(path, data=message("hi"), environ_base={"REMOTE_ADDR": "203.0.113.7"})

    assert answer.status_code == 403
    assert "loopback" in answer.json["message"]
    assert types(services.store) == []


@pytest.mark.parametrize("address", ["127.0.0.1", "127.8.9.10", "::1"])
def test_insecure_mode_serves_loopback_clients(insecure: FlaskClient, address: str) -> None:
    answer = insecure.get(API, environ_base={"REMOTE_ADDR": address})

    assert answer.status_code == 200


def test_with_tokens_a_remote_client_is_served_as_usual(client: FlaskClient) -> None:
    answer = client.get(API, headers=AUTH, environ_base={"REMOTE_ADDR": "203.0.113.7"})

    assert answer.status_code == 200


@pytest.mark.parametrize("path", [INBOUND, STATUS])
def test_a_webhook_body_over_the_limit_is_413_before_parsing(
    client: FlaskClient, services: Services, path: str
) -> None:
    enroll(services)
    form = message("x" * 70_000)

    answer = post(client, path, form)

    assert answer.status_code == 413
    assert "larger than 65536 bytes" in answer.json["message"]
    assert types(services.store) == ["participant.enrolled"]


def test_a_webhook_body_under_the_limit_is_recorded(
    client: FlaskClient, services: Services
) -> None:
    participant = enroll(services)

    answer = post(client, INBOUND, message("y" * 1600))

    assert answer.status_code == 200
    stream = participant_stream(participant["participant_id"])
    [event] = [e for e in services.store.load(stream) if e.event_type == "message.received"]
    assert event.data.body == "y" * 1600


@pytest.mark.parametrize("field", ["Body", "ProfileName", "WaId", "MediaContentType0"])
def test_a_nul_in_an_inbound_field_is_stored_once_escaped_and_recoverable(
    client: FlaskClient, services: Services, field: str
) -> None:
    participant = enroll(services)
    form = message("before\x00after", NumMedia="1", MediaUrl0="https://api.twilio.com/m/1")
    form.setdefault("MediaContentType0", "image/jpeg")
    form[field] = "be\x00fore" if field != "Body" else form["Body"]

    first = post(client, INBOUND, form)
    again = post(client, INBOUND, form)  # Twilio's retry of the same MessageSid

    assert (first.status_code, again.status_code) == (200, 200)
    stream = participant_stream(participant["participant_id"])
    [event] = [e for e in services.store.load(stream) if e.event_type == "message.received"]
    assert "\x00" not in repr(event.data.model_dump())
    path = {"Body": "body", "ProfileName": "profile_name", "WaId": "wa_id"}.get(
        field, "media[0].content_type"
    )
    assert original(event.meta["escaped"][path]) == form[field]


def test_a_lone_surrogate_or_nul_in_an_api_field_is_a_400_naming_it(
    client: FlaskClient, services: Services
) -> None:
    for body, field in (
        ({"phone_number": PHONE, "name": "Ana\x00"}, "name"),
        ({"phone_number": PHONE, "timezone": "\ud800"}, "timezone"),
        ({"phone_number": PHONE + "\x00"}, "phone_number"),
        ({"phone_number": PHONE, "intervention": "demo", "bad\x00key": 1}, "bad\x00key"),
    ):
        answer = client.post(API, json=body, headers=AUTH)

        assert answer.status_code == 400, body
        assert answer.json["message"].startswith(f"{field}: holds a NUL character")
    assert types(services.store) == []


def test_a_nul_in_an_update_is_a_400_and_changes_nothing(
    client: FlaskClient, services: Services
) -> None:
    participant = enroll(services)

    answer = client.put(
        f"{API}/{participant['participant_id']}", json={"name": "x\x00y"}, headers=AUTH
    )

    assert answer.status_code == 400
    assert rows(services.store, "participants")[0]["version"] == participant["version"]


def test_a_status_callback_with_a_nul_in_its_outbox_id_is_a_400(
    client: FlaskClient, services: Services
) -> None:
    answer = post(client, STATUS, status(new_sid(), "delivered"), query="outbox_id=ab%00cd")

    assert answer.status_code == 400
    assert types(services.store) == []


def test_a_database_outage_is_a_503_with_retry_after_and_one_log_line(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    # Nothing listens on port 9 of this machine: every connection is refused at once.
    url = "postgresql+psycopg://nobody@127.0.0.1:9/none"
    settings = settings_for(url)
    down = build_services(settings, clock=clock, store=EventStore(make_engine(url), clock=clock))
    client = create_app(down).test_client()

    with caplog.at_level(logging.WARNING):
        answers = [post(client, INBOUND, message(f"hello {n}")) for n in range(5)]
        answers.append(client.get(API, headers=AUTH))

    assert {a.status_code for a in answers} == {503}
    assert {a.headers["Retry-After"] for a in answers} == {"30"}
    outage = [r for r in caplog.records if "database unreachable" in r.getMessage()]
    assert len(outage) == 1 and outage[0].exc_info is None
    assert not any("hello" in r.getMessage() or PHONE in r.getMessage() for r in caplog.records)


def test_a_database_error_in_a_request_never_logs_the_values_it_quotes(
    services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(services)

    def failing() -> str:
        quoted = Exception('DETAIL: Failing row contains (+14155552671, "I feel awful").')
        raise DBAPIError("INSERT INTO events ...", {"body": "I feel awful"}, quoted)

    app.add_url_rule("/failing", "failing", failing)
    with caplog.at_level(logging.DEBUG):
        answer = app.test_client().get("/failing")

    assert answer.status_code == 500
    logged = " ".join(
        r.getMessage() + (logging.Formatter().formatException(r.exc_info) if r.exc_info else "")
        for r in caplog.records
    )
    assert "database error in request: DBAPIError" in logged
    assert "14155552671" not in logged and "awful" not in logged


def test_engines_keep_statement_values_out_of_their_errors(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        assert engine.hide_parameters is True
    finally:
        engine.dispose()


def test_an_unmigrated_sqlite_file_is_a_500_not_an_outage(
    tmp_path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:  # noqa: ANN001
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    settings = settings_for(url)
    bare = build_services(settings, clock=clock, store=EventStore(make_engine(url), clock=clock))

    with caplog.at_level(logging.WARNING):
        answer = post(create_app(bare).test_client(), INBOUND, message("hello"))

    assert answer.status_code == 500
    assert not any("database unreachable" in r.getMessage() for r in caplog.records)
    assert any("sqlstate" in r.getMessage() for r in caplog.records)
