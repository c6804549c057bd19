"""A question's answer window opens when it is sent: a "Done" that arrives while "Did you do
it?" is held (WhatsApp's window closed) is a message, not the answer; through the real
dispatcher and the twilio SDK on the fake Twilio."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import ProfileSaved
from bot.store.event_types.messages import MessageReceived
from tests.channel.dispatching import SENDER
from tests.channel.dispatching import Harness as Dispatching
from tests.conversation.daily_cycle.conftest import MODULE_REPLY, PROFILE, CycleHarness, local
from tests.fakes.twilio_api import FakeTwilio


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


@pytest.fixture
def sending(database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio):
    return Dispatching(database_url, store, clock, fake, WHATSAPP_OUTSIDE_WINDOW="defer")


def writes(cycle: CycleHarness, pid: str, sid: str, body: str) -> None:
    phone = cycle.participant(pid)["phone"]
    message = MessageReceived(
        message_sid=sid,
        from_address=f"whatsapp:{phone}",
        to_address=f"whatsapp:{SENDER}",
        channel="whatsapp",
        body=body,
    )
    cycle.append(pid, [message])


def send_all(sending: Dispatching) -> None:
    dispatcher = sending.dispatcher()
    while dispatcher.run_once():
        pass


def test_done_while_the_question_is_held_is_a_message_and_the_next_done_is_the_answer(
    cycle: CycleHarness, sending: Dispatching
) -> None:
    cycle.sending = False  # the real dispatcher sends, or holds
    person = cycle.enroll(timezone="America/Toronto", channel="whatsapp")
    pid = person["participant_id"]
    cycle.append(pid, [ProfileSaved(changes=PROFILE)])
    cycle.schedule(cycle.participant(pid), "09:30")
    cycle.until(local("09:20"))
    send_all(sending)
    assert sending.fake.messages == []  # never wrote: the window is closed, all held
    assert cycle.events(pid, "message.deferred")

    writes(cycle, pid, "SMheld", "Done")
    send_all(sending)  # the window opened: the held prompt and questions go out now
    cycle.work()

    sent = [r.form["Body"] for r in sending.fake.messages]
    assert any(body.startswith("Did you do it?") for body in sent)
    assert cycle.events(pid, "habit.reported") == []
    assert "success_count" not in cycle.participant(pid)["profile"]
    assert cycle.queued(pid, "reply") == [MODULE_REPLY]  # it reached the module as a message

    writes(cycle, pid, "SMlater", "Done")
    cycle.work()

    [reported] = cycle.events(pid, "habit.reported")
    assert (reported.data.done, reported.data.answer) == (True, "Done")
    assert cycle.participant(pid)["profile"]["success_count"] == 1


def test_done_after_the_question_was_sent_is_the_answer(
    cycle: CycleHarness, sending: Dispatching
) -> None:
    cycle.sending = False
    person = cycle.enroll(timezone="America/Toronto", channel="whatsapp")
    pid = person["participant_id"]
    cycle.append(pid, [ProfileSaved(changes=PROFILE)])
    writes(cycle, pid, "SMhello", "hello")  # the window is open
    cycle.work()
    cycle.schedule(cycle.participant(pid), "09:30")
    cycle.until(local("09:20"))
    send_all(sending)

    writes(cycle, pid, "SMdone", "Done")
    cycle.work()

    [reported] = cycle.events(pid, "habit.reported")
    assert reported.data.done is True
