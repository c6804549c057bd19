"""Twilio webhook requests for the tests, signed with the real RequestValidator."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from typing import Any

import requests
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from twilio.request_validator import RequestValidator
from werkzeug.test import TestResponse

from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.schema import PROJECTION_TABLES
from bot.store.services import Services
from bot.web import create_app
from tests.factories import enrolled
from tests.fakes.http_server import LocalServer
from tests.web.conftest import AUTH_TOKEN, settings_for

PUBLIC = "https://tandem.example.org"
INBOUND = "/webhooks/twilio/inbound"
STATUS = "/webhooks/twilio/status"
ACCOUNT = "AC" + "0" * 32
OUR_NUMBER = "+15005550006"
PHONE = "+14155552671"
_sids = itertools.count(1)


def new_sid() -> str:
    return f"SM{next(_sids):032x}"


def sign(url: str, form: Mapping[str, Any], token: str = AUTH_TOKEN) -> str:
    return RequestValidator(token).compute_signature(url, form)


def post(
    client: FlaskClient,
    path: str,
    form: Mapping[str, Any],
    *,
    query: str = "",
    signed_url: str | None = None,
    token: str = AUTH_TOKEN,
    **kwargs: Any,
) -> TestResponse:
    """POST `form` to `path?query`, signed as Twilio signs it for our public URL."""
    target = f"{path}?{query}" if query else path
    signature = sign(signed_url or PUBLIC + target, form, token)
    headers = {"X-Twilio-Signature": signature, **kwargs.pop("headers", {})}
    return client.post(target, data=form, headers=headers, **kwargs)


def message(body: str = "hi", sender: str = PHONE, to: str = OUR_NUMBER, **extra: str) -> dict:
    """An inbound-message form as Twilio posts it (fields of an SMS; add WhatsApp's as extra)."""
    sid = extra.pop("MessageSid", None) or new_sid()
    return {
        "ToCountry": "US",
        "SmsMessageSid": sid,
        "NumMedia": "0",
        "SmsSid": sid,
        "SmsStatus": "received",
        "Body": body,
        "To": to,
        "NumSegments": "1",
        "MessageSid": sid,
        "AccountSid": ACCOUNT,
        "From": sender,
        "ApiVersion": "2010-04-01",
        **extra,
    }


def status(sid: str, message_status: str, to: str = PHONE, **extra: str) -> dict:
    """A status-callback form as Twilio posts it."""
    return {
        "AccountSid": ACCOUNT,
        "ApiVersion": "2010-04-01",
        "From": OUR_NUMBER,
        "MessageSid": sid,
        "MessageStatus": message_status,
        "SmsSid": sid,
        "SmsStatus": message_status,
        "To": to,
        **extra,
    }


def rows(store: EventStore, projection: str, **where: Any) -> list[dict]:
    """The stored rows of a projection, filtered by column values."""
    table = PROJECTION_TABLES[projection]
    query = select(table).where(*(table.c[k] == v for k, v in where.items()))
    with store.reading() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def types(store: EventStore, stream_id: str | None = None) -> list[str]:
    return [e.event_type for e in store.read_all(stream_id=stream_id)]


def client_with(services: Services, **overrides: str) -> FlaskClient:
    """A client of an app on the same store and clock, with some settings changed."""
    settings = settings_for(services.settings.database_url, **overrides)
    app = create_app(build_services(settings, clock=services.clock, store=services.store))
    return app.test_client()


def changed(form: dict, change: Mapping[str, str | None]) -> dict:
    """`form` with fields replaced, or removed where the new value is None."""
    form = dict(form)
    for key, value in change.items():
        if value is None:
            form.pop(key)
        else:
            form[key] = value
    return form


def enroll(services: Services, phone: str = PHONE) -> dict:
    """Enroll a participant by appending participant.enrolled; returns their row."""
    data = enrolled(phone)
    services.store.append(participant_stream(data.participant_id), [data])
    return rows(services.store, "participants", participant_id=data.participant_id)[0]


def deliver_concurrently(app: Flask, form: Mapping[str, str], times: int = 5) -> list[int]:
    """POST the same signed inbound form `times` times at once to `app` on a real server."""
    headers = {"X-Twilio-Signature": sign(PUBLIC + INBOUND, form)}
    start = threading.Barrier(times)
    answers: list[int] = []

    def deliver(url: str) -> None:
        start.wait()
        response = requests.post(url + INBOUND, data=form, headers=headers, timeout=30)
        answers.append(response.status_code)

    with LocalServer(app) as server:
        threads = [threading.Thread(target=deliver, args=(server.url,)) for _ in range(times)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return answers
