"""Quiet hours: parsing "22:00-08:00", and which window applies to a participant."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.localtime import QuietHours, parse_local_time


def parse_quiet_hours(text: str | None) -> QuietHours | None:
    """Parse "HH:MM-HH:MM" (local, may cross midnight); "" or None means no quiet hours."""
    if text is None or not text.strip():
        return None
    start, sep, end = text.strip().partition("-")
    if not sep:
        raise ValueError(f"invalid quiet hours {text!r}: expected HH:MM-HH:MM such as 22:00-08:00")
    window = QuietHours(parse_local_time(start.strip()), parse_local_time(end.strip()))
    if window.start == window.end:
        raise ValueError(f"invalid quiet hours {text!r}: start and end are the same")
    return window


def for_participant(
    participant: Mapping[str, Any],
    default: QuietHours | None,
    by_intervention: Mapping[str, QuietHours | None] | None = None,
) -> QuietHours | None:
    """The quiet hours that apply: the participant's profile `quiet_hours` ("" = none) if set
    and valid, else their intervention's, else `default`."""
    profile = participant.get("profile") or {}
    own = profile.get("quiet_hours") if isinstance(profile, Mapping) else None
    if isinstance(own, str):
        try:
            return parse_quiet_hours(own)
        except ValueError:
            pass  # a malformed override falls back to the study's hours rather than to none
    if by_intervention and participant.get("intervention") in by_intervention:
        return by_intervention[participant["intervention"]]
    return default
