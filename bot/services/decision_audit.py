"""The audit of micro-randomised decision points (`tandem decisions check [NAME]`): every
recorded `decision.made` read back, its draw recomputed from the seed (bot.interventions.
interpreter.decision_audit). The design fields it reads are plain, so the audit also holds
after an erasure."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from bot.interventions.interpreter.decide import Seed
from bot.interventions.interpreter.decision_audit import Mismatch, check_points
from bot.store.event_store import EventStore
from bot.store.event_types.decisions import DecisionMade


@dataclass(frozen=True)
class Audit:
    """What the audit read (`points`, of which `available`) and found."""

    points: int
    available: int
    mismatches: list[Mismatch]


def check_decisions(store: EventStore, seed: Seed, name: str | None = None) -> Audit:
    """Every decision point (of decision `name`, or all) recomputed from `seed`."""
    counts = {"points": 0, "available": 0}

    def recorded() -> Iterator[tuple[str, DecisionMade]]:
        for event in store.read_all(event_types=[DecisionMade.event_type]):
            data = event.data
            if isinstance(data, DecisionMade) and (name is None or data.decision == name):
                counts["points"] += 1
                counts["available"] += data.available
                yield str(event.participant_id), data

    mismatches = check_points(seed, recorded())
    return Audit(counts["points"], counts["available"], mismatches)
