"""The seeded draw of a decision point and the option it chooses."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bot.interventions.interpreter.decision_draws import (
    ProbabilityError,
    choose,
    clipped,
    uniform_draw,
)

SEED = b"study-seed-for-tests"
LOGGED = {"tip": 0.4, "nudge": 0.35, "nothing": 0.25}
DRAWS = 10_000


def chosen_counts(probabilities: dict[str, float], participants: int = 20) -> np.ndarray:
    """How often each option of LOGGED is chosen over DRAWS seeded draws."""
    picks = [
        choose(probabilities, uniform_draw(SEED, f"p{i % participants}", "nudge", i))
        for i in range(DRAWS)
    ]
    return np.array([picks.count(option) for option in LOGGED])


def test_a_replay_draws_the_same_number() -> None:
    assert uniform_draw(SEED, "p1", "nudge", 7) == uniform_draw(SEED, "p1", "nudge", 7)


@pytest.mark.parametrize(
    "other",
    [(b"other-seed", "p1", "nudge", 7), (SEED, "p2", "nudge", 7),
     (SEED, "p1", "tip", 7), (SEED, "p1", "nudge", 8), (SEED, "p1n", "udge", 7)],
)  # fmt: skip
def test_another_seed_participant_decision_or_index_draws_another_number(
    other: tuple[bytes, str, str, int],
) -> None:
    assert uniform_draw(*other) != uniform_draw(SEED, "p1", "nudge", 7)


def test_draws_are_uniform_on_the_unit_interval() -> None:
    draws = [uniform_draw(SEED, "p1", "nudge", i) for i in range(DRAWS)]
    assert all(0 <= u < 1 for u in draws)
    assert stats.kstest(draws, "uniform").pvalue > 0.01


def test_option_frequencies_pass_a_chi_square_test_against_the_logged_probabilities() -> None:
    expected = DRAWS * np.array(list(LOGGED.values()))
    assert stats.chisquare(chosen_counts(LOGGED), expected).pvalue > 0.01


def test_chi_square_fails_when_the_choice_used_other_probabilities_than_logged() -> None:
    skewed = {"tip": 0.45, "nudge": 0.35, "nothing": 0.2}
    expected = DRAWS * np.array(list(LOGGED.values()))
    assert stats.chisquare(chosen_counts(skewed), expected).pvalue < 1e-6


def test_options_take_their_intervals_in_the_declared_order() -> None:
    assert choose(LOGGED, 0.0) == "tip"
    assert choose(LOGGED, np.nextafter(0.4, 0)) == "tip"
    assert choose(LOGGED, 0.4) == "nudge"
    assert choose(LOGGED, 0.999) == "nothing"


def test_an_option_with_probability_zero_is_never_chosen() -> None:
    assert choose({"a": 0.5, "b": 0.0, "c": 0.5}, 0.5) == "c"
    assert choose({"a": 0.5, "b": 0.5, "c": 0.0}, 0.9999999999999) == "b"


@pytest.mark.parametrize("probabilities", [
    {"a": 0.6, "b": 0.6}, {"a": 0.5, "b": 0.4999999}, {"a": 1.2, "b": -0.2}, {},
    {"a": float("nan"), "b": 1.0},
])  # fmt: skip
def test_probabilities_that_do_not_sum_to_one_are_refused_not_renormalised(
    probabilities: dict[str, float],
) -> None:
    with pytest.raises(ProbabilityError):
        choose(probabilities, 0.3)


def test_a_sum_off_by_rounding_only_is_accepted() -> None:
    assert choose({"a": 0.1, "b": 0.2, "c": 0.7 + 1e-12}, 0.05) == "a"


def test_a_probability_is_clipped_into_its_bounds() -> None:
    assert (clipped(0.02, 0.1, 0.9), clipped(0.95, 0.1, 0.9), clipped(0.3, 0.1, 0.9)) == (
        0.1,
        0.9,
        0.3,
    )
    with pytest.raises(ProbabilityError):
        clipped(float("nan"), 0.1, 0.9)
