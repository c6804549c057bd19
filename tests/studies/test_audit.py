"""`tandem study check`: every allocation recomputed from the seed and the records before it."""

from __future__ import annotations

import json
from pathlib import Path

from bot.studies.allocation import Prior, allocate
from bot.studies.audit import check_allocations, record
from bot.studies.format import Study
from bot.studies.loader import load_study
from bot.studies.seed import study_seed
from tests.studies.studies import participants, study

PILOT = load_study(
    Path(__file__).resolve().parents[2] / "studies" / "walk-pilot", {"habit-coach", "walk-control"}
)
SEED = study_seed("walk-pilot", "a master key of at least thirty-two characters")


def records(trial: Study, n: int, seed: bytes = SEED) -> list[dict]:
    """`n` allocations as their events would hold them, through JSON."""
    made, history = [], list[Prior]()
    for i in range(n):
        baseline = {"activity_level": "low" if i % 3 else "high", "age": 40 + i % 20}
        allocation = allocate(trial, seed, history, baseline)
        history.append(Prior(allocation.arm, baseline))
        made.append(record(f"p{i}", baseline, allocation))
    return json.loads(json.dumps(made))


def other_arm(arm: str) -> str:
    return "control" if arm == "coach" else "coach"


def test_the_seed_and_the_records_regenerate_every_allocation() -> None:
    assert check_allocations(PILOT, SEED, records(PILOT, 120)) == []


def test_a_tampered_arm_is_the_one_mismatch_found() -> None:
    written = records(PILOT, 120)
    written[57]["arm"] = other_arm(written[57]["arm"])

    found = check_allocations(PILOT, SEED, written)

    assert [(m.index, m.participant, m.field) for m in found] == [(57, "p57", "arm")]


def test_a_tampered_block_position_is_found() -> None:
    written = records(PILOT, 40)
    written[10]["position"] += 1

    assert [(m.index, m.field) for m in check_allocations(PILOT, SEED, written)] == [
        (10, "position")
    ]


def test_records_checked_with_another_seed_mismatch() -> None:
    other = study_seed("walk-pilot", "another master key, thirty-two characters")

    assert check_allocations(PILOT, other, records(PILOT, 40)) != []


def test_under_minimisation_the_first_mismatch_is_the_tampered_record() -> None:
    trial = study({"method": "minimisation", "ratio": {"a": 1, "b": 1}, "factors": ["sex"]})
    written, history = [], list[Prior]()
    for i, baseline in enumerate(participants(80, seed=2)):
        allocation = allocate(trial, SEED, history, baseline)
        history.append(Prior(allocation.arm, baseline))
        written.append(record(f"p{i}", baseline, allocation))
    written[30]["arm"] = "a" if written[30]["arm"] == "b" else "b"

    found = check_allocations(trial, SEED, written)

    assert (found[0].index, found[0].field) == (30, "arm")


def test_stage_two_records_are_checked_in_their_own_sequence() -> None:
    stage2 = {
        "at": {"after": "28d"},
        "when": 'baseline.level == "low"',
        "allocation": {"method": "blocks", "ratio": {"c": 1, "d": 1}, "block_sizes": [2, 4]},
    }
    trial = study({"method": "simple", "ratio": {"a": 1, "b": 1}}, stage2)
    written, history = [], list[Prior]()
    for i, baseline in enumerate(participants(30, seed=4)):
        first = allocate(trial, SEED, history, baseline)
        history.append(Prior(first.arm, baseline))
        written.append(record(f"p{i}", baseline, first))
        second = allocate(trial, SEED, history, baseline, stage=2, first_arm=first.arm)
        history.append(Prior(second.arm, baseline, 2, first.arm))
        written.append(record(f"p{i}", baseline, second))

    assert check_allocations(trial, SEED, written) == []


def test_a_mismatch_says_which_allocation_and_what_the_seed_gives() -> None:
    written = records(PILOT, 5)
    written[2]["arm"] = other_arm(written[2]["arm"])

    [found] = check_allocations(PILOT, SEED, written)

    assert str(found).startswith("allocation 3 (participant p2): arm is ")
