"""Each recipient's messages leave in queue order, once each, however many dispatchers run."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import update

from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.schema import outbox
from tests.channel.dispatching import SUPERVISOR, Harness, drain_together
from tests.fakes.twilio_api import FakeReply, FakeTwilio

PHONES = ["+14155552671", "+14155552672", "+14155552673"]


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


@pytest.fixture
def h(database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio) -> Harness:
    return Harness(database_url, store, clock, fake)


def test_two_concurrent_dispatchers_send_each_message_once_in_order(h: Harness):
    people = [h.enroll(phone) for phone in PHONES]
    for n in range(20):
        for p in people:
            h.queue(p, f"{p['phone']} message {n}")
    dispatchers = [h.dispatcher("dispatcher-a"), h.dispatcher("dispatcher-b")]
    assert drain_together(h, dispatchers, limit=5) == []
    assert len(h.fake.requests) == 60
    for p in people:
        bodies = [r.form["Body"] for r in h.fake.messages_to(p["phone"])]
        assert bodies == [f"{p['phone']} message {n}" for n in range(20)]


def test_a_message_waiting_for_a_retry_holds_back_the_messages_behind_it(h: Harness):
    p = h.enroll(PHONES[0])
    first = h.queue(p, "Step 2")
    second = h.queue(p, "Step 3")
    h.fake.script(FakeReply.error(429, 20429))
    dispatcher = h.dispatcher()

    dispatcher.run_once()
    assert (h.row(first)["status"], h.row(second)["status"]) == ("pending", "pending")
    assert len(h.fake.requests) == 1

    h.clock.advance(timedelta(seconds=30))
    dispatcher.run_once()

    assert [r.form["Body"] for r in h.fake.messages] == ["Step 2", "Step 3"]


def test_other_participants_are_not_held_back_by_one_waiting_for_a_retry(h: Harness):
    slow, other = h.enroll(PHONES[0]), h.enroll(PHONES[1])
    h.queue(slow, "to the slow one")
    h.queue(other, "to the other one")
    h.fake.always_for(PHONES[0], FakeReply.error(503, 20503))

    h.dispatcher().run_once()

    assert [r.form["Body"] for r in h.fake.messages] == ["to the other one"]


def test_a_supervisor_alert_does_not_wait_behind_the_participants_held_message(h: Harness):
    p = h.enroll(PHONES[0])
    h.queue(p, "Reply")
    alert = h.queue_alert(p, "Alert about participant")
    h.fake.always_for(PHONES[0], FakeReply.error(500, 20500))

    h.dispatcher().run_once()

    assert h.row(alert)["status"] == "sent"
    assert [r.form["To"] for r in h.fake.messages] == [SUPERVISOR]


def test_a_row_claimed_by_a_live_dispatcher_is_left_alone(h: Harness):
    p = h.enroll(PHONES[0])
    oid = h.queue(p, "Hello")
    with h.store.transaction() as tx:
        tx.conn.execute(
            update(outbox)
            .where(outbox.c.outbox_id == oid)
            .values(claimed_by="busy", claimed_until=h.clock.now() + timedelta(seconds=30))
        )

    assert h.dispatcher().run_once() == 0
    assert h.fake.requests == []
