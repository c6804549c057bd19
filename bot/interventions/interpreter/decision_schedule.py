"""When an intervention's decision points come (docs/decisions.md): their `when:` as a
recurring schedule (bot.timers.recurrence: fixed local times, or N random times in each
window), and the durable timers that chain them, one point after another, from the moment
the participant enters the intervention. Pure: time comes in, events go out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.interventions.language.decisions_format import Decision, When
from bot.interventions.language.intervention import Intervention
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import Event
from bot.timers import one_shot
from bot.timers.recurrence import Occasion, next_occasion
from bot.timers.recurrence_format import Recurrence

DECISION = "decision"  # a decision point is due
OUTCOME = "decision_outcome"  # a decision point's outcome window closes


def recurrence_of(when: When) -> Recurrence | None:
    """The daily schedule `when:` describes; None for points that come `on:` an event."""
    if when.times:
        return Recurrence.model_validate({"every": "1 day", "at": list(when.times)})
    if when.windows:
        spec = {"every": "1 day", "windows": list(when.windows), "times": when.per_day or 1}
        return Recurrence.model_validate(spec)
    return None


def occasion_after(
    decision: Decision,
    name: str,
    participant: Mapping[str, Any],
    anchor: datetime,
    last: int | None,
) -> Occasion | None:
    """The point after number `last` (None: the first) of a series that starts at `anchor`.
    Quiet hours do not move a point: the point comes and finds the participant unavailable.
    The random times in windows are placed by a seed of the participant and the decision
    (the timing is not the randomised treatment; the option drawn is)."""
    recurrence = recurrence_of(decision.when)
    if recurrence is None:
        return None
    seed = f"{participant['participant_id']}:{name}"
    zone = one_shot.zone_of(participant)
    return next_occasion(recurrence, anchor, zone, None, seed, last)


def point_timer(
    intervention: str,
    name: str,
    participant: Mapping[str, Any],
    anchor: datetime,
    occasion: Occasion,
) -> TimerScheduled:
    """The timer of decision point `occasion.index` of decision `name`."""
    payload = {
        "intervention": intervention,
        "decision": name,
        "index": occasion.index,
        "anchor": anchor.isoformat(),
    }
    return one_shot.scheduled(
        participant, DECISION, occasion.due_utc, scope=f"decision:{name}", payload=payload
    )


def next_point_timer(
    intervention: Intervention, payload: Mapping[str, Any], participant: Mapping[str, Any]
) -> TimerScheduled | None:
    """The timer of the point after the one `payload` (a decision timer's) was for."""
    name = str(payload["decision"])
    decision = intervention.decisions.get(name)
    if decision is None:
        return None
    anchor = datetime.fromisoformat(str(payload["anchor"]))
    found = occasion_after(decision, name, participant, anchor, int(payload["index"]))
    return (
        None if found is None else point_timer(intervention.slug, name, participant, anchor, found)
    )


def first_timers(
    intervention: Intervention,
    participant: Mapping[str, Any],
    now: datetime,
    history: Sequence[Event] = (),
) -> list[TimerScheduled]:
    """The first point's timer of each timed decision not scheduled yet in `history` (the
    participant enters the intervention: their series start now)."""
    started = {
        str(ev.data.payload.get("decision"))
        for ev in history
        if isinstance(ev.data, TimerScheduled) and ev.data.kind == DECISION
    }
    timers = []
    for name, decision in intervention.decisions.items():
        if name in started:
            continue
        found = occasion_after(decision, name, participant, now, None)
        if found is not None:
            timers.append(point_timer(intervention.slug, name, participant, now, found))
    return timers
