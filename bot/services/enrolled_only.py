"""The rule every change to an enrolled participant starts with: they must still be enrolled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.services.refusal import Refused


def check_still_enrolled(row: Mapping[str, Any]) -> None:
    """Refuse a participant who was unenrolled (nothing to act on) or erased (a conflict)."""
    if row["status"] == "unenrolled":
        raise Refused("Participant is no longer enrolled", "participant_id", "not_found")
    if row["status"] == "erased":
        raise Refused("the participant was erased: nothing can change", "status", "conflict")
