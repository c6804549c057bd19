"""Leases: one holder at a time, renewable by the holder, taken over only after expiry."""

from __future__ import annotations

from datetime import timedelta

from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.leases import acquire, holder_of, release

TTL = timedelta(seconds=30)


def test_a_held_lease_is_refused_to_another_holder_even_after_renewals(
    store: EventStore, clock: FakeClock
) -> None:
    engine = store.engine
    assert acquire(engine, "p", "a", clock.now(), TTL)
    assert acquire(engine, "p", "a", clock.now(), TTL)
    assert not acquire(engine, "p", "b", clock.now(), TTL)
    assert holder_of(engine, "p", clock.now()) == "a"


def test_an_expired_lease_is_taken_over(store: EventStore, clock: FakeClock) -> None:
    assert acquire(store.engine, "p", "a", clock.now(), TTL)
    clock.advance(TTL + timedelta(seconds=1))
    assert acquire(store.engine, "p", "b", clock.now(), TTL)
    assert not acquire(store.engine, "p", "a", clock.now(), TTL)


def test_a_released_lease_is_free_at_once(store: EventStore, clock: FakeClock) -> None:
    assert acquire(store.engine, "p", "a", clock.now(), TTL)
    release(store.engine, "p", "a")
    assert holder_of(store.engine, "p", clock.now()) is None
    assert acquire(store.engine, "p", "b", clock.now(), TTL)
