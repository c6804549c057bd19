"""Checking `X-Twilio-Signature` on Twilio's webhooks against the URL Twilio was configured with."""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from twilio.request_validator import RequestValidator

HEADER = "X-Twilio-Signature"


class FormFields(Protocol):
    """A multi-valued form (Werkzeug's MultiDict): every value of a repeated field is signed."""

    def getlist(self, key: str) -> list[str]: ...

    def __iter__(self) -> Iterator[str]: ...


@dataclass(frozen=True)
class SignatureCheck:
    """The verdict on one request: `ok`, or the reason it was refused (safe to log)."""

    ok: bool
    reason: str | None = None


def webhook_url(public_base_url: str, raw_path: str, raw_query: str) -> str:
    """The URL Twilio signed: our public base + the path and query exactly as they arrived.

    Never the Host header or scheme the request came with (a proxy rewrites them), never a
    decoded path or query (Werkzeug decodes %27 to '), and no trailing '?' for an empty query.
    """
    url = public_base_url.rstrip("/") + raw_path
    return f"{url}?{raw_query}" if raw_query else url


def check_signature(
    auth_token: str,
    public_base_url: str,
    raw_path: str,
    raw_query: str,
    form: FormFields,
    header: str | None,
) -> SignatureCheck:
    """Whether `header` is Twilio's signature of this request, over every form field.

    The signature of the URL as configured is checked first: one HMAC for a request signed as
    we expect, compared in constant time. Only one that does not match goes on to
    `RequestValidator.validate`, which accepts a signature made with or without the port (Twilio
    signs `https://host/...` and `https://host:443/...` inconsistently), so an explicit port in
    PUBLIC_BASE_URL and one left out both work; it computes both variants, twice the HMAC and
    URL parsing on every webhook had it gone first.
    """
    if not header:
        return SignatureCheck(False, f"no {HEADER} header")
    url = webhook_url(public_base_url, raw_path, raw_query)
    validator = RequestValidator(auth_token)
    expected = validator.compute_signature(url, form).encode()
    # bytes: compare_digest refuses a str with non-ASCII characters, which a header may carry
    if hmac.compare_digest(expected, header.encode("utf-8", "surrogateescape")):
        return SignatureCheck(True)
    if validator.validate(url, form, header):
        return SignatureCheck(True)
    fields = len(set(form))
    return SignatureCheck(
        False,
        f"{HEADER} does not match {url} with {fields} form fields "
        "(wrong TWILIO_AUTH_TOKEN, a PUBLIC_BASE_URL that differs from the URL in Twilio's "
        "console, or a changed request)",
    )
