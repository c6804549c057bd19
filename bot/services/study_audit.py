"""The audit of a study's allocations (`tandem study check`): each one recomputed from the
study's seed and the allocations before it; and the allocation list revealed to an admin
(`tandem study allocations --reveal`), the reveal itself recorded."""

from __future__ import annotations

from typing import Any

from bot.store.event_store import EventStore
from bot.store.event_types.studies import AllocationsRevealed, ParticipantAllocated
from bot.store.events import SYSTEM_STREAM, NewEvent
from bot.studies.audit import Mismatch, check_allocations
from bot.studies.format import Study


def recorded_allocations(store: EventStore, slug: str) -> list[dict[str, Any]]:
    """Every `participant.allocated` of the study, in the order recorded, as the audit reads
    them: the event's fields, the participant, and the plain factors as its baseline."""
    found = []
    for event in store.read_all(event_types=[ParticipantAllocated.event_type]):
        data = event.data
        if isinstance(data, ParticipantAllocated) and data.study == slug:
            found.append(
                {
                    **data.model_dump(exclude={"baseline"}),
                    "participant": event.participant_id,
                    "baseline": dict(data.factors),
                    "allocated_at": event.recorded_at,
                }
            )
    return found


def check_study(store: EventStore, slug: str, study: Study, seed: bytes) -> list[Mismatch]:
    """Every recorded allocation of the study that the seed and the history do not reproduce
    (none: the sequence is the concealed one, untouched)."""
    return check_allocations(study, seed, recorded_allocations(store, slug))


def reveal_allocations(store: EventStore, slug: str, by: str, reason: str) -> list[dict[str, Any]]:
    """The allocations so far, for an admin; the reveal is recorded before it is returned."""
    found = recorded_allocations(store, slug)
    revealed = AllocationsRevealed(study=slug, by=by, reason=reason, count=len(found))
    store.append(SYSTEM_STREAM, [NewEvent(revealed, meta={"actor": by})])
    return found
