"""The conversation memory's fold (pure): one small reducer per event type it keeps anything
of, found in `REDUCERS` by the event's type, and the column fold the store is handed.

Each reducer gets its own shallow copy of the document (`new`) and assigns new values to its
keys; it never changes a list or dict of the document it was given in place, which the
participants row it came from still holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from bot.conversation.memory.model import (
    QUESTIONS,
    RING,
    SMALL_RING,
    Alert,
    MemoryDoc,
    Message,
    Question,
    Received,
    Retrieval,
    Schedule,
    Timer,
    current,
    empty,
    readable,
    upcast,
)
from bot.store.event_types.alerts import AlertAcknowledged, AlertRaised, AlertResolved
from bot.store.event_types.habits import HabitReported, IntensityAnswered, QuestionAsked
from bot.store.event_types.interventions import (
    MeasurementRecorded,
    MeasurementRejected,
    StepEntered,
    StepReplied,
)
from bot.store.event_types.messages import (
    MessageQueued,
    MessageReceived,
    MessageSent,
    MessageStatus,
)
from bot.store.event_types.retrieval import RetrievalDone
from bot.store.event_types.schedules import ScheduleCreated, ScheduleDeleted
from bot.store.event_types.timers import MeasurementAsked, TimerScheduled
from bot.store.events import Event
from bot.store.projections.columns import ColumnFold

HIDDEN_KINDS = frozenset({"alert", "debug"})  # as bot.conversation.transcript_llm
SENT = frozenset({"sent", "delivered", "read"})  # as bot.store.delivery


def _at(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()  # as the database gives it back to a replay


def _later(current: str | None, value: datetime) -> str:
    return _at(value) if current is None or datetime.fromisoformat(current) < value else current


def _mark_sent(entries: list[Message], outbox_id: str, version: int) -> list[Message]:
    return [
        {**e, "sent": version} if e["outbox_id"] == outbox_id and e["sent"] is None else e
        for e in entries
    ]


def _await(new: MemoryDoc, outbox_id: str) -> None:
    """Keep the queued message `outbox_id` where later references find it."""
    if any(e["outbox_id"] == outbox_id for e in new["awaited"]):
        return
    found = next((e for e in new["messages"] if e["outbox_id"] == outbox_id), None)
    if found is not None:
        new["awaited"] = [*new["awaited"], found][-SMALL_RING:]


def _received(new: MemoryDoc, data: MessageReceived, ev: Event) -> None:
    if data.keyword is None:
        new["reply"] = ev.stream_version
    entry: Received = {"version": ev.stream_version, "at": _at(ev.occurred_at)}
    new["received"] = [*new["received"], entry][-SMALL_RING:]


def _queued(new: MemoryDoc, data: MessageQueued, ev: Event) -> None:
    if data.to_participant:
        new["queued"] = {**new["queued"], data.kind: ev.stream_version}
        if data.kind not in HIDDEN_KINDS:
            new["contacted"] = True
        if data.kind == "prompt":
            new["prompt"] = {"body": data.body, "at": _at(ev.occurred_at), "answer": None}
    elif data.kind == "alert":
        new["texted_at"] = _later(new["texted_at"], ev.occurred_at)
        severity = data.alert_severity or "info"
        new["texted"] = {
            **new["texted"],
            severity: _later(new["texted"].get(severity), ev.occurred_at),
        }
    entry: Message = {
        "outbox_id": data.outbox_id,
        "version": ev.stream_version,
        "kind": data.kind,
        "sent": None,
    }
    new["messages"] = [*new["messages"], entry][-RING:]


def _sent(new: MemoryDoc, data: MessageSent | MessageStatus, ev: Event) -> None:
    outbox_id, version = data.outbox_id, ev.stream_version
    if outbox_id is None:
        return
    new["messages"] = _mark_sent(new["messages"], outbox_id, version)
    new["awaited"] = _mark_sent(new["awaited"], outbox_id, version)
    new["questions"] = [
        {**q, "sent": version} if q["sent"] is None and q["asked"]["outbox_id"] == outbox_id else q
        for q in new["questions"]
    ]


def _status(new: MemoryDoc, data: MessageStatus, ev: Event) -> None:
    if data.status in SENT:
        _sent(new, data, ev)


def _alert_raised(new: MemoryDoc, data: AlertRaised, ev: Event) -> None:
    if data.kind == "crisis":
        new["flagged"] = True
        new["crisis"] = ev.stream_version
    if data.notify_supervisors:
        new["alerted_at"] = _later(new["alerted_at"], ev.occurred_at)
        # without its quote: the participant's words stay sealed in the event only (the
        # memory is a plain column), and nothing read from the memory needs them
        raised = data.model_dump(mode="json", exclude={"quote"})
        entry: Alert = {"alert_id": data.alert_id, "raised": raised, "closed": False}
        new["alerts"] = [*new["alerts"], entry][-SMALL_RING:]


def _alert_closed(new: MemoryDoc, data: AlertAcknowledged | AlertResolved, ev: Event) -> None:
    new["alerts"] = [
        {**a, "closed": True} if a["alert_id"] == data.alert_id and not a["closed"] else a
        for a in new["alerts"]
    ]


def _step_entered(new: MemoryDoc, data: StepEntered, ev: Event) -> None:
    new["visits"] = new["visits"] + 1


def _step_replied(new: MemoryDoc, data: StepReplied, ev: Event) -> None:
    new["flagged"] = False
    new["replies"] = {**new["replies"], data.step: new["replies"].get(data.step, 0) + 1}


def _schedule_created(new: MemoryDoc, data: ScheduleCreated, ev: Event) -> None:
    entry: Schedule = {"schedule_id": data.schedule_id, "created": data.model_dump(mode="json")}
    kept = new["schedules"]
    if any(s["schedule_id"] == data.schedule_id for s in kept):
        # a re-created id keeps its place, as a dict assignment does
        new["schedules"] = [entry if s["schedule_id"] == data.schedule_id else s for s in kept]
    else:
        new["schedules"] = [*kept, entry]


def _schedule_deleted(new: MemoryDoc, data: ScheduleDeleted, ev: Event) -> None:
    new["schedules"] = [s for s in new["schedules"] if s["schedule_id"] != data.schedule_id]


def _question_asked(new: MemoryDoc, data: QuestionAsked, ev: Event) -> None:
    sent = next((e["sent"] for e in new["messages"] if e["outbox_id"] == data.outbox_id), None)
    entry: Question = {
        "version": ev.stream_version,
        "asked": data.model_dump(mode="json"),
        "sent": sent,
    }
    kept = [*new["questions"], entry][-QUESTIONS:]
    ids = {q["asked"]["question_id"] for q in kept}
    new["questions"] = kept
    new["answered"] = [a for a in new["answered"] if a in ids]
    new["asked_on"] = {**new["asked_on"], data.kind: data.local_date.isoformat()}


def _answered(new: MemoryDoc, data: HabitReported | IntensityAnswered, ev: Event) -> None:
    if any(q["asked"]["question_id"] == data.question_id for q in new["questions"]):
        new["answered"] = [*new["answered"], data.question_id]


def _habit_reported(new: MemoryDoc, data: HabitReported, ev: Event) -> None:
    _answered(new, data, ev)
    if new["prompt"] is not None:
        new["prompt"] = {**new["prompt"], "answer": data.answer}


def _measurement_asked(new: MemoryDoc, data: MeasurementAsked, ev: Event) -> None:
    _await(new, data.outbox_id)


def _verdict(new: MemoryDoc, data: MeasurementRecorded | MeasurementRejected, ev: Event) -> None:
    kept = {**(new["verdicts"].get(data.measurement) or {}), ev.event_type: ev.stream_version}
    new["verdicts"] = {**new["verdicts"], data.measurement: kept}


def _timer_scheduled(new: MemoryDoc, data: TimerScheduled, ev: Event) -> None:
    entry: Timer = {"timer_id": data.timer_id, "version": ev.stream_version}
    new["timers"] = [*new["timers"], entry][-RING:]
    about = data.payload.get("about")
    if isinstance(about, str) and about:
        _await(new, about)


def _retrieval_done(new: MemoryDoc, data: RetrievalDone, ev: Event) -> None:
    documents = [d.model_dump() for d in data.documents]
    found: Retrieval = {"library": data.library, "documents": documents}
    new["retrievals"] = {**new["retrievals"], data.name: found}


Reducer = Callable[[MemoryDoc, Any, Event], None]  # (new, the event's data, the event)
REDUCERS: dict[str, Reducer] = {
    MessageReceived.event_type: _received,
    MessageQueued.event_type: _queued,
    MessageSent.event_type: _sent,
    MessageStatus.event_type: _status,
    AlertRaised.event_type: _alert_raised,
    AlertAcknowledged.event_type: _alert_closed,
    AlertResolved.event_type: _alert_closed,
    StepEntered.event_type: _step_entered,
    StepReplied.event_type: _step_replied,
    ScheduleCreated.event_type: _schedule_created,
    ScheduleDeleted.event_type: _schedule_deleted,
    QuestionAsked.event_type: _question_asked,
    HabitReported.event_type: _habit_reported,
    IntensityAnswered.event_type: _answered,
    MeasurementAsked.event_type: _measurement_asked,
    MeasurementRecorded.event_type: _verdict,
    MeasurementRejected.event_type: _verdict,
    TimerScheduled.event_type: _timer_scheduled,
    RetrievalDone.event_type: _retrieval_done,
}
TYPES = frozenset(REDUCERS)  # the event types the memory keeps anything of


def apply(memory: Mapping[str, Any] | None, ev: Event) -> MemoryDoc | dict[str, Any]:
    """Fold one event (pure): a new document, or a copy of `memory` when the event is not one
    the memory keeps anything of. A document of version 0 is read as this version's first; one
    of a version this code does not read is copied as it is, for replay to rewrite."""
    new = upcast(memory) if memory is not None else None
    if new is None:
        return dict(memory or {})
    reduce = REDUCERS.get(ev.event_type)
    if reduce is not None:
        reduce(new, ev.data, ev)
    return new


def fold(events: Iterable[Event]) -> MemoryDoc:
    """The memory `events` (a stream, in order) fold to, from nothing."""
    memory = empty()
    for ev in events:
        reduce = REDUCERS.get(ev.event_type)
        if reduce is not None:  # the document is this fold's own: no copy for each event
            reduce(memory, ev.data, ev)
    return memory


# The participants row's `memory` column, as the store folds it (bot.store.projections.columns).
COLUMN_FOLD = ColumnFold(
    column="memory", empty=empty, apply=apply, readable=readable, current=current
)
