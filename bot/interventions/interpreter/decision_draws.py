"""The randomisation of a decision point: a uniform draw reproducible from the study's seed,
the participant, the decision and the point's index (so a replay gets the same draw and an
audit can recompute it), the clipping of a probability to its bounds, and the option the draw
picks. A bad sum of probabilities is an error, never renormalised."""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Mapping

SUM_TOLERANCE = 1e-9
_BITS = 53  # a double's mantissa: every value k / 2**53 is exact


class ProbabilityError(ValueError):
    """Probabilities a decision cannot be drawn from (a sum other than 1, a value outside
    [0, 1]); the decision fails loudly rather than being drawn from something else."""


def uniform_draw(seed: bytes, participant_id: str, decision: str, index: int) -> float:
    """A number in [0, 1): the first 53 bits of HMAC-SHA256(seed, participant, decision,
    index) over 2**53. Fields are length-prefixed so that no two triples share a message."""
    if index < 0:
        raise ValueError(f"a decision point's index is 0 or more, not {index}")
    parts = (participant_id.encode(), decision.encode(), str(index).encode())
    message = b"".join(len(part).to_bytes(4, "big") + part for part in parts)
    digest = hmac.new(seed, message, hashlib.sha256).digest()
    return (int.from_bytes(digest[:8], "big") >> (64 - _BITS)) / 2.0**_BITS


def clipped(probability: float, low: float, high: float) -> float:
    """`probability` brought within [low, high] (an expression's value, before the sum is
    checked); ProbabilityError if it is not a number."""
    if not math.isfinite(probability):
        raise ProbabilityError(f"a probability must be a number, not {probability!r}")
    return min(max(probability, low), high)


def check_probabilities(probabilities: Mapping[str, float]) -> None:
    """ProbabilityError unless every value is in [0, 1] and they sum to 1 within 1e-9."""
    if not probabilities:
        raise ProbabilityError("a decision needs at least one option")
    for option, p in probabilities.items():
        if not (math.isfinite(p) and 0.0 <= p <= 1.0):
            raise ProbabilityError(f"the probability of {option!r} is {p!r}, not in [0, 1]")
    total = math.fsum(probabilities.values())
    if abs(total - 1.0) > SUM_TOLERANCE:
        shown = ", ".join(f"{o} {p:g}" for o, p in probabilities.items())
        raise ProbabilityError(f"the probabilities sum to {total:.12g}, not 1 ({shown})")


def choose(probabilities: Mapping[str, float], u: float) -> str:
    """The option whose interval of the cumulative probabilities, in the given (declared)
    order, holds `u` in [0, 1). A `u` the rounding of the sum leaves past the last bound goes
    to the last option with a positive probability."""
    check_probabilities(probabilities)
    if not 0.0 <= u < 1.0:
        raise ValueError(f"a uniform draw is in [0, 1), not {u!r}")
    bound = 0.0
    for option, p in probabilities.items():
        bound += p
        if p > 0 and u < bound:
            return option
    return next(o for o, p in reversed(list(probabilities.items())) if p > 0)
