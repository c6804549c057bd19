"""Decision-point events (docs/decisions.md): a micro-randomised decision made (available or
not, the probabilities, the draw and the option), its proximal outcome when the outcome
window closes, and a decision point that could not be drawn (its probabilities were bad).

Plain and personal: the decision's name, index, times, availability and its reason, the
probabilities, the draw, the option and the seed's fingerprint are the design, the same for
any participant, and an audit must recompute every draw after an erasure: plain. Moderators'
values (a stress rating, a count of the participant's messages) and the outcome's value (the
answer to a question, as `measurement.recorded` seals it) describe the participant: personal,
sealed with their data key, so an erasure removes them with the rest of their data."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from bot.store.events import EventData, event, fields

OutcomeStatus = Literal["observed", "missing"]


@event("decision.made")
class DecisionMade(EventData):
    """Decision point `index` (0, 1, ... per participant and decision) of `decision`, due at
    `scheduled_for`: whether the participant was `available` (else `unavailable_reason`, one
    of decisions_format.UNAVAILABLE), each option's probability after clipping (declared
    order), the uniform draw `u` and the `option` it chose (None when unavailable), the
    moderators' values, and `seed` (a fingerprint naming the seed, never the seed). `options`
    names the options in declared order, the order of the draw's cumulative intervals: a
    JSON object's keys do not keep their order in every database (PostgreSQL's jsonb sorts
    them), so `probabilities` alone cannot say it (`ordered_probabilities`)."""

    personal = fields("moderators")
    plain = fields(
        "intervention",
        "decision",
        "unavailable_reason",
        "probabilities",
        "option",
        "seed",
        "options",
    )

    intervention: str = ""
    decision: str
    index: int
    scheduled_for: datetime
    available: bool
    unavailable_reason: str | None = None
    probabilities: dict[str, float] = {}
    option: str | None = None
    u: float | None = None
    moderators: dict[str, Any] = {}
    seed: str = ""
    options: list[str] = []

    def ordered_probabilities(self) -> dict[str, float]:
        """`probabilities` in declared order (as stored where `options` is not recorded)."""
        if not self.options:
            return dict(self.probabilities)
        return {o: self.probabilities[o] for o in self.options if o in self.probabilities}


@event("decision.outcome")
class DecisionOutcome(EventData):
    """The proximal outcome of decision point `index` of `decision`: `observed` with its
    `value` (yes/no, minutes, a count, the answer) or `missing` (a question not answered in
    its window); `latency_seconds` from the decision point to the reply, where there is one.
    For an `ask:` outcome, `question` is the outbox id of the message that asked this point's
    question (None: it never went out), whose `measurement.recorded` is the value."""

    personal = fields("value")
    plain = fields("decision", "status", "question")

    decision: str
    index: int
    status: OutcomeStatus
    value: Any = None
    latency_seconds: float | None = None
    question: str | None = None


@event("decision.failed")
class DecisionFailed(EventData):
    """Decision point `index` of `decision` could not be drawn: `reason` says why (the
    probabilities' sum, a probability that is no number). Never renormalised."""

    plain = fields("decision", "reason")
    personal = fields()

    decision: str
    index: int
    reason: str
