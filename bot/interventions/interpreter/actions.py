"""Actions on transitions, steps and judgements, as the events they decide: take a note, raise
an alert to supervisors, ask or schedule a question, send a message later (a template, rendered
when the action runs), set profile fields (typed expressions; only changed values are saved),
retrieve documents from a library (once, through the `retrieve` callable).

Each action may have a `when` condition, checked against the data as it is when the action
runs. Pure: notes (which need the LLM) are taken through the `take_note` callable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from bot.conversation.memory import remembered
from bot.interventions.interpreter.conditions import condition, holds
from bot.interventions.interpreter.failures import ConditionFailure
from bot.interventions.interpreter.questions import numbered
from bot.interventions.interpreter.series_anchor import series_anchor
from bot.interventions.language.expressions import ConditionError, is_expression
from bot.interventions.language.format import Action
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.types import ANY, name_types, value_problem
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.conversation import ProfileSaved
from bot.store.event_types.timers import TimerCancelled, TimerScheduled
from bot.store.events import Event, EventData, new_id
from bot.timers import one_shot, quiet_hours, schedules, series


@dataclass(frozen=True)
class Situation:
    """What actions act on: the participant now, and their stream so far."""

    intervention: Intervention
    participant: Mapping[str, Any]
    history: Sequence[Event]
    now: datetime
    data: Mapping[str, Any]
    render: Callable[[str, str], str]  # a template's key and its source -> its text
    take_note: Callable[[str], list[EventData]]
    retrieve: Callable[[Action], list[EventData]]  # a `retrieve:` action -> its events
    pending: Callable[[], Sequence[Mapping[str, Any]]]  # the pending timers, as rows


Source = Literal["condition", "judgement"]


def run_actions(
    actions: Sequence[Action], situation: Situation, source: Source, step: str | None
) -> list[EventData]:
    """The events of each action whose `when` holds, in order."""
    events: list[EventData] = []
    for action in actions:
        if holds(action.when, situation.data)[0]:
            events += _act(action, situation, source, step)
    return events


def _act(action: Action, situation: Situation, source: Source, step: str | None) -> list[EventData]:
    participant, now = situation.participant, situation.now
    if action.note is not None:
        return situation.take_note(action.note)
    if action.retrieve is not None:
        return situation.retrieve(action)
    if action.alert is not None:
        where = f" (step {step})" if step else ""
        return [
            AlertRaised(
                alert_id=new_id(),
                kind=source,
                summary=f"{situation.intervention.config.title}{where}: {action.alert}",
                severity=action.severity,
                notify_supervisors=True,
            )
        ]
    if action.ask is not None:
        return _ask(action, situation)
    if action.schedule is not None:
        return _schedule(action, situation)
    if action.administer is not None:
        name, after = action.administer, action.after
        timer = administer(situation.intervention, participant, name, now, after)
        return _repeated(action, situation, timer) if action.repeat else [timer]
    if action.send is not None:
        return _send(action, situation)
    return _set(action, situation)


def _send(action: Action, situation: Situation) -> list[EventData]:
    """Now, or frozen (`freeze: true`): rendered as the action runs. Later (`after:` or
    `repeat:`): a `send` timer whose template is rendered when it is sent
    (bot.interventions.interpreter.send_timers)."""
    participant, now, key = situation.participant, situation.now, send_key(situation, action)
    if action.freeze or (action.after is None and action.repeat is None):
        text = situation.render(key, str(action.send))
        return [one_shot.at(participant, now + (action.after or timedelta()), text)]
    later = one_shot.scheduled(
        participant,
        "send",
        now + (action.after or timedelta()),
        scope=key,
        payload={"template": key, "message_kind": "notice"},
    )
    return _repeated(action, situation, later) if action.repeat else [later]


def send_key(situation: Situation, action: Action) -> str:
    """The compiled template of a `send:` action (the language's loader compiles each)."""
    return next(
        f"{key}:send:{'.'.join(str(part) for part in path)}"
        for key, path, found in situation.intervention.actions()
        if found is action
    )


def _set(action: Action, situation: Situation) -> list[EventData]:
    """`profile.saved` with the values that change (none if none does). An expression is
    evaluated over the data (expressions.is_expression); a value that does not fit the field's
    type stops the turn."""
    profile = situation.participant.get("profile") or {}
    types = name_types(situation.intervention)
    changes: dict[str, Any] = {}
    for key, written in (action.set or {}).items():
        value: Any = written.strip() if isinstance(written, str) else written
        if is_expression(written):
            try:
                value = condition(written).value(situation.data)
            except ConditionError as exc:
                raise ConditionFailure(written, f"set: profile.{key}: {exc}") from None
        problem = value_problem(value, types.get(f"profile.{key}", ANY))
        if problem:
            raise ConditionFailure(str(written), f"set: profile.{key}: {problem}")
        old = profile.get(key)
        if (type(old), old) != (type(value), value):
            changes[key] = value
    return [ProfileSaved(changes=changes, source="intervention")] if changes else []


def _ask(action: Action, situation: Situation) -> list[EventData]:
    """The question once, now or after `after`. An earlier `ask` of it that has not gone out
    yet (a step entered again before its question's timer fired) is cancelled ("asked
    again"): the participant gets the question once, at the time the newer ask sets."""
    slug = str(action.ask)
    question = situation.intervention.questions[slug]
    text = numbered(question, situation.render(f"question:{slug}:text", question.text))
    earlier: list[EventData] = [
        TimerCancelled(timer_id=str(timer["timer_id"]), reason="asked again")
        for timer in situation.pending()
        if one_shot.asks(str(timer["kind"]), timer.get("payload") or {}, slug)
    ]
    due = situation.now + (action.after or timedelta())
    asked = one_shot.measurement(situation.participant, due, slug, text, question.answer_window)
    if action.repeat:
        return _repeated(action, situation, asked)
    return [*earlier, asked]


def _repeated(action: Action, situation: Situation, timer: TimerScheduled) -> list[EventData]:
    """A recurring schedule of the ask or administration `timer` would make once
    (bot.timers.series): its first occasion's timer, counted from its `from:` (enrollment by
    default; bot.interventions.interpreter.series_anchor)."""
    repeat = dict(action.repeat or {})
    participant = situation.participant
    written = str(repeat.get("from") or "enrollment")
    anchor = series_anchor(written, participant, situation.data, situation.history, situation.now)
    here = quiet_hours.for_participant(participant, situation.intervention.quiet_hours())
    return series.first(participant, timer.kind, timer.payload, repeat, anchor, here, new_id())


def administer(
    intervention: Intervention,
    participant: Mapping[str, Any],
    name: str,
    now: datetime,
    after: timedelta | None = None,
) -> TimerScheduled:
    """An `instrument` timer that starts an administration of `name` (its first message is
    built now, from the instrument's fixed wording)."""
    if intervention.instruments is None:
        raise ConditionFailure(f"administer: {name}", "the instruments were not loaded")
    opening = intervention.instruments.opening(name)
    return one_shot.instrument(participant, now + (after or timedelta()), opening)


def _schedule(action: Action, situation: Situation) -> list[EventData]:
    """A daily measurement, unless one for this question is already live."""
    slug = str(action.schedule)
    memory = remembered(situation.participant, situation.history)
    for live in memory.live_schedules().values():
        if live.kind == "measurement" and live.payload.get("measurement") == slug:
            return []
    question = situation.intervention.questions[slug]
    text = numbered(question, situation.render(f"question:{slug}:text", question.text))
    payload = {
        "measurement": slug,
        "text": text,
        "answer_minutes": question.answer_window / timedelta(minutes=1),
    }
    when = action.at or question.schedule
    assert when is not None  # the validator refuses a schedule without a time
    return schedules.create_daily(
        situation.participant, when, "measurement", payload, situation.now
    )
