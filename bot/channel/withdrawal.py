"""Withdrawal: a participant leaves the study. Every unsent message is suppressed and every
pending timer cancelled, nothing more is ever sent, and their data is kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, get_args

from bot.store.event_types.messages import MessageSuppressed
from bot.store.event_types.participants import ParticipantWithdrawn
from bot.store.events import EventData
from bot.timers import lifecycle

REQUESTERS: tuple[str, ...] = get_args(ParticipantWithdrawn.model_fields["requested_by"].annotation)


class NotWithdrawable(ValueError):
    """The participant cannot be withdrawn (already withdrawn, or unenrolled)."""


def withdraw(
    participant: Mapping[str, Any],
    pending_timers: Sequence[Mapping[str, Any]],
    pending_outbox: Sequence[str],
    reason: str,
    requested_by: str,
    now: datetime,
) -> list[EventData]:
    """The events of withdrawing `participant`, who asked (`requested_by`) and why."""
    if participant["status"] in ("withdrawn", "unenrolled", "erased"):
        raise NotWithdrawable(f"the participant is already {participant['status']}")
    if not reason.strip():
        raise ValueError("reason: say why (it is kept with the withdrawal)")
    suppressed: list[EventData] = [
        MessageSuppressed(outbox_id=outbox_id, reason="withdrawn") for outbox_id in pending_outbox
    ]
    after = {**participant, "status": "withdrawn"}
    cancelled = lifecycle.on_status_change(after, list(pending_timers), "withdrawn", now)
    withdrawn = ParticipantWithdrawn(reason=reason.strip(), requested_by=requested_by)
    return [*suppressed, *cancelled, withdrawn]
