"""The worker drains each participant's queue in order, retries failures and parks poison items."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest

from bot.channel.outbound import to_participant
from bot.conversation.turns import Turn
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.worker import Worker
from bot.store.event_store import EventStore
from bot.store.event_types.messages import MessageReceived
from bot.store.events import EventData, participant_stream
from bot.store.leases import acquire, holder_of
from bot.store.services import Services
from bot.store.work_statements import next_or_release
from tests.factories import enrolled, received

GREETING = "Welcome! Reply to this message and I will answer."


def echo(turn: Turn) -> list[EventData]:
    """A stand-in handler: greet on enrollment, repeat an inbound message back."""
    if turn.kind == "enrolled":
        return list(to_participant(turn.participant, GREETING, kind="greeting"))
    if turn.kind == "inbound" and isinstance(turn.trigger.data, MessageReceived):
        return list(to_participant(turn.participant, f"You said: {turn.trigger.data.body}"))
    return []


@pytest.fixture
def services(database_url: str, store: EventStore, clock: FakeClock) -> Services:
    settings = load_settings({"DATABASE_URL": database_url}, env_file=None)
    return build_services(settings, clock=clock, store=store)


def enroll(store: EventStore, phone: str = "+14155552671") -> str:
    first = enrolled(phone=phone)
    store.append(participant_stream(first.participant_id), [first])
    return first.participant_id


def replies(store: EventStore, pid: str) -> list[str]:
    return [
        e.data.body for e in store.load(participant_stream(pid)) if e.event_type == "message.queued"
    ]


def test_an_enrollment_and_two_messages_are_answered_in_arrival_order(
    services: Services, store: EventStore
) -> None:
    pid = enroll(store)
    store.append(participant_stream(pid), [received("SM1", "first")])
    store.append(participant_stream(pid), [received("SM2", "second")])
    assert Worker(services, echo, "w1").run_once() == 3
    assert replies(store, pid) == [GREETING, "You said: first", "You said: second"]
    kinds = [e.event_type for e in store.load(participant_stream(pid))]
    assert kinds.count("work.completed") == 3


def test_a_failing_turn_is_retried_after_backoff_and_then_parked_with_an_alert(
    services: Services, store: EventStore, clock: FakeClock
) -> None:
    pid = enroll(store)
    calls: list[str] = []

    def broken(turn: Turn) -> list[EventData]:
        calls.append(turn.kind)
        raise RuntimeError("model exploded")

    worker = Worker(services, broken, "w1", max_attempts=3, backoff=timedelta(seconds=10))
    assert worker.run_once() == 1
    assert worker.run_once() == 0  # waiting for its retry time
    clock.advance(timedelta(seconds=20))
    worker.run_once()
    clock.advance(timedelta(minutes=5))
    worker.run_once()
    types = [e.event_type for e in store.load(participant_stream(pid))]
    assert calls == ["enrolled"] * 3
    assert types.count("work.failed") == 2
    assert types[-2:] == ["work.parked", "alert.raised"]
    assert worker.run_once() == 0


def test_a_parked_item_does_not_block_the_participants_later_messages(
    services: Services, store: EventStore
) -> None:
    pid = enroll(store)
    store.append(participant_stream(pid), [received("SM1", "hello")])

    def flaky(turn: Turn) -> list[EventData]:
        if turn.kind == "enrolled":
            raise RuntimeError("boom")
        return echo(turn)

    Worker(services, flaky, "w1", max_attempts=1).run_once()
    assert replies(store, pid) == ["You said: hello"]


def test_messages_of_an_unenrolled_participant_are_completed_without_a_turn(
    services: Services, store: EventStore
) -> None:
    from bot.store.event_types.participants import ParticipantUnenrolled

    pid = enroll(store)
    store.append(participant_stream(pid), [ParticipantUnenrolled(), received("SM1", "hi")])
    Worker(services, echo, "w1").run_once()
    completed = [
        e.data for e in store.load(participant_stream(pid)) if e.event_type == "work.completed"
    ]
    assert [c.skipped for c in completed] == ["unenrolled", "unenrolled"]
    assert replies(store, pid) == []


def test_a_message_arriving_during_a_turn_does_not_undo_the_turn(
    services: Services, store: EventStore
) -> None:
    pid = enroll(store)

    def slow(turn: Turn) -> list[EventData]:
        if turn.kind == "enrolled":  # another message lands while this turn is decided
            store.append(participant_stream(pid), [received("SMlate", "late")])
        return echo(turn)

    Worker(services, slow, "w1").run_once()
    assert replies(store, pid) == [GREETING, "You said: late"]


def test_a_status_change_during_a_turn_makes_the_turn_decide_again(
    services: Services, store: EventStore
) -> None:
    from bot.store.event_types.participants import ParticipantUpdated

    pid = enroll(store)
    seen: list[str | None] = []

    def racing(turn: Turn) -> list[EventData]:
        seen.append(turn.participant["name"])
        if len(seen) == 1:
            store.append(participant_stream(pid), [ParticipantUpdated(changes={"name": "Ana"})])
        return list(to_participant(turn.participant, f"Hi {turn.participant['name']}"))

    Worker(services, racing, "w1").run_once()
    assert seen == [None, "Ana"]
    assert replies(store, pid) == ["Hi Ana"]


def test_two_workers_never_handle_one_participant_at_once_and_keep_order(
    services: Services, store: EventStore
) -> None:
    pids = [enroll(store, phone) for phone in ("+14155552671", "+442071838750", "+34911234567")]
    for pid in pids:
        for n in range(5):
            store.append(
                participant_stream(pid),
                [
                    MessageReceived(
                        message_sid=f"{pid}-{n}",
                        from_address="+1",
                        to_address="+2",
                        channel="sms",
                        body=str(n),
                    )
                ],
            )
    active: set[str] = set()
    overlap: list[str] = []
    lock = threading.Lock()

    def guarded(turn: Turn) -> list[EventData]:
        pid = turn.participant["participant_id"]
        with lock:
            if pid in active:
                overlap.append((pid, threading.current_thread().name, sorted(active)))
            active.add(pid)
        try:
            return echo(turn)
        finally:
            with lock:
                active.discard(pid)

    stop = threading.Event()
    workers = [Worker(services, guarded, f"w{n}") for n in range(3)]
    threads = [threading.Thread(target=w.run_forever, args=(stop, 0.01)) for w in workers]
    for t in threads:
        t.start()
    try:
        for pid in pids:
            deadline = threading.Event()
            for _ in range(500):
                if len(replies(store, pid)) == 6:
                    break
                deadline.wait(0.02)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert overlap == []
    for pid in pids:
        assert replies(store, pid) == [GREETING] + [f"You said: {n}" for n in range(5)]


def test_a_long_turn_keeps_its_lease_so_no_other_worker_takes_the_participant(
    services: Services, store: EventStore, clock: FakeClock
) -> None:
    from bot.store.leases import holder_of

    pid = enroll(store)
    seen: list[str | None] = []
    worker = Worker(services, lambda turn: [], "w1", lease=timedelta(seconds=0.9))

    def slow(turn: Turn) -> list[EventData]:
        for _ in range(4):  # the lease would lapse three times over without renewal
            threading.Event().wait(0.4)  # real time, for the heartbeat thread to run
            clock.advance(timedelta(seconds=0.4))
            seen.append(holder_of(store.engine, f"participant:{pid}", clock.now()))
        return []

    worker.handler = slow
    worker.run_once()
    assert seen == ["w1"] * 4


def test_the_commit_of_a_turn_keeps_the_lease_for_a_due_next_item_and_releases_it_otherwise(
    services: Services, store: EventStore, clock: FakeClock
) -> None:
    """What the drain does in each turn's commit (`next_or_release`, one statement on
    PostgreSQL): the participant's next head item comes back, if any; the lease is kept only
    if that item is due."""
    pid = enroll(store)
    name = f"participant:{pid}"
    now = clock.now()

    def commit(at: datetime) -> tuple[str | None, str | None]:
        """(the head item's kind, the lease's holder after) of a commit at `at`."""
        assert acquire(store.engine, name, "w1", now, timedelta(minutes=1))
        with store.transaction() as tx:
            head = next_or_release(tx.conn, pid, name, "w1", at)
        return (head["kind"] if head else None), holder_of(store.engine, name, now)

    assert commit(now) == ("enrolled", "w1")  # due: the drain goes on with the lease
    assert commit(now - timedelta(seconds=1)) == ("enrolled", None)  # not due yet
    assert Worker(services, echo, "w2").run_once() == 1
    assert commit(now) == (None, None)  # nothing pending
