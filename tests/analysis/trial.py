"""A simulated micro-randomised trial with known effects, shaped like decisions.csv."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Truth:
    """The effects built in: additive (continuous) and risk ratio (yes/no), each at
    `stressed` = 0, and how much `stressed` = 1 adds (additively; multiplies the ratio)."""

    effect: float = 0.5
    effect_stressed: float = 0.4
    risk_ratio: float = 1.4
    ratio_stressed: float = 1.25

    @property
    def log_ratio(self) -> float:
        return math.log(self.risk_ratio)

    @property
    def log_ratio_stressed(self) -> float:
        return math.log(self.ratio_stressed)


NULL = Truth(effect=0.0, effect_stressed=0.0, risk_ratio=1.0, ratio_stressed=1.0)


def simulate_trial(
    seed: int, truth: Truth, participants: int = 60, days: int = 28, per_day: int = 5
) -> pd.DataFrame:
    """One row per decision point. A hidden state `busy` raises both outcomes and the chance
    of `send` (0.7 against 0.25), so an analysis that drops the weights or the centring is
    biased; `stressed` (observed, a moderator) modifies the effect; 80% of points are
    available. Outcomes: `outcome_number` (continuous) and `outcome_yes` (0/1)."""
    rng = np.random.default_rng(seed)
    n = participants * days * per_day
    participant = np.repeat([f"p{i:03d}" for i in range(participants)], days * per_day)
    index = np.tile(np.arange(days * per_day), participants)
    level = np.repeat(rng.normal(0, 0.5, participants), days * per_day)
    frailty = np.repeat(rng.uniform(-0.05, 0.05, participants), days * per_day)
    stressed = rng.integers(0, 2, n)
    busy = rng.integers(0, 2, n)
    steps = rng.normal(0, 1, n)
    available = rng.random(n) < 0.8
    p_send = np.where(busy == 1, 0.7, 0.25)
    sent = (available & (rng.random(n) < p_send)).astype(int)
    effect = truth.effect + truth.effect_stressed * stressed
    number = level + 0.5 * busy + 0.3 * stressed + 0.5 * steps + sent * effect
    number = number + rng.normal(0, 1, n)
    base = 0.15 + 0.15 * busy + 0.05 * stressed + frailty
    log_ratio = truth.log_ratio + truth.log_ratio_stressed * stressed
    yes = (rng.random(n) < base * np.exp(sent * log_ratio)).astype(int)
    return pd.DataFrame(
        {
            "participant": participant,
            "decision": "nudge",
            "index": index,
            "day_in_study": index // per_day + 1,
            "available": available,
            "unavailable_reason": np.where(available, "", "quiet_hours"),
            "p_send": np.where(available, p_send, np.nan),
            "p_nothing": np.where(available, 1 - p_send, np.nan),
            "option": np.where(available, np.where(sent == 1, "send", "nothing"), ""),
            "sent": sent,
            "mod_stressed": stressed,
            "steps_before": steps,
            "outcome_number": number,
            "outcome_yes": yes,
        }
    )
