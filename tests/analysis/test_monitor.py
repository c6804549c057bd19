"""The console's decision monitor: availability, choices against the logged probabilities,
outcomes by option, and a drift warning that stays quiet for honest draws and sounds when the
choices are made with other probabilities than those logged (seeded simulations)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bot.analysis.monitor import DRIFT_ALPHA, summarise


def rows(n: int, logged: float, drawn: float, seed: int) -> list[dict[str, Any]]:
    """`n` points logging p(suggest) = `logged` (varying a little) but drawn with `drawn` more."""
    rng = random.Random(seed)
    found: list[dict[str, Any]] = []
    for i in range(n):
        p = logged + rng.choice((-0.1, 0.0, 0.1))
        if i % 10 == 0:
            found.append(
                {"decision": "walk", "available": False, "unavailable_reason": "quiet_hours"}
            )
            continue
        option = "suggest" if rng.random() < p + (drawn - logged) else "nothing"
        walked = rng.random() < (0.5 if option == "suggest" else 0.3)
        found.append(
            {
                "decision": "walk", "available": True, "unavailable_reason": "",
                "p_nothing": 1 - p, "p_suggest": p, "option": option,
                "outcome_value": float(walked), "outcome_status": "observed",
            }
        )  # fmt: skip
    return found


@pytest.mark.parametrize("seed", range(5))
def test_honest_draws_do_not_warn(seed: int) -> None:
    [summary] = summarise(rows(2000, 0.6, 0.6, seed))
    assert summary.drift_p is not None and not summary.drifting


@pytest.mark.parametrize("seed", range(5))
def test_choices_made_with_other_probabilities_than_logged_warn(seed: int) -> None:
    [summary] = summarise(rows(2000, 0.6, 0.68, seed))
    assert summary.drifting and summary.drift_p is not None and summary.drift_p < DRIFT_ALPHA


def test_availability_choices_and_outcomes_are_counted_per_option() -> None:
    [summary] = summarise(rows(1000, 0.6, 0.6, 9))
    assert (summary.points, summary.available) == (1000, 900)
    assert summary.reasons == {"quiet_hours": 100} and summary.availability == 0.9
    suggest, nothing = summary.options["suggest"], summary.options["nothing"]
    assert suggest.chosen + nothing.chosen == 900
    assert abs(suggest.expected - 540) < 15 and abs(suggest.chosen - suggest.expected) < 60
    assert suggest.outcome_mean is not None and nothing.outcome_mean is not None
    assert suggest.outcome_mean - nothing.outcome_mean > 0.1  # the effect simulated


def test_too_few_points_are_not_tested() -> None:
    [summary] = summarise(rows(8, 0.6, 0.6, 1))
    assert summary.drift_p is None and not summary.drifting
