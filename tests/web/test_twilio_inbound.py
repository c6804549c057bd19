"""POST /webhooks/twilio/inbound: record the message and its work item, answer <Response/>."""

from __future__ import annotations

import logging

import pytest
from flask.testing import FlaskClient

from bot.store.events import participant_stream
from bot.store.services import Services
from bot.web import create_app
from tests.web.twilio_requests import (
    INBOUND,
    PHONE,
    changed,
    deliver_concurrently,
    enroll,
    message,
    post,
    rows,
    types,
)


@pytest.fixture
def participant(services: Services) -> dict:
    return enroll(services)


def received(services: Services, participant: dict) -> list:
    stream = participant_stream(participant["participant_id"])
    return [e for e in services.store.load(stream) if e.event_type == "message.received"]


def inbound_work(services: Services) -> list[dict]:
    return rows(services.store, "work_items", kind="inbound")


def test_a_message_is_recorded_with_a_work_item_and_answered_with_empty_twiml(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    form = message("I walked today")

    response = post(client, INBOUND, form)

    assert response.status_code == 200
    assert response.mimetype == "text/xml"
    assert response.text.endswith("<Response/>")
    [event] = received(services, participant)
    assert event.idempotency_key == form["MessageSid"]
    assert (event.data.body, event.data.channel, event.data.keyword) == (
        "I walked today",
        "sms",
        None,
    )
    [work] = inbound_work(services)
    assert (work["participant_id"], work["ref"]) == (participant["participant_id"], event.event_id)
    assert rows(services.store, "outbox") == []  # nothing is sent inside the request


def test_media_and_whatsapp_fields_are_recorded(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    form = message(
        "look",
        sender=f"whatsapp:{PHONE}",
        to="whatsapp:+15005550006",
        NumMedia="2",
        MediaUrl0="https://api.twilio.com/media/ME1",
        MediaContentType0="image/jpeg",
        MediaUrl1="https://api.twilio.com/media/ME2",
        MediaContentType1="audio/ogg",
        ProfileName="Ada",
        WaId="14155552671",
    )

    assert post(client, INBOUND, form).status_code == 200

    [event] = received(services, participant)
    data = event.data
    assert (data.channel, data.from_address) == ("whatsapp", f"whatsapp:{PHONE}")
    assert [(m.url, m.content_type) for m in data.media] == [
        ("https://api.twilio.com/media/ME1", "image/jpeg"),
        ("https://api.twilio.com/media/ME2", "audio/ogg"),
    ]
    assert (data.profile_name, data.wa_id) == ("Ada", "14155552671")


def test_a_redelivery_writes_nothing_and_gets_the_same_answer(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    form = message()
    first = post(client, INBOUND, form)
    again = post(client, INBOUND, form)

    assert (again.status_code, again.data) == (first.status_code, first.data)
    assert len(received(services, participant)) == 1
    assert len(inbound_work(services)) == 1


def test_five_concurrent_deliveries_record_one_event_and_one_work_item(
    services: Services, participant: dict
) -> None:
    form = message("same message, five times")

    answers = deliver_concurrently(create_app(services), form)

    assert answers == [200] * 5
    assert len(received(services, participant)) == 1
    assert len(inbound_work(services)) == 1


def test_logs_carry_no_phone_number_or_message_text(
    client: FlaskClient, participant: dict, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        post(client, INBOUND, message("my secret plan"))
    assert "message.received" in caplog.text
    assert PHONE not in caplog.text and "secret" not in caplog.text


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"From": None}, "From is required"),
        ({"MessageSid": None}, "MessageSid is required"),
        ({"MessageSid": "SM-not/a sid"}, "MessageSid must be"),
        ({"From": "4155552671"}, "From: a Twilio address must be an E.164 number"),
        ({"From": "whatsapp:CC.abc123"}, "From: a Twilio address must be an E.164 number"),
        ({"From": "messenger:+14155552671"}, "From: unsupported channel"),
        ({"To": "+1 415 555"}, "To: a Twilio address must be an E.164 number"),
        ({"NumMedia": "two"}, "NumMedia must be a whole number"),
        ({"NumMedia": "1"}, "NumMedia is 1 but MediaUrl0 is missing"),
    ],
)
def test_a_malformed_form_is_a_400_that_says_why(
    client: FlaskClient, services: Services, change: dict, problem: str
) -> None:
    form = changed(message(), change)

    response = post(client, INBOUND, form)

    assert response.status_code == 400
    assert problem in response.get_json()["message"]
    assert types(services.store) == []
