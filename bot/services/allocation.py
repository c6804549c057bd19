"""Allocating a participant to a study arm, inside the transaction that enrolls them (or that
re-randomises them at stage 2): the study's lock taken, the history of its allocations read,
the concealed sequence drawn from the study's seed, and the `participant.allocated` event made."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from bot.store.allocations import serialise_study, study_allocations
from bot.store.event_store import Transaction
from bot.store.event_types.studies import Method, ParticipantAllocated
from bot.studies.allocation import Prior, allocate
from bot.studies.format import Study
from bot.studies.seed import seed_fingerprint, study_seed


def factor_names(study: Study) -> tuple[str, ...]:
    """The baseline fields any allocation of `study` reads (strata and minimisation factors),
    kept plain in each allocation so that the audit survives an erasure."""
    names: list[str] = []
    for method in (study.allocation, study.stage2.allocation if study.stage2 else None):
        for name in (*getattr(method, "strata", ()), *getattr(method, "factors", ())):
            if name not in names:
                names.append(name)
    return tuple(names)


def seed_of(slug: str, master_key: str | None, provided: str | None = None) -> bytes:
    """The study's secret seed; ValueError naming what to set when there is none."""
    return study_seed(slug, master_key, provided)


def allocated(
    tx: Transaction,
    slug: str,
    study: Study,
    seed: bytes,
    participant_id: str,
    baseline: Mapping[str, Any],
    stage: int = 1,
    first_arm: str | None = None,
) -> ParticipantAllocated:
    """The participant's allocation, drawn after every earlier one of the study (whose lock
    this takes, so concurrent enrollments cannot draw the same place). The caller appends the
    event in the same transaction, which releases the lock."""
    serialise_study(tx.conn, slug)
    history = [
        Prior(row["arm"], row["factors"], row["stage"], row["first_arm"])
        for row in study_allocations(tx.conn, slug)
    ]
    factors = {name: baseline.get(name) for name in factor_names(study)}
    drawn = allocate(study, seed, history, factors, stage, first_arm)
    return ParticipantAllocated(
        study=slug,
        stage=drawn.stage,
        arm=drawn.arm,
        method=cast(Method, drawn.method),  # one of the study's declared methods
        sequence=drawn.sequence,
        number=drawn.number,
        probabilities=dict(drawn.probabilities),
        conditional=dict(drawn.conditional),
        stratum=drawn.stratum,
        block=drawn.block,
        block_size=drawn.block_size,
        position=drawn.position,
        scores=dict(drawn.scores),
        first_arm=drawn.first_arm,
        factors=factors,
        baseline=dict(baseline),
        seed=seed_fingerprint(seed),
    )
