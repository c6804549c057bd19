"""Unenrolling a participant: nothing more is sent, pending timers end, their data is kept."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.channel import outbound
from bot.services import participant_lock
from bot.services.enrolled_only import check_still_enrolled
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types import MessageSuppressed, ParticipantUnenrolled
from bot.store.events import EventData, participant_stream
from bot.store.queries import pending_outbox, pending_timers
from bot.timers import lifecycle


def unenroll(
    store: EventStore,
    participant_id: str,
    *,
    notice: str,
    reason: str,
    actor: str,
    now: datetime,
) -> dict[str, Any]:
    """Suppress what is unsent, cancel what is pending, queue `notice` (unless blank or they
    opted out) and record `participant.unenrolled`. A second unenrollment is refused (they
    are no longer enrolled). Returns their row."""

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData]:
        check_still_enrolled(row)
        decided: list[EventData] = [
            MessageSuppressed(outbox_id=outbox_id, reason="unenrolled")
            for outbox_id in pending_outbox(tx.conn, participant_id)
        ]
        decided += lifecycle.on_status_change(
            {**row, "status": "unenrolled"},
            pending_timers(tx.conn, participant_id),
            "unenrolled",
            now,
            events=tx.load(participant_stream(participant_id)),
        )
        if notice.strip() and not row["opted_out"]:
            decided += outbound.to_participant(row, notice, kind="notice")
        decided.append(ParticipantUnenrolled(reason=reason))
        return decided

    return participant_lock.change(store, participant_id, decide, actor=actor)[0]
