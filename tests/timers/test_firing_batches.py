"""A burst of due timers fires in one transaction, each timer still decided and recorded once."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from sqlalchemy import event

from bot.store.database import READ_ONLY, make_engine
from bot.store.event_store import EventStore
from bot.store.event_types.participants import ParticipantStatusChanged
from bot.store.event_types.timers import TimerCancelled
from bot.store.events import SYSTEM_STREAM, participant_stream
from bot.timers import one_shot
from bot.timers.firing import BATCH, fire_many
from bot.timers.schedules import create_daily
from tests.factories import received
from tests.store.statements import statements
from tests.timers.conftest import Harness


def _due_now(harness: Harness, person: dict, count: int) -> list[str]:
    due = harness.clock.now() + timedelta(minutes=1)
    made = [one_shot.scheduled(person, "at", due, payload={"text": "hi"}) for _ in range(count)]
    harness.append(person["participant_id"], made)
    return [t.timer_id for t in made]


def _commits(harness: Harness, run: Any) -> int:
    """Write transactions committed meanwhile (a read-only one ends by COMMIT on PostgreSQL,
    EventStore._begun, and is not counted)."""
    seen: list[int] = []

    def counted(conn: Any) -> None:
        if not conn.get_execution_options().get(READ_ONLY):
            seen.append(1)

    event.listen(harness.store.engine, "commit", counted)
    try:
        run()
    finally:
        event.remove(harness.store.engine, "commit", counted)
    return len(seen)


def test_a_burst_of_due_timers_is_recorded_in_one_commit(harness: Harness) -> None:
    people = [harness.enroll() for _ in range(3)]
    ids = [t for person in people for t in _due_now(harness, person, 4)]
    harness.clock.advance(timedelta(minutes=1))
    decisions: list = []
    commits = _commits(harness, lambda: decisions.extend(harness.fire()))
    assert commits == 1
    assert sorted(d.events[0].timer_id for d in decisions) == sorted(ids)
    assert {d.outcome for d in decisions} == {"fired"}
    for person in people:
        fired = harness.events(person["participant_id"], "timer.fired")
        assert len(fired) == 4
    assert sorted(w["ref"] for w in harness.pending_work()) == sorted(ids)


def test_firing_a_batch_again_records_nothing(harness: Harness) -> None:
    person = harness.enroll()
    ids = _due_now(harness, person, 3)
    harness.clock.advance(timedelta(minutes=1))
    first = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
    again = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
    assert [d.outcome for d in first] == ["fired"] * 3
    assert [d.outcome for d in again] == ["none"] * 3
    assert len(harness.events(person["participant_id"], "timer.fired")) == 3


def test_each_timer_in_a_batch_is_decided_on_its_own_participant(harness: Harness) -> None:
    active, paused = harness.enroll(), harness.enroll()
    harness.append(paused["participant_id"], [ParticipantStatusChanged(status="paused")])
    ids = _due_now(harness, active, 1) + _due_now(harness, paused, 1)
    harness.clock.advance(timedelta(minutes=1))
    decisions = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
    assert [(d.outcome, d.reason) for d in decisions] == [("fired", None), ("skipped", "paused")]


def _statements(harness: Harness, run: Any) -> list[str]:
    seen: list[str] = []

    def counted(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement.split(None, 1)[0].upper())

    event.listen(harness.store.engine, "before_cursor_execute", counted)
    try:
        run()
    finally:
        event.remove(harness.store.engine, "before_cursor_execute", counted)
    return seen


def test_a_burst_larger_than_a_batch_commits_once_per_batch(harness: Harness) -> None:
    people = [harness.enroll() for _ in range(25)]
    ids = [t for person in people for t in _due_now(harness, person, 10)]
    harness.clock.advance(timedelta(minutes=1))
    decisions: list = []
    commits = _commits(harness, lambda: decisions.extend(harness.fire()))
    assert commits == -(-len(ids) // BATCH) == 3
    assert sorted(d.events[0].timer_id for d in decisions) == sorted(ids)
    assert len(harness.pending_work()) == len(ids)
    for person in people:
        fired = harness.events(person["participant_id"], "timer.fired")
        assert len({e.data.timer_id for e in fired}) == len(fired) == 10


def test_a_batch_reads_its_timers_and_participants_in_the_same_statements_at_any_size(
    harness: Harness,
) -> None:
    def selects(count: int) -> int:
        people = [harness.enroll() for _ in range(count)]
        ids = [t for person in people for t in _due_now(harness, person, 2)]
        harness.clock.advance(timedelta(minutes=1))
        run = lambda: fire_many(harness.store, ids, harness.clock.now(), harness.policy)  # noqa: E731
        seen = _statements(harness, run)
        assert len(harness.pending_work()) >= len(ids)
        return seen.count("SELECT")

    assert selects(2) == selects(40) == 2  # lock the participants, read the timers


def test_a_timer_cancelled_before_its_batch_runs_is_not_fired(harness: Harness) -> None:
    person = harness.enroll()
    first, cancelled, last = _due_now(harness, person, 3)
    harness.clock.advance(timedelta(minutes=1))
    harness.append(person["participant_id"], [TimerCancelled(timer_id=cancelled, reason="test")])
    decisions = fire_many(
        harness.store, [first, cancelled, last], harness.clock.now(), harness.policy
    )
    assert [d.outcome for d in decisions] == ["fired", "none", "fired"]
    fired = harness.events(person["participant_id"], "timer.fired")
    assert sorted(e.data.timer_id for e in fired) == sorted([first, last])
    assert harness.timer(cancelled)["status"] == "cancelled"


def test_a_system_timer_fires_in_a_batch_with_participants_timers(harness: Harness) -> None:
    person = harness.enroll()
    mine = _due_now(harness, person, 2)
    due = harness.clock.now() + timedelta(minutes=1)
    system = one_shot.scheduled({"timezone": "UTC"}, "at", due, payload={"text": "ops"})
    harness.store.append(SYSTEM_STREAM, [system])
    harness.clock.advance(timedelta(minutes=1))
    ids = [mine[0], system.timer_id, mine[1]]
    decisions = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
    assert [d.outcome for d in decisions] == ["fired", "skipped", "fired"]  # no participant
    assert harness.timer(system.timer_id)["status"] == "skipped"


def test_the_same_timer_twice_in_a_batch_is_decided_once(harness: Harness) -> None:
    person = harness.enroll()
    (timer_id,) = _due_now(harness, person, 1)
    harness.clock.advance(timedelta(minutes=1))
    decisions = fire_many(harness.store, [timer_id, timer_id], harness.clock.now(), harness.policy)
    assert [d.outcome for d in decisions] == ["fired", "none"]
    assert len(harness.events(person["participant_id"], "timer.fired")) == 1


def test_two_schedulers_firing_the_same_burst_at_once_record_each_timer_once(
    harness: Harness, database_url: str
) -> None:
    people = [harness.enroll() for _ in range(20)]
    ids = [t for person in people for t in _due_now(harness, person, 3)]
    harness.clock.advance(timedelta(minutes=1))
    other = EventStore(make_engine(database_url), clock=harness.clock, sealer=harness.store.sealer)
    start = threading.Barrier(2)
    outcomes: list[str] = []
    errors: list[BaseException] = []

    def scheduler(store: EventStore, order: list[str]) -> None:
        try:
            start.wait(timeout=30)
            for begin in range(0, len(order), 25):
                chunk = order[begin : begin + 25]
                decisions = fire_many(store, chunk, harness.clock.now(), harness.policy)
                outcomes.extend(d.outcome for d in decisions)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [
        threading.Thread(target=scheduler, args=(harness.store, ids)),
        threading.Thread(target=scheduler, args=(other, list(reversed(ids)))),
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        other.engine.dispose()
    assert errors == []
    assert sorted(outcomes) == sorted(["fired"] * len(ids) + ["none"] * len(ids))
    for person in people:
        fired = harness.events(person["participant_id"], "timer.fired")
        assert len(fired) == len({e.data.timer_id for e in fired}) == 3
    assert len(harness.pending_work()) == len(ids)


def test_a_batch_issues_the_same_statements_at_any_size(harness: Harness) -> None:
    def issued(count: int) -> list[str]:
        people = [harness.enroll() for _ in range(count)]
        ids = [t for person in people for t in _due_now(harness, person, 2)]
        harness.clock.advance(timedelta(minutes=1))
        with statements(harness.store.engine) as seen:
            decisions = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
        assert [d.outcome for d in decisions] == ["fired"] * len(ids)
        return [statement.split(None, 1)[0] for statement in seen]

    # Lock the participants, read the timers, insert the events, then one write per kind of
    # projection row: the timers, the participants' heads, the work items.
    assert issued(2) == issued(40) == ["SELECT", "SELECT", "INSERT", "UPDATE", "UPDATE", "INSERT"]


def test_a_batch_holding_a_timer_recorded_before_fires_the_others_once_each(
    harness: Harness,
) -> None:
    person = harness.enroll()
    recorded, first, last = _due_now(harness, person, 3)
    # The timers row says scheduled, yet the stream holds the key of its firing (as after a
    # projection rebuilt from fewer events): the batch's one INSERT meets the key.
    stream = participant_stream(person["participant_id"])
    harness.store.append(stream, [received("SMkey")], idempotency_key=f"timer:{recorded}:fired")
    harness.clock.advance(timedelta(minutes=1))
    ids = [first, recorded, last]
    decisions = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
    assert [d.outcome for d in decisions] == ["fired", "none", "fired"]
    fired = harness.events(person["participant_id"], "timer.fired")
    assert sorted(e.data.timer_id for e in fired) == sorted([first, last])
    assert sorted(w["ref"] for w in harness.pending_work()) == sorted([first, last])
    again = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
    assert [d.outcome for d in again] == ["none", "none", "none"]
    assert len(harness.events(person["participant_id"], "timer.fired")) == 2


def test_a_batch_of_daily_occurrences_records_each_with_its_next_in_stream_order(
    harness: Harness,
) -> None:
    people = [harness.enroll() for _ in range(3)]
    now = harness.clock.now()
    for person in people:
        made = [
            *create_daily(person, "09:00", "daily", {"text": "a"}, now),
            *create_daily(person, "09:00", "daily", {"text": "b"}, now),
        ]
        harness.append(person["participant_id"], made)
    firsts = {t["timer_id"]: t for p in people for t in harness.timers(p["participant_id"])}
    harness.clock.advance(max(t["due_at"] for t in firsts.values()) - now)
    decisions = harness.fire()
    assert sorted(d.events[0].timer_id for d in decisions) == sorted(firsts)
    assert {d.outcome for d in decisions} == {"fired"}
    for person in people:
        stream = harness.events(person["participant_id"])
        assert [e.stream_version for e in stream] == list(range(1, len(stream) + 1))
        fired = [e.data.timer_id for e in stream if e.event_type == "timer.fired"]
        assert len(fired) == len(set(fired)) == 2
        pending = harness.timers(person["participant_id"], "scheduled")
        assert len(pending) == 2  # each fired occurrence scheduled the next
        assert all(t["due_at"] > harness.clock.now() for t in pending)
        participant = harness.participant(person["participant_id"])
        assert participant["version"] == len(stream)


def test_a_batch_writes_the_rows_that_firing_one_by_one_writes(harness: Harness) -> None:
    one_by_one, together = harness.enroll(), harness.enroll()
    singles, batched = _due_now(harness, one_by_one, 3), _due_now(harness, together, 3)
    harness.clock.advance(timedelta(minutes=1))
    for timer_id in singles:
        fire_many(harness.store, [timer_id], harness.clock.now(), harness.policy)
    fire_many(harness.store, batched, harness.clock.now(), harness.policy)

    def rows(person: dict) -> tuple[list, list]:
        pid = person["participant_id"]
        ids = ("timer_id", "participant_id", "work_id", "ref", "seq")
        mine = [
            {k: v for k, v in t.items() if k not in ids}
            for t in sorted(harness.timers(pid), key=lambda t: t["timer_id"])
        ]
        work = [
            {k: v for k, v in w.items() if k not in ids}
            for w in harness.pending_work()
            if w["participant_id"] == pid
        ]
        return mine, work

    assert rows(together) == rows(one_by_one)
    assert {t["status"] for t in harness.timers(together["participant_id"])} == {"fired"}
    head = harness.participant(together["participant_id"])
    assert head["version"] == harness.participant(one_by_one["participant_id"])["version"]
