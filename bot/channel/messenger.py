"""The Messenger protocol: one outbound message in, a provider id or a classified SendError out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

# What the dispatcher does about a failed send:
#   retry      - the message certainly was not created (429, 5xx, refused connection): try later
#   permanent  - the provider refused it for good (bad number, 4xx): record the error code
#   opted_out  - the recipient unsubscribed (Twilio 21610): record the opt-out, never retry
#   unknown    - the request may have left (read timeout, connection lost mid-request): the
#                message may exist, so it is reconciled, never blindly re-sent
Failure = Literal["retry", "permanent", "opted_out", "unknown"]
OPTED_OUT_CODES = frozenset({21610})


@dataclass(frozen=True)
class OutboundMessage:
    """What to send: a body, or a template (`content_sid` with its variables)."""

    outbox_id: str
    to_address: str
    channel: str
    body: str | None = None
    content_sid: str | None = None
    content_variables: Mapping[str, str] | None = field(default=None)


@dataclass(frozen=True)
class SendResult:
    """The provider accepted the message and gave it this id."""

    provider_sid: str
    status: str | None = None


class SendError(Exception):
    """A send that did not succeed, with what should be done about it."""

    def __init__(
        self, failure: Failure, message: str, code: int | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.failure: Failure = failure
        self.message = message
        self.code = code
        self.status = status


class Messenger(Protocol):
    """Sends one message; raises SendError (classified) when it did not go.

    A messenger whose sends never leave the process (the console's) may say so with a true
    `sends_in_process` attribute: the dispatcher then claims due rows in batches.
    """

    def send(self, message: OutboundMessage) -> SendResult: ...


def classify_response(status: int, code: int | None, message: str) -> SendError:
    """A provider's HTTP error answer as a SendError: 429 and 5xx retry, 21610 is an opt-out,
    any other answer is permanent (the provider saw the request and said no)."""
    text = (
        f"HTTP {status}" + (f" error {code}" if code else "") + (f": {message}" if message else "")
    )
    if code in OPTED_OUT_CODES:
        return SendError("opted_out", text, code, status)
    if status == 429 or status >= 500:
        return SendError("retry", text, code, status)
    return SendError("permanent", text, code, status)
