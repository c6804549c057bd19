"""Twilio webhook requests for the tests, signed with the real RequestValidator."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from flask.testing import FlaskClient
from sqlalchemy import select
from twilio.request_validator import RequestValidator
from werkzeug.test import TestResponse

from bot.bootstrap import Services, build_services
from bot.store import EventStore
from bot.store.schema import PROJECTION_TABLES
from bot.web import create_app
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
