"""The audit of decision points (`tandem decisions check`): every logged draw recomputed from
the seed, the participant, the decision and the point's index, and the option it gives from
the logged probabilities checked against the option logged. Pure: the seed and the recorded
points come in, the mismatches go out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.interventions.interpreter.decide import Seed
from bot.interventions.interpreter.decision_draws import (
    ProbabilityError,
    check_probabilities,
    choose,
    uniform_draw,
)
from bot.store.event_types.decisions import DecisionMade


@dataclass(frozen=True)
class Mismatch:
    """A decision point the seed and its own record do not reproduce, and how."""

    participant: str
    decision: str
    index: int
    problem: str

    def __str__(self) -> str:
        return f"{self.participant} {self.decision} #{self.index}: {self.problem}"


def check_points(seed: Seed, points: Iterable[tuple[str, DecisionMade]]) -> list[Mismatch]:
    """Each available point (participant id, `decision.made`) whose seed, draw, option or
    probabilities differ from what the seed and its logged probabilities give. Unavailable
    points draw nothing: one that logs an option or a draw is a mismatch too."""
    found: list[Mismatch] = []
    for pid, point in points:
        for problem in _problems(seed, pid, point):
            found.append(Mismatch(pid, point.decision, point.index, problem))
    return found


def _problems(seed: Seed, pid: str, point: DecisionMade) -> list[str]:
    if not point.available:
        if point.option is not None or point.u is not None:
            return [f"unavailable ({point.unavailable_reason}) but logs option {point.option!r}"]
        return []
    if point.seed != seed.fingerprint:
        return [f"drawn with seed {point.seed or '(none)'}, not this one ({seed.fingerprint})"]
    u = uniform_draw(seed.key, pid, point.decision, point.index)
    problems = []
    if point.u != u:
        problems.append(f"the draw logged is {point.u!r}; the seed gives {u!r}")
    probabilities = point.ordered_probabilities()  # the draw's order, declared
    try:
        check_probabilities(probabilities)
    except ProbabilityError as exc:
        return [*problems, f"the logged probabilities: {exc}"]
    expected = choose(probabilities, u)
    if point.option != expected:
        problems.append(f"option {point.option!r} logged; the draw gives {expected!r}")
    return problems
