"""Study events: a participant allocated to an arm (concealed randomisation), an arm revealed
to staff for one participant (unblinding), and the allocation list revealed (audit)."""

from __future__ import annotations

from typing import Any, Literal

from bot.store.events import EventData, event, fields

Method = Literal["simple", "blocks", "stratified", "minimisation"]


@event("participant.allocated")
class ParticipantAllocated(EventData):
    """The participant's arm in `study`, and how it was drawn: the method, the sequence and
    its number, the stratum, block and place, and each arm's probability at that moment
    (`probabilities`: the design probability an analyst uses; `conditional`: given the
    earlier places of the same block). `factors` are the declared strata or minimisation
    factors' values (choice codes), kept plain so that `tandem study check` can recompute
    every allocation after an erasure; `baseline` holds every baseline field given at
    enrollment and is sealed with the participant's personal data. `seed` names the seed
    (a fingerprint, never the seed) so an audit knows which one to regenerate."""

    personal = fields("baseline")
    plain = fields(
        "study",
        "arm",
        "method",
        "sequence",
        "stratum",
        "first_arm",
        "seed",
        "factors",
        "probabilities",
        "conditional",
        "scores",
    )

    study: str
    stage: int = 1
    arm: str
    method: Method
    sequence: str
    number: int
    probabilities: dict[str, float]
    conditional: dict[str, float]
    stratum: str = ""
    block: int | None = None
    block_size: int | None = None
    position: int | None = None
    scores: dict[str, float] = {}
    first_arm: str | None = None
    factors: dict[str, Any] = {}
    baseline: dict[str, Any] = {}
    seed: str


@event("participant.unblinded")
class ParticipantUnblinded(EventData):
    """An admin revealed this participant's arm in a blinded study (e.g. for safety)."""

    personal = fields("reason")
    plain = fields("study", "by")

    study: str
    by: str
    reason: str


@event("study.allocations_revealed")
class AllocationsRevealed(EventData):
    """An admin printed a study's allocation list (`tandem study allocations --reveal`)."""

    personal = fields()
    plain = fields("study", "by", "reason")

    study: str
    by: str
    reason: str
    count: int
