"""Withdrawing a participant: they leave the study, contact and timers stop, their data stays.

One act for the API, the console and `tandem withdraw`: under the participant's lock, every
unsent message is suppressed, every pending timer cancelled, an active takeover ended (the
staff member can no longer write to them either), and `participant.withdrawn` records who
asked and why. Erasing their data is a separate act (`bot.services.erasure`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.channel import withdrawal as requesters
from bot.services import participant_lock
from bot.services.refusal import Refused
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.messages import MessageSuppressed
from bot.store.event_types.participants import ParticipantWithdrawn
from bot.store.event_types.takeover import TakeoverEnded
from bot.store.events import EventData
from bot.store.queries import pending_outbox, pending_timers
from bot.timers import lifecycle

REQUESTERS = requesters.REQUESTERS
REASON_LIMIT = 2000
ENDED_STATUSES = ("withdrawn", "unenrolled", "erased")


@dataclass(frozen=True)
class Withdrawn:
    """What a withdrawal did: the participant's row afterwards and what it stopped."""

    row: dict[str, Any]
    suppressed: int
    cancelled: int
    takeover_ended: bool


def withdraw(
    store: EventStore,
    participant_id: str,
    *,
    reason: str,
    requested_by: str,
    actor: str,
    now: datetime,
) -> Withdrawn:
    """Withdraw the participant, recording who asked (`requested_by`, `actor`) and why.
    Refuses a blank or overlong reason, an unknown requester, an unknown participant and one
    already withdrawn, unenrolled or erased (a conflict: nothing is recorded)."""
    reason = reason.strip()
    if not reason or len(reason) > REASON_LIMIT:
        raise Refused(f"say why, in 1 to {REASON_LIMIT} characters", "reason")
    if requested_by not in REQUESTERS:
        raise Refused(f"one of {', '.join(REQUESTERS)}", "requested_by")
    counts: dict[str, int] = {}

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData]:
        if row["status"] in ENDED_STATUSES:
            raise Refused(
                f"the participant is already {row['status']}", "participant_id", "conflict"
            )
        suppressed: list[EventData] = [
            MessageSuppressed(outbox_id=outbox_id, reason="withdrawn")
            for outbox_id in pending_outbox(tx.conn, participant_id)
        ]
        cancelled = lifecycle.on_status_change(
            {**row, "status": "withdrawn"},
            pending_timers(tx.conn, participant_id),
            "withdrawn",
            now,
        )
        held = participant_lock.takeover_of(store, tx, participant_id)
        ended: list[EventData] = (
            [TakeoverEnded(by=actor)] if held is not None and held["status"] == "active" else []
        )
        counts.update(suppressed=len(suppressed), cancelled=len(cancelled), ended=len(ended))
        # requested_by was checked against REQUESTERS, the Literal's values.
        withdrawn = ParticipantWithdrawn(reason=reason, requested_by=requested_by)
        return [*suppressed, *cancelled, withdrawn, *ended]

    row, _ = participant_lock.change(store, participant_id, decide, actor=actor)
    return Withdrawn(row, counts["suppressed"], counts["cancelled"], bool(counts["ended"]))
