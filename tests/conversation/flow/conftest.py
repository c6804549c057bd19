"""A conversation harness: the real handler (bot.runtime.routing) drained by the real worker,
the real openai SDK against a scripted FakeOpenAI, a FakeClock, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bot.channel.console import CollectingMessenger
from bot.channel.dispatcher import Dispatcher
from bot.conversation import timer_turns
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler
from bot.runtime.worker import Worker
from bot.store.event_store import EventStore
from bot.store.event_types.messages import Media, MessageQueued, MessageReceived
from bot.store.events import Event, EventData, participant_stream
from bot.store.services import Services
from bot.timers.firing import FiringPolicy, fire_due
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled
from tests.fakes.openai_api import FakeOpenAI

PHONE = "+14155552671"
SUPERVISOR = "+15005550100"


class Conversation:
    """One participant's conversation, driven the way production drives it."""

    def __init__(self, services: Services, fake: FakeOpenAI) -> None:
        self.services, self.store, self.fake = services, services.store, fake
        self.clock: FakeClock = services.clock  # type: ignore[assignment]
        self.worker = Worker(services, build_handler(services), "test-worker")
        self.pid = ""
        self._sids = 0

    def enroll(self, **changes: Any) -> str:
        """Enroll the participant, by default in habit-coach (the intake and feedback modules
        these tests are about), as the API does with INTERVENTION=habit-coach."""
        data = enrolled(phone=PHONE, **{"intervention": "habit-coach", **changes})
        self.pid = data.participant_id
        self.store.append(participant_stream(self.pid), [data])
        return self.pid

    def append(self, *events: EventData) -> list[Event]:
        return self.store.append(participant_stream(self.pid), list(events)).events

    def receive(self, body: str, media: tuple[str, ...] = ()) -> Event:
        self._sids += 1
        message = MessageReceived(
            message_sid=f"SM{self._sids:032d}",
            from_address=PHONE,
            to_address="+15005550006",
            channel="sms",
            body=body,
            media=[
                Media(url=f"https://media.example/{n}", content_type=t) for n, t in enumerate(media)
            ],
        )
        return self.append(message)[0]

    def run(self) -> int:
        """Handle every due work item of the participant, as a worker does."""
        return self.worker.run_once()

    def send(self) -> int:
        """Send every due message through the real dispatcher to a collecting phone."""
        dispatcher = Dispatcher(self.services, CollectingMessenger(), "test-dispatcher")
        sent = 0
        while moved := dispatcher.run_once():
            sent += moved
        return sent

    def fire_timers(self) -> None:
        fire_due(self.store, self.clock.now(), FiringPolicy())

    def events(self, *types: str) -> list[Event]:
        loaded = self.store.load(participant_stream(self.pid))
        return [e for e in loaded if not types or e.event_type in types]

    def data(self, *types: str) -> list[Any]:
        return [e.data for e in self.events(*types)]

    def queued(self, kind: str | None = None) -> list[MessageQueued]:
        return [m for m in self.data("message.queued") if kind is None or m.kind == kind]

    def bodies(self, kind: str | None = None) -> list[str | None]:
        return [m.body for m in self.queued(kind)]

    def participant(self) -> dict[str, Any]:
        row = self.store.projection_row("participants", self.pid)
        assert row is not None
        return row


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def make_conversation(
    database_url: str,
    store: EventStore,
    clock: FakeClock,
    fake: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., Conversation]:
    """A conversation with settings by their environment names over the test defaults."""
    # build_handler registers the daily cycle's timer handler; undo that after the test.
    monkeypatch.setattr(timer_turns, "HANDLERS", dict(timer_turns.HANDLERS))

    def make(**env: str) -> Conversation:
        values = {
            "DATABASE_URL": database_url,
            "OPENAI_BASE_URL": fake.url + "/v1",
            "OPENAI_API_KEY": "test-key",
            "TANDEM_MODEL": "fake-model",
            "LLM_TIMEOUT_SECONDS": "2",
            "LLM_MAX_RETRIES": "0",
            "SUPERVISOR_PHONES": SUPERVISOR,
            "INTERVENTION": "habit-coach",
            "TANDEM_MASTER_KEY": TEST_MASTER_KEY,  # the `store` fixture seals: a restart must too
            # Scripted in FIFO order: the second-line classifier's own call per message is
            # turned on by the tests about it (test_classifier.py).
            "SAFETY_CLASSIFIER": "off",
            # SAFETY_LEARNED is left at its default (on): every flow test runs the learned line
            **env,
        }
        settings = load_settings(values, env_file=None)
        return Conversation(build_services(settings, clock=clock, store=store), fake)

    return make


@pytest.fixture
def conversation(make_conversation: Callable[..., Conversation]) -> Conversation:
    return make_conversation()
