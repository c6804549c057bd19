"""With a messenger that sends in process, the dispatcher claims and records rows in batches."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event

from bot.channel.dispatcher import BATCH
from bot.channel.messenger import Messenger, OutboundMessage, SendResult
from bot.core.clock import FakeClock
from bot.store.database import READ_ONLY
from bot.store.event_store import EventStore
from tests.channel.dispatching import Harness, drain_together
from tests.fakes.twilio_api import FakeReply, FakeTwilio


def phone(n: int) -> str:
    return f"+1415555{n:04d}"


class InProcess:
    """The Twilio messenger at FakeTwilio, saying it sends in process (as the console's does)."""

    sends_in_process = True

    def __init__(self, messenger: Messenger) -> None:
        self.messenger = messenger

    def send(self, message: OutboundMessage) -> SendResult:
        return self.messenger.send(message)


class Crash(BaseException):
    """The process dies: nothing after this runs (not an Exception, so nothing catches it)."""


class DiesAtTheSecondSend(InProcess):
    def __init__(self, messenger: Messenger) -> None:
        super().__init__(messenger)
        self.sends = 0

    def send(self, message: OutboundMessage) -> SendResult:
        self.sends += 1
        if self.sends == 2:
            raise Crash
        return self.messenger.send(message)


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


@pytest.fixture
def h(database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio) -> Harness:
    return Harness(database_url, store, clock, fake)


@pytest.fixture
def write_transactions(store: EventStore) -> Iterator[list[int]]:
    """Counts the write transactions begun on the store's engine (reads are not counted)."""
    counted = [0]

    def begun(conn: Any) -> None:
        if not conn.get_execution_options().get(READ_ONLY):
            counted[0] += 1

    event.listen(store.engine, "begin", begun)
    yield counted
    event.remove(store.engine, "begin", begun)


def test_a_batch_of_due_messages_takes_one_write_transaction_to_claim_and_one_to_record(
    h: Harness, write_transactions: list[int]
):
    people = [h.enroll(phone(n)) for n in range(6)]
    ids = [h.queue(p, f"hello {n}") for n, p in enumerate(people)]
    dispatcher = h.dispatcher(messenger=InProcess(h.messenger))
    write_transactions[0] = 0

    assert dispatcher.run_once() == 6

    assert write_transactions[0] == 2
    assert sorted(r.form["To"] for r in h.fake.requests) == [p["phone"] for p in people]
    assert {h.row(oid)["status"] for oid in ids} == {"sent"}
    assert {h.row(oid)["claimed_by"] for oid in ids} == {None}
    assert [len(h.events(p, "message.sent")) for p in people] == [1] * 6


def test_the_write_transactions_of_many_due_messages_are_two_per_batch(
    h: Harness, write_transactions: list[int]
):
    people = [h.enroll(phone(n)) for n in range(2 * BATCH + 5)]
    for p in people:
        h.queue(p, "good morning")
    write_transactions[0] = 0

    assert h.dispatcher(messenger=InProcess(h.messenger)).run_once(limit=100) == len(people)

    assert write_transactions[0] == 2 * 3
    assert len(h.fake.requests) == len(people)


def test_a_network_messenger_claims_one_row_at_a_time(h: Harness, write_transactions: list[int]):
    for n in range(3):
        h.queue(h.enroll(phone(n)), "hi")
    write_transactions[0] = 0

    assert h.dispatcher().run_once() == 3

    assert write_transactions[0] == 2 * 3


def test_a_batch_records_each_rows_own_verdict(h: Harness):
    sent, stopped, refused = (h.enroll(phone(n)) for n in range(3))
    h.set_status(stopped, "paused")
    h.fake.script(FakeReply.error(400, 21211))  # the first send, queued first: a bad number
    ids = [h.queue(p, "hi") for p in (refused, sent, stopped)]

    assert h.dispatcher(messenger=InProcess(h.messenger)).run_once() == 3

    assert [h.row(oid)["status"] for oid in ids] == ["failed", "sent", "suppressed"]
    assert [r.form["To"] for r in h.fake.requests] == [refused["phone"], sent["phone"]]


def test_a_crash_inside_a_batch_sends_no_row_of_it_twice(h: Harness):
    people = [h.enroll(phone(n)) for n in range(3)]
    ids = [h.queue(p, "hi") for p in people]
    with pytest.raises(Crash):
        h.dispatcher("dead", DiesAtTheSecondSend(h.messenger)).run_once()
    survivor = h.dispatcher("survivor", InProcess(h.messenger))

    assert survivor.run_once() == 0  # the claims have not expired yet
    h.clock.advance(timedelta(minutes=2))
    assert survivor.run_once() == 3

    assert len(h.fake.requests) == 1  # the first send left; none is repeated
    assert [h.row(oid)["status"] for oid in ids] == ["unknown"] * 3
    assert all(len(h.events(p, "alert.raised")) == 1 for p in people)


def test_two_batching_dispatchers_send_each_message_once_in_order(h: Harness):
    people = [h.enroll(phone(n)) for n in range(4)]
    for n in range(8):
        for p in people:
            h.queue(p, f"{p['phone']} message {n}")
    dispatchers = [
        h.dispatcher(name, InProcess(h.messenger)) for name in ("dispatcher-a", "dispatcher-b")
    ]
    assert drain_together(h, dispatchers, limit=7) == []
    assert len(h.fake.requests) == 32
    for p in people:
        bodies = [r.form["Body"] for r in h.fake.messages_to(p["phone"])]
        assert bodies == [f"{p['phone']} message {n}" for n in range(8)]
