"""Where the participant goes this turn (pure): at most one hop, chosen in this order:

1. a new session after a long silence (`sessions.resume_at`);
2. an interrupt whose condition holds (not while it is active or cooling down);
3. the current step's transitions, in order: the first whose condition holds;
4. for a digression or interrupt, the return to where the participant came from, once its
   `return_when` holds (or at once, without one: it answers one message);
5. a spent budget (`max_turns`, `max_minutes`): the return, or the last transition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bot.conversation.memory import Memory
from bot.interventions.interpreter.conditions import holds
from bot.interventions.interpreter.context import Progress
from bot.interventions.language.format import Action, Step
from bot.interventions.language.intervention import Intervention
from bot.store.event_types.interventions import Via
from bot.store.events import Event


@dataclass(frozen=True)
class Move:
    """One hop: where to, how, the condition that held and the values it read, the
    transition's actions, and whether it goes back to where a digression or interrupt began."""

    to: str
    via: Via
    condition: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    actions: Sequence[Action] = ()
    returning: bool = False


def session_move(
    intervention: Intervention,
    progress: Progress,
    memory: Memory,
    inbound: Event | None,
) -> Move | None:
    """Back to `resume_at` when the previous message came more than `gap_hours` earlier."""
    sessions = intervention.config.sessions
    if sessions is None or inbound is None or progress.step == sessions.resume_at:
        return None
    earlier = memory.received_before(inbound.stream_version)
    if earlier and inbound.occurred_at - earlier > timedelta(hours=sessions.gap_hours):
        return Move(sessions.resume_at, "session")
    return None


def interrupt_move(
    intervention: Intervention, progress: Progress, data: Mapping[str, Any]
) -> Move | None:
    active = {progress.step, *(frame.get("step") for frame in progress.stack)}
    for slug in intervention.interrupts():
        spec = intervention.steps[slug].interrupt
        assert spec is not None
        since = progress.interrupted_at.get(slug)
        if slug in active or (since is not None and progress.total_turns - since <= spec.cooldown):
            continue
        held, values = holds(spec.when, data)
        if held:
            return Move(slug, "interrupt", spec.when, values)
    return None


def step_move(
    intervention: Intervention, progress: Progress, data: Mapping[str, Any], now: datetime
) -> Move | None:
    """The current step's transition, return or budget move, if any."""
    step = intervention.steps[progress.step or ""]
    move = transition_move(step, data)
    if move is not None:
        return move
    back = progress.stack[-1]["step"] if step.returns and progress.stack else None
    if back is not None:
        held, values = holds(step.return_when, data)
        if held:
            return Move(back, "return", step.return_when, values, returning=True)
    if not spent(step, progress, now):
        return None
    if back is not None:
        return Move(back, "budget", returning=True)
    if step.transitions:
        last = step.transitions[-1]
        return Move(last.to, "budget", actions=last.actions)
    return None


def transition_move(step: Step, data: Mapping[str, Any], after_reply: bool = False) -> Move | None:
    """The first of the step's transitions whose condition holds: those checked before the
    reply, or (`after_reply`) those checked once the step has answered."""
    for transition in step.transitions:
        if transition.after_reply != after_reply:
            continue
        held, values = holds(transition.when, data)
        if held:
            return Move(transition.to, "transition", transition.when, values, transition.actions)
    return None


def spent(step: Step, progress: Progress, now: datetime) -> bool:
    """Whether the step has answered `max_turns` messages, or `max_minutes` have passed."""
    over_turns = step.max_turns is not None and progress.turns > step.max_turns
    over_time = step.max_minutes is not None and progress.minutes(now) >= step.max_minutes
    return over_turns or over_time
