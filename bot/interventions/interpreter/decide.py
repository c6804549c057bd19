"""A decision point, decided (docs/decisions.md): whether the participant is available (the
engine's reasons first, then the author's `available:`), the probabilities (clipped, their
sum checked, never renormalised), the reproducible draw, the option's action, the outcome
window's timer and the next point's timer. Pure: the participant, their events, the time and
the seed come in; events go out."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bot.channel import outbound
from bot.core.localtime import QuietHours
from bot.interventions.interpreter import context, judging
from bot.interventions.interpreter.conditions import condition, holds
from bot.interventions.interpreter.decision_draws import (
    ProbabilityError,
    check_probabilities,
    choose,
    clipped,
    uniform_draw,
)
from bot.interventions.interpreter.decision_schedule import OUTCOME, next_point_timer
from bot.interventions.interpreter.failures import RunFailure
from bot.interventions.interpreter.questions import numbered
from bot.interventions.language.decisions_format import Decision
from bot.interventions.language.expressions import ConditionError
from bot.interventions.language.intervention import Intervention
from bot.store.event_types.decisions import DecisionFailed, DecisionMade
from bot.store.event_types.interventions import StepEntered
from bot.store.event_types.takeover import TakeoverEnded, TakeoverStarted
from bot.store.events import Event, EventData
from bot.timers import one_shot

log = logging.getLogger(__name__)
WHATSAPP_WINDOW = timedelta(hours=24)  # free-form messages only within a day of their last


@dataclass(frozen=True)
class Point:
    """Decision point `index` of `decision`, due at `scheduled_for` (its timer's due time), of
    a series that started at `anchor` (when the participant entered the intervention)."""

    decision: str
    index: int
    scheduled_for: datetime
    anchor: datetime


@dataclass(frozen=True)
class Seed:
    """The draws' secret and its fingerprint (recorded; the secret never is)."""

    key: bytes
    fingerprint: str


def decide(
    intervention: Intervention,
    point: Point,
    participant: Mapping[str, Any],
    history: Sequence[Event],
    now: datetime,
    seed: Seed,
    quiet: QuietHours | None = None,
) -> list[EventData]:
    """The point's events: `decision.made` (or `decision.failed`), the chosen option's
    action, the outcome window's timer, and the next point's timer."""
    decision = intervention.decisions[point.decision]
    data = context.data(intervention, participant, now, history)
    made = DecisionMade(
        intervention=intervention.slug,
        decision=point.decision,
        index=point.index,
        scheduled_for=point.scheduled_for,
        available=False,
        moderators=moderator_values(decision, data),
        seed=seed.fingerprint,
    )
    chain = _next(intervention, point, participant)
    if participant.get("status") == "withdrawn":
        return [made.model_copy(update={"unavailable_reason": "withdrawn"})]  # the series ends
    try:
        reason = unavailable_reason(decision, participant, history, point.scheduled_for, quiet)
        if reason is None and not holds(decision.available, data)[0]:
            reason = "condition"
        if reason is not None:
            return [made.model_copy(update={"unavailable_reason": reason}), *chain]
        probabilities = probabilities_of(decision, data)
    except (ProbabilityError, RunFailure) as exc:
        log.error("decision %s point %d failed: %s", point.decision, point.index, exc)
        return [DecisionFailed(decision=point.decision, index=point.index, reason=str(exc)), *chain]
    pid = str(participant["participant_id"])
    u = uniform_draw(seed.key, pid, point.decision, point.index)
    option = choose(probabilities, u)
    made = made.model_copy(
        update={
            "available": True,
            "probabilities": probabilities,
            "options": list(probabilities),
            "option": option,
            "u": u,
        }
    )
    action = _act(intervention, point, option, participant, data)
    return [made, *action, *_outcome(intervention, point, participant, data), *chain]


def unavailable_reason(
    decision: Decision,
    participant: Mapping[str, Any],
    history: Sequence[Event],
    at: datetime,
    quiet: QuietHours | None,
) -> str | None:
    """The engine's reason the participant cannot be approached at `at`, if any (in the order
    of decisions_format.UNAVAILABLE); the author's condition is not looked at here."""
    if participant.get("opted_out"):
        return "opted_out"
    status = participant.get("status")
    if status in ("withdrawn", "paused"):
        return str(status)
    if taken_over(history, at) or held(participant.get("takeover"), at):
        return "takeover"
    if quiet is not None and quiet.contains(at, one_shot.zone_of(participant)):
        return "quiet_hours"
    sends = any(option.send is not None for option in decision.options)
    last = participant.get("last_inbound_at")
    if sends and participant.get("channel") == "whatsapp":
        if last is None or at - last > WHATSAPP_WINDOW:
            return "window_closed"  # an option's text cannot reach them (no template)
    return None


def taken_over(history: Sequence[Event], at: datetime) -> bool:
    """Whether a person held the conversation at `at` (a takeover started and not ended)."""
    held = False
    for ev in history:
        if ev.occurred_at > at:
            break
        if isinstance(ev.data, TakeoverStarted):
            held = True
        elif isinstance(ev.data, TakeoverEnded):
            held = False
    return held


def held(takeover: Mapping[str, Any] | None, at: datetime) -> bool:
    """Whether the participant's last takeover (their `takeovers` row, which the handler adds
    to the participant as `takeover`) held the conversation at `at`. The running worker
    decides a point due during a takeover at the hand-back (a taken-over participant's items
    wait), from a window of messages that shows no takeover: the row does."""
    if not takeover or takeover.get("started_at") is None:
        return False
    started, ended = takeover["started_at"], takeover.get("ended_at")
    return bool(started <= at and (ended is None or at < ended))


def probabilities_of(decision: Decision, data: Mapping[str, Any]) -> dict[str, float]:
    """Each option's probability in declared order: constants as written, expressions
    evaluated and clipped to `bounds`; ProbabilityError unless they sum to 1."""
    low, high = decision.bounds
    found: dict[str, float] = {}
    for option in decision.options:
        if isinstance(option.probability, float):
            found[option.name] = option.probability
            continue
        try:
            value = condition(option.probability).value(data)
        except ConditionError as exc:
            raise ProbabilityError(f"the probability of {option.name!r}: {exc}") from None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ProbabilityError(f"the probability of {option.name!r} is {value!r}, no number")
        found[option.name] = clipped(float(value), low, high)
    check_probabilities(found)
    return found


def moderator_values(decision: Decision, data: Mapping[str, Any]) -> dict[str, Any]:
    """Each moderator's value now (None where it cannot be known, e.g. not yet answered)."""
    values: dict[str, Any] = {}
    for name, moderator in decision.moderators.items():
        try:
            values[name] = condition(moderator.value).value(data)
        except ConditionError:
            values[name] = None
    return values


def _act(
    intervention: Intervention,
    point: Point,
    option: str,
    participant: Mapping[str, Any],
    data: Mapping[str, Any],
) -> list[EventData]:
    decision = intervention.decisions[point.decision]
    n, chosen = next((n, o) for n, o in enumerate(decision.options) if o.name == option)
    if chosen.send is not None:
        key = f"decision:{point.decision}:send:options.{n}"
        text = judging.render(intervention, key, data).text
        return list(outbound.to_participant(participant, text, kind="prompt"))
    if chosen.start is not None:
        step = participant.get("current_step")
        return [
            StepEntered(
                intervention=intervention.slug,
                step=chosen.start,
                from_step=str(step) if step else None,
                condition=f"decision {point.decision}: {option}",
                entered_at=point.scheduled_for,
                revision=intervention.revision,
            )
        ]
    return []


def _outcome(
    intervention: Intervention,
    point: Point,
    participant: Mapping[str, Any],
    data: Mapping[str, Any],
) -> list[EventData]:
    """The timer that closes the outcome window and, for a question, its ask at the delay."""
    outcome = intervention.decisions[point.decision].outcome
    length = outcome.length()
    if length is None:
        return []
    payload: dict[str, Any] = {
        "intervention": intervention.slug,
        "decision": point.decision,
        "index": point.index,
        "made_at": point.scheduled_for.isoformat(),
    }
    asked: list[EventData] = []
    if outcome.ask is not None:
        question = intervention.questions[outcome.ask]
        key = f"question:{outcome.ask}:text"
        text = numbered(question, judging.render(intervention, key, data).text)
        delay = outcome.after or timedelta()
        timer = one_shot.measurement(
            participant, point.scheduled_for + delay, outcome.ask, text, length - delay
        )
        # The question names its point (its `measurement.asked` does too) and the window's
        # timer names the question: the outcome is the answer to this question, no other.
        point_of = {"decision": point.decision, "index": point.index}
        asked = [timer.model_copy(update={"payload": {**timer.payload, **point_of}})]
        payload["question_timer"] = timer.timer_id
    closes = one_shot.scheduled(
        participant,
        OUTCOME,
        point.scheduled_for + length,
        scope=f"decision:{point.decision}",
        payload=payload,
    )
    return [*asked, closes]


def _next(
    intervention: Intervention, point: Point, participant: Mapping[str, Any]
) -> list[EventData]:
    payload = {"decision": point.decision, "index": point.index, "anchor": point.anchor}
    found = next_point_timer(
        intervention, {**payload, "anchor": point.anchor.isoformat()}, participant
    )
    return [] if found is None else [found]
