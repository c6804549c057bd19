"""The dispatcher sends queued messages through the real twilio SDK and records each outcome."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from bot.core.clock import FakeClock
from bot.core.segments import count_segments
from bot.store.event_store import EventStore
from bot.store.event_types import MessageQueued
from tests.channel.dispatching import PUBLIC, SUPERVISOR, Harness
from tests.fakes.twilio_api import FakeReply, FakeTwilio

PHONE = "+14155552671"


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


@pytest.fixture
def h(database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio) -> Harness:
    return Harness(database_url, store, clock, fake)


def test_a_queued_message_is_sent_once_with_the_outbox_id_in_its_status_callback(h: Harness):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Good morning! Ready for today's step?")
    dispatcher = h.dispatcher()

    assert dispatcher.run_once() == 1
    assert dispatcher.run_once() == 0

    [request] = h.fake.requests
    assert request.form["To"] == PHONE
    assert request.form["Body"] == "Good morning! Ready for today's step?"
    assert request.form["StatusCallback"] == f"{PUBLIC}/webhooks/twilio/status?outbox_id={oid}"
    row = h.row(oid)
    assert (row["status"], row["provider_sid"], row["attempts"]) == ("sent", request.sid, 1)
    [sent] = h.events(p, "message.sent")
    assert sent.segments == count_segments("Good morning! Ready for today's step?")


@pytest.mark.parametrize(("status", "code"), [(429, 20429), (500, 20500), (503, 20503)])
def test_a_rate_limit_or_server_error_is_retried_after_backoff_then_sent(
    h: Harness, status: int, code: int
):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Hello")
    h.fake.script(FakeReply.error(status, code), FakeReply.error(status, code))
    dispatcher = h.dispatcher()

    dispatcher.run_once()
    first = h.row(oid)
    assert (first["status"], first["error_code"], first["attempts"]) == ("pending", code, 1)
    assert h.clock.now() + timedelta(seconds=15) <= first["next_attempt_at"]
    assert first["next_attempt_at"] <= h.clock.now() + timedelta(seconds=30)
    assert dispatcher.run_once() == 0  # not before the backoff has passed

    h.clock.advance(timedelta(seconds=30))
    dispatcher.run_once()
    assert h.row(oid)["attempts"] == 2
    assert h.row(oid)["next_attempt_at"] > h.clock.now() + timedelta(seconds=29)
    h.clock.advance(timedelta(seconds=60))
    dispatcher.run_once()

    assert [r.status for r in h.fake.requests] == [status, status, 201]
    assert (h.row(oid)["status"], h.row(oid)["attempts"]) == ("sent", 3)
    failures = h.events(p, "message.failed")
    assert [(f.permanent, f.error_code) for f in failures] == [(False, code), (False, code)]


def test_retries_stop_after_the_maximum_attempts_and_the_message_fails(
    database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio
):
    h = Harness(database_url, store, clock, fake, SEND_MAX_ATTEMPTS="2")
    p = h.enroll(PHONE)
    oid = h.queue(p, "Hello")
    h.fake.always_for(PHONE, FakeReply.error(500, 20500))
    dispatcher = h.dispatcher()

    dispatcher.run_once()
    clock.advance(timedelta(seconds=30))
    dispatcher.run_once()
    clock.advance(timedelta(days=1))

    assert dispatcher.run_once() == 0
    assert len(h.fake.requests) == 2
    row = h.row(oid)
    assert (row["status"], row["error_code"]) == ("failed", 20500)
    assert row["error_message"].startswith("gave up after 2 attempts")


def test_error_21610_opts_the_participant_out_and_later_messages_are_suppressed(h: Harness):
    p = h.enroll(PHONE)
    first = h.queue(p, "Day 1")
    h.fake.always_for(PHONE, FakeReply.error(400, 21610))
    dispatcher = h.dispatcher()

    dispatcher.run_once()
    second = h.queue(p, "Day 2")
    notice = h.queue(p, "Study update", kind="notice")
    dispatcher.run_once()

    assert len(h.fake.requests) == 1
    assert (h.row(first)["status"], h.row(first)["error_code"]) == ("failed", 21610)
    [opted_out] = h.events(p, "participant.opted_out")
    assert opted_out.source == "error_21610"
    assert h.participant(p["participant_id"])["opted_out"] is True
    for oid in (second, notice):
        assert (h.row(oid)["status"], h.row(oid)["error_message"]) == ("suppressed", "opted out")


@pytest.mark.parametrize("code", [21211, 21408, 21614])
def test_other_client_errors_fail_permanently_with_the_code_recorded(h: Harness, code: int):
    p = h.enroll(PHONE)
    oid = h.queue(p, "Hello")
    h.fake.script(FakeReply.error(400, code, "refused"))
    dispatcher = h.dispatcher()

    dispatcher.run_once()
    h.clock.advance(timedelta(days=1))
    dispatcher.run_once()

    assert len(h.fake.requests) == 1
    row = h.row(oid)
    assert (row["status"], row["error_code"]) == ("failed", code)
    [failed] = h.events(p, "message.failed")
    assert failed.permanent and not failed.outcome_unknown
    assert h.participant(p["participant_id"])["opted_out"] is False


def test_a_body_over_1600_characters_is_refused_without_a_request(h: Harness):
    p = h.enroll(PHONE)
    queued = MessageQueued(outbox_id="o-long", to_address=PHONE, channel="sms", body="x" * 1601)
    h.append(p["participant_id"], queued)

    h.dispatcher().run_once()

    assert h.fake.requests == []
    row = h.row("o-long")
    assert row["status"] == "failed"
    assert "limit is 1600" in row["error_message"]


def test_a_paused_participant_gets_notices_but_no_other_messages(h: Harness):
    p = h.enroll(PHONE)
    h.set_status(p, "paused")
    reply = h.queue(p, "How did it go?")
    notice = h.queue(p, "The study pauses for the holidays.", kind="notice")

    h.dispatcher().run_once()

    assert [r.form["Body"] for r in h.fake.messages] == ["The study pauses for the holidays."]
    assert (h.row(reply)["status"], h.row(reply)["error_message"]) == (
        "suppressed",
        "participant paused",
    )
    assert h.row(notice)["status"] == "sent"


@pytest.mark.parametrize("status", ["completed", "withdrawn"])
def test_a_finished_participant_gets_no_reply_but_help_still_goes(h: Harness, status: str):
    p = h.enroll(PHONE)
    h.set_status(p, status)
    reply = h.queue(p, "Next step")
    help_ = h.queue(p, "Reply STOP to stop.", kind="help")

    h.dispatcher().run_once()

    assert h.row(reply)["status"] == "suppressed"
    assert h.row(help_)["status"] == "sent"


def test_alerts_to_a_supervisor_are_sent_whatever_the_participants_status(h: Harness):
    p = h.enroll(PHONE)
    h.set_status(p, "paused")
    h.fake.always_for(PHONE, FakeReply.error(400, 21610))
    h.queue(p, "Checking in", kind="notice")
    h.dispatcher().run_once()  # 21610: the participant is now opted out and paused
    alert = h.queue_alert(p, "Crisis language from participant 12")

    h.dispatcher().run_once()

    assert h.row(alert)["status"] == "sent"
    assert h.fake.messages_to(SUPERVISOR)[0].form["Body"] == "Crisis language from participant 12"


def test_error_21610_from_a_supervisor_does_not_opt_the_participant_out(h: Harness):
    p = h.enroll(PHONE)
    h.fake.always_for(SUPERVISOR, FakeReply.error(400, 21610))
    alert = h.queue_alert(p, "Alert")

    h.dispatcher().run_once()

    assert (h.row(alert)["status"], h.row(alert)["error_code"]) == ("failed", 21610)
    assert h.events(p, "participant.opted_out") == []


def test_run_forever_sends_what_is_queued_and_stops_when_told(h: Harness):
    p = h.enroll(PHONE)
    stop = threading.Event()
    loop = threading.Thread(target=h.dispatcher().run_forever, args=(stop, 0.05))
    loop.start()
    try:
        h.queue(p, "Woken up by the queue")
        deadline = time.monotonic() + 10
        while not h.fake.messages and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        stop.set()
        loop.join(timeout=5)

    assert not loop.is_alive()
    assert [r.form["Body"] for r in h.fake.messages] == ["Woken up by the queue"]
