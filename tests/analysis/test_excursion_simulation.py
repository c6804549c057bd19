"""WCLS and EMEE recover known effects of a simulated 60 x 28 x 5 trial, and find none in a
trial without effects (seeded; the randomisation depends on a hidden state that also moves the
outcomes, so dropping the weights or the centring biases the estimates)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from bot.analysis.excursion import EFFECT, Estimate, emee, excursion_effects, wcls
from tests.analysis.trial import NULL, Truth, simulate_trial

SEED = 20261207
STRESSED = "mod_stressed"


def fit(method: str, frame: pd.DataFrame) -> Estimate:
    estimator, outcome = (wcls, "outcome_number") if method == "wcls" else (emee, "outcome_yes")
    return estimator(frame, outcome, "sent", "p_send", "available", "participant",
                     moderators=[STRESSED], control_vars=["steps_before"])  # fmt: skip


@pytest.fixture(scope="module")
def effects() -> pd.DataFrame:
    return simulate_trial(SEED, Truth())


@pytest.fixture(scope="module")
def no_effects() -> pd.DataFrame:
    return simulate_trial(SEED, NULL)


def test_wcls_recovers_the_additive_effect_and_its_moderation(effects: pd.DataFrame) -> None:
    found, truth = fit("wcls", effects), Truth()
    assert found.term(EFFECT).low <= truth.effect <= found.term(EFFECT).high
    assert found.term(STRESSED).low <= truth.effect_stressed <= found.term(STRESSED).high
    assert found.term(EFFECT).low > 0 and found.term(STRESSED).low > 0  # both are detected


def test_emee_recovers_the_risk_ratio_and_its_moderation(effects: pd.DataFrame) -> None:
    found, truth = fit("emee", effects), Truth()
    _, ratio_low, ratio_high = found.term(EFFECT).ratio or (0, 0, 0)
    assert ratio_low <= truth.risk_ratio <= ratio_high
    stressed = found.term(STRESSED)
    assert stressed.low <= truth.log_ratio_stressed <= stressed.high
    assert ratio_low > 1  # the effect is detected


def test_wcls_interval_covers_zero_when_sending_does_nothing(no_effects: pd.DataFrame) -> None:
    found = fit("wcls", no_effects)
    assert all(c.low <= 0 <= c.high for c in found.coefficients)


def test_emee_interval_covers_a_risk_ratio_of_one_when_sending_does_nothing(
    no_effects: pd.DataFrame,
) -> None:
    found = fit("emee", no_effects)
    assert all(c.ratio is not None and c.ratio[1] <= 1 <= c.ratio[2] for c in found.coefficients)


def test_marginal_risk_ratio_is_the_ratio_of_mean_risks_over_the_moderator() -> None:
    """Over 20 trials (one interval may miss by chance: 95% of them should not)."""
    truth = Truth()
    base = {s: np.mean([0.15 + 0.15 * busy + 0.05 * s for busy in (0, 1)]) for s in (0, 1)}
    ratio = {0: truth.risk_ratio, 1: truth.risk_ratio * truth.ratio_stressed}
    marginal = math.log(sum(base[s] * ratio[s] for s in (0, 1)) / sum(base.values()))
    found = [
        emee(simulate_trial(SEED + k, truth, participants=30), "outcome_yes", "sent", "p_send",
             "available", "participant").term(EFFECT)
        for k in range(20)
    ]  # fmt: skip
    covered = sum(c.low <= marginal <= c.high for c in found)
    assert covered >= 16  # P(fewer | 95% coverage) < 0.003
    spread = np.std([c.estimate for c in found])
    assert abs(np.mean([c.estimate for c in found]) - marginal) < 3 * spread / math.sqrt(20)


def three_options(seed: int, tip: float, nudge: float) -> pd.DataFrame:
    """60 x 140 points, all available; `busy` moves the outcome and the probabilities."""
    rng = np.random.default_rng(seed)
    n = 60 * 140
    busy = rng.integers(0, 2, n)
    p_tip, p_nudge = np.where(busy == 1, 0.2, 0.4), np.where(busy == 1, 0.6, 0.3)
    u = rng.random(n)
    option = np.where(u < p_tip, "tip", np.where(u < p_tip + p_nudge, "nudge", "nothing"))
    effect = np.where(option == "tip", tip, np.where(option == "nudge", nudge, 0.0))
    return pd.DataFrame(
        {
            "participant": np.repeat(np.arange(60), 140),
            "available": True,
            "p_tip": p_tip,
            "p_nudge": p_nudge,
            "tip": (option == "tip").astype(int),
            "nudge": (option == "nudge").astype(int),
            "outcome": busy + effect + rng.normal(0, 1, n),
        }
    )


def test_each_of_several_options_is_estimated_against_the_reference() -> None:
    frame = three_options(SEED, tip=0.3, nudge=0.6)
    arms = {"tip": ("tip", "p_tip"), "nudge": ("nudge", "p_nudge")}
    found = excursion_effects("wcls", frame, "outcome", arms, "available", "participant")
    tip, nudge = found["tip"].term(), found["nudge"].term()
    assert tip.low <= 0.3 <= tip.high and nudge.low <= 0.6 <= nudge.high
    assert tip.high < nudge.low + 0.3  # told apart: nudge's effect is the larger
    assert found["tip"].reference_prob == pytest.approx(frame["p_tip"].mean())
