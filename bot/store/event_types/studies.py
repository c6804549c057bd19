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


@event("participant.stage2_assessed")
class Stage2Assessed(EventData):
    """A study's stage-2 trigger came for this participant (`trigger`: `step:<name>` or
    `after:<duration>`) and its condition was evaluated: `met` true means they were
    re-randomised (a `participant.allocated` of stage 2 follows in the same transaction),
    false that they stay in their stage-1 arm. Recorded once: stage 2 is one decision. Holds
    no arm, so blinding has nothing to hide in it."""

    personal = fields()
    plain = fields("study", "trigger", "condition")

    study: str
    trigger: str
    condition: str
    met: bool
