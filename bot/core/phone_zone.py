"""A participant's timezone when none was given: their number's, if it has exactly one."""

from __future__ import annotations

from typing import Literal

import phonenumbers
from phonenumbers import timezone as number_zones

TimezoneSource = Literal["given", "inferred", "default"]
_UNKNOWN = "Etc/Unknown"  # what phonenumbers answers for a number it cannot place


def choose_timezone(given: str | None, phone: str, default: str) -> tuple[str, TimezoneSource]:
    """`given` if there is one; else the number's zone when it has exactly one (+1 415 ->
    America/Los_Angeles), recorded as inferred; else `default` (DEFAULT_TIMEZONE)."""
    if given:
        return given, "given"
    zone = single_zone(phone)
    return (zone, "inferred") if zone else (default, "default")


def single_zone(phone: str) -> str | None:
    """The one IANA zone of an E.164 number, or None (several zones, or unknown)."""
    try:
        zones = number_zones.time_zones_for_number(phonenumbers.parse(phone))
    except phonenumbers.NumberParseException:
        return None
    return zones[0] if len(zones) == 1 and zones[0] != _UNKNOWN else None
