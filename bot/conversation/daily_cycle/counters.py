"""The habit counters and the intensity as the profile holds them (pure, forgiving)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.conversation.daily_cycle.answers import LEVELS


def count(participant: Mapping[str, Any], name: str) -> int:
    """A profile counter (success_count, total_prompts); 0 if missing or not a number."""
    value = (participant.get("profile") or {}).get(name)
    if isinstance(value, bool):
        return 0
    try:
        return max(int(value or 0), 0)
    except (TypeError, ValueError):
        return 0


def intensity(participant: Mapping[str, Any]) -> str:
    """The saved intensity level; "normal" when none (or an unknown one) is saved."""
    level = (participant.get("profile") or {}).get("intensity")
    return level if level in LEVELS else "normal"
