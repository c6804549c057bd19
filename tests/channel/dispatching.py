"""A dispatcher wired to a fresh database, a FakeClock and the real twilio SDK on a FakeTwilio."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from bot.channel.dispatcher import Dispatcher
from bot.channel.factory import build_messenger
from bot.channel.messenger import Messenger
from bot.channel.outbound import to_address, to_participant
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived, ParticipantStatusChanged
from bot.store.events import EventData, participant_stream
from bot.store.schema import outbox
from bot.store.services import Services
from tests.factories import enrolled
from tests.fakes.twilio_api import FakeTwilio

PUBLIC = "https://tandem.example.org"
SENDER = "+15005550006"
TEMPLATE = "HX" + "ab" * 16
SUPERVISOR = "+14155550199"


def settings_env(database_url: str, fake: FakeTwilio, **overrides: str) -> dict[str, str]:
    env = {
        "DATABASE_URL": database_url,
        "PUBLIC_BASE_URL": PUBLIC,
        "MESSENGER": "twilio",
        "TWILIO_ACCOUNT_SID": fake.account_sid,
        "TWILIO_AUTH_TOKEN": fake.auth_token,
        "TWILIO_FROM_NUMBER": SENDER,
        "TWILIO_API_BASE_URL": fake.url,
        "TWILIO_TIMEOUT_SECONDS": "5",
        "SEND_RETRY_BASE_SECONDS": "30",
        "SEND_RETRY_MAX_SECONDS": "600",
    }
    env.update(overrides)
    return env


class Harness:
    """Services, a Twilio messenger pointed at the fake, and helpers to enroll and queue."""

    def __init__(
        self, database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio, **env: str
    ) -> None:
        settings = load_settings(settings_env(database_url, fake, **env), env_file=None)
        self.services: Services = build_services(settings, clock=clock, store=store)
        self.store, self.clock, self.fake = store, clock, fake
        self.messenger: Messenger = build_messenger(settings)

    def dispatcher(self, name: str = "dispatcher-1", messenger: Messenger | None = None):
        return Dispatcher(self.services, messenger or self.messenger, name, rng=random.Random(7))

    def enroll(self, phone: str = "+14155552671", channel: str = "sms") -> dict[str, Any]:
        event = enrolled(phone=phone, channel=channel)
        self.store.append(participant_stream(event.participant_id), [event])
        return self.participant(event.participant_id)

    def participant(self, pid: str) -> dict[str, Any]:
        row = self.store.projection_row("participants", pid)
        assert row is not None
        return row

    def append(self, pid: str, *events: EventData) -> None:
        self.store.append(participant_stream(pid), list(events))

    def queue(self, participant: dict[str, Any], body: str, kind: str = "reply") -> str:
        [queued] = to_participant(participant, body, kind)  # type: ignore[arg-type]
        self.append(participant["participant_id"], queued)
        return queued.outbox_id

    def queue_alert(self, participant: dict[str, Any], body: str) -> str:
        """A supervisor alert about the participant, on the participant's stream."""
        [queued] = to_address(SUPERVISOR, "sms", body, "alert")
        self.append(participant["participant_id"], queued)
        return queued.outbox_id

    def set_status(self, participant: dict[str, Any], status: str) -> None:
        self.append(participant["participant_id"], ParticipantStatusChanged(status=status))  # type: ignore[arg-type]

    def writes(self, participant: dict[str, Any], sid: str, body: str = "hello") -> None:
        """The participant writes to us (as the inbound webhook records it)."""
        self.append(
            participant["participant_id"],
            MessageReceived(
                message_sid=sid,
                from_address=participant["phone"],
                to_address=SENDER,
                channel=participant["channel"],
                body=body,
            ),
        )

    def row(self, outbox_id: str) -> dict[str, Any]:
        row = self.store.projection_row("outbox", outbox_id)
        assert row is not None
        return row

    def events(self, participant: dict[str, Any], event_type: str) -> list[EventData]:
        stream = participant_stream(participant["participant_id"])
        return [e.data for e in self.store.load(stream) if e.event_type == event_type]

    def unsent(self) -> int:
        with self.store.reading() as conn:
            rows = conn.execute(outbox.select().where(outbox.c.status.in_(["pending", "unknown"])))
            return len(rows.all())


def drain_together(h: Harness, dispatchers: list[Dispatcher], limit: int) -> list[BaseException]:
    """Run the dispatchers in threads of their own until nothing is unsent (60 s at the most);
    what any of them raised."""
    errors: list[BaseException] = []

    def drain(dispatcher: Dispatcher) -> None:
        deadline = time.monotonic() + 60
        try:
            while h.unsent() and time.monotonic() < deadline:
                dispatcher.run_once(limit=limit)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            errors.append(exc)

    threads = [threading.Thread(target=drain, args=(d,)) for d in dispatchers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
