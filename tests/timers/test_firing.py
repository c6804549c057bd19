"""The firing path: one decision per due timer, recorded once, whatever fires it."""

from __future__ import annotations

import threading
from datetime import timedelta

from sqlalchemy import text

from bot.store.event_types.participants import ParticipantStatusChanged, ParticipantUnenrolled
from bot.store.event_types.timers import TimerCancelled
from bot.store.events import participant_stream
from bot.timers import one_shot
from bot.timers.firing import fire_one
from bot.timers.schedules import create_daily
from tests.timers.conftest import Harness
from tests.timers.live import wait_for


def _at(harness: Harness, person: dict, minutes: float, kind: str = "at") -> str:
    due = harness.clock.now() + timedelta(minutes=minutes)
    timer = one_shot.scheduled(person, kind, due, payload={"text": "hello"})
    harness.append(person["participant_id"], [timer])
    return timer.timer_id


def test_a_due_timer_fires_once_however_often_the_firing_path_runs(harness: Harness) -> None:
    person = harness.enroll()
    timer_id = _at(harness, person, 5)
    harness.clock.advance(timedelta(minutes=5))
    first, second = harness.fire(), harness.fire()
    assert [d.outcome for d in first] == ["fired"] and second == []
    fired = harness.events(person["participant_id"], "timer.fired")
    assert [e.data.timer_id for e in fired] == [timer_id]
    assert fired[0].idempotency_key == f"timer:{timer_id}:fired"
    assert fired[0].meta["actor"] == "scheduler"
    assert [w["ref"] for w in harness.pending_work()] == [timer_id]


def test_a_timer_that_is_not_due_yet_does_not_fire(harness: Harness) -> None:
    person = harness.enroll()
    timer_id = _at(harness, person, 5)
    harness.clock.advance(timedelta(minutes=4, seconds=59))
    assert harness.fire() == []
    assert harness.timer(timer_id)["status"] == "scheduled"


def test_a_cancelled_timer_never_fires(harness: Harness) -> None:
    person = harness.enroll()
    timer_id = _at(harness, person, 5)
    harness.append(person["participant_id"], [TimerCancelled(timer_id=timer_id, reason="test")])
    harness.clock.advance(timedelta(hours=1))
    assert harness.fire() == []
    assert harness.events(person["participant_id"], "timer.fired") == []


def test_two_threads_firing_the_same_timer_record_one_firing(harness: Harness) -> None:
    person = harness.enroll()
    timer_id = _at(harness, person, 1)
    harness.clock.advance(timedelta(minutes=1))
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def fire() -> None:
        barrier.wait()
        outcomes.append(
            fire_one(harness.store, timer_id, harness.clock.now(), harness.policy).outcome
        )

    threads = [threading.Thread(target=fire) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["fired", "none", "none", "none"]
    assert len(harness.events(person["participant_id"], "timer.fired")) == 1


def test_a_cancel_committing_while_the_firing_waits_for_the_stream_wins(harness: Harness) -> None:
    person = harness.enroll()
    timer_id = _at(harness, person, 1)
    harness.clock.advance(timedelta(minutes=1))
    outcomes: list[str] = []

    def fire() -> None:
        now = harness.clock.now()
        outcomes.append(fire_one(harness.store, timer_id, now, harness.policy).outcome)

    firing = threading.Thread(target=fire)
    with harness.store.transaction() as tx:
        cancel = TimerCancelled(timer_id=timer_id, reason="operator")
        tx.append(participant_stream(person["participant_id"]), [cancel])
        firing.start()
        if tx.conn.dialect.name == "postgresql":
            wait_for(lambda: _lock_waits(harness), 10, "the firing to wait for the stream")
    firing.join(timeout=30)
    assert outcomes == ["none"]
    assert harness.events(person["participant_id"], "timer.fired") == []


def _lock_waits(harness: Harness) -> int:
    with harness.store.reading() as conn:
        return int(conn.execute(text("SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar())


def test_a_timer_late_within_its_grace_fires_and_records_how_late(harness: Harness) -> None:
    person = harness.enroll()
    timer_id = _at(harness, person, 1)  # kind "at": grace one hour
    harness.clock.advance(timedelta(minutes=51))
    assert [d.outcome for d in harness.fire()] == ["fired"]
    assert harness.timer(timer_id)["late_seconds"] == 50 * 60


def test_a_timer_later_than_its_grace_is_skipped_as_missed(harness: Harness) -> None:
    person = harness.enroll()
    timer_id = _at(harness, person, 1, kind="reminder")  # grace 30 minutes
    harness.clock.advance(timedelta(minutes=32))
    assert [(d.outcome, d.reason) for d in harness.fire()] == [("skipped", "missed")]
    row = harness.timer(timer_id)
    assert (row["status"], row["reason"], row["late_seconds"]) == ("skipped", "missed", 31 * 60)
    assert harness.pending_work() == []  # a skipped timer makes no work


def test_a_missed_daily_occurrence_still_schedules_the_next_one(harness: Harness) -> None:
    person = harness.enroll(timezone="UTC")
    harness.clock.set(harness.clock.now().replace(hour=8, minute=0))
    now = harness.clock.now()
    harness.append(person["participant_id"], create_daily(person, "09:00", "daily", {}, now))
    harness.clock.advance(timedelta(days=2, hours=4))  # down from before 09:00 until 12:00
    assert [(d.outcome, d.reason) for d in harness.fire()] == [("skipped", "missed")]
    (pending,) = harness.timers(person["participant_id"], "scheduled")
    assert pending["due_at"] == now.replace(hour=9) + timedelta(days=3)


def test_a_paused_participants_daily_occurrence_is_skipped_and_the_chain_goes_on(
    harness: Harness,
) -> None:
    person = harness.enroll(timezone="UTC")
    now = harness.clock.now()
    harness.append(person["participant_id"], create_daily(person, "13:00", "daily", {}, now))
    harness.append(person["participant_id"], [ParticipantStatusChanged(status="paused")])
    harness.clock.advance(timedelta(hours=1))
    assert [(d.outcome, d.reason) for d in harness.fire()] == [("skipped", "paused")]
    assert len(harness.timers(person["participant_id"], "scheduled")) == 1


def test_an_unenrolled_participants_timer_is_skipped_and_not_chained(harness: Harness) -> None:
    person = harness.enroll(timezone="UTC")
    now = harness.clock.now()
    harness.append(person["participant_id"], create_daily(person, "13:00", "daily", {}, now))
    harness.append(person["participant_id"], [ParticipantUnenrolled()])
    harness.clock.advance(timedelta(hours=1))
    assert [(d.outcome, d.reason) for d in harness.fire()] == [("skipped", "unenrolled")]
    assert harness.timers(person["participant_id"], "scheduled") == []
