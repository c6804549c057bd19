"""The broadcaster queues no faster than BROADCAST_RATE_PER_SECOND: each message waits for a
token of a one-second bucket; a held recipient spends none."""

from __future__ import annotations

from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.broadcaster import Broadcaster
from bot.store.event_store import EventStore
from bot.store.event_types import ParticipantOptedOut
from bot.store.events import participant_stream
from tests.services.broadcasting import create, enroll


class FakeTime:
    """A monotonic clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds


def test_messages_are_queued_at_the_configured_rate_and_holds_cost_nothing(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    settings = load_settings(
        {"DATABASE_URL": database_url, "BROADCAST_RATE_PER_SECOND": "4"}, env_file=None
    )
    services = build_services(settings, clock=clock, store=store)
    pids = [enroll(store, n) for n in range(13)]
    for pid in pids[10:]:
        store.append(participant_stream(pid), [ParticipantOptedOut(source="operator")])
    create(store, clock.now())
    fake = FakeTime()
    broadcaster = Broadcaster(services, "test", monotonic=fake.monotonic, sleep=fake.sleep)
    assert broadcaster.run_once() == 13
    # 10 messages at 4/s: the first on the bucket's token, then one every 0.25 s at least; the
    # 3 held recipients (opted out) may wait for a token (one is decided only once it has one)
    # but spend none, so at most 3 more waits.
    assert 9 * 0.25 - 1e-6 <= fake.slept <= 12 * 0.25 + 1e-6


def test_without_holds_the_waits_are_exactly_the_rates(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    settings = load_settings(
        {"DATABASE_URL": database_url, "BROADCAST_RATE_PER_SECOND": "2"}, env_file=None
    )
    services = build_services(settings, clock=clock, store=store)
    for n in range(5):
        enroll(store, n)
    create(store, clock.now())
    fake = FakeTime()
    broadcaster = Broadcaster(services, "test", monotonic=fake.monotonic, sleep=fake.sleep)
    assert broadcaster.run_once() == 5
    assert abs(fake.slept - 4 * 0.5) < 1e-6
