"""A fake Twilio Messages REST API with scripted failures and signed status callbacks."""

from __future__ import annotations

import secrets
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime

import requests
from flask import Flask, Response, jsonify, request
from twilio.request_validator import RequestValidator

from tests.fakes.http_server import LocalServer

_MESSAGES_PATH = "/2010-04-01/Accounts/<account_sid>/Messages.json"
_MESSAGES = {
    20003: "Authenticate",
    20404: "The requested resource was not found",
    20429: "Too Many Requests",
    20500: "Internal Server Error",
    21602: "Message body is required.",
    21604: "A 'To' phone number is required.",
    21603: "A 'From' phone number is required.",
    21610: "Attempt to send to unsubscribed recipient",
    21617: "The concatenated message body exceeds the 1600 character limit.",
}


@dataclass(frozen=True)
class FakeReply:
    """How the fake answers one create-message call."""

    status: int = 201
    code: int | None = None
    message: str | None = None
    hang_seconds: float = 0.0

    @classmethod
    def ok(cls) -> FakeReply:
        return cls()

    @classmethod
    def error(cls, status: int, code: int, message: str | None = None) -> FakeReply:
        return cls(status=status, code=code, message=message or _MESSAGES.get(code, "Error"))

    @classmethod
    def hang(cls, seconds: float) -> FakeReply:
        """Create the message, then answer 201 only after `seconds` (or when the fake stops)."""
        return cls(hang_seconds=seconds)

    @property
    def creates_message(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake received, with what it answered."""

    account_sid: str
    form: dict[str, str]
    media_urls: tuple[str, ...]
    headers: dict[str, str]
    received_at: datetime
    status: int
    sid: str | None = None
    message: dict = field(default_factory=dict)

    @property
    def created(self) -> bool:
        return self.sid is not None


def _twilio_error(status: int, code: int, message: str) -> tuple[Response, int]:
    more_info = f"https://www.twilio.com/docs/errors/{code}"
    body = {"code": code, "message": message, "more_info": more_info, "status": status}
    return jsonify(body), status


def _count_segments(body: str) -> int:
    """Roughly how Twilio splits SMS: GSM-7-ish text 160/153, anything else UCS-2 70/67."""
    single, multi = (160, 153) if body.isascii() else (70, 67)
    if len(body) <= single:
        return 1 if body else 0
    return -(-len(body) // multi)


class FakeTwilio(LocalServer):
    """Serves Messages.json on loopback; every create is recorded and may be scripted to fail."""

    def __init__(
        self,
        account_sid: str = "AC" + "0" * 32,
        auth_token: str = "test-auth-token",
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.account_sid, self.auth_token, self._clock = account_sid, auth_token, clock
        self._lock = threading.Lock()
        self._queue: deque[FakeReply] = deque()
        self._rules: dict[str, FakeReply] = {}
        self._records: list[RecordedRequest] = []
        self._released = threading.Event()
        app = Flask(__name__)
        app.add_url_rule(_MESSAGES_PATH, view_func=self._create_message, methods=["POST"])
        super().__init__(app)

    def script(self, *replies: FakeReply) -> None:
        """Queue replies for the next calls, in order; unscripted calls answer 201."""
        with self._lock:
            self._queue.extend(replies)

    def always_for(self, to: str, reply: FakeReply) -> None:
        """Answer every send to `to` with `reply`; this wins over the queue (a lasting state)."""
        with self._lock:
            self._rules[to] = reply

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._records)

    @property
    def messages(self) -> list[RecordedRequest]:
        """Requests that created a message, including those whose response was lost."""
        return [r for r in self.requests if r.created]

    def messages_to(self, to: str) -> list[RecordedRequest]:
        return [r for r in self.messages if r.form.get("To") == to]

    def stop(self) -> None:
        self._released.set()
        super().stop()

    def deliver_status(
        self,
        callback_url: str | None,
        message_sid: str,
        status: str,
        error_code: int | None = None,
        auth_token: str | None = None,
    ) -> requests.Response:
        """POST a signed status callback; callback_url None means the message's StatusCallback."""
        sent = next(r for r in self.messages if r.sid == message_sid)
        url = callback_url or sent.form["StatusCallback"]
        params = {
            "AccountSid": self.account_sid,
            "ApiVersion": "2010-04-01",
            "From": sent.message["from"] or "",
            "MessageSid": message_sid,
            "MessageStatus": status,
            "SmsSid": message_sid,
            "SmsStatus": status,
            "To": sent.form["To"],
        }
        if sent.form.get("MessagingServiceSid"):
            params["MessagingServiceSid"] = sent.form["MessagingServiceSid"]
        if error_code is not None:
            params["ErrorCode"] = str(error_code)
        signature = RequestValidator(auth_token or self.auth_token).compute_signature(url, params)
        with requests.Session() as session:
            return session.post(
                url, data=params, headers={"X-Twilio-Signature": signature}, timeout=5
            )

    def _create_message(self, account_sid: str):
        form = request.form
        reply = self._choose_reply(account_sid, form.get("To", ""))
        sid = "SM" + secrets.token_hex(16) if reply.creates_message else None
        message = self._message_json(account_sid, sid) if sid else {}
        record = RecordedRequest(
            account_sid=account_sid,
            form={key: form[key] for key in form},
            media_urls=tuple(form.getlist("MediaUrl")),
            headers=dict(request.headers),
            received_at=self._clock(),
            status=reply.status,
            sid=sid,
            message=message,
        )
        with self._lock:
            self._records.append(record)
        if reply.hang_seconds:
            self._released.wait(reply.hang_seconds)
        if not sid:
            return _twilio_error(reply.status, reply.code or reply.status, reply.message or "")
        return jsonify(message), reply.status

    def _choose_reply(self, account_sid: str, to: str) -> FakeReply:
        auth = request.authorization
        if not auth or (auth.username, auth.password) != (self.account_sid, self.auth_token):
            return FakeReply.error(401, 20003)
        if account_sid != self.account_sid:
            return FakeReply.error(404, 20404)
        invalid = self._invalid_form_code()
        if invalid:
            return FakeReply.error(400, invalid)
        with self._lock:
            if to in self._rules:
                return self._rules[to]
            return self._queue.popleft() if self._queue else FakeReply.ok()

    def _invalid_form_code(self) -> int | None:
        form = request.form
        if not form.get("To"):
            return 21604
        if not form.get("From") and not form.get("MessagingServiceSid"):
            return 21603
        if not (form.get("Body") or form.get("ContentSid") or form.get("MediaUrl")):
            return 21602
        if len(form.get("Body", "")) > 1600:
            return 21617
        return None

    def _message_json(self, account_sid: str, sid: str) -> dict:
        form, now = request.form, format_datetime(self._clock())
        service = form.get("MessagingServiceSid")
        uri = f"/2010-04-01/Accounts/{account_sid}/Messages/{sid}"
        return {
            "account_sid": account_sid,
            "api_version": "2010-04-01",
            "body": form.get("Body", ""),
            "date_created": now,
            "date_sent": None,
            "date_updated": now,
            "direction": "outbound-api",
            "error_code": None,
            "error_message": None,
            "from": form.get("From"),
            "messaging_service_sid": service,
            "num_media": str(len(form.getlist("MediaUrl"))),
            "num_segments": "0" if service else str(_count_segments(form.get("Body", ""))),
            "price": None,
            "price_unit": "USD",
            "sid": sid,
            "status": "accepted" if service else "queued",
            "subresource_uris": {"media": f"{uri}/Media.json"},
            "to": form["To"],
            "uri": f"{uri}.json",
        }
