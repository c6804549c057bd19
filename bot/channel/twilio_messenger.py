"""The Twilio messenger: `messages.create` through the twilio SDK, its errors classified."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import requests
from twilio.base.exceptions import TwilioRestException, TwilioServiceException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client
from urllib3.exceptions import ConnectTimeoutError, MaxRetryError

from bot.channel.messenger import (
    OutboundMessage,
    SendError,
    SendResult,
    classify_response,
)
from bot.core.addresses import format_address
from bot.core.config import TWILIO_API, Settings

STATUS_PATH = "/webhooks/twilio/status"

# The SDK logs every request's URL and headers at INFO; ours log ids and counts only.
_HTTP_LOG = logging.getLogger(__name__ + ".http")
_HTTP_LOG.setLevel(logging.WARNING)


class BaseUrlHttpClient(TwilioHttpClient):
    """Sends every Twilio request to `base_url`'s scheme and host (tests: the fake Twilio).

    Rewriting in the http client keeps the SDK's own URL building and `requests` encoding, and
    holds even when TWILIO_REGION/TWILIO_EDGE make the SDK rewrite the host.
    """

    def __init__(self, base_url: str, timeout: float) -> None:
        super().__init__(timeout=timeout, logger=_HTTP_LOG)
        parts = urlsplit(base_url)
        self._scheme, self._netloc = parts.scheme, parts.netloc

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        redirected = urlsplit(url)._replace(scheme=self._scheme, netloc=self._netloc)
        return super().request(method, urlunsplit(redirected), *args, **kwargs)


def twilio_http_client(base_url: str | None, timeout: float) -> TwilioHttpClient:
    """Twilio's own client with an explicit timeout (its default is none at all), redirected
    when TWILIO_API_BASE_URL is not Twilio's."""
    if timeout <= 0:
        raise ValueError("the Twilio timeout must be positive")
    if base_url is None or base_url.rstrip("/") == TWILIO_API:
        return TwilioHttpClient(timeout=timeout, logger=_HTTP_LOG)
    return BaseUrlHttpClient(base_url, timeout)


class TwilioMessenger:
    """Sends through a Messaging Service or from one number, with a status callback per message
    that carries our outbox id (so a message whose send timed out can link itself later)."""

    def __init__(
        self,
        client: Client,
        *,
        from_number: str | None = None,
        messaging_service_sid: str | None = None,
        public_base_url: str | None = None,
    ) -> None:
        if not (from_number or messaging_service_sid):
            raise ValueError("a sender is needed: a from number or a Messaging Service SID")
        self.client = client
        self.from_number = from_number
        self.messaging_service_sid = messaging_service_sid
        self.public_base_url = public_base_url.rstrip("/") if public_base_url else None

    @classmethod
    def from_settings(cls, settings: Settings) -> TwilioMessenger:
        """The Twilio REST client of the settings' account, with an explicit timeout."""
        client = Client(
            settings.twilio_account_sid,
            settings.twilio_auth_token,
            http_client=twilio_http_client(
                settings.twilio_api_base_url, settings.twilio_timeout_seconds
            ),
        )
        return cls(
            client,
            from_number=settings.twilio_from_number,
            messaging_service_sid=settings.twilio_messaging_service_sid,
            public_base_url=settings.public_base_url,
        )

    def status_callback(self, outbox_id: str) -> str | None:
        if self.public_base_url is None:
            return None
        return f"{self.public_base_url}{STATUS_PATH}?{urlencode({'outbox_id': outbox_id})}"

    def send(self, message: OutboundMessage) -> SendResult:
        try:
            created = self.client.messages.create(**self._params(message))
        except TwilioRestException as exc:
            raise classify_response(exc.status, exc.code, exc.msg) from exc
        except TwilioServiceException as exc:
            raise classify_response(exc.status, exc.code, exc.detail or exc.title) from exc
        except requests.exceptions.RequestException as exc:
            raise transport_error(exc) from exc
        return SendResult(provider_sid=created.sid, status=created.status)

    def _params(self, message: OutboundMessage) -> dict[str, object]:
        params: dict[str, object] = {"to": message.to_address}
        if self.messaging_service_sid:
            params["messaging_service_sid"] = self.messaging_service_sid
        else:
            params["from_"] = format_address(message.channel, self.from_number)  # type: ignore[arg-type]  # from_number is set without a messaging service (checked at init)
        if message.content_sid:
            # A template replaces the body: WhatsApp refuses Body outside the 24-hour window.
            params["content_sid"] = message.content_sid
            if message.content_variables:
                params["content_variables"] = json.dumps(dict(message.content_variables))
        else:
            params["body"] = message.body
        callback = self.status_callback(message.outbox_id)
        if callback:
            params["status_callback"] = callback
        return params


def transport_error(exc: requests.exceptions.RequestException) -> SendError:
    """Did the request leave? Only a failure to connect proves it did not; anything after that
    (a read timeout, a connection dropped mid-request) may have created the message."""
    if isinstance(exc, requests.exceptions.ConnectTimeout) or _failed_to_connect(exc):
        return SendError("retry", f"could not connect to Twilio ({type(exc).__name__}); not sent")
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return SendError("unknown", "Twilio did not answer in time; the message may exist")
    return SendError(
        "unknown", f"the connection to Twilio failed mid-request ({type(exc).__name__})"
    )


def _failed_to_connect(exc: requests.exceptions.RequestException) -> bool:
    if not isinstance(exc, requests.exceptions.ConnectionError) or not exc.args:
        return False
    inner = exc.args[0]
    # urllib3 2: NewConnectionError (refused, DNS) is a ConnectTimeoutError; both happen before
    # a byte of the request is written. A ProtocolError (connection aborted) comes after.
    return isinstance(inner, MaxRetryError) and isinstance(inner.reason, ConnectTimeoutError)
