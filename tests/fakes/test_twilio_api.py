"""The real twilio SDK, redirected by a base-URL http client, against the fake Twilio API."""

import pytest
import requests
from flask import Flask, request
from twilio.base.exceptions import TwilioRestException
from twilio.request_validator import RequestValidator
from twilio.rest import Client

from bot.channel.twilio_messenger import BaseUrlHttpClient
from tests.fakes.http_server import LocalServer
from tests.fakes.twilio_api import FakeReply, FakeTwilio

TO, FROM = "+15550100001", "+15550109999"


@pytest.fixture
def fake():
    with FakeTwilio() as server:
        yield server


def build_client(
    fake: FakeTwilio, auth_token: str | None = None, timeout: float = 2.0, **kwargs
) -> Client:
    http_client = BaseUrlHttpClient(fake.url, timeout=timeout)
    return Client(
        fake.account_sid, auth_token or fake.auth_token, http_client=http_client, **kwargs
    )


@pytest.fixture
def client(fake):
    twilio = build_client(fake)
    yield twilio
    twilio.http_client.session.close()


def send(client: Client, to: str = TO, **kwargs):
    return client.messages.create(to=to, from_=FROM, body="Hi there", **kwargs)


def test_a_send_through_the_sdk_is_recorded_by_the_fake(fake, client):
    message = send(client, status_callback="https://bot.example.org/twilio/status")

    [recorded] = fake.messages_to(TO)
    assert recorded.sid == message.sid
    assert recorded.form["StatusCallback"] == "https://bot.example.org/twilio/status"


def test_the_redirect_holds_even_when_a_region_and_edge_rewrite_the_host(fake):
    client = build_client(fake, region="ie1", edge="dublin")

    send(client)

    client.http_client.session.close()
    assert len(fake.messages) == 1


def test_a_created_message_looks_like_twilios(client):
    message = send(client)

    assert message.sid.startswith("SM") and len(message.sid) == 34
    assert (message.status, message.to, message.from_) == ("queued", TO, FROM)
    assert message.num_segments == "1"
    assert message.date_created.tzinfo is not None


def test_a_messaging_service_send_is_accepted_with_no_segments_yet(client):
    message = client.messages.create(to=TO, messaging_service_sid="MG" + "1" * 32, body="Hi")

    assert (message.status, message.num_segments, message.from_) == ("accepted", "0", None)


def test_repeated_media_urls_are_recorded_in_order(fake, client):
    send(client, media_url=["https://x.example.org/a.png", "https://x.example.org/b.png"])

    assert fake.messages[0].media_urls == (
        "https://x.example.org/a.png",
        "https://x.example.org/b.png",
    )


def test_an_unsubscribed_recipient_raises_21610_with_status_400(fake, client):
    fake.script(FakeReply.error(400, code=21610))

    with pytest.raises(TwilioRestException) as raised:
        send(client)

    assert (raised.value.code, raised.value.status) == (21610, 400)
    assert fake.messages == []


def test_a_recipient_rule_fails_every_send_to_that_number_only(fake, client):
    fake.always_for("+15550100002", FakeReply.error(400, code=21610))

    for _ in range(2):
        with pytest.raises(TwilioRestException):
            send(client, to="+15550100002")
    send(client)

    assert [m.form["To"] for m in fake.messages] == [TO]


def test_scripted_replies_are_used_in_order_then_sends_succeed(fake, client):
    fake.script(FakeReply.error(500, code=20500), FakeReply.ok())

    with pytest.raises(TwilioRestException):
        send(client)
    send(client)
    send(client)

    assert [r.status for r in fake.requests] == [500, 201, 201]


@pytest.mark.parametrize(("status", "code"), [(429, 20429), (500, 20500)])
def test_a_server_error_surfaces_once_because_the_sdk_does_not_retry(fake, client, status, code):
    fake.script(FakeReply.error(status, code=code))

    with pytest.raises(TwilioRestException) as raised:
        send(client)

    assert (raised.value.status, raised.value.code) == (status, code)
    assert len(fake.requests) == 1


def test_a_hang_past_the_timeout_raises_read_timeout_but_the_message_exists(fake):
    client = build_client(fake, timeout=0.3)
    fake.script(FakeReply.hang(5))

    with pytest.raises(requests.exceptions.ReadTimeout):
        send(client)

    client.http_client.session.close()
    assert len(fake.messages_to(TO)) == 1


def test_a_wrong_auth_token_is_rejected_with_401(fake):
    client = build_client(fake, auth_token="wrong")

    with pytest.raises(TwilioRestException) as raised:
        send(client)

    client.http_client.session.close()
    assert (raised.value.status, raised.value.code) == (401, 20003)
    assert fake.messages == []


def test_a_send_without_a_sender_is_rejected_with_21603(client):
    with pytest.raises(TwilioRestException) as raised:
        client.messages.create(to=TO, body="Hi")

    assert raised.value.code == 21603


@pytest.fixture
def receiver(fake):
    """A status-callback endpoint that records whether each signature validated."""
    seen = []
    app = Flask(__name__)

    @app.post("/twilio/status")
    def status():
        signature = request.headers.get("X-Twilio-Signature", "")
        valid = RequestValidator(fake.auth_token).validate(request.url, request.form, signature)
        seen.append((valid, dict(request.form)))
        return "", 204 if valid else 403

    with LocalServer(app) as server:
        yield server.url + "/twilio/status", seen


def test_a_status_callback_is_signed_so_the_request_validator_accepts_it(fake, client, receiver):
    url, seen = receiver
    message = send(client, status_callback=url)

    response = fake.deliver_status(None, message.sid, "undelivered", error_code=30007)

    assert response.status_code == 204
    [(valid, form)] = seen
    assert valid
    assert (form["MessageStatus"], form["ErrorCode"], form["To"]) == ("undelivered", "30007", TO)


def test_a_status_callback_signed_with_another_token_is_refused(fake, client, receiver):
    url, _ = receiver
    message = send(client, status_callback=url)

    response = fake.deliver_status(url, message.sid, "delivered", auth_token="other")

    assert response.status_code == 403
