"""The audit of a study's allocations: each one recomputed from the seed and the allocations
before it, and every difference from what was recorded listed (`tandem study check`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.studies.allocation import Allocation, Prior, allocate
from bot.studies.format import Study

COMPARED = ("arm", "method", "stage", "stratum", "block", "block_size", "position")
PROBABILITIES = ("probabilities", "conditional")


@dataclass(frozen=True)
class Mismatch:
    """One recorded allocation that the seed and the history do not reproduce."""

    index: int  # 0-based, in the order of the records
    participant: str
    field: str
    recorded: Any
    expected: Any

    def __str__(self) -> str:
        return (
            f"allocation {self.index + 1} (participant {self.participant}): {self.field} is "
            f"{self.recorded!r}, the seed gives {self.expected!r}"
        )


def record(participant: str, baseline: Mapping[str, Any], allocation: Allocation) -> dict[str, Any]:
    """What a `participant.allocated` event holds, as plain data: the audit reads it back."""
    return {
        "participant": participant,
        "baseline": dict(baseline),
        "arm": allocation.arm,
        "method": allocation.method,
        "stage": allocation.stage,
        "first_arm": allocation.first_arm,
        "sequence": allocation.sequence,
        "number": allocation.number,
        "stratum": allocation.stratum,
        "block": allocation.block,
        "block_id": allocation.block_id,
        "block_size": allocation.block_size,
        "position": allocation.position,
        "probabilities": dict(allocation.probabilities),
        "conditional": dict(allocation.conditional),
    }


def check_allocations(
    study: Study, seed: bytes, records: Sequence[Mapping[str, Any]]
) -> list[Mismatch]:
    """Every difference between the records (in the order they were made) and what the seed
    gives for each, given the records before it as they stand. A tampered arm shows at its
    own record; under minimisation the ones after it may differ too, since the margins the
    algorithm saw were not the recorded ones: the first mismatch is the one to look at."""
    found: list[Mismatch] = []
    history: list[Prior] = []
    for index, written in enumerate(records):
        participant = str(written.get("participant", "?"))
        baseline = written.get("baseline") or {}
        stage, first_arm = int(written.get("stage", 1)), written.get("first_arm")
        try:
            expected = record(
                participant, baseline, allocate(study, seed, history, baseline, stage, first_arm)
            )
        except ValueError as exc:
            found.append(Mismatch(index, participant, "allocation", written.get("arm"), str(exc)))
        else:
            for name in (*COMPARED, *PROBABILITIES):
                if name in written and not _same(written[name], expected[name]):
                    found.append(Mismatch(index, participant, name, written[name], expected[name]))
        history.append(Prior(str(written.get("arm")), baseline, stage, first_arm))
    return found


def _same(recorded: Any, expected: Any) -> bool:
    """Equal; probabilities to 1e-9 (they pass through JSON)."""
    if isinstance(recorded, Mapping) and isinstance(expected, Mapping):
        return recorded.keys() == expected.keys() and all(
            _same(recorded[key], expected[key]) for key in expected
        )
    numbers = (int, float)
    if isinstance(recorded, numbers) and isinstance(expected, float):
        return math.isclose(recorded, expected, rel_tol=0, abs_tol=1e-9)
    return bool(recorded == expected)
