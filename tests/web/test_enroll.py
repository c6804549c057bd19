"""POST /conversation/participants: enrollment, its validation, and duplicates."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select

from bot.core.clock import FakeClock
from bot.services import enrollment as enrollment_service
from bot.store.event_store import EventStore
from bot.store.schema import outbox, work_items
from tests.web.researcher import AUTH, BASE, client_with, enroll, event_types, events_of

UNREACHABLE_LLM = "http://127.0.0.1:9/v1"


def test_enrolling_answers_201_with_the_participant(client: FlaskClient) -> None:
    response = client.post(
        BASE,
        json={"phone_number": "+1 (415) 555-2671", "name": "Ana", "timezone": "Europe/Paris"},
        headers=AUTH,
    )
    assert response.status_code == 201
    body = response.get_json()
    assert body["status"] == "ok"
    assert body["message"] == "Conversation participant enrolled successfully"
    result = body["result"]
    assert result["phone_number"] == "+14155552671"
    assert result["timezone"] == "Europe/Paris"
    assert result["name"] == "Ana"
    assert result["status"] == "active"
    assert result["conversation_state"] == "intake"
    assert result["channel"] == "sms"


def test_enrolling_records_the_event_and_an_enrolled_work_item(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client, name="Ana")
    (enrolled,) = events_of(store, participant["id"], "participant.enrolled")
    assert enrolled.data.phone == "+14155552671"
    assert enrolled.data.source == "api"
    with store.reading() as conn:
        items = conn.execute(select(work_items)).all()
    assert [(i.participant_id, i.kind, i.status) for i in items] == [
        (participant["id"], "enrolled", "pending")
    ]


def test_enrolling_sends_nothing_itself_the_worker_writes_the_first_message(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client)
    assert event_types(store, participant["id"]) == ["participant.enrolled"]
    with store.reading() as conn:
        assert conn.execute(select(outbox)).all() == []


def test_timezone_and_intervention_default_to_the_settings(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client, phone="+447911123456")  # GB numbers span several zones
    assert participant["timezone"] == "America/Toronto"  # DEFAULT_TIMEZONE in the fixture
    assert participant["intervention"] == "demo"
    [enrolled] = events_of(store, participant["id"], "participant.enrolled")
    assert enrolled.data.timezone_source == "default"


def test_without_a_timezone_a_number_with_one_zone_gets_that_zone_recorded_as_inferred(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client, phone="+1 415 555 2671")
    assert participant["timezone"] == "America/Los_Angeles"
    [enrolled] = events_of(store, participant["id"], "participant.enrolled")
    assert enrolled.data.timezone_source == "inferred"


def test_a_given_timezone_is_kept_and_recorded_as_given(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client, phone="+14155552671", timezone="Europe/Madrid")
    assert participant["timezone"] == "Europe/Madrid"
    [enrolled] = events_of(store, participant["id"], "participant.enrolled")
    assert enrolled.data.timezone_source == "given"


def test_a_national_number_is_read_in_the_default_region(client: FlaskClient) -> None:
    assert enroll(client, phone="(415) 555-2671")["phone_number"] == "+14155552671"


def test_the_channel_intervention_and_debug_flag_are_stored(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    # fit-motivation talks through an LLM: one must be configured (never reached here).
    client = client_with(
        database_url,
        store,
        clock,
        OPENAI_BASE_URL=UNREACHABLE_LLM,
        WHATSAPP_TEMPLATE_SID="HX" + "0" * 32,  # WhatsApp greets with a template
    )
    participant = enroll(client, channel="whatsapp", intervention="fit-motivation", debug=True)
    assert (participant["channel"], participant["intervention"], participant["debug"]) == (
        "whatsapp",
        "fit-motivation",
        True,
    )


@pytest.mark.parametrize(
    ("phone", "reason"),
    [
        ("12345", "too short"),
        ("+1 415 555 26719999", "too long"),
        ("not a phone", "not a phone number"),
        ("+999 4155552671", "country code"),
        ("+1 555 123 4567", "not a valid number"),
    ],
)
def test_an_invalid_phone_number_is_a_400_saying_why(
    client: FlaskClient, phone: str, reason: str
) -> None:
    response = client.post(BASE, json={"phone_number": phone}, headers=AUTH)
    assert response.status_code == 400
    message = response.get_json()["message"]
    assert message.startswith("phone_number: ")
    assert reason in message


def test_a_missing_phone_number_is_a_400_naming_it(client: FlaskClient) -> None:
    response = client.post(BASE, json={}, headers=AUTH)
    assert response.status_code == 400
    assert response.get_json()["message"] == "phone_number: is required"
    assert response.get_json()["errors"] == [{"field": "phone_number", "message": "is required"}]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("phone_number", 14155552671),
        ("channel", "fax"),
        ("name", 5),
        ("name", "x" * 201),
        ("gender", ["f"]),
        ("ethnicity", {"a": 1}),
        ("background", "x" * 4001),
        ("timezone", "Mars/Olympus"),
        ("timezone", "localtime"),
        ("timezone", 3),
        ("debug", "yes"),
        ("intervention", "Not A Slug!"),
        ("intervention", ""),
        ("nickname", "Ana"),
    ],
)
def test_each_wrong_field_is_a_400_naming_that_field(
    client: FlaskClient, store: EventStore, field: str, value: Any
) -> None:
    body = {"phone_number": "+14155552671", field: value}
    response = client.post(BASE, json=body, headers=AUTH)
    assert response.status_code == 400
    answer = response.get_json()
    assert answer["status"] == "error"
    assert answer["message"].startswith(f"{field}: ")
    assert [e["field"] for e in answer["errors"]] == [field]
    assert list(store.read_all()) == []


@pytest.mark.parametrize(
    ("data", "content_type", "code"),
    [
        ("{not json", "application/json", 400),
        ("", "application/json", 400),
        ('"a string"', "application/json", 400),
        ("[1, 2]", "application/json", 400),
        ("null", "application/json", 400),
        ("[" * 50_000 + "]" * 50_000, "application/json", 413),
        ("[" * 30_000 + "]" * 30_000, "application/json", 400),
        (b"\xff\xfe{}", "application/json", 400),
        ("phone_number=%2B14155552671", "application/x-www-form-urlencoded", 415),
        (json.dumps({"phone_number": "+14155552671"}), "text/plain", 415),
    ],
)
def test_a_body_that_is_not_a_json_object_is_refused_in_the_envelope(
    client: FlaskClient, data: str | bytes, content_type: str, code: int
) -> None:
    response = client.post(BASE, data=data, headers={**AUTH, "Content-Type": content_type})
    assert response.status_code == code
    answer = response.get_json()
    assert answer["status"] == "error"
    assert answer["message"].startswith("body: ")


def test_a_duplicate_phone_number_is_a_409_whatever_its_formatting(
    client: FlaskClient, store: EventStore
) -> None:
    enroll(client, phone="+14155552671")
    response = client.post(BASE, json={"phone_number": "(415) 555-2671"}, headers=AUTH)
    assert response.status_code == 409
    assert "already enrolled" in response.get_json()["message"]
    assert len(list(store.read_all())) == 1


def test_a_duplicate_found_only_by_the_database_is_still_a_409(
    client: FlaskClient, store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    enroll(client)
    # A concurrent request enrolled the number between our check and our append.
    monkeypatch.setattr(enrollment_service, "phone_taken", lambda _store, _phone: False)
    response = client.post(BASE, json={"phone_number": "+14155552671"}, headers=AUTH)
    assert response.status_code == 409
    assert len(list(store.read_all())) == 1


def test_an_unenrolled_number_can_be_enrolled_again(client: FlaskClient) -> None:
    first = enroll(client)
    assert client.delete(f"{BASE}/{first['id']}", headers=AUTH).status_code == 200
    second = enroll(client)
    assert second["id"] != first["id"]


def test_the_default_region_setting_decides_how_national_numbers_read(
    database_url: str, store: EventStore, clock: Any
) -> None:
    client = client_with(database_url, store, clock, DEFAULT_REGION="GB")
    assert enroll(client, phone="020 7183 8750")["phone_number"] == "+442071838750"


def test_without_a_default_region_a_national_number_is_a_400(
    database_url: str, store: EventStore, clock: Any
) -> None:
    client = client_with(database_url, store, clock, DEFAULT_REGION="")
    response = client.post(BASE, json={"phone_number": "415 555 2671"}, headers=AUTH)
    assert response.status_code == 400
    assert "country code" in response.get_json()["message"]
