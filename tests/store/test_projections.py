"""The projections' reducers, pure: each event folded into the row it touches, whole rows
compared, and each guard (a row already there, a late verdict, a final status) held."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.conversation import memory
from bot.store.event_types.conversation import LLMCalled, ProfileSaved, StateTransitioned
from bot.store.event_types.interventions import (
    JudgementRecorded,
    MeasurementRecorded,
    MeasurementRejected,
    NoteTaken,
    StepEntered,
    StepTurnTaken,
)
from bot.store.event_types.messages import (
    MessageDeferred,
    MessageFailed,
    MessageQueued,
    MessageReceived,
    MessageSent,
    MessageStatus,
    MessageSuppressed,
)
from bot.store.event_types.participants import (
    ParticipantEnrolled,
    ParticipantOptedIn,
    ParticipantOptedOut,
    ParticipantStatusChanged,
    ParticipantUnenrolled,
    ParticipantUpdated,
    ParticipantWithdrawn,
)
from bot.store.event_types.staff import (
    StaffAdded,
    StaffDisabled,
    StaffPasswordSet,
    StaffSignedIn,
    StaffSignedOut,
)
from bot.store.event_types.takeover import TakeoverEnded, TakeoverStarted
from bot.store.event_types.timers import (
    MeasurementAsked,
    MeasurementMissed,
    TimerCancelled,
    TimerDeferred,
    TimerFired,
    TimerScheduled,
    TimerSkipped,
)
from bot.store.event_types.work import WorkCompleted, WorkFailed, WorkParked, WorkRequested
from bot.store.events import Event, EventData
from bot.store.projections import (
    all_projections,
    outbox,
    participants,
    staff,
    takeovers,
    timers,
    work_items,
)

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
STREAM = "participant:p-1"


def at(minute: int) -> datetime:
    return T0 + timedelta(minutes=minute)


def ev(data: EventData, n: int = 1, stream: str = STREAM, event_id: str | None = None) -> Event:
    """Event number `n` of `stream`: seq and version n, occurred and recorded at minute n."""
    return Event(n, event_id or f"e-{n}", stream, n, data, {}, None, at(n), at(n))


def fold(apply, *datas: EventData, stream: str = STREAM) -> Any:  # noqa: ANN001
    row = None
    for n, data in enumerate(datas, start=1):
        row = apply(row, ev(data, n, stream))
    return row


# The list


def test_all_projections_lists_each_with_participants_first():
    names = [p.name for p in all_projections()]
    assert names[0] == "participants"
    assert sorted(names[1:]) == names[1:]
    assert {"alerts", "outbox", "staff", "takeovers", "timers", "work_items"} <= set(names)
    assert "allocations" in names
    assert [p.name for p in all_projections() if p.stream_head] == ["participants"]


# participants

ENROLLED = ParticipantEnrolled(
    participant_id="p-1",
    phone="+14155552671",
    channel="whatsapp",
    timezone="America/Toronto",
    intervention="demo",
    name="Ana",
)


def test_enrollment_makes_the_whole_row():
    assert fold(participants.apply, ENROLLED) == {
        "participant_id": "p-1",
        "phone": "+14155552671",
        "channel": "whatsapp",
        "status": "active",
        "timezone": "America/Toronto",
        "intervention": "demo",
        "study": None,
        "arm": None,
        "conversation_state": ENROLLED.conversation_state,
        "current_step": None,
        "name": "Ana",
        "gender": None,
        "ethnicity": None,
        "background": None,
        "debug": False,
        "opted_out": False,
        "profile": {},
        "step_counters": {},
        "judgements": {},
        "notes": {},
        "memory": memory.empty(),
        "forms": {},
        "enrolled_at": at(1),
        "last_inbound_at": None,
        "version": 1,
        "updated_at": at(1),
    }


def test_events_before_enrollment_make_no_participant():
    assert fold(participants.apply, ParticipantOptedOut(source="keyword")) is None


def test_an_event_no_case_reads_still_moves_the_version_on_a_copy():
    row = fold(participants.apply, ENROLLED)
    moved = participants.apply(
        row, ev(LLMCalled(call_id="c", purpose="intake", model="m", messages=[]), 2)
    )
    assert moved is not row
    assert (moved["version"], moved["updated_at"]) == (2, at(2))
    assert {k: v for k, v in moved.items() if k not in ("version", "updated_at")} == {
        k: v for k, v in row.items() if k not in ("version", "updated_at")
    }


@pytest.mark.parametrize(
    ("data", "column", "value"),
    [
        (ParticipantUpdated(changes={"timezone": "Europe/London"}), "timezone", "Europe/London"),
        (ParticipantStatusChanged(status="paused"), "status", "paused"),
        (ParticipantWithdrawn(reason="asked", requested_by="participant"), "status", "withdrawn"),
        (ParticipantUnenrolled(), "status", "unenrolled"),
        (ParticipantOptedOut(source="keyword"), "opted_out", True),
        (StateTransitioned(from_state="intake", to_state="step"), "conversation_state", "step"),
    ],
)
def test_each_participant_event_changes_its_column(data, column, value):
    row = fold(participants.apply, ENROLLED, data)
    assert row[column] == value
    assert row["version"] == 2


def test_opting_in_again_clears_the_opt_out():
    row = fold(
        participants.apply,
        ENROLLED,
        ParticipantOptedOut(source="keyword"),
        ParticipantOptedIn(source="keyword"),
    )
    assert row["opted_out"] is False


def test_a_received_message_keeps_the_newest_time_and_never_the_channel():
    sms = MessageReceived(message_sid="SM1", from_address="+1", to_address="+2", channel="sms")
    row = fold(participants.apply, ENROLLED, sms)
    assert (row["last_inbound_at"], row["channel"]) == (at(2), "whatsapp")
    older = Event(3, "e-3", STREAM, 3, sms, {}, None, at(0), at(3))
    assert participants.apply(row, older)["last_inbound_at"] == at(2)
    newer = Event(4, "e-4", STREAM, 4, sms, {}, None, at(9), at(4))
    assert participants.apply(row, newer)["last_inbound_at"] == at(9)
    same = Event(5, "e-5", STREAM, 5, sms, {}, None, at(2), at(5))
    assert participants.apply(row, same)["last_inbound_at"] == at(2)


def test_a_profile_save_clears_then_sets():
    row = fold(
        participants.apply,
        ENROLLED,
        ProfileSaved(changes={"goal": "walk", "time": "9"}),
        ProfileSaved(changes={"goal": "run"}, cleared=["time"]),
    )
    assert row["profile"] == {"goal": "run"}


def test_a_reducer_case_cannot_be_registered_twice():
    with pytest.raises(ValueError, match="defined twice"):
        participants.register(StepEntered.event_type)(lambda row, event: row)
    assert participants.CASES[StepEntered.event_type] is not None


def test_the_key_is_the_participant_of_the_stream():
    assert participants.key(ev(ENROLLED)) == "p-1"
    assert participants.PROJECTION.stream_head is True


def _entered(step: str, via: str = "transition", stack: tuple = (), turns: int = 0) -> StepEntered:
    return StepEntered(intervention="demo", step=step, via=via, stack=list(stack), turns=turns)


def test_entering_steps_counts_visits_except_returns_and_notes_interrupts():
    row = fold(
        participants.apply,
        ENROLLED,
        _entered("welcome", via="root"),
        StepTurnTaken(step="welcome", turn=1),
        StepTurnTaken(step="welcome", turn=2),
        _entered("crisis", via="interrupt", stack=({"step": "welcome"},)),
        _entered("welcome", via="return", turns=2),
    )
    counters = row["step_counters"]
    assert row["current_step"] == "welcome"
    assert counters["visits"] == {"welcome": 1, "crisis": 1}
    assert counters["interrupted_at"] == {"crisis": 2}
    assert counters["total_turns"] == 2
    assert (counters["step"], counters["turns"], counters["stack"]) == ("welcome", 2, [])
    assert counters["entered_at"] == at(6).isoformat()


def test_a_step_entered_at_a_given_time_keeps_it():
    entered = StepEntered(intervention="demo", step="tip", entered_at=at(42))
    row = fold(participants.apply, ENROLLED, entered)
    assert row["step_counters"]["entered_at"] == at(42).isoformat()
    assert row["step_counters"]["visits"] == {"tip": 1}
    assert row["step_counters"]["interrupted_at"] == {}


def test_judgements_and_notes_accumulate_by_name():
    row = fold(
        participants.apply,
        ENROLLED,
        JudgementRecorded(judgement="risk", result={"flag": True}),
        JudgementRecorded(judgement="mood", result={"score": 3}),
        NoteTaken(note="n", values={"GOAL": "walk"}),
        NoteTaken(note="n", values={"TIME": "9"}),
    )
    assert row["judgements"] == {"risk": {"flag": True}, "mood": {"score": 3}}
    assert row["notes"] == {"GOAL": "walk", "TIME": "9"}


ASKED = MeasurementAsked(measurement="done", timer_id="t", outbox_id="o-9", answer_by=at(60))


def test_a_question_asked_waits_for_its_answer():
    row = fold(participants.apply, ENROLLED, ASKED)
    assert row["step_counters"]["asking"] == {
        "measurement": "done",
        "outbox_id": "o-9",
        "answer_by": at(60).isoformat(),
        "attempts": 0,
    }


def test_an_answer_records_the_value_and_ends_the_wait():
    row = fold(
        participants.apply, ENROLLED, ASKED, MeasurementRecorded(measurement="done", value=1)
    )
    assert row["step_counters"]["measurements"] == {"done": 1}
    assert row["step_counters"]["asking"] is None


def test_an_answer_to_another_question_leaves_the_wait():
    other = MeasurementRecorded(measurement="mood", value=3)
    row = fold(participants.apply, ENROLLED, ASKED, other)
    assert row["step_counters"]["measurements"] == {"mood": 3}
    assert row["step_counters"]["asking"]["measurement"] == "done"


def test_a_missed_question_ends_the_wait_only_for_itself():
    missed = fold(
        participants.apply,
        ENROLLED,
        ASKED,
        MeasurementMissed(measurement="done", timer_id="t", outbox_id="o-9"),
    )
    assert missed["step_counters"]["asking"] is None
    other = MeasurementMissed(measurement="mood", timer_id="t", outbox_id="o-9")
    assert fold(participants.apply, ENROLLED, ASKED, other)["step_counters"]["asking"] is not None


def test_a_rejected_answer_counts_attempts_and_a_final_one_ends_the_wait():
    again = MeasurementRejected(measurement="done", reason="?", attempt=2)
    row = fold(participants.apply, ENROLLED, ASKED, again)
    assert row["step_counters"]["asking"]["attempts"] == 2
    final = MeasurementRejected(measurement="done", reason="?", attempt=3, final=True)
    assert participants.apply(row, ev(final, 4))["step_counters"]["asking"] is None


def test_a_rejection_for_another_question_or_none_asked_changes_nothing():
    other = MeasurementRejected(measurement="mood", reason="?", attempt=2)
    row = fold(participants.apply, ENROLLED, ASKED, other)
    assert row["step_counters"]["asking"]["attempts"] == 0
    alone = fold(participants.apply, ENROLLED, other)
    assert "asking" not in alone["step_counters"]


def test_fold_replays_a_stream_from_nothing():
    events = [ev(ENROLLED, 1), ev(ParticipantOptedOut(source="keyword"), 2)]
    assert participants.fold(events) == participants.apply(
        participants.apply(None, events[0]), events[1]
    )
    assert participants.fold([]) is None


# outbox

QUEUED = MessageQueued(outbox_id="o-1", to_address="+1", channel="sms", body="Hi")


def test_a_queued_message_is_pending_with_its_position_and_once_only():
    row = fold(outbox.apply, QUEUED)
    assert row == {
        "outbox_id": "o-1",
        "participant_id": "p-1",
        "stream_id": STREAM,
        "position": 1,
        "to_address": "+1",
        "channel": "sms",
        "kind": "reply",
        "body": "Hi",
        "content_sid": None,
        "content_variables": None,
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": at(1),
        "provider_sid": None,
        "error_code": None,
        "error_message": None,
        "queued_at": at(1),
        "sent_at": None,
        "updated_at": at(1),
    }
    assert outbox.apply(row, ev(QUEUED, 2)) is row
    assert outbox.apply(None, ev(MessageSent(outbox_id="o-1", provider_sid="SM1"), 1)) is None


def test_outbox_keys_only_its_events():
    assert outbox.key(ev(QUEUED)) == "o-1"
    assert outbox.key(ev(ParticipantOptedOut(source="keyword"))) is None
    assert outbox.key(ev(MessageStatus(provider_sid="SM1", status="sent"))) is None


def test_a_send_records_the_provider_sid_and_attempt():
    row = fold(outbox.apply, QUEUED, MessageSent(outbox_id="o-1", provider_sid="SM1", attempt=2))
    assert (row["status"], row["provider_sid"], row["attempts"], row["sent_at"]) == (
        "sent",
        "SM1",
        2,
        at(2),
    )


@pytest.mark.parametrize(
    ("failure", "status"),
    [
        (MessageFailed(outbox_id="o-1", error_message="x", permanent=True), "failed"),
        (
            MessageFailed(
                outbox_id="o-1", error_message="x", permanent=False, outcome_unknown=True
            ),
            "unknown",
        ),
        (MessageFailed(outbox_id="o-1", error_message="x", permanent=False), "pending"),
    ],
)
def test_a_failure_is_permanent_unknown_or_retried(failure, status):
    row = fold(outbox.apply, QUEUED, failure)
    assert (row["status"], row["error_message"], row["next_attempt_at"]) == (status, "x", at(1))


def test_a_retried_failure_moves_the_next_attempt():
    failed = MessageFailed(
        outbox_id="o-1",
        error_message="x",
        error_code=429,
        attempt=1,
        retry_at=at(30),
        permanent=False,
    )
    row = fold(outbox.apply, QUEUED, failed)
    assert (row["next_attempt_at"], row["error_code"], row["attempts"]) == (at(30), 429, 1)


@pytest.mark.parametrize(
    "verdict",
    [
        MessageFailed(outbox_id="o-1", error_message="late", permanent=True),
        MessageSuppressed(outbox_id="o-1", reason="opted out"),
        MessageDeferred(outbox_id="o-1", reason="quiet hours", until=at(99)),
    ],
)
def test_a_late_verdict_never_undoes_a_send(verdict):
    sent = fold(outbox.apply, QUEUED, MessageSent(outbox_id="o-1", provider_sid="SM1"))
    assert outbox.apply(sent, ev(verdict, 3)) is sent


def test_suppressed_and_deferred_messages_say_why():
    suppressed = fold(outbox.apply, QUEUED, MessageSuppressed(outbox_id="o-1", reason="opted out"))
    assert (suppressed["status"], suppressed["error_message"]) == ("suppressed", "opted out")
    deferred = fold(
        outbox.apply, QUEUED, MessageDeferred(outbox_id="o-1", reason="q", until=at(99))
    )
    assert (deferred["status"], deferred["error_message"], deferred["next_attempt_at"]) == (
        "deferred",
        "q",
        at(99),
    )
    # a deferred message is still unsent: a later verdict applies
    failed = MessageFailed(outbox_id="o-1", error_message="x", permanent=True)
    assert outbox.apply(deferred, ev(failed, 3))["status"] == "failed"


def test_status_reports_move_forward_only_and_keep_the_first_sid_and_code():
    sent = fold(outbox.apply, QUEUED, MessageSent(outbox_id="o-1", provider_sid="SM1"))
    delivered = outbox.apply(
        sent, ev(MessageStatus(provider_sid="SM2", status="delivered", outbox_id="o-1"), 3)
    )
    assert (delivered["status"], delivered["provider_sid"]) == ("delivered", "SM1")
    back = outbox.apply(delivered, ev(MessageStatus(provider_sid="SM1", status="sent"), 4))
    assert back["status"] == "delivered"
    failed = outbox.apply(
        sent, ev(MessageStatus(provider_sid="SM1", status="undelivered", error_code=30003), 3)
    )
    assert (failed["status"], failed["error_code"]) == ("undelivered", 30003)
    later = outbox.apply(failed, ev(MessageStatus(provider_sid="SM1", status="read"), 4))
    assert (later["status"], later["error_code"]) == ("undelivered", 30003)


def test_a_send_given_up_as_unknown_is_settled_by_the_provider():
    unknown = MessageFailed(outbox_id="o-1", error_message="timeout", permanent=True)
    row = fold(outbox.apply, QUEUED, unknown)
    report = MessageStatus(provider_sid="SM1", status="accepted", outbox_id="o-1")
    settled = outbox.apply(row, ev(report, 3))
    assert (settled["status"], settled["provider_sid"]) == ("accepted", "SM1")
    sent = outbox.apply(row, ev(MessageSent(outbox_id="o-1", provider_sid="SM1"), 3))
    assert (sent["status"], sent["provider_sid"]) == ("sent", "SM1")


@pytest.mark.parametrize(
    ("current", "new", "after"),
    [
        ("sent", "delivered", "delivered"),
        ("delivered", "sent", "delivered"),
        ("sent", "sent", "sent"),
        ("failed", "delivered", "failed"),
        ("delivered", "undelivered", "undelivered"),
        ("unknown", "accepted", "accepted"),
        ("pending", "unknown", "pending"),
        ("queued", "mystery", "queued"),
        ("mystery", "queued", "queued"),
        ("pending", "accepted", "accepted"),
        ("accepted", "scheduled", "accepted"),
        ("queued", "sending", "sending"),
        ("sending", "queued", "sending"),
        ("deferred", "unknown", "deferred"),
        ("pending", "scheduled", "scheduled"),
        ("accepted", "queued", "queued"),
        ("unknown", "deferred", "unknown"),
        ("sending", "sent", "sent"),
        ("delivered", "read", "read"),
    ],
)
def test_advance(current, new, after):
    assert outbox.advance(current, new) == after


# timers

SCHEDULED = TimerScheduled(timer_id="t-1", kind="prompt", due_at=at(60), payload={"a": 1})


def test_a_scheduled_timer_row_once_only():
    row = fold(timers.apply, SCHEDULED)
    assert row == {
        "timer_id": "t-1",
        "participant_id": "p-1",
        "kind": "prompt",
        "due_at": at(60),
        "status": "scheduled",
        "scope": SCHEDULED.scope,
        "payload": {"a": 1},
        "local_time": None,
        "timezone": None,
        "scheduled_at": at(1),
        "fired_at": None,
        "late_seconds": None,
        "reason": None,
        "updated_at": at(1),
    }
    assert timers.apply(row, ev(SCHEDULED, 2)) is row
    assert timers.apply(None, ev(TimerFired(timer_id="t-1"), 1)) is None
    assert timers.key(ev(SCHEDULED)) == "t-1"
    assert timers.key(ev(QUEUED)) is None


def test_timer_lifecycle():
    deferred = fold(
        timers.apply, SCHEDULED, TimerDeferred(timer_id="t-1", due_at=at(90), reason="q")
    )
    assert (deferred["status"], deferred["due_at"], deferred["reason"]) == (
        "scheduled",
        at(90),
        "q",
    )
    fired = fold(timers.apply, SCHEDULED, TimerFired(timer_id="t-1", late_seconds=1.5))
    assert (fired["status"], fired["fired_at"], fired["late_seconds"]) == ("fired", at(2), 1.5)
    cancelled = fold(timers.apply, SCHEDULED, TimerCancelled(timer_id="t-1", reason="stop"))
    assert (cancelled["status"], cancelled["reason"]) == ("cancelled", "stop")
    skipped = fold(
        timers.apply, SCHEDULED, TimerSkipped(timer_id="t-1", reason="r", late_seconds=2)
    )
    assert (skipped["status"], skipped["reason"], skipped["late_seconds"]) == ("skipped", "r", 2)


def test_a_fired_timer_can_still_be_skipped_but_nothing_else_moves_a_final_one():
    fired = fold(timers.apply, SCHEDULED, TimerFired(timer_id="t-1", late_seconds=1.5))
    skipped = timers.apply(fired, ev(TimerSkipped(timer_id="t-1", reason="answered"), 3))
    assert (skipped["status"], skipped["fired_at"], skipped["late_seconds"]) == (
        "skipped",
        at(2),
        1.5,
    )
    for late in (TimerCancelled(timer_id="t-1", reason="x"), TimerFired(timer_id="t-1")):
        assert timers.apply(fired, ev(late, 3)) is fired
    cancelled = fold(timers.apply, SCHEDULED, TimerCancelled(timer_id="t-1", reason="stop"))
    assert timers.apply(cancelled, ev(TimerSkipped(timer_id="t-1", reason="x"), 3)) is cancelled


def test_pending_rows_folds_from_the_start_rows_or_nothing():
    other = TimerScheduled(timer_id="t-2", kind="prompt", due_at=at(70))
    events = [ev(SCHEDULED, 1), ev(other, 2), ev(TimerFired(timer_id="t-1"), 3), ev(QUEUED, 4)]
    assert [r["timer_id"] for r in timers.pending_rows(events)] == ["t-2"]
    start = [{**fold(timers.apply, other), "timer_id": "t-2"}]
    cancel = [ev(TimerCancelled(timer_id="t-2", reason="x"), 5)]
    assert timers.pending_rows(cancel, start) == []
    assert [r["timer_id"] for r in timers.pending_rows([], start)] == ["t-2"]


# work items


def test_a_message_an_enrollment_a_timer_and_a_request_make_work_in_order():
    sms = MessageReceived(message_sid="SM1", from_address="+1", to_address="+2", channel="sms")
    made = [
        (sms, ("inbound", "e-1")),
        (ENROLLED, ("enrolled", "e-1")),
        (TimerFired(timer_id="t-1"), ("timer", "t-1")),
        (WorkRequested(kind="command"), ("command", "e-1")),
    ]
    for data, (kind, ref) in made:
        event = ev(data)
        assert work_items.key(event) == "e-1"
        assert work_items.apply(None, event) == {
            "work_id": "e-1",
            "participant_id": "p-1",
            "kind": kind,
            "ref": ref,
            "seq": 1,
            "status": "pending",
            "attempts": 0,
            "last_error": None,
            "available_at": at(1),
            "created_at": at(1),
            "updated_at": at(1),
        }


def test_a_keyword_other_events_and_other_streams_make_no_work():
    stop = MessageReceived(
        message_sid="SM1", from_address="+1", to_address="+2", channel="sms", keyword="STOP"
    )
    for data in (stop, QUEUED):
        assert work_items.key(ev(data)) is None
        assert work_items.apply(None, ev(data)) is None
    assert work_items.key(ev(ENROLLED, stream="system")) is None


def test_work_completes_fails_and_parks():
    row = work_items.apply(None, ev(ENROLLED))
    done = work_items.apply(row, ev(WorkCompleted(work_id="e-1"), 2))
    assert work_items.key(ev(WorkCompleted(work_id="e-1"), 2)) == "e-1"
    assert (done["status"], done["updated_at"]) == ("done", at(2))
    failed = work_items.apply(
        row, ev(WorkFailed(work_id="e-1", error="x", attempt=2, retry_at=at(9)), 2)
    )
    assert (failed["status"], failed["attempts"], failed["last_error"], failed["available_at"]) == (
        "pending",
        2,
        "x",
        at(9),
    )
    parked = work_items.apply(row, ev(WorkParked(work_id="e-1", error="y", attempts=5), 2))
    assert (parked["status"], parked["attempts"], parked["last_error"]) == ("parked", 5, "y")
    assert work_items.apply(row, ev(QUEUED, 2)) is row


# staff and takeovers


def test_staff_accounts():
    added = StaffAdded(email="a@x.org", role="researcher", by="cli")
    row = fold(staff.apply, added, stream="staff:a@x.org")
    assert row == {
        "email": "a@x.org",
        "role": "researcher",
        "status": "active",
        "added_by": "cli",
        "added_at": at(1),
        "password_set_at": None,
        "last_signed_in_at": None,
        "updated_at": at(1),
    }
    assert staff.apply(row, ev(added, 2)) is row
    assert staff.apply(None, ev(StaffSignedIn(email="a@x.org"))) is None
    assert staff.apply(row, ev(StaffPasswordSet(email="a@x.org"), 2))["password_set_at"] == at(2)
    assert staff.apply(row, ev(StaffSignedIn(email="a@x.org"), 3))["last_signed_in_at"] == at(3)
    assert staff.apply(row, ev(StaffDisabled(email="a@x.org", by="cli"), 4))["status"] == "disabled"
    assert staff.apply(row, ev(StaffSignedOut(email="a@x.org"), 5)) is row
    assert staff.key(ev(added)) == "a@x.org"
    assert staff.key(ev(QUEUED)) is None
    assert staff.staff_stream("a@x.org") == "staff:a@x.org"


def test_takeovers_first_holder_keeps_it_until_it_ends():
    started = fold(takeovers.apply, TakeoverStarted(by="staff:a", reason="crisis"))
    assert started == {
        "participant_id": "p-1",
        "status": "active",
        "started_by": "staff:a",
        "reason": "crisis",
        "started_at": at(1),
        "ended_by": None,
        "ended_at": None,
        "updated_at": at(1),
    }
    assert takeovers.apply(started, ev(TakeoverStarted(by="staff:b"), 2)) is started
    ended = takeovers.apply(started, ev(TakeoverEnded(by="staff:a"), 2))
    assert (ended["status"], ended["ended_by"], ended["ended_at"]) == ("ended", "staff:a", at(2))
    assert takeovers.apply(ended, ev(TakeoverEnded(by="staff:b"), 3)) is ended
    again = takeovers.apply(ended, ev(TakeoverStarted(by="staff:b"), 3))
    assert (again["status"], again["started_by"]) == ("active", "staff:b")
    assert takeovers.apply(None, ev(TakeoverEnded(by="staff:a"))) is None
    assert takeovers.key(ev(TakeoverEnded(by="staff:a"))) == "p-1"
    assert takeovers.key(ev(QUEUED)) is None


def test_an_event_a_reducer_does_not_read_leaves_its_row_as_it_is():
    queued = fold(outbox.apply, QUEUED)
    scheduled = fold(timers.apply, SCHEDULED)
    other = ev(ParticipantOptedOut(source="keyword"), 2)
    assert outbox.apply(queued, other) is queued
    assert timers.apply(scheduled, other) is scheduled


def test_an_interrupt_entered_before_any_turn_is_at_turn_zero():
    row = fold(participants.apply, ENROLLED, _entered("crisis", via="interrupt"))
    assert row["step_counters"]["interrupted_at"] == {"crisis": 0}


def test_a_status_without_a_rank_leaves_a_pending_message_pending():
    row = fold(outbox.apply, QUEUED, MessageStatus(provider_sid="SM1", status="receiving"))
    assert (row["status"], row["provider_sid"]) == ("pending", "SM1")


def test_answers_to_several_questions_are_all_kept():
    row = fold(
        participants.apply,
        ENROLLED,
        MeasurementRecorded(measurement="done", value=1),
        MeasurementRecorded(measurement="mood", value=3),
        MeasurementRecorded(measurement="done", value=0),
    )
    assert row["step_counters"]["measurements"] == {"done": 0, "mood": 3}


def test_a_projection_cannot_be_changed_once_made():
    with pytest.raises(dataclasses.FrozenInstanceError):
        outbox.PROJECTION.name = "other"  # type: ignore[misc]
