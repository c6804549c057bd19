"""The Twilio messenger, through the real twilio SDK against the fake Twilio API."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client

from bot.channel.console import ConsoleMessenger
from bot.channel.factory import build_messenger
from bot.channel.messenger import OutboundMessage, SendError
from bot.channel.twilio_messenger import (
    BaseUrlHttpClient,
    TwilioMessenger,
    twilio_http_client,
)
from bot.core.config import load_settings
from tests.fakes.twilio_api import FakeReply, FakeTwilio

TO, FROM = "+14155552671", "+15005550006"
SERVICE = "MG" + "1" * 32
PUBLIC = "https://tandem.example.org"


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


def messenger_for(
    fake_url: str, fake: FakeTwilio, timeout: float = 5.0, **kwargs
) -> TwilioMessenger:
    client = Client(
        fake.account_sid, fake.auth_token, http_client=twilio_http_client(fake_url, timeout)
    )
    kwargs.setdefault("from_number", FROM)
    kwargs.setdefault("public_base_url", PUBLIC)
    return TwilioMessenger(client, **kwargs)


@pytest.fixture
def messenger(fake: FakeTwilio) -> TwilioMessenger:
    return messenger_for(fake.url, fake)


def sms(body: str = "Hello", outbox_id: str = "o-1", **kwargs) -> OutboundMessage:
    return OutboundMessage(outbox_id=outbox_id, to_address=TO, channel="sms", body=body, **kwargs)


def test_a_send_carries_sender_body_and_a_status_callback_with_the_outbox_id(fake, messenger):
    result = messenger.send(sms("Hello", outbox_id="0b4e-77"))

    [request] = fake.messages
    assert (request.form["To"], request.form["From"], request.form["Body"]) == (TO, FROM, "Hello")
    callback = urlsplit(request.form["StatusCallback"])
    assert f"{callback.scheme}://{callback.netloc}{callback.path}" == (
        f"{PUBLIC}/webhooks/twilio/status"
    )
    assert parse_qs(callback.query) == {"outbox_id": ["0b4e-77"]}
    assert (result.provider_sid, result.status) == (request.sid, "queued")


def test_a_messaging_service_sends_in_place_of_a_from_number(fake):
    messenger = messenger_for(fake.url, fake, from_number=None, messaging_service_sid=SERVICE)

    messenger.send(sms())

    [request] = fake.messages
    assert request.form["MessagingServiceSid"] == SERVICE
    assert "From" not in request.form


def test_whatsapp_goes_from_the_whatsapp_address_of_the_sender(fake, messenger):
    messenger.send(OutboundMessage("o-1", f"whatsapp:{TO}", "whatsapp", body="Hi"))

    [request] = fake.messages
    assert (request.form["From"], request.form["To"]) == (f"whatsapp:{FROM}", f"whatsapp:{TO}")


def test_a_template_is_sent_by_content_sid_without_a_body(fake, messenger):
    template = "HX" + "ab" * 16
    messenger.send(
        OutboundMessage(
            "o-1", f"whatsapp:{TO}", "whatsapp", content_sid=template, content_variables={"1": "Hi"}
        )
    )

    [request] = fake.messages
    assert request.form["ContentSid"] == template
    assert json.loads(request.form["ContentVariables"]) == {"1": "Hi"}
    assert "Body" not in request.form


def test_without_a_public_base_url_no_status_callback_is_asked_for(fake):
    messenger_for(fake.url, fake, public_base_url=None).send(sms())

    assert "StatusCallback" not in fake.messages[0].form


@pytest.mark.parametrize(
    ("status", "code", "failure"),
    [
        (429, 20429, "retry"),
        (500, 20500, "retry"),
        (503, 20503, "retry"),
        (400, 21610, "opted_out"),
        (400, 21211, "permanent"),
        (400, 21614, "permanent"),
        (404, 20404, "permanent"),
    ],
)
def test_error_answers_are_classified(fake, messenger, status, code, failure):
    fake.script(FakeReply.error(status, code))

    with pytest.raises(SendError) as raised:
        messenger.send(sms())

    assert (raised.value.failure, raised.value.code, raised.value.status) == (failure, code, status)


def test_wrong_credentials_are_a_permanent_failure(fake):
    client = Client(
        fake.account_sid, "wrong", http_client=twilio_http_client(fake.url, timeout=5.0)
    )

    with pytest.raises(SendError) as raised:
        TwilioMessenger(client, from_number=FROM).send(sms())

    assert (raised.value.failure, raised.value.code) == ("permanent", 20003)


def test_a_hang_past_the_timeout_is_an_unknown_outcome_and_the_message_exists(fake):
    messenger = messenger_for(fake.url, fake, timeout=0.3)
    fake.script(FakeReply.hang(5))

    with pytest.raises(SendError) as raised:
        messenger.send(sms())

    assert raised.value.failure == "unknown"
    assert len(fake.messages_to(TO)) == 1


def test_a_refused_connection_is_safe_to_retry(fake):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"

    with pytest.raises(SendError) as raised:
        messenger_for(closed, fake, timeout=1.0).send(sms())

    assert raised.value.failure == "retry"
    assert fake.requests == []


def test_twilios_own_base_url_uses_the_plain_client_with_the_timeout():
    client = twilio_http_client("https://api.twilio.com", 7.5)

    assert type(client) is TwilioHttpClient
    assert client.timeout == 7.5


def test_another_base_url_redirects_every_request_even_with_a_region_and_edge(fake):
    client = Client(
        fake.account_sid,
        fake.auth_token,
        http_client=twilio_http_client(fake.url, 5.0),
        region="ie1",
        edge="dublin",
    )
    assert isinstance(client.http_client, BaseUrlHttpClient)

    TwilioMessenger(client, from_number=FROM).send(sms())

    assert len(fake.messages) == 1


def test_a_timeout_is_required():
    with pytest.raises(ValueError):
        twilio_http_client(None, 0)


def test_the_factory_builds_the_messenger_the_settings_name(fake):
    env = {
        "MESSENGER": "twilio",
        "TWILIO_ACCOUNT_SID": fake.account_sid,
        "TWILIO_AUTH_TOKEN": fake.auth_token,
        "TWILIO_FROM_NUMBER": FROM,
        "TWILIO_API_BASE_URL": fake.url,
        "TWILIO_TIMEOUT_SECONDS": "4",
        "PUBLIC_BASE_URL": PUBLIC,
    }
    twilio = build_messenger(load_settings(env, env_file=None))
    console = build_messenger(load_settings({}, env_file=None))

    assert isinstance(twilio, TwilioMessenger)
    assert twilio.client.http_client.timeout == 4.0
    twilio.send(sms())
    assert len(fake.messages) == 1
    assert isinstance(console, ConsoleMessenger)
