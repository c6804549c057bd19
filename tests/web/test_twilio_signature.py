"""X-Twilio-Signature: every row of the signed-request matrix, on both webhooks.

Requests are signed with the real `RequestValidator(...).compute_signature` for the URL Twilio
would call (PUBLIC_BASE_URL + path + query); the app is reached as http://localhost, as it is
behind a TLS-terminating proxy.
"""

from __future__ import annotations

import logging

import pytest
from flask.testing import FlaskClient
from werkzeug.datastructures import MultiDict

from bot.channel.signature import check_signature, webhook_url
from bot.core.config import ConfigError
from bot.store.event_store import EventStore
from bot.store.services import Services
from tests.web.twilio_requests import (
    INBOUND,
    PHONE,
    PUBLIC,
    STATUS,
    client_with,
    message,
    new_sid,
    post,
    sign,
    status,
    types,
)

# The published vector of twilio-python's own tests (reference §2.1): not computed by us.
VECTOR_PARAMS = {
    "CallSid": "CA1234567890ABCDE",
    "Caller": "+14158675309",
    "Digits": "1234",
    "From": "+14158675309",
    "To": "+18005551212",
}
VECTOR_SIGNATURE = "RSOYDt4T1cUTdK1PDd93/VVr8B8="


@pytest.fixture(params=[INBOUND, STATUS])
def path(request: pytest.FixtureRequest) -> str:
    return request.param


def form_for(path: str) -> dict:
    return message() if path == INBOUND else status(new_sid(), "delivered")


def refused(response, store: EventStore) -> bool:
    return response.status_code == 403 and types(store) == []


def test_the_published_twilio_vector_verifies() -> None:
    check = check_signature(
        "12345",
        "https://mycompany.com",
        "/myapp.php",
        "foo=1&bar=2",
        MultiDict(VECTOR_PARAMS),
        VECTOR_SIGNATURE,
    )
    assert check.ok


def test_an_empty_query_adds_no_question_mark() -> None:
    assert webhook_url(PUBLIC + "/", INBOUND, "") == PUBLIC + INBOUND
    assert webhook_url(PUBLIC, INBOUND, "a=1") == PUBLIC + INBOUND + "?a=1"


def test_a_validly_signed_request_is_accepted(client: FlaskClient, path: str) -> None:
    response = post(client, path, form_for(path))
    assert response.status_code == 200


def test_a_tampered_body_is_refused_and_nothing_is_recorded(
    client: FlaskClient, services: Services
) -> None:
    form = message("see you tomorrow")
    signature = sign(PUBLIC + INBOUND, form)
    tampered = {**form, "Body": "STOP"}
    response = client.post(INBOUND, data=tampered, headers={"X-Twilio-Signature": signature})
    assert refused(response, services.store)


def test_a_signature_made_with_another_token_is_refused(
    client: FlaskClient, services: Services, path: str
) -> None:
    response = post(client, path, form_for(path), token="someone-elses-token")
    assert refused(response, services.store)


def test_a_missing_signature_is_refused_and_the_reason_logged(
    client: FlaskClient, services: Services, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="bot.web.twilio_webhooks"):
        response = client.post(path, data=form_for(path))
    assert refused(response, services.store)
    assert "403" in caplog.text and "no X-Twilio-Signature header" in caplog.text


def test_https_behind_a_proxy_verifies_against_the_public_url(
    client: FlaskClient, path: str
) -> None:
    # The proxy terminated TLS: the app sees http://internal:8000, Twilio signed https://public.
    response = post(
        client,
        path,
        form_for(path),
        base_url="http://internal:8000",
        headers={"X-Forwarded-Proto": "https", "X-Forwarded-Host": "tandem.example.org"},
    )
    assert response.status_code == 200


def test_a_signature_for_the_host_the_request_names_is_refused(
    client: FlaskClient, services: Services
) -> None:
    # Only PUBLIC_BASE_URL counts, never the Host header (which anyone can set).
    response = post(
        client,
        INBOUND,
        message(),
        signed_url="http://localhost" + INBOUND,
        base_url="http://localhost",
    )
    assert refused(response, services.store)


@pytest.mark.parametrize("signed_base", [PUBLIC, PUBLIC + ":443"])
@pytest.mark.parametrize("configured_base", [PUBLIC, PUBLIC + ":443"])
def test_an_explicit_port_verifies_with_or_without_it(
    services: Services, configured_base: str, signed_base: str
) -> None:
    client = client_with(services, PUBLIC_BASE_URL=configured_base)
    response = post(client, INBOUND, message(), signed_url=signed_base + INBOUND)
    assert response.status_code == 200


def test_a_percent_encoded_query_is_verified_raw(client: FlaskClient, path: str) -> None:
    query = "tag=o%27brien+x&city=Montr%C3%A9al"
    response = post(client, path, form_for(path), query=query)
    assert response.status_code == 200


def test_a_signature_over_the_decoded_query_is_refused(
    client: FlaskClient, services: Services
) -> None:
    decoded = PUBLIC + INBOUND + "?tag=o'brien x"
    response = post(client, INBOUND, message(), query="tag=o%27brien+x", signed_url=decoded)
    assert refused(response, services.store)


def test_an_empty_query_verifies(client: FlaskClient, path: str) -> None:
    response = post(client, path, form_for(path), signed_url=PUBLIC + path)
    assert response.status_code == 200


def test_an_unknown_extra_parameter_is_signed_and_accepted(client: FlaskClient, path: str) -> None:
    form = {**form_for(path), "SomeFieldTwilioAddedLastWeek": "x"}
    response = post(client, path, form)
    assert response.status_code == 200


def test_a_parameter_added_after_signing_is_refused(
    client: FlaskClient, services: Services
) -> None:
    form = message()
    signature = sign(PUBLIC + INBOUND, form)
    response = client.post(
        INBOUND, data={**form, "OptOutType": "STOP"}, headers={"X-Twilio-Signature": signature}
    )
    assert refused(response, services.store)


def test_every_value_of_a_repeated_parameter_is_signed(
    client: FlaskClient, services: Services
) -> None:
    form = MultiDict([*message().items(), ("Extra", "one"), ("Extra", "two")])
    assert post(client, INBOUND, form).status_code == 200

    form = MultiDict([*message().items(), ("Extra", "one"), ("Extra", "two")])
    only_first = sign(PUBLIC + INBOUND, {k: form[k] for k in form})
    response = client.post(INBOUND, data=form, headers={"X-Twilio-Signature": only_first})
    assert response.status_code == 403


def test_the_web_app_refuses_to_start_without_an_auth_token(services: Services) -> None:
    with pytest.raises(ConfigError) as caught:
        client_with(services, TWILIO_AUTH_TOKEN="")
    assert any("TWILIO_AUTH_TOKEN" in problem for problem in caught.value.problems)


def test_the_web_app_refuses_to_start_without_a_public_base_url(services: Services) -> None:
    with pytest.raises(ConfigError) as caught:
        client_with(services, PUBLIC_BASE_URL="")
    assert any("PUBLIC_BASE_URL" in problem for problem in caught.value.problems)


def test_insecure_local_mode_accepts_unsigned_webhooks(services: Services) -> None:
    client = client_with(services, TWILIO_AUTH_TOKEN="", TANDEM_INSECURE_LOCAL="true")
    response = client.post(INBOUND, data=message(sender=PHONE))
    assert response.status_code == 200


def test_insecure_local_mode_still_checks_when_a_token_is_set(services: Services) -> None:
    client = client_with(services, TANDEM_INSECURE_LOCAL="true")
    assert client.post(INBOUND, data=message()).status_code == 403


@pytest.mark.parametrize("header", ["sïgnature", "\udcff", "x" * 28])
def test_a_header_that_is_no_signature_is_refused_not_an_error(
    client: FlaskClient, services: Services, header: str
) -> None:
    """Non-ASCII text in the header (which a constant-time compare of str refuses) is a 403."""
    check = check_signature("12345", PUBLIC, INBOUND, "", MultiDict(message()), header)
    assert not check.ok
    response = client.post(INBOUND, data=message(), headers={"X-Twilio-Signature": "sïgnature"})
    assert refused(response, services.store)
