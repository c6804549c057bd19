"""The `participants` projection: one row of current state per participant."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.store.event_types import (
    MessageReceived,
    ParticipantEnrolled,
    ParticipantOptedIn,
    ParticipantOptedOut,
    ParticipantStatusChanged,
    ParticipantUnenrolled,
    ParticipantUpdated,
)
from bot.store.event_types.conversation import ProfileSaved, StateTransitioned
from bot.store.event_types.decisions import DecisionFailed, DecisionMade, DecisionOutcome
from bot.store.event_types.interventions import (
    JudgementRecorded,
    MeasurementRecorded,
    MeasurementRejected,
    NoteTaken,
    StepEntered,
    StepTurnTaken,
)
from bot.store.event_types.participants import ParticipantErased, ParticipantWithdrawn
from bot.store.event_types.studies import ParticipantAllocated
from bot.store.event_types.timers import MeasurementAsked, MeasurementMissed
from bot.store.events import Event
from bot.store.projections import Projection, Row
from bot.store.projections.columns import fold_of
from bot.store.projections.participant_forms import FORM_CASES
from bot.store.projections.participant_instruments import INSTRUMENT_CASES

MEMORY = "memory"  # folded by the conversation's fold (bot.store.projections.columns)
COLUMNS = (
    "participant_id",
    "phone",
    "channel",
    "status",
    "timezone",
    "intervention",
    "study",
    "arm",
    "conversation_state",
    "current_step",
    "name",
    "gender",
    "ethnicity",
    "background",
    "debug",
    "opted_out",
    "profile",
    "step_counters",
    "judgements",
    "notes",
    "memory",
    "forms",
    "enrolled_at",
    "last_inbound_at",
    "updated_at",
    "version",
)


def _enrolled(row: Row | None, event: Event) -> Row:
    data: ParticipantEnrolled = event.data  # type: ignore[assignment]  # the reducer of this event type only
    return {
        "participant_id": data.participant_id,
        "phone": data.phone,
        "channel": data.channel,
        "status": "active",
        "timezone": data.timezone,
        "intervention": data.intervention,
        # The study and arm stay over a re-enrollment until a new allocation (allocations).
        "study": row.get("study") if row is not None else None,
        "arm": row.get("arm") if row is not None else None,
        "conversation_state": data.conversation_state,
        "current_step": None,
        "name": data.name,
        "gender": data.gender,
        "ethnicity": data.ethnicity,
        "background": data.background,
        "debug": data.debug,
        "opted_out": False,
        "profile": {},
        "step_counters": {},
        "judgements": {},
        "notes": {},
        # Kept over a re-enrollment: a turn's memory is of the whole stream
        # (bot.conversation.memory, registered as the column's fold).
        "memory": row.get(MEMORY) if row is not None else fold_of(MEMORY).empty(),
        "forms": {},
        "enrolled_at": event.occurred_at,
        "last_inbound_at": None,
    }


def _updated(row: Row, event: Event) -> Row:
    data: ParticipantUpdated = event.data  # type: ignore[assignment]  # the reducer of this event type only
    return {**row, **data.changes}


def _status_changed(row: Row, event: Event) -> Row:
    data: ParticipantStatusChanged = event.data  # type: ignore[assignment]  # the reducer of this event type only
    return {**row, "status": data.status}


def _withdrawn(row: Row, event: Event) -> Row:
    return {**row, "status": "withdrawn"}


def _erased(row: Row, event: Event) -> Row:
    return {**row, "status": "erased"}


def _unenrolled(row: Row, event: Event) -> Row:
    return {**row, "status": "unenrolled"}


def _allocated(row: Row, event: Event) -> Row:
    data: ParticipantAllocated = event.data  # type: ignore[assignment]
    return {**row, "study": data.study, "arm": data.arm}


def _received(row: Row, event: Event) -> Row:
    last = row.get("last_inbound_at")
    newest = event.occurred_at if last is None or event.occurred_at > last else last
    # The channel is the enrolled one until a researcher changes it (participant.updated):
    # a message on another channel is recorded with its channel and changes nothing here.
    return {**row, "last_inbound_at": newest}


def _transitioned(row: Row, event: Event) -> Row:
    data: StateTransitioned = event.data  # type: ignore[assignment]  # the reducer of this event type only
    return {**row, "conversation_state": data.to_state}


def _profile_saved(row: Row, event: Event) -> Row:
    data: ProfileSaved = event.data  # type: ignore[assignment]  # the reducer of this event type only
    profile = {k: v for k, v in row["profile"].items() if k not in data.cleared}
    return {**row, "profile": {**profile, **data.changes}}


def _opted_out(row: Row, event: Event) -> Row:
    return {**row, "opted_out": True}


def _opted_in(row: Row, event: Event) -> Row:
    return {**row, "opted_out": False}


CASES: dict[str, Callable[[Row, Event], Row]] = {
    StateTransitioned.event_type: _transitioned,
    ProfileSaved.event_type: _profile_saved,
    ParticipantOptedOut.event_type: _opted_out,
    ParticipantOptedIn.event_type: _opted_in,
    ParticipantUpdated.event_type: _updated,
    ParticipantStatusChanged.event_type: _status_changed,
    ParticipantWithdrawn.event_type: _withdrawn,
    ParticipantErased.event_type: _erased,
    ParticipantUnenrolled.event_type: _unenrolled,
    MessageReceived.event_type: _received,
    ParticipantAllocated.event_type: _allocated,
    **FORM_CASES,  # bot.store.projections.participant_forms: the `forms` column
    **INSTRUMENT_CASES,  # bot.store.projections.participant_instruments: step_counters
}


def register(event_type: str) -> Callable[[Callable[[Row, Event], Row]], Callable]:
    """Add a reducer case for an event type defined by a later feature: pure, it returns a
    new dict (`{**row, ...}`, which `apply` goes on to change) or `row` itself."""

    def add(case: Callable[[Row, Event], Row]) -> Callable[[Row, Event], Row]:
        if event_type in CASES:
            raise ValueError(f"participants reducer for {event_type!r} defined twice")
        CASES[event_type] = case
        return case

    return add


def apply(row: Row | None, event: Event) -> Row | None:
    """Fold one event into a participant row (pure)."""
    if event.event_type == ParticipantEnrolled.event_type:
        new: Row | None = _enrolled(row, event)
    elif row is None:
        return None  # events before enrollment (or on other streams) change nothing
    else:
        case = CASES.get(event.event_type)
        # Always a new dict: a case returns one of its own (`{**row, ...}`) or `row` itself when
        # nothing else changes, which is copied, so that the version below is still written
        # (the store skips a row it was handed back) and `row` is left as it was.
        new = case(row, event) if case else row
        if new is row:
            new = dict(row)
    assert new is not None
    if new.get(MEMORY) is not None:  # None: a row from before 0015, until it is replayed
        new[MEMORY] = fold_of(MEMORY).apply(new[MEMORY], event)
    new["version"] = event.stream_version
    new["updated_at"] = event.occurred_at
    return new


def key(event: Event) -> str | None:
    return event.participant_id


PROJECTION = Projection(
    name="participants",
    key_column="participant_id",
    columns=COLUMNS,
    key=key,
    apply=apply,
    stream_head=True,
    types=None,  # every event on the stream moves the row's version (and its memory)
)


# Interventions (the step module). `step_counters` holds where the participant is: `step`,
# `turns` and `entered_at` of this visit, `visits` per step, `last_entered` (per step, when
# the participant last entered it: a schedule's `from: <step>.entered`), the return `stack`,
# `total_turns`, `interrupted_at` (total_turns when each interrupt was entered), `measurements`
# (latest value per question), `asking` (the question awaiting an answer), `decisions` (per
# decision, the number of its points made so far: the index of a point that comes `on:` an
# event) and `outcome_questions` (per decision point whose outcome question was asked and whose
# window is open, "decision:index": the question's `outbox_id` and, once answered, its `value`).
def _counters(row: Row, **changes: Any) -> Row:
    return {**row, "step_counters": {**(row.get("step_counters") or {}), **changes}}


@register(StepEntered.event_type)
def _step_entered(row: Row, event: Event) -> Row:
    data: StepEntered = event.data  # type: ignore[assignment]  # the reducer of this event type only
    counters = row.get("step_counters") or {}
    visits = dict(counters.get("visits") or {})
    if data.via != "return":
        visits[data.step] = visits.get(data.step, 0) + 1
    interrupted = dict(counters.get("interrupted_at") or {})
    if data.via == "interrupt":
        interrupted[data.step] = counters.get("total_turns", 0)
    entered = (data.entered_at or event.occurred_at).isoformat()
    last_entered = {
        **(counters.get("last_entered") or {}),
        data.step: event.occurred_at.isoformat(),
    }
    moved = {**row, "current_step": data.step}
    return _counters(
        moved,
        last_entered=last_entered,
        step=data.step,
        turns=data.turns,
        entered_at=entered,
        visits=visits,
        stack=list(data.stack),
        interrupted_at=interrupted,
    )


@register(StepTurnTaken.event_type)
def _step_turn_taken(row: Row, event: Event) -> Row:
    data: StepTurnTaken = event.data  # type: ignore[assignment]  # the reducer of this event type only
    total = (row.get("step_counters") or {}).get("total_turns", 0) + 1
    return _counters(row, turns=data.turn, total_turns=total)


@register(JudgementRecorded.event_type)
def _judgement_recorded(row: Row, event: Event) -> Row:
    data: JudgementRecorded = event.data  # type: ignore[assignment]  # the reducer of this event type only
    return {**row, "judgements": {**(row.get("judgements") or {}), data.judgement: data.result}}


@register(NoteTaken.event_type)
def _note_taken(row: Row, event: Event) -> Row:
    data: NoteTaken = event.data  # type: ignore[assignment]  # the reducer of this event type only
    return {**row, "notes": {**(row.get("notes") or {}), **data.values}}


@register(MeasurementAsked.event_type)
def _measurement_asked(row: Row, event: Event) -> Row:
    data: MeasurementAsked = event.data  # type: ignore[assignment]  # the reducer of this event type only
    asking = {
        "measurement": data.measurement,
        "outbox_id": data.outbox_id,
        "answer_by": data.answer_by.isoformat(),
        "attempts": 0,
    }
    if data.decision is None:
        return _counters(row, asking=asking)
    point = f"{data.decision}:{data.index}"
    questions = dict((row.get("step_counters") or {}).get("outcome_questions") or {})
    questions[point] = {"outbox_id": data.outbox_id}
    return _counters(row, asking={**asking, "point": point}, outcome_questions=questions)


def _answered(row: Row, measurement: str, outbox_id: str | None = None) -> Row:
    """`asking` cleared, if it is question `measurement` (in message `outbox_id`, where
    known: a verdict on an earlier message of the question leaves a later one asking)."""
    asking = (row.get("step_counters") or {}).get("asking")
    if not asking or asking.get("measurement") != measurement:
        return row
    if outbox_id is not None and asking.get("outbox_id") not in (None, outbox_id):
        return row
    return _counters(row, asking=None)


def _point_answered(row: Row, data: MeasurementRecorded) -> Row:
    """The answer kept for the decision point whose outcome question is the one awaiting an
    answer (a reply answers the question last asked: docs/decisions.md)."""
    counters = row.get("step_counters") or {}
    asking = counters.get("asking") or {}
    point = asking.get("point")
    if point is None or asking.get("measurement") != data.measurement:
        return row
    if data.outbox_id is not None and data.outbox_id != asking.get("outbox_id"):
        return row
    questions = dict(counters.get("outcome_questions") or {})
    if point not in questions:
        return row
    questions[point] = {**questions[point], "value": data.value}
    return _counters(row, outcome_questions=questions)


@register(MeasurementRecorded.event_type)
def _measurement_recorded(row: Row, event: Event) -> Row:
    data: MeasurementRecorded = event.data  # type: ignore[assignment]  # the reducer of this event type only
    values = {**((row.get("step_counters") or {}).get("measurements") or {})}
    values[data.measurement] = data.value
    answered = _point_answered(_counters(row, measurements=values), data)
    return _answered(answered, data.measurement)


@register(MeasurementMissed.event_type)
def _measurement_missed(row: Row, event: Event) -> Row:
    data: MeasurementMissed = event.data  # type: ignore[assignment]  # the reducer of this event type only
    return _answered(row, data.measurement, data.outbox_id)


@register(MeasurementRejected.event_type)
def _measurement_rejected(row: Row, event: Event) -> Row:
    data: MeasurementRejected = event.data  # type: ignore[assignment]  # the reducer of this event type only
    if data.final:
        return _answered(row, data.measurement)
    asking = (row.get("step_counters") or {}).get("asking")
    if not asking or asking.get("measurement") != data.measurement:
        return row
    return _counters(row, asking={**asking, "attempts": data.attempt})


@register(DecisionMade.event_type)
@register(DecisionFailed.event_type)
def _decision_point(row: Row, event: Event) -> Row:
    data: DecisionMade | DecisionFailed = event.data  # type: ignore[assignment]  # these types only
    made = dict((row.get("step_counters") or {}).get("decisions") or {})
    made[data.decision] = max(int(made.get(data.decision, 0)), data.index + 1)
    return _counters(row, decisions=made)


@register(DecisionOutcome.event_type)
def _decision_outcome(row: Row, event: Event) -> Row:
    data: DecisionOutcome = event.data  # type: ignore[assignment]  # the reducer of this event type only
    questions = dict((row.get("step_counters") or {}).get("outcome_questions") or {})
    if questions.pop(f"{data.decision}:{data.index}", None) is None:
        return row
    return _counters(row, outcome_questions=questions)


def fold(events: list[Event]) -> dict[str, Any] | None:
    """The row a participant's events fold to, from nothing."""
    row: Row | None = None
    for ev in events:
        row = apply(row, ev)
    return row
