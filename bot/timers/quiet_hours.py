"""Quiet hours: which window applies to a participant (`parse_quiet_hours` is in
`bot.core.localtime`, beside `QuietHours`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.core.localtime import QuietHours, parse_quiet_hours


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
