"""Decision points that come `on:` an event (docs/decisions.md): a message received, or a step
entered (any, or the one `when.step` names), decided in the turn that records the event.

A point's index is the number of that decision's points made so far (the participants row's
`step_counters.decisions`, which the turn's own events keep current); it is due when the
message came (a message that waited for a takeover's hand-back finds the participant
unavailable for `takeover`) or when the step was entered. The draws' seed, the quiet hours
and the takeover read are the deployment's (`configure`, by the composition root, as
`decision_timers.register` does for timed points); without it, the fixed public seed of an
unkeyed deployment (decision_timers.draw_seed), which the audit would flag for a keyed one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.core.localtime import QuietHours
from bot.interventions.interpreter.decide import Point, decide
from bot.interventions.interpreter.decision_timers import Takeovers, draw_seed
from bot.interventions.language.intervention import Intervention
from bot.store.event_types.interventions import StepEntered
from bot.store.events import Event, EventData


@dataclass(frozen=True)
class Deciding:
    """What every point decided on an event needs from the deployment."""

    seed: Any = draw_seed(None)
    quiet: QuietHours | None = None
    takeovers: Takeovers | None = None


_DEPLOYMENT = [Deciding()]


def configure(deciding: Deciding) -> None:
    """The deployment's seed, quiet hours and takeover read (the composition root's)."""
    _DEPLOYMENT[:] = [deciding]


def triggered(
    intervention: Intervention, added: Sequence[EventData], inbound: Event | None
) -> list[tuple[str, datetime | None]]:
    """(decision, when it is due: None for now) of each point the turn sets off: one per
    `on: message.received` decision for the message, one per `on: step.entered` decision for
    each step entered among `added` (the turn's events), in the order they happened."""
    found: list[tuple[str, datetime | None]] = []
    decisions = intervention.decisions.items()
    if inbound is not None:
        found += [(n, inbound.occurred_at) for n, d in decisions if d.when.on == "message.received"]
    for data in added:
        if isinstance(data, StepEntered):
            found += [
                (name, None)
                for name, d in decisions
                if d.when.on == "step.entered" and d.when.step in (None, data.step)
            ]
    return found


def point_events(
    intervention: Intervention,
    name: str,
    due: datetime,
    participant: Mapping[str, Any],
    history: Sequence[Event],
    now: datetime,
) -> list[EventData]:
    """The events of `name`'s next point, due at `due` (bot.interventions.interpreter.decide)."""
    deciding = _DEPLOYMENT[0]
    counters = (participant.get("step_counters") or {}).get("decisions") or {}
    point = Point(name, int(counters.get(name, 0)), due, due)
    if deciding.takeovers is not None:
        held = deciding.takeovers(str(participant["participant_id"]))
        participant = {**participant, "takeover": held}
    quiet = intervention.quiet_hours() or deciding.quiet
    return decide(intervention, point, participant, history, now, deciding.seed, quiet)
