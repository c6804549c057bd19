"""Monitoring a micro-randomised study's decision points (the console's Decisions page): per
decision, how often participants were available (and why not), how often each option was
chosen against the probabilities logged, its outcomes, and a warning when the choices drift
from the logged probabilities. Pure: rows shaped like decisions.csv in, summaries out.

The drift test: with the probabilities varying from point to point, an option's count is a
sum of independent yes/no draws with the logged probabilities p_i (a Poisson-binomial): its
mean is Σp_i and its variance Σp_i(1−p_i). Each option's two-sided z-test of the count chosen
against that mean (the normal approximation, used once the expected count of both the option
and the others is at least MIN_EXPECTED) gives a p-value; the smallest, times the number of
options tested (Bonferroni), is the decision's. It warns below DRIFT_ALPHA = 0.001, not 0.05:
the page is looked at again and again, over many decisions, and at 0.05 one honest decision
in twenty would warn each time; a real fault (choices made with other probabilities than
those logged) drives the p-value far lower as points accrue (docs/decisions.md)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

DRIFT_ALPHA = 0.001
MIN_EXPECTED = 5.0


@dataclass
class OptionSummary:
    """One option of a decision, over its available points."""

    option: str
    chosen: int = 0
    expected: float = 0.0  # Σ p: the count the logged probabilities lead one to expect
    variance: float = 0.0  # Σ p(1 − p)
    outcomes: int = 0  # points where it was chosen and the outcome was observed
    outcome_sum: float = 0.0
    p_value: float | None = None  # None: too few points to test

    @property
    def outcome_mean(self) -> float | None:
        """The mean outcome after this option (the rate, for a yes/no outcome)."""
        return self.outcome_sum / self.outcomes if self.outcomes else None


@dataclass
class DecisionSummary:
    """One decision's points: availability, each option, and the drift test."""

    decision: str
    points: int = 0
    available: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    options: dict[str, OptionSummary] = field(default_factory=dict)
    drift_p: float | None = None

    @property
    def availability(self) -> float | None:
        return self.available / self.points if self.points else None

    @property
    def drifting(self) -> bool:
        """Whether the choices drift from the logged probabilities (p < DRIFT_ALPHA)."""
        return self.drift_p is not None and self.drift_p < DRIFT_ALPHA


def summarise(rows: Iterable[Mapping[str, Any]]) -> list[DecisionSummary]:
    """A summary per decision of `rows` (decision_rows' or decisions.csv's), by name."""
    found: dict[str, DecisionSummary] = {}
    for row in rows:
        name = str(row["decision"])
        summary = found.setdefault(name, DecisionSummary(name))
        summary.points += 1
        if not _true(row.get("available")):
            summary.reasons[str(row.get("unavailable_reason") or "unknown")] += 1
            continue
        summary.available += 1
        for key, value in row.items():
            if str(key).startswith("p_") and _number(value) is not None:
                p = float(value)
                line = summary.options.setdefault(key[2:], OptionSummary(key[2:]))
                line.expected += p
                line.variance += p * (1 - p)
        chosen = str(row.get("option") or "")
        line = summary.options.setdefault(chosen, OptionSummary(chosen))
        line.chosen += 1
        value = _number(row.get("outcome_value"))
        if row.get("outcome_status") == "observed" and value is not None:
            line.outcomes += 1
            line.outcome_sum += value
    for summary in found.values():
        _test(summary)
    return sorted(found.values(), key=lambda s: s.decision)


def _test(summary: DecisionSummary) -> None:
    tested = []
    for line in summary.options.values():
        others = summary.available - line.expected
        if min(line.expected, others) < MIN_EXPECTED or line.variance <= 0:
            continue
        z = (line.chosen - line.expected) / math.sqrt(line.variance)
        line.p_value = math.erfc(abs(z) / math.sqrt(2))
        tested.append(line.p_value)
    if tested:
        summary.drift_p = min(1.0, len(tested) * min(tested))


def _true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number
