"""The conversation memory (bot.conversation.memory) answers every question a turn asks of it
exactly as the folds over the whole stream it replaced answer it, at every point of a long,
varied, random stream; and a row's memory is the fold the participants projection keeps."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import pytest

from bot.conversation import memory
from bot.conversation.daily_cycle import questions
from bot.conversation.supervisors import last_texted
from bot.conversation.transcript_llm import shown
from bot.interventions.interpreter.context import flagged
from bot.store import delivery
from bot.store.event_types.alerts import AlertAcknowledged, AlertRaised
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
from bot.store.event_types.schedules import ScheduleCreated, ScheduleDeleted
from bot.store.event_types.timers import MeasurementAsked, TimerScheduled
from bot.store.events import Event, EventData, new_id
from bot.store.projections import participants
from bot.timers import history
from tests.factories import enrolled

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
KINDS = ("reply", "prompt", "reminder", "question", "alert", "debug")


class Stream:
    """A random participant stream, as recorded events."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.events: list[Event] = []
        self.outbox: list[str] = []
        self.schedules: list[str] = []
        self.questions: list[str] = []
        self.alerts: list[str] = []
        self.prompt = new_id()
        self.asked: dict[str, int] = {}

    def add(self, data: EventData) -> None:
        n = len(self.events) + 1
        at = START + timedelta(minutes=7 * n + self.rng.randint(0, 5))
        self.events.append(Event(n, new_id(), "participant-x", n, data, {}, None, at, at))

    def step(self) -> None:  # noqa: C901, PLR0912 - one random event of many kinds
        rng = self.rng
        pick = rng.randrange(17)
        if pick < 3:
            keyword = rng.choice([None, None, None, "HELP"])
            self.add(
                MessageReceived(
                    message_sid=new_id(),
                    from_address="+14155552671",
                    to_address="+15005550006",
                    channel="sms",
                    body="yes",
                    keyword=keyword,
                )
            )
        elif pick < 6:
            kind = rng.choice(KINDS)
            outbox_id = new_id()
            self.outbox.append(outbox_id)
            self.add(
                MessageQueued(
                    outbox_id=outbox_id,
                    to_address="+14155552671",
                    channel="sms",
                    kind=kind,
                    body=f"text {len(self.events)}",
                    to_participant=kind != "alert" or rng.random() < 0.2,
                    alert_severity=rng.choice(["warning", "critical"]) if kind == "alert" else None,
                )
            )
            if kind == "prompt":
                self.prompt = outbox_id
        elif pick == 6 and self.outbox:
            outbox_id = rng.choice(self.outbox[-10:])
            if rng.random() < 0.5:
                self.add(MessageSent(outbox_id=outbox_id, provider_sid="SM1"))
            else:
                status = rng.choice(["sent", "delivered", "failed", "queued"])
                self.add(MessageStatus(provider_sid="SM1", status=status, outbox_id=outbox_id))
        elif pick == 7:
            if self.asked.get(self.prompt, 0) >= 2:  # two questions a prompt, as the cycle asks
                self.prompt = new_id()
            self.asked[self.prompt] = self.asked.get(self.prompt, 0) + 1
            kind = rng.choice(["did_you_do_it", "intensity"])
            outbox_id = new_id()
            self.outbox.append(outbox_id)
            self.add(MessageQueued(outbox_id=outbox_id, to_address="+1", channel="sms"))
            question_id = new_id()
            self.questions.append(question_id)
            self.add(
                QuestionAsked(
                    question_id=question_id,
                    kind=kind,
                    options=["Done", "Next time"],
                    outbox_id=outbox_id,
                    prompt_outbox_id=self.prompt,
                    local_date=date(2026, 1, 5) + timedelta(days=len(self.events) // 40),
                )
            )
        elif pick == 8 and self.questions:
            question_id = rng.choice(self.questions[-4:])
            if rng.random() < 0.5:
                self.add(HabitReported(question_id=question_id, done=True, answer="Done"))
            else:
                self.add(
                    IntensityAnswered(
                        question_id=question_id, answer="Keep", previous="low", level="low"
                    )
                )
        elif pick == 9:
            alert_id = new_id()
            self.alerts.append(alert_id)
            self.add(
                AlertRaised(
                    alert_id=alert_id,
                    kind=rng.choice(["crisis", "tool"]),
                    summary="s",
                    notify_supervisors=rng.random() < 0.6,
                )
            )
        elif pick == 10 and self.alerts:
            self.add(
                AlertAcknowledged(
                    alert_id=rng.choice(self.alerts[-3:]), by="staff:a@b.c", via="console"
                )
            )
        elif pick == 11:
            self.add(StepEntered(intervention="i", step=rng.choice(["a", "b", "c"])))
        elif pick == 12:
            self.add(StepReplied(step=rng.choice(["a", "b", "c"])))
        elif pick == 13:
            if self.schedules and rng.random() < 0.4:
                self.add(ScheduleDeleted(schedule_id=self.schedules.pop(0)))
            else:
                schedule_id = rng.choice([new_id(), *self.schedules[-1:]])
                if schedule_id not in self.schedules:
                    self.schedules.append(schedule_id)
                self.add(ScheduleCreated(schedule_id=schedule_id, when="09:00"))
        elif pick == 14 and self.outbox:
            about = rng.choice(self.outbox[-3:])
            self.add(
                TimerScheduled(
                    timer_id=new_id(),
                    kind="reminder",
                    due_at=START + timedelta(days=1),
                    payload={"about": about},
                )
            )
        elif pick == 15 and self.outbox:
            self.add(
                MeasurementAsked(
                    measurement="mood",
                    timer_id=new_id(),
                    outbox_id=self.outbox[-1],
                    answer_by=START + timedelta(days=30),
                )
            )
        elif pick == 16:
            if rng.random() < 0.5:
                self.add(MeasurementRecorded(measurement="mood", value=3))
            else:
                self.add(MeasurementRejected(measurement="mood", reason="no"))


def _feedback_prompt(events: list[Event]) -> tuple[str | None, str | None]:
    """modules/feedback.py's fold before the memory: the last prompt and the answer since."""
    sent, answer = None, None
    for ev in events:
        data = ev.data
        if isinstance(data, MessageQueued) and data.to_participant and data.kind == "prompt":
            sent, answer = data.body, None
        elif isinstance(data, HabitReported) and sent is not None:
            answer = data.answer
    return sent, answer


def _compare(events: list[Event], rng: random.Random) -> None:  # noqa: C901, PLR0912
    mem = memory.Memory(memory.fold(events))
    last = events[-1].stream_version
    versions = [0, rng.randint(0, last), max(0, last - 3), last]
    for v in versions:
        assert mem.replied_after(v) == history.replied_after(events, v)
        for kind in KINDS:
            assert mem.superseded(v, kind) == history.superseded(events, v, kind)
        for name in ("mood", "other"):
            assert mem.verdicts_after(name, v) == {
                e.event_type
                for e in events
                if e.stream_version > v
                and e.event_type in ("measurement.recorded", "measurement.rejected")
                and getattr(e.data, "measurement", None) == name
            }
    # Open questions, before any point since the last questions remembered were asked (a
    # message recorded before a newer prompt's questions still answers the older ones).
    asked = [e for e in events if isinstance(e.data, QuestionAsked)]
    kept = asked[-memory.QUESTIONS :]
    since = kept[2].stream_version if len(kept) > 2 else 0
    for before in (None, since, rng.randint(since, last + 1), last + 1):
        assert [q.question_id for q in mem.open_questions(before)] == [
            q.question_id for q in questions.open_questions(events, before)
        ]
    assert list(mem.live_schedules()) == list(history.live_schedules(events))
    assert mem.live_schedules() == history.live_schedules(events)
    assert mem.flagged == flagged(events)
    assert mem.texted_by_severity() == last_texted(events)
    assert mem.contacted == any(isinstance(e.data, MessageQueued) and shown(e.data) for e in events)
    alerted = [
        e.occurred_at
        for e in events
        if isinstance(e.data, AlertRaised) and e.data.notify_supervisors
    ]
    assert mem.last_alerted() == (max(alerted) if alerted else None)
    for step in ("a", "b", "c"):
        assert mem.said(step) == sum(
            isinstance(e.data, StepReplied) and e.data.step == step for e in events
        )
    assert mem.visits == sum(isinstance(e.data, StepEntered) for e in events)
    for kind in ("did_you_do_it", "intensity"):
        # The question a prompt asks: was one asked today (the latest local date, or later)?
        asked = [e.data.local_date for e in events if isinstance(e.data, QuestionAsked)]
        latest = max((d for d in asked), default=date(2026, 1, 5))
        for day in (latest, latest + timedelta(days=1)):
            assert mem.asked_on(kind, day) == questions.asked_on(events, kind, day)
    prompt = mem.last_prompt()
    assert _feedback_prompt(events) == (
        (prompt["body"], prompt["answer"]) if prompt else (None, None)
    )
    # References within their ring: the last RING messages queued, the last RING timers,
    # every message a measurement or timer awaits among the last SMALL_RING.
    queued = [e for e in events if isinstance(e.data, MessageQueued)]
    for ev in queued[-memory.RING :]:
        outbox_id = ev.data.outbox_id
        assert mem.queued(outbox_id) == (ev.stream_version, ev.data.kind)
        assert mem.sent_version(outbox_id) == delivery.sent_version(events, outbox_id)
    timers = [e for e in events if isinstance(e.data, TimerScheduled)]
    for ev in timers[-memory.RING :]:
        tid = ev.data.timer_id
        assert mem.scheduled_version(tid) == history.scheduled_version(events, tid)
    received = [e for e in events if isinstance(e.data, MessageReceived)]
    for ev in received[-memory.SMALL_RING + 1 :]:
        earlier = [r.occurred_at for r in received if r.stream_version < ev.stream_version]
        assert mem.received_before(ev.stream_version) == (max(earlier) if earlier else None)
    raised = [e for e in events if isinstance(e.data, AlertRaised) and e.data.notify_supervisors]
    for ev in raised[-memory.SMALL_RING :]:
        found = mem.alert(ev.data.alert_id)
        closed = any(
            isinstance(e.data, AlertAcknowledged) and e.data.alert_id == ev.data.alert_id
            for e in events
        )
        assert found == (ev.data, closed)


@pytest.mark.parametrize("seed", range(6))
def test_the_memory_answers_as_the_folds_over_the_whole_stream_did(seed: int) -> None:
    stream = Stream(seed)
    rng = random.Random(seed + 100)
    for n in range(600):
        stream.step()
        if stream.events and (n % 37 == 0 or n == 599):
            _compare(stream.events, rng)


def test_the_participants_row_keeps_the_memory_and_a_row_without_one_is_left_alone() -> None:
    stream = Stream(7)
    first = enrolled()
    at = START - timedelta(minutes=1)
    events = [Event(0, new_id(), "participant-x", 0, first, {}, None, at, at)]
    for _ in range(300):
        stream.step()
    events += stream.events
    row = participants.fold(events)
    assert row is not None
    assert row["memory"] == memory.fold(stream.events)
    assert memory.of(row) == row["memory"]
    # A row from before the memory (migration 0015) gets none folded from a few events: it is
    # read as missing (the worker folds the stream; replay --repair writes it), never guessed.
    legacy = {**row, "memory": None}
    for ev in stream.events[-5:]:
        legacy = participants.apply(legacy, ev)
    assert legacy["memory"] is None and memory.of(legacy) is None
    other_format = {**row, "memory": {**row["memory"], "v": memory.VERSION + 1}}
    assert memory.of(participants.apply(other_format, stream.events[-1])) is None
