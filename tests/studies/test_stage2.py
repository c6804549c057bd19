"""The second stage (SMART): who is re-randomised, and a separate sequence per stage-1 arm."""

from __future__ import annotations

import pytest

from bot.interventions.interpreter.failures import ConditionFailure
from bot.studies.allocation import Prior, allocate
from bot.studies.stage2 import arm_values, stage2_applies
from tests.studies.studies import study

SEED = b"a seed of sixteen bytes or more"
STAGE2 = {
    "at": {"after": "28d"},
    "after": ["a"],
    "when": 'baseline.level == "low" and judgements.progress.walks < 3',
    "allocation": {"method": "blocks", "ratio": {"a": 1, "c": 1}, "block_sizes": [2]},
}
TRIAL = study({"method": "simple", "ratio": {"a": 1, "b": 1}}, STAGE2)
LOW = {"level": "low", "sex": "f", "age": "young"}


def test_a_non_responder_of_a_concerned_arm_is_re_randomised() -> None:
    data = {"judgements": {"progress": {"walks": 1}}}

    assert stage2_applies(TRIAL, "a", LOW, data) is True


def test_a_responder_is_not_re_randomised() -> None:
    assert stage2_applies(TRIAL, "a", LOW, {"judgements": {"progress": {"walks": 5}}}) is False


def test_a_participant_of_an_arm_stage_two_does_not_concern_is_not_re_randomised() -> None:
    assert stage2_applies(TRIAL, "b", LOW, {"judgements": {"progress": {"walks": 1}}}) is False


def test_a_condition_that_cannot_be_evaluated_is_a_failure_not_false() -> None:
    with pytest.raises(ConditionFailure):
        stage2_applies(TRIAL, "a", LOW, {})


def test_stage_two_allocates_among_the_stage_two_options() -> None:
    made = allocate(TRIAL, SEED, [], LOW, stage=2, first_arm="a")

    assert made.arm in ("a", "c") and made.sequence == "s2/a" and made.first_arm == "a"


def test_stage_two_counts_only_its_own_stage_one_arms_participants() -> None:
    history = [Prior("a", LOW), Prior("c", LOW, stage=2, first_arm="b")]

    made = allocate(TRIAL, SEED, history, LOW, stage=2, first_arm="a")

    assert (made.number, made.position) == (0, 1)


def test_stage_one_ignores_the_stage_two_allocations() -> None:
    history = [Prior("a", LOW), Prior("c", LOW, stage=2, first_arm="a")]

    assert allocate(TRIAL, SEED, history, LOW).number == 1


def test_stage_two_needs_the_stage_one_arm() -> None:
    with pytest.raises(ValueError, match="stage-1 arm"):
        allocate(TRIAL, SEED, [], LOW, stage=2)


def test_the_arm_values_hold_the_arms_name() -> None:
    assert arm_values(TRIAL, "b") == {"name": "b"}


def test_stage_two_refuses_a_stage_one_arm_it_does_not_concern() -> None:
    with pytest.raises(ValueError, match="does not concern"):
        allocate(TRIAL, SEED, [], LOW, stage=2, first_arm="b")
