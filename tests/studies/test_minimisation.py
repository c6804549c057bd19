"""Minimisation (Pocock-Simon with a random element): the margins it keeps, its probabilities."""

from __future__ import annotations

from collections import Counter

import pytest
from scipy.stats import chisquare

from bot.studies.allocation import Prior, allocate
from bot.studies.seed import study_seed
from tests.studies.studies import LEVELS, participants, study

FACTORS = ["level", "sex", "age"]
MINIMISE = {"method": "minimisation", "ratio": {"a": 1, "b": 1}, "factors": FACTORS}
TOLERANCE = 5  # the declared tolerance: arms differ by at most this at any factor level
SEEDS = range(8)


def widest_margin(allocation: dict, seed: int, n: int = 300) -> int:
    """The largest difference between the arms at any factor level after `n` participants."""
    trial, history = study(allocation), list[Prior]()
    counts: Counter[tuple[str, str, str]] = Counter()
    for baseline in participants(n, seed):
        arm = allocate(trial, study_seed(f"t{seed}", "k" * 32), history, baseline).arm
        history.append(Prior(arm, baseline))
        counts.update((name, baseline[name], arm) for name in LEVELS)
    return max(abs(counts[f, level, "a"] - counts[f, level, "b"]) for f, level, _ in counts)


@pytest.mark.parametrize("seed", SEEDS)
def test_minimisation_keeps_the_factor_margins_within_the_tolerance(seed: int) -> None:
    assert widest_margin({**MINIMISE, "probability": 0.9}, seed) <= TOLERANCE


@pytest.mark.parametrize("seed", SEEDS)
def test_simple_allocation_of_the_same_participants_exceeds_the_tolerance(seed: int) -> None:
    assert widest_margin({"method": "simple", "ratio": {"a": 1, "b": 1}}, seed) > TOLERANCE


def test_the_arm_that_lessens_the_imbalance_has_the_declared_probability() -> None:
    trial = study({**MINIMISE, "probability": 0.7})
    baseline = {"level": "low", "sex": "f", "age": "old"}
    history = [Prior("a", baseline), Prior("a", {"level": "low", "sex": "m", "age": "mid"})]

    made = allocate(trial, b"seed" * 4, history, baseline)

    assert made.probabilities == pytest.approx({"a": 0.3, "b": 0.7})
    assert made.scores["b"] < made.scores["a"]


def test_with_the_arms_tied_minimisation_is_an_even_draw() -> None:
    made = allocate(study(MINIMISE), b"seed" * 4, [], {"level": "low", "sex": "f", "age": "old"})

    assert made.probabilities == {"a": 0.5, "b": 0.5}


def test_minimisation_under_an_unequal_ratio_allocates_in_that_ratio() -> None:
    trial, history = study({**MINIMISE, "ratio": {"a": 1, "b": 3}}), list[Prior]()
    for baseline in participants(400, seed=1):
        history.append(Prior(allocate(trial, b"seed" * 4, history, baseline).arm, baseline))
    counts = Counter(prior.arm for prior in history)

    assert chisquare([counts["a"], counts["b"]], [100, 300]).pvalue > 0.001
    assert chisquare([counts["a"], counts["b"]], [200, 200]).pvalue < 0.001


def test_minimisation_refuses_a_participant_without_a_factors_value() -> None:
    with pytest.raises(ValueError, match="age"):
        allocate(study(MINIMISE), b"seed" * 4, [], {"level": "low", "sex": "f"})
