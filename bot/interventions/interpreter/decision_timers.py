"""The timer handlers of decision points (bot.conversation.timer_turns): a `decision` timer
decides its point (bot.interventions.interpreter.decide), a `decision_outcome` timer records
its outcome. The composition root registers them with the participant's intervention lookup
and the draws' seed.

The seed: HMAC-SHA256(TANDEM_MASTER_KEY, "tandem decision draws") when a master key is set,
so nobody without the key can foresee a participant's draws; without a key (the sandbox,
tests) a fixed public seed, so the draws follow from the participant's id alone. Either way
`uniform_draw(seed, participant, decision, index)` recomputes every logged draw, and
`decision.made` records the seed's fingerprint (never the seed) to say which seed it was."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from bot.conversation import timer_turns
from bot.conversation.timer_turns import FiredTimer, Handler
from bot.core.localtime import QuietHours
from bot.interventions.interpreter.decide import Point, Seed, decide
from bot.interventions.interpreter.decision_outcomes import outcome_of
from bot.interventions.interpreter.decision_schedule import DECISION, OUTCOME
from bot.interventions.language.decisions_format import Outcome
from bot.interventions.language.intervention import Intervention
from bot.store.event_types.decisions import DecisionOutcome
from bot.store.events import EventData

UNKEYED = b"tandem decision draws: no master key"
Lookup = Callable[[Mapping[str, Any]], Intervention | None]
# A participant's `takeovers` row (None: never taken over), by participant id.
Takeovers = Callable[[str], Mapping[str, Any] | None]


def draw_seed(master_key: str | None) -> Seed:
    """The seed of every participant's draws (see the module's docstring)."""
    key = UNKEYED
    if master_key:
        key = hmac.new(master_key.encode(), b"tandem decision draws", hashlib.sha256).digest()
    return Seed(key, "sha256:" + hashlib.sha256(key).hexdigest()[:16])


def decision_handler(
    lookup: Lookup,
    seed: Seed,
    quiet: QuietHours | None = None,
    takeovers: Takeovers | None = None,
) -> Handler:
    """Decide the point a `decision` timer is for; `takeovers` reads the participant's
    takeover (decide.held: a point due while a person held the conversation is unavailable),
    unless the participant comes with it (`takeover`: a point decided as it fires,
    bot.timers.firing, whose batch reads every participant's at once)."""

    def handle(fired: FiredTimer) -> list[EventData]:
        intervention = lookup(fired.participant)
        name = str(fired.payload.get("decision"))
        if intervention is None or name not in intervention.decisions:
            return [fired.skipped("stale: no such decision")]
        point = Point(
            decision=name,
            index=int(fired.payload["index"]),
            scheduled_for=fired.timer["due_at"],
            anchor=datetime.fromisoformat(str(fired.payload["anchor"])),
        )
        here = intervention.quiet_hours() or quiet
        history = list(fired.events)
        participant = fired.participant
        if takeovers is not None and "takeover" not in participant:  # read with it at firing
            pid = str(participant["participant_id"])
            participant = {**participant, "takeover": takeovers(pid)}
        return decide(intervention, point, participant, history, fired.now, seed, here)

    return handle


def outcome_handler(lookup: Lookup) -> Handler:
    """Record the outcome of the point a `decision_outcome` timer closes."""

    def handle(fired: FiredTimer) -> list[EventData]:
        intervention = lookup(fired.participant)
        name = str(fired.payload.get("decision"))
        if intervention is None or name not in intervention.decisions:
            return [fired.skipped("stale: no such decision")]
        outcome = intervention.decisions[name].outcome
        made_at = datetime.fromisoformat(str(fired.payload["made_at"]))
        index = int(fired.payload["index"])
        closes = fired.timer["due_at"]
        found = outcome_of(outcome, name, index, made_at, closes, list(fired.events))
        if outcome.ask is not None:
            found = answer_of(fired, outcome.ask, found)
        withdrawn = fired.participant.get("status") == "withdrawn"
        if withdrawn and not kept_after_withdrawal(outcome, found):
            found = found.model_copy(update={"status": "missing", "value": None})
        return [found]

    return handle


def answer_of(fired: FiredTimer, question: str, found: DecisionOutcome) -> DecisionOutcome:
    """An `ask:` outcome: the answer to the question this point asked, as the participants
    row keeps it (`step_counters.outcome_questions`, linked by the question's outbox id), or
    missing: unanswered, never asked, or cut off by a later question (docs/decisions.md)."""
    if "question_timer" not in fired.payload:
        return _answer_before_links(fired, question, found)
    counters = fired.participant.get("step_counters") or {}
    asked = (counters.get("outcome_questions") or {}).get(f"{found.decision}:{found.index}")
    if asked is None:
        return found.model_copy(update={"status": "missing", "value": None})
    update: dict[str, Any] = {"question": asked["outbox_id"]}
    if "value" in asked:
        update |= {"status": "observed", "value": asked["value"]}
    else:
        update |= {"status": "missing", "value": None}
    return found.model_copy(update=update)


def _answer_before_links(
    fired: FiredTimer, question: str, found: DecisionOutcome
) -> DecisionOutcome:
    """A window set before outcomes named their question (a timer pending over an upgrade):
    the latest answer since the point, as the engine read it then."""
    if found.status == "observed":
        return found
    memory = fired.memory
    if "measurement.recorded" not in memory.verdicts_after(
        question, memory.scheduled_version(fired.timer_id)
    ):
        return found
    counters = fired.participant.get("step_counters") or {}
    value = (counters.get("measurements") or {}).get(question)
    return found.model_copy(update={"status": "observed", "value": value})


def kept_after_withdrawal(outcome: Outcome, found: DecisionOutcome) -> bool:
    """Whether an outcome whose window a withdrawal cut short is still what happened: an
    answer, a reply or its latency, seen before the withdrawal, is; a "no reply" or a count,
    which only the rest of the window could have settled, is missing (a withdrawn
    participant's silence is no outcome)."""
    if found.status != "observed" or outcome.count is not None:
        return False
    return found.value is True if outcome.reply == "yes/no" else True


def register(
    lookup: Lookup,
    seed: Seed,
    quiet: QuietHours | None = None,
    takeovers: Takeovers | None = None,
) -> None:
    """Make the conversation's timer turns handle decision points."""
    handler = decision_handler(lookup, seed, quiet, takeovers)
    timer_turns.register(DECISION, handler, always=True)
    timer_turns.register(OUTCOME, outcome_handler(lookup), always=True)
