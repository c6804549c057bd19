"""Unblinding one participant of a blinded study (e.g. for their safety): an admin act with a
reason, recorded as `participant.unblinded` on the participant's stream, that shows the arm
to the admin who asked. The CLI (`tandem study unblind`) and the console's button call it."""

from __future__ import annotations

from typing import Any

from bot.services import participant_lock
from bot.services.refusal import Refused
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.studies import ParticipantUnblinded
from bot.store.events import EventData
from bot.studies.catalogue import StudyCatalogue

REASON_LIMIT = 2000


def unblind(
    store: EventStore,
    participant_id: str,
    *,
    reason: str,
    by: str,
    studies: StudyCatalogue,
    study: str | None = None,
) -> str:
    """The participant's arm, after recording who asked (`by`) and why. Refuses a blank or
    overlong reason, an unknown participant, one in no study (or not in `study` when named)
    and one whose study is not blinded (its arm is shown already)."""
    reason = reason.strip()
    if not reason or len(reason) > REASON_LIMIT:
        raise Refused(f"say why, in 1 to {REASON_LIMIT} characters", "reason")
    found: dict[str, Any] = {}

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData]:
        joined, arm = row.get("study"), row.get("arm")
        if not joined or not arm:
            raise Refused("the participant is in no study", "participant_id", "conflict")
        if study is not None and joined != study:
            raise Refused(f"the participant is in study {joined!r}", "participant_id")
        if not studies.blinded(joined):
            message = f"study {joined!r} is not blinded: its arms are shown already"
            raise Refused(message, "study", "conflict")
        found["arm"] = arm
        return [ParticipantUnblinded(study=joined, by=by, reason=reason)]

    participant_lock.change(store, participant_id, decide, actor=by)
    return str(found["arm"])
