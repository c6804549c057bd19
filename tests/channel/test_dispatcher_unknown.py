"""A send whose outcome is unknown (a timeout, a crash mid-send) is reconciled, not re-sent."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from bot.channel.messenger import Messenger, OutboundMessage, SendError, SendResult
from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.event_types import MessageStatus
from bot.store.replay import compare, rebuild
from tests.channel.dispatching import Harness
from tests.fakes.twilio_api import FakeReply, FakeTwilio

PHONE = "+14155552671"
WINDOW = timedelta(seconds=900)


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


def harness(database_url, store, clock, fake, **env: str) -> Harness:
    # Long enough for a send the fake answers at once even on a busy 2-core machine (these tests
    # send answered messages under the same timeout as the hangs), short enough to wait out.
    return Harness(database_url, store, clock, fake, TWILIO_TIMEOUT_SECONDS="2", **env)


@pytest.fixture
def h(database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio) -> Harness:
    return harness(database_url, store, clock, fake)


def test_a_hang_records_an_unknown_outcome_and_an_alert_and_sends_nothing_again(h: Harness):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Day 1")
    h.fake.script(FakeReply.hang(5))
    dispatcher = h.dispatcher()

    dispatcher.run_once()
    h.clock.advance(WINDOW - timedelta(seconds=1))
    dispatcher.run_once()

    assert len(h.fake.requests) == 1  # created at Twilio, but we never heard back
    assert h.row(oid)["status"] == "unknown"
    [failed] = h.events(p, "message.failed")
    assert (failed.outcome_unknown, failed.permanent) == (True, False)
    [alert] = h.events(p, "alert.raised")
    assert alert.kind == "send_unknown" and oid in alert.summary


def test_with_no_callback_in_the_window_the_default_policy_gives_up(h: Harness):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Day 1")
    later = h.queue(p, "Day 1, part 2")
    h.fake.script(FakeReply.hang(5))
    dispatcher = h.dispatcher()
    dispatcher.run_once()

    h.clock.advance(WINDOW)
    dispatcher.run_once()

    assert [r.form["Body"] for r in h.fake.requests] == ["Day 1", "Day 1, part 2"]
    assert h.row(oid)["status"] == "failed"
    assert [(f.permanent, f.outcome_unknown) for f in h.events(p, "message.failed")] == [
        (False, True),
        (True, True),
    ]
    assert h.row(later)["status"] == "sent"


def test_with_the_retry_policy_the_message_is_sent_again_after_the_window(
    database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio
):
    h = harness(database_url, store, clock, fake, SEND_UNKNOWN_POLICY="retry")
    p = h.enroll(PHONE)
    oid = h.queue(p, "Day 1")
    h.fake.script(FakeReply.hang(5))
    dispatcher = h.dispatcher()
    dispatcher.run_once()
    clock.advance(WINDOW - timedelta(seconds=1))
    dispatcher.run_once()
    assert len(h.fake.requests) == 1

    clock.advance(timedelta(seconds=1))
    dispatcher.run_once()

    assert len(h.fake.messages_to(PHONE)) == 2
    assert (h.row(oid)["status"], h.row(oid)["attempts"]) == ("sent", 2)


def test_a_status_callback_settles_an_unknown_send_and_unblocks_the_next_message(h: Harness):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Day 1")
    later = h.queue(p, "Day 1, part 2")
    h.fake.script(FakeReply.hang(5))
    dispatcher = h.dispatcher()
    dispatcher.run_once()
    assert h.row(later)["status"] == "pending"
    [created] = h.fake.requests

    # What the status webhook appends for a callback whose URL carries our outbox id.
    h.append(
        p["participant_id"], MessageStatus(provider_sid=created.sid, status="sent", outbox_id=oid)
    )
    dispatcher.run_once()

    assert (h.row(oid)["status"], h.row(oid)["provider_sid"]) == ("sent", created.sid)
    assert h.row(later)["status"] == "sent"
    assert len(h.fake.requests) == 2


class Crash(BaseException):
    """The process dies: nothing after this runs (not an Exception, so nothing catches it)."""


class DiesAfterSending:
    def __init__(self, messenger: Messenger) -> None:
        self.messenger = messenger

    def send(self, message: OutboundMessage) -> SendResult:
        self.messenger.send(message)
        raise Crash


def test_a_crash_between_send_and_record_is_an_unknown_outcome_not_a_resend(h: Harness):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Day 1")
    with pytest.raises(Crash):
        h.dispatcher("dead", DiesAfterSending(h.messenger)).run_once()
    survivor = h.dispatcher("survivor")

    assert survivor.run_once() == 0  # the claim has not expired yet
    h.clock.advance(timedelta(minutes=2))
    assert survivor.run_once() == 1

    assert len(h.fake.requests) == 1
    assert h.row(oid)["status"] == "unknown"
    assert h.row(oid)["claimed_by"] is None
    [alert] = h.events(p, "alert.raised")
    assert "dead" in alert.summary
    h.clock.advance(WINDOW)
    survivor.run_once()
    assert (h.row(oid)["status"], len(h.fake.requests)) == ("failed", 1)


def test_a_late_callback_after_giving_up_corrects_the_record(h: Harness):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Day 1")
    h.fake.script(FakeReply.hang(5))
    dispatcher = h.dispatcher()
    dispatcher.run_once()
    h.clock.advance(WINDOW)
    dispatcher.run_once()
    assert h.row(oid)["status"] == "failed"

    [created] = h.fake.requests
    h.append(
        p["participant_id"],
        MessageStatus(provider_sid=created.sid, status="delivered", outbox_id=oid),
    )

    assert h.row(oid)["status"] == "delivered"


def test_a_stalled_dispatchers_late_verdict_does_not_undo_a_confirmed_delivery(h: Harness):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Day 1")
    survivor = h.dispatcher("survivor")

    class Stalls:
        """Sends, then stalls past its claim while the others carry on, then times out."""

        def send(self, message: OutboundMessage) -> SendResult:
            sent = h.messenger.send(message)
            h.clock.advance(timedelta(minutes=2))
            survivor.run_once()  # takes the expired claim: unknown + alert
            h.append(
                p["participant_id"],
                MessageStatus(provider_sid=sent.provider_sid, status="delivered", outbox_id=oid),
            )
            raise SendError("unknown", "read timeout")

    h.dispatcher("stalled", Stalls()).run_once()

    assert h.row(oid)["status"] == "delivered"
    assert len(h.fake.requests) == 1


def test_replay_rebuilds_the_outbox_exactly_after_timeouts_callbacks_and_give_ups(h: Harness):
    p = h.enroll(PHONE)
    given_up = h.queue(p, "Day 1")
    settled = h.queue(p, "Day 2")
    h.fake.script(FakeReply.hang(5), FakeReply.error(500, 20500), FakeReply.hang(5))
    dispatcher = h.dispatcher()
    dispatcher.run_once()
    h.clock.advance(WINDOW)
    dispatcher.run_once()  # Day 1 given up; Day 2 answered 500
    h.clock.advance(timedelta(seconds=30))
    dispatcher.run_once()  # Day 2 hangs
    created = h.fake.messages_to(PHONE)[-1]
    h.append(
        p["participant_id"],
        MessageStatus(provider_sid=created.sid, status="delivered", outbox_id=settled),
    )

    report = rebuild(h.store)
    compare(h.store, report)

    assert (h.row(given_up)["status"], h.row(settled)["status"]) == ("failed", "delivered")
    assert report.clean, [d.describe() for d in report.differences]
