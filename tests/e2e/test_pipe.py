"""From Twilio's webhook to Twilio's API: ordering, parallelism and exactly-once replies."""

from __future__ import annotations

import threading
import time

from bot.store.events import participant_stream
from tests.e2e.conftest import Pipe

PHONES = [f"+1415555{n:04d}" for n in range(2600, 2650)]


def test_fifty_participants_texting_at_once_each_get_exactly_one_reply(pipe: Pipe) -> None:
    for phone in PHONES:
        pipe.enroll(phone)
    barrier = threading.Barrier(len(PHONES))
    statuses: list[int] = []

    def text(phone: str) -> None:
        barrier.wait()
        statuses.append(pipe.text(phone, f"hello from {phone[-4:]}").status_code)

    threads = [threading.Thread(target=text, args=(phone,)) for phone in PHONES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * len(PHONES)
    pipe.wait_for(lambda: len(pipe.twilio.messages) >= len(PHONES))
    time.sleep(0.5)  # long enough for a duplicate to show up, if one were coming
    for phone in PHONES:
        assert pipe.bodies_to(phone) == [f"You said: hello from {phone[-4:]}"]


def test_two_messages_50_ms_apart_are_answered_in_order(pipe: Pipe) -> None:
    phone = PHONES[0]
    pipe.enroll(phone)
    pipe.text(phone, "first")
    time.sleep(0.05)
    pipe.text(phone, "second")
    pipe.wait_for(lambda: len(pipe.bodies_to(phone)) == 2)
    assert pipe.bodies_to(phone) == ["You said: first", "You said: second"]


def test_one_message_sid_delivered_five_times_at_once_is_answered_once(pipe: Pipe) -> None:
    phone = PHONES[0]
    pid = pipe.enroll(phone)
    barrier = threading.Barrier(5)
    statuses: list[int] = []

    def deliver() -> None:
        barrier.wait()
        statuses.append(pipe.text(phone, "once please", sid="SM" + "d" * 32).status_code)

    threads = [threading.Thread(target=deliver) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * 5
    pipe.wait_for(lambda: len(pipe.bodies_to(phone)) == 1)
    time.sleep(0.5)
    assert pipe.bodies_to(phone) == ["You said: once please"]
    types = [e.event_type for e in pipe.services.store.load(participant_stream(pid))]
    assert types.count("message.received") == 1
    assert types.count("work.completed") == 2  # the enrollment's and the message's
