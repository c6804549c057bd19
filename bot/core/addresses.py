"""Twilio addresses ("whatsapp:+1555…" or "+1555…") and canonical E.164 phone numbers."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

import phonenumbers
from phonenumbers import NumberParseException, ValidationResult

Channel = Literal["sms", "whatsapp"]
CHANNELS: tuple[Channel, ...] = get_args(Channel)

_E164 = re.compile(r"\+[1-9]\d{1,14}")
_DIGITS = re.compile(r"[0-9]{6,}")
_WHATSAPP_PREFIX = "whatsapp:"


class InvalidPhoneNumber(ValueError):
    """A phone number that cannot be used; the message says precisely why."""


@dataclass(frozen=True)
class Address:
    """Where a message comes from or goes to: a channel and an E.164 number."""

    channel: Channel
    e164: str

    def __post_init__(self) -> None:
        format_address(self.channel, self.e164)  # raises on a bad channel or number

    def __str__(self) -> str:
        return format_address(self.channel, self.e164)


def parse_address(raw: str) -> Address:
    """Read a Twilio `From`/`To` value; only the form is checked, not the number's validity."""
    text = raw.strip()
    channel: Channel = "sms"
    if text[: len(_WHATSAPP_PREFIX)].lower() == _WHATSAPP_PREFIX:
        channel, text = "whatsapp", text[len(_WHATSAPP_PREFIX) :].strip()
    elif ":" in text:
        raise ValueError(f"unsupported channel {text.split(':', 1)[0]!r}, expected sms or whatsapp")
    if not _E164.fullmatch(text):
        raise ValueError("a Twilio address must be an E.164 number such as +14155552671")
    return Address(channel=channel, e164=text)


def format_address(channel: Channel, e164: str) -> str:
    """The Twilio `From`/`To` value for a channel and an E.164 number."""
    if channel not in CHANNELS:
        raise ValueError(f"unsupported channel {channel!r}, expected sms or whatsapp")
    if not _E164.fullmatch(e164):
        raise ValueError("not an E.164 number such as +14155552671")
    return f"{_WHATSAPP_PREFIX}{e164}" if channel == "whatsapp" else e164


def canonical_phone(raw: str, default_region: str | None = None) -> str:
    """A valid number in E.164, reading national formats in `default_region` (e.g. "GB").

    "00" starts an international number (the prefix of most of the world). Bare digits
    ("447911123456", PromptPipe's stored form) are read with their country code, and also
    nationally in `default_region`; when both readings are valid numbers and differ, the
    number is ambiguous and refused with both readings."""
    region = default_region.upper() if default_region else None
    if region is not None and region not in phonenumbers.SUPPORTED_REGIONS:
        raise InvalidPhoneNumber(f"unknown default region {default_region!r}")
    text = raw.strip()
    if text.startswith("00"):
        return canonical_phone("+" + text[2:])
    if _DIGITS.fullmatch(text):
        return _bare_digits(text, region)
    return _parsed(raw, region)


def _bare_digits(digits: str, region: str | None) -> str:
    international = _valid_or_none("+" + digits, None)
    national = _valid_or_none(digits, region) if region else None
    if international and national and international != national:
        raise InvalidPhoneNumber(
            f"ambiguous: {digits} could be {international} (read with its country code) or "
            f"{national} (read as a {region} number); write the one you mean with + and its "
            f"country code, {international} or {national}"
        )
    found = international or national
    if found:
        return found
    problems = [f"as +{digits}: {_reason(_parsed, '+' + digits, None)}"]
    if region:
        problems.append(f"as a {region} number: {_reason(_parsed, digits, region)}")
    raise InvalidPhoneNumber(
        "; ".join(problems) + "; write it with + and the country code, e.g. +14155552671"
    )


def _reason(parse: Callable[[str, str | None], str], text: str, region: str | None) -> str:
    try:
        parse(text, region)
    except InvalidPhoneNumber as exc:
        return str(exc)
    return "valid"  # pragma: no cover - only asked about numbers that failed


def _valid_or_none(text: str, region: str | None) -> str | None:
    try:
        return _parsed(text, region)
    except InvalidPhoneNumber:
        return None


def _parsed(raw: str, region: str | None) -> str:
    try:
        number = phonenumbers.parse(raw, region)
    except NumberParseException as error:
        raise InvalidPhoneNumber(_parse_failure(raw, region, error)) from error
    if not phonenumbers.is_valid_number(number):
        raise InvalidPhoneNumber(_invalid_reason(number))
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _parse_failure(raw: str, region: str | None, error: NumberParseException) -> str:
    kind = error.error_type
    if kind == NumberParseException.NOT_A_NUMBER:
        return "not a phone number"
    if kind == NumberParseException.INVALID_COUNTRY_CODE:
        if region is None and not raw.strip().startswith("+"):
            return "missing country code (start with +) and no default region to assume"
        return "unknown country code"
    if kind in (NumberParseException.TOO_SHORT_AFTER_IDD, NumberParseException.TOO_SHORT_NSN):
        return "too short to be a phone number"
    if kind == NumberParseException.TOO_LONG:
        return "too long to be a phone number"
    return f"not a phone number ({error})"


def _invalid_reason(number: phonenumbers.PhoneNumber) -> str:
    region = phonenumbers.region_code_for_country_code(number.country_code or 0)
    where = f"+{number.country_code} ({region})"
    reason = phonenumbers.is_possible_number_with_reason(number)
    if reason == ValidationResult.TOO_SHORT:
        return f"too short for {where}"
    if reason == ValidationResult.TOO_LONG:
        return f"too long for {where}"
    if reason == ValidationResult.INVALID_COUNTRY_CODE:
        return f"unknown country code +{number.country_code}"
    if reason == ValidationResult.IS_POSSIBLE_LOCAL_ONLY:
        return f"a local number without its area code for {where}"
    if reason == ValidationResult.INVALID_LENGTH:
        return f"wrong length for {where}"
    return f"not a valid number for {where}"
