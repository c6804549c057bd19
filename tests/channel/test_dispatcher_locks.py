"""On PostgreSQL the dispatcher keeps off participants' row locks, which their webhooks wait for:
a claim that only sends locks none, and a send's outcome takes the lock in the flight that
commits it; a stream that moved meanwhile is recorded behind the move."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.replay import compare, rebuild
from tests.channel.dispatching import Harness
from tests.factories import received
from tests.fakes.twilio_api import FakeTwilio
from tests.locks import participant_row_locked, sessions_waiting_on_a_lock

PHONE = "+14155552671"


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


@pytest.fixture
def h(pg_store: EventStore, fake: FakeTwilio) -> Harness:
    url = pg_store.engine.url.render_as_string(hide_password=False)
    return Harness(url, pg_store, pg_store.clock, fake)  # type: ignore[arg-type]


def _in_thread(run: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    """`run` in a thread of its own; what it returned or raised, once done."""
    out: list[object] = []

    def go() -> None:
        try:
            out.append(run())
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            out.append(exc)

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread, out


def _waiting(h: Harness) -> int:
    return sessions_waiting_on_a_lock(h.store.engine)


def _until(check: Callable[[], bool], seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return False


def test_a_message_is_claimed_and_sent_while_another_holds_the_participants_row(h: Harness):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Good morning!")
    dispatcher = h.dispatcher()
    with participant_row_locked(h.store.engine, p["participant_id"]):
        thread, out = _in_thread(dispatcher.run_once)
        assert _until(lambda: len(h.fake.requests) == 1), "the claim waited for the row lock"
        assert _until(lambda: _waiting(h) == 1)  # the outcome's flight, on the server
        assert out == []
    thread.join(30)
    assert out == [1]
    assert h.row(oid)["status"] == "sent"
    assert len(h.events(p, "message.sent")) == 1


def test_an_outcome_whose_stream_moved_before_its_flight_is_recorded_after_the_move(
    h: Harness, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.INFO, logger="bot.store.outbox_claims")
    p = h.enroll(PHONE)
    oid = h.queue(p, "Good morning!")
    dispatcher = h.dispatcher()
    stream = participant_stream(p["participant_id"])
    writer = threading.Event()
    holding = threading.Event()

    def participant_writes() -> None:
        with h.store.transaction() as tx:
            tx.lock(stream)
            holding.set()
            assert _until(lambda: _waiting(h) == 1), "the outcome's flight never waited"
            tx.append(stream, [received("SM-meanwhile", phone=PHONE)])
        writer.set()

    writes, _ = _in_thread(participant_writes)
    assert holding.wait(30)
    thread, out = _in_thread(dispatcher.run_once)
    writes.join(30)
    thread.join(30)
    assert writer.is_set() and out == [1]
    assert "a stream moved while recording" in caplog.text
    assert h.row(oid)["status"] == "sent"
    events = h.store.load(stream)
    assert [e.stream_version for e in events] == list(range(1, len(events) + 1))
    kinds = [e.event_type for e in events]
    assert kinds.index("message.received") < len(kinds) - 1 - kinds[::-1].index("message.sent")
    report = rebuild(h.store)
    compare(h.store, report)
    assert report.differences == []


def test_a_row_whose_verdict_records_an_event_is_claimed_under_the_participants_lock(
    h: Harness,
):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Good morning!")
    h.set_status(p, "withdrawn")
    assert h.dispatcher().run_once() == 1
    assert h.fake.requests == []
    assert h.row(oid)["status"] == "suppressed"
    report = rebuild(h.store)
    compare(h.store, report)
    assert report.differences == []
