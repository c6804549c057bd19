"""The `allocations` projection: one row per allocation of a participant in a study (stage 1,
and stage 2 of a SMART design), in the order they were made, for the next allocation's
history, the study page's counts and the export."""

from __future__ import annotations

from bot.store.event_types.studies import ParticipantAllocated
from bot.store.events import Event
from bot.store.projections import Projection, Row

COLUMNS = (
    "allocation_id",
    "participant_id",
    "study",
    "stage",
    "arm",
    "first_arm",
    "method",
    "sequence",
    "number",
    "stratum",
    "block",
    "block_size",
    "position",
    "probabilities",
    "conditional",
    "factors",
    "allocated_at",
    "seq",
)
TYPES = frozenset({ParticipantAllocated.event_type})


def key(event: Event) -> str | None:
    if isinstance(event.data, ParticipantAllocated):
        return f"{event.participant_id}:{event.data.stage}"
    return None


def apply(row: Row | None, event: Event) -> Row | None:
    data = event.data
    if not isinstance(data, ParticipantAllocated) or row is not None:
        return row  # a participant is allocated once per stage: the first record stands
    return {
        "allocation_id": f"{event.participant_id}:{data.stage}",
        "participant_id": event.participant_id,
        "study": data.study,
        "stage": data.stage,
        "arm": data.arm,
        "first_arm": data.first_arm,
        "method": data.method,
        "sequence": data.sequence,
        "number": data.number,
        "stratum": data.stratum,
        "block": data.block,
        "block_size": data.block_size,
        "position": data.position,
        "probabilities": dict(data.probabilities),
        "conditional": dict(data.conditional),
        "factors": dict(data.factors),
        "allocated_at": event.recorded_at,
        "seq": event.seq,
    }


PROJECTION = Projection("allocations", "allocation_id", COLUMNS, key, apply, types=TYPES)
