"""A participant's conversation memory (pure): what a turn decides on that the participants row's
other columns do not hold, folded event by event into the row's `memory` column.

A turn must cost the same at the 10th and at the 100,000th event (issue 15), so nothing it
decides on may come from folding the whole stream. What the turn's code used to fold from the
stream (`bot.timers.history`, `bot.store.delivery`, open questions, the intervention's counts,
the supervisors' last text, live schedules...) is kept here instead, in the same transaction
as the events (the participants projection calls `apply`), and rebuilt by replay like every
other column (`tandem replay --check` compares it). The chat transcript a turn shows the LLM is
a bounded query of the last messages (`bot.store.recent`); pending timers are the `timers`
table's rows.

The memory is a JSON document, versioned by `FORMAT`: a change to what it holds bumps it, and
`tandem replay --repair` rewrites every row (a stored memory of another format is read as
empty until then, never guessed at). Everything in it is bounded: latest values, counts, live
sets, and rings (`RING`) of the messages and timers a later timer or answer refers to. A
reference older than its ring (a reminder whose message had 64 newer messages queued before it
fired) is reported as not found, which handlers already treat as "not in these events".
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

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

FORMAT = 1
RING = 64  # queued messages and scheduled timers remembered for later references
QUESTIONS = 8  # habit questions remembered: those of the last prompts (two a prompt)
SMALL_RING = 16  # received messages, awaited messages, alerts
HIDDEN_KINDS = frozenset({"alert", "debug"})  # as bot.conversation.transcript_llm
SENT = frozenset({"sent", "delivered", "read"})  # as bot.store.delivery
TYPES = frozenset(
    {
        MessageReceived.event_type,
        MessageQueued.event_type,
        MessageSent.event_type,
        MessageStatus.event_type,
        AlertRaised.event_type,
        AlertAcknowledged.event_type,
        AlertResolved.event_type,
        StepEntered.event_type,
        StepReplied.event_type,
        ScheduleCreated.event_type,
        ScheduleDeleted.event_type,
        QuestionAsked.event_type,
        HabitReported.event_type,
        IntensityAnswered.event_type,
        MeasurementAsked.event_type,
        MeasurementRecorded.event_type,
        MeasurementRejected.event_type,
        TimerScheduled.event_type,
        RetrievalDone.event_type,
    }
)


def empty() -> dict[str, Any]:
    return {
        "format": FORMAT,
        "reply": 0,  # stream version of the last message received that was not a keyword
        "received": [],  # [[version, occurred_at]] of the last SMALL_RING messages received
        "queued": {},  # kind -> version of the last message of that kind to the participant
        "contacted": False,  # whether any message of the conversation was queued to them
        "prompt": None,  # the last habit prompt: {"body", "at", "answer"}
        "texted_at": None,  # when supervisors were last texted about them (an alert text)
        "alerted_at": None,  # the last alert.raised asking for supervisors
        "flagged": False,  # crisis alert since the intervention's last reply
        "crisis": 0,  # stream version of the last crisis alert
        "schedules": [],  # [[schedule_id, ScheduleCreated data]] live, in order of creation
        "replies": {},  # step slug -> step.replied count
        "visits": 0,  # step.entered count
        "questions": [],  # [[version, QuestionAsked data, sent version]], the last QUESTIONS
        "answered": [],  # the ids of those that were answered
        "asked_on": {},  # question kind -> the latest local date one was asked (prompts ask
        # "was one asked today?", and today is never before it)
        "messages": [],  # [[outbox_id, version, kind, sent version | None]], last RING queued
        "awaited": [],  # the same, for messages a question, measurement or timer refers to
        "timers": [],  # [[timer_id, version]] of the last RING timers scheduled
        "verdicts": {},  # measurement -> {"measurement.recorded"|"...rejected": last version}
        "alerts": [],  # [[alert_id, AlertRaised data, closed]], the last SMALL_RING raised
        # retrieval name -> the documents its last retrieval.done found ({library, documents}:
        # ids, scores and ranks; one entry a name an intervention declares: bounded)
        "retrievals": {},
    }


def of(row: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The row's memory, or None when it has none of this format (a row to be replayed)."""
    found = (row or {}).get("memory")
    if isinstance(found, Mapping) and found.get("format") == FORMAT:
        return dict(found)
    return None


def remembered(row: Mapping[str, Any] | None, events: Any = ()) -> Memory:
    """The row's memory; folded from `events` when the row has none (a row built by hand in a
    test, with the whole stream as its history)."""
    found = of(row)
    return Memory(found if found is not None else fold(events))


def fold(events: Any) -> dict[str, Any]:
    """The memory `events` (a stream, in order) fold to, from nothing."""
    memory: dict[str, Any] = empty()
    for ev in events:
        memory = apply(memory, ev)
    return memory


def _at(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()  # as the database gives it back to a replay


def _later(current: str | None, value: datetime) -> str:
    return _at(value) if current is None or datetime.fromisoformat(current) < value else current


def _ring(items: list[Any], item: Any, size: int) -> list[Any]:
    return [*items, item][-size:]


def _mark_sent(entries: list[list[Any]], outbox_id: str, version: int) -> list[list[Any]]:
    return [
        [e[0], e[1], e[2], version] if e[0] == outbox_id and e[3] is None else e for e in entries
    ]


def _await(memory: dict[str, Any], outbox_id: str) -> None:
    """Keep the queued message `outbox_id` where later references find it."""
    if any(e[0] == outbox_id for e in memory["awaited"]):
        return
    found = next((e for e in memory["messages"] if e[0] == outbox_id), None)
    if found is not None:
        memory["awaited"] = _ring(memory["awaited"], list(found), SMALL_RING)


def apply(memory: Mapping[str, Any] | None, ev: Event) -> dict[str, Any]:  # noqa: C901, PLR0912
    """Fold one event (pure): a new dict, or a copy of `memory` when the event is not one the
    memory keeps anything of."""
    if memory is None or memory.get("format") != FORMAT:
        return dict(memory or {})  # another format: left for replay to rewrite, never guessed at
    new = dict(memory)
    data = ev.data
    version = ev.stream_version
    if ev.event_type not in TYPES:
        return new
    if isinstance(data, MessageReceived):
        if data.keyword is None:
            new["reply"] = version
        new["received"] = _ring(new["received"], [version, _at(ev.occurred_at)], SMALL_RING)
    elif isinstance(data, MessageQueued):
        if data.to_participant:
            new["queued"] = {**new["queued"], data.kind: version}
            if data.kind not in HIDDEN_KINDS:
                new["contacted"] = True
            if data.kind == "prompt":
                new["prompt"] = {"body": data.body, "at": _at(ev.occurred_at), "answer": None}
        elif data.kind == "alert":
            new["texted_at"] = _later(new["texted_at"], ev.occurred_at)
        new["messages"] = _ring(new["messages"], [data.outbox_id, version, data.kind, None], RING)
    elif isinstance(data, MessageSent | MessageStatus):
        if isinstance(data, MessageStatus) and data.status not in SENT:
            return new
        if data.outbox_id is None:
            return new
        new["messages"] = _mark_sent(new["messages"], data.outbox_id, version)
        new["awaited"] = _mark_sent(new["awaited"], data.outbox_id, version)
        new["questions"] = [
            [q[0], q[1], version if q[2] is None and q[1]["outbox_id"] == data.outbox_id else q[2]]
            for q in new["questions"]
        ]
    elif isinstance(data, AlertRaised):
        if data.kind == "crisis":
            new["flagged"] = True
            new["crisis"] = version
        if data.notify_supervisors:
            new["alerted_at"] = _later(new["alerted_at"], ev.occurred_at)
            dumped = data.model_dump(mode="json")
            new["alerts"] = _ring(new["alerts"], [data.alert_id, dumped, False], SMALL_RING)
    elif isinstance(data, AlertAcknowledged | AlertResolved):
        new["alerts"] = [[a[0], a[1], a[2] or a[0] == data.alert_id] for a in new["alerts"]]
    elif isinstance(data, StepEntered):
        new["visits"] = int(new["visits"]) + 1
    elif isinstance(data, StepReplied):
        new["flagged"] = False
        new["replies"] = {**new["replies"], data.step: int(new["replies"].get(data.step, 0)) + 1}
    elif isinstance(data, ScheduleCreated):
        entry = [data.schedule_id, data.model_dump(mode="json")]
        if any(s[0] == data.schedule_id for s in new["schedules"]):
            # a re-created id keeps its place, as a dict assignment does
            new["schedules"] = [entry if s[0] == data.schedule_id else s for s in new["schedules"]]
        else:
            new["schedules"] = [*new["schedules"], entry]
    elif isinstance(data, ScheduleDeleted):
        new["schedules"] = [s for s in new["schedules"] if s[0] != data.schedule_id]
    elif isinstance(data, QuestionAsked):
        sent = next((e[3] for e in new["messages"] if e[0] == data.outbox_id), None)
        kept = [*new["questions"], [version, data.model_dump(mode="json"), sent]][-QUESTIONS:]
        ids = {q[1]["question_id"] for q in kept}
        new["questions"] = kept
        new["answered"] = [a for a in new["answered"] if a in ids]
        new["asked_on"] = {**new["asked_on"], data.kind: data.local_date.isoformat()}
    elif isinstance(data, HabitReported | IntensityAnswered):
        if any(q[1]["question_id"] == data.question_id for q in new["questions"]):
            new["answered"] = [*new["answered"], data.question_id]
        if isinstance(data, HabitReported) and new["prompt"] is not None:
            new["prompt"] = {**new["prompt"], "answer": data.answer}
    elif isinstance(data, MeasurementAsked):
        _await(new, data.outbox_id)
    elif isinstance(data, MeasurementRecorded | MeasurementRejected):
        verdicts = dict(new["verdicts"].get(data.measurement) or {})
        verdicts[ev.event_type] = version
        new["verdicts"] = {**new["verdicts"], data.measurement: verdicts}
    elif isinstance(data, TimerScheduled):
        new["timers"] = _ring(new["timers"], [data.timer_id, version], RING)
        about = data.payload.get("about")
        if isinstance(about, str) and about:
            _await(new, about)
    elif isinstance(data, RetrievalDone):
        found = {"library": data.library, "documents": [d.model_dump() for d in data.documents]}
        new["retrievals"] = {**new.get("retrievals", {}), data.name: found}
    return new


class Memory:
    """Questions a turn asks of the memory, answered as the old folds over the stream were."""

    def __init__(self, memory: Mapping[str, Any]) -> None:
        self.m = memory

    def replied_after(self, version: int) -> bool:
        """Whether a message (not a keyword) was received after stream version `version`."""
        return int(self.m["reply"]) > version

    def superseded(self, version: int, kind: str) -> bool:
        """Whether a newer message of `kind` went to the participant after `version`."""
        return int(self.m["queued"].get(kind, 0)) > version

    def _message(self, outbox_id: str) -> list[Any] | None:
        for entry in (*self.m["awaited"], *reversed(self.m["messages"])):
            if entry[0] == outbox_id:
                return list(entry)
        return None

    def queued(self, outbox_id: str) -> tuple[int, str] | None:
        """The stream version and kind of the message queued as `outbox_id`."""
        found = self._message(outbox_id)
        return (int(found[1]), str(found[2])) if found else None

    def sent_version(self, outbox_id: str) -> int | None:
        """The stream version at which the message `outbox_id` was first known sent."""
        found = self._message(outbox_id)
        return int(found[3]) if found and found[3] is not None else None

    def sent_before(self, outbox_id: str, version: int | None) -> bool:
        sent = self.sent_version(outbox_id)
        return sent is not None and (version is None or sent < version)

    def scheduled_version(self, timer_id: str) -> int:
        """The stream version at which `timer_id` was scheduled (0 if not remembered)."""
        return next((int(t[1]) for t in self.m["timers"] if t[0] == timer_id), 0)

    def live_schedules(self) -> dict[str, ScheduleCreated]:
        return {s[0]: ScheduleCreated.model_validate(s[1]) for s in self.m["schedules"]}

    def open_questions(self, before: int | None = None) -> list[QuestionAsked]:
        """As bot.conversation.daily_cycle.questions.open_questions over the stream: the
        unanswered questions of the latest prompt asked before `before`, sent before it."""
        latest: list[list[Any]] = []
        for q in self.m["questions"]:
            if before is None or q[0] < before:
                if latest and latest[-1][1]["prompt_outbox_id"] != q[1]["prompt_outbox_id"]:
                    latest = []
                latest.append(q)
        answered = set(self.m["answered"])
        return [
            QuestionAsked.model_validate(q[1])
            for q in latest
            if q[1]["question_id"] not in answered
            and q[2] is not None
            and (before is None or q[2] < before)
        ]

    def asked_on(self, kind: str, day: date) -> bool:
        return self.m["asked_on"].get(kind) == day.isoformat()

    def last_texted(self) -> datetime | None:
        return _when(self.m["texted_at"])

    def last_alerted(self) -> datetime | None:
        return _when(self.m["alerted_at"])

    @property
    def flagged(self) -> bool:
        return bool(self.m["flagged"])

    @property
    def contacted(self) -> bool:
        return bool(self.m["contacted"])

    @property
    def visits(self) -> int:
        return int(self.m["visits"])

    def said(self, step: str) -> int:
        return int(self.m["replies"].get(step, 0))

    def received_before(self, version: int) -> datetime | None:
        """When the latest remembered message received before stream version `version` came."""
        times = [datetime.fromisoformat(r[1]) for r in self.m["received"] if r[0] < version]
        return max(times) if times else None

    def verdicts_after(self, measurement: str, version: int) -> set[str]:
        kept = self.m["verdicts"].get(measurement) or {}
        return {kind for kind, at in kept.items() if int(at) > version}

    def alert(self, alert_id: str) -> tuple[AlertRaised, bool] | None:
        for found in self.m["alerts"]:
            if found[0] == alert_id:
                return AlertRaised.model_validate(found[1]), bool(found[2])
        return None

    def last_prompt(self) -> Mapping[str, Any] | None:
        return self.m["prompt"]

    def crisis_after(self, version: int) -> bool:
        """Whether a crisis alert was raised after stream version `version`."""
        return int(self.m.get("crisis") or 0) > version

    def retrievals(self) -> dict[str, Mapping[str, Any]]:
        """Retrieval name -> what its last `retrieval.done` found: `library`, and `documents`
        (each id, title, score, rank, digest), best first."""
        return dict(self.m.get("retrievals") or {})


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
