"""The scheduler arms only timers due within its horizon; the sweep arms the rest in time."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.clock import FakeClock, SystemClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types.timers import TimerCancelled
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.timers import one_shot
from bot.timers.scheduler import CHANGE_MARGIN, Scheduler
from tests.factories import enrolled
from tests.timers.live import wait_for


@pytest.fixture
def services(database_url: str) -> Iterator[Services]:
    settings = load_settings({"DATABASE_URL": database_url}, env_file=None)
    built = build_services(settings, clock=SystemClock())
    yield built
    built.close()


def _add(services: Services, phone: str, seconds: float) -> str:
    data = enrolled(phone=phone, timezone="UTC")
    person = {"participant_id": data.participant_id, "timezone": "UTC"}
    timer = one_shot.scheduled(person, "at", datetime.now(UTC) + timedelta(seconds=seconds))
    services.store.append(participant_stream(data.participant_id), [data, timer])
    return timer.timer_id


def _status(services: Services, timer_id: str) -> str | None:
    row = services.store.projection_row("timers", timer_id)
    return None if row is None else str(row["status"])


def _fired(services: Services, timer_id: str) -> bool:
    row = services.store.projection_row("timers", timer_id)
    return row is not None and row["status"] == "fired"


def test_a_timer_beyond_the_horizon_is_not_armed_at_start_but_fires(
    services: Services,
) -> None:
    near, far = _add(services, "+14155550101", 0.5), _add(services, "+14155550102", 3.0)
    scheduler = Scheduler(
        services, quiet_hours=None, sweep_seconds=0.3, horizon=timedelta(seconds=1.5)
    )
    scheduler.start()
    try:
        assert scheduler.armed == 1  # only the near one
        wait_for(lambda: _fired(services, far), 15, "the far timer to be armed and fire")
        assert _fired(services, near)
    finally:
        scheduler.stop()


_PHONES = itertools.count()


@pytest.fixture
def fake_services(database_url: str) -> Iterator[tuple[Services, FakeClock]]:
    """Services on a fake clock that reads the real time now (APScheduler keeps the real one,
    so nothing armed here comes due during a test)."""
    clock = FakeClock(datetime.now(UTC))
    settings = load_settings({"DATABASE_URL": database_url}, env_file=None)
    built = build_services(settings, clock=clock)
    yield built, clock
    built.close()


def _add_at(store: EventStore, due: datetime, count: int = 1) -> list[str]:
    """`count` timers of a new participant, all due at `due`."""
    data = enrolled(phone=f"+1415666{next(_PHONES):04d}", timezone="UTC")
    person = {"participant_id": data.participant_id, "timezone": "UTC"}
    made = [one_shot.scheduled(person, "at", due) for _ in range(count)]
    store.append(participant_stream(data.participant_id), [data, *made])
    return [t.timer_id for t in made]


def _slow(services: Services) -> Scheduler:
    """A scheduler whose own sweeps never come during a test: the test calls `sweep`."""
    return Scheduler(services, quiet_hours=None, sweep_seconds=3600, horizon=timedelta(minutes=10))


def test_timers_due_at_the_same_instant_share_one_job(
    fake_services: tuple[Services, FakeClock],
) -> None:
    services, clock = fake_services
    burst = clock.now() + timedelta(minutes=5)
    _add_at(services.store, burst, 30)
    _add_at(services.store, burst + timedelta(seconds=1), 2)
    _add_at(services.store, clock.now() + timedelta(minutes=20))  # beyond the horizon
    scheduler = _slow(services)
    scheduler.start()
    try:
        assert (scheduler.armed, scheduler.jobs) == (32, 2)
    finally:
        scheduler.stop()


def test_a_timer_beyond_the_horizon_is_armed_when_the_sweep_moves_the_horizon_over_it(
    fake_services: tuple[Services, FakeClock],
) -> None:
    services, clock = fake_services
    (far,) = _add_at(services.store, clock.now() + timedelta(minutes=20))
    scheduler = _slow(services)
    scheduler.start()
    try:
        assert scheduler.armed == 0
        clock.advance(timedelta(minutes=5))
        scheduler.sweep()
        assert scheduler.armed == 0  # the horizon now ends at +15 minutes
        clock.advance(timedelta(minutes=6))
        assert scheduler.sweep() == 1  # the slice it moved over holds the far timer
        assert scheduler.armed == 1
    finally:
        scheduler.stop()
    assert _status(services, far) == "scheduled"  # armed for its time, not fired early


def test_a_sweep_reads_only_the_timers_that_changed_or_came_within_the_horizon(
    fake_services: tuple[Services, FakeClock], database_url: str
) -> None:
    services, clock = fake_services
    for _ in range(20):
        _add_at(services.store, clock.now() + timedelta(minutes=5), 3)
    scheduler = _slow(services)
    scheduler.start()
    elsewhere = EventStore(make_engine(database_url), clock=clock, sealer=services.store.sealer)
    try:
        assert scheduler.armed == 60
        clock.advance(CHANGE_MARGIN + timedelta(seconds=1))
        assert scheduler.sweep() == 60  # looks back CHANGE_MARGIN for commits that came late
        clock.advance(timedelta(seconds=1))
        assert scheduler.sweep() == 0  # nothing changed: the 60 pending timers are not re-read
        _add_at(elsewhere, clock.now() + timedelta(minutes=2))
        (cancelled, _) = _add_at(elsewhere, clock.now() + timedelta(minutes=3), 2)
        assert scheduler.armed == 60  # another process's commits: only a sweep sees them
        clock.advance(timedelta(seconds=1))
        _cancel(elsewhere, cancelled)
        assert scheduler.sweep() == 3  # the two new timers and the cancelled one
        assert scheduler.armed == 62  # the two new ones; not the cancelled one
    finally:
        scheduler.stop()
        elsewhere.engine.dispose()


def _cancel(store: EventStore, timer_id: str) -> None:
    row = store.projection_row("timers", timer_id)
    assert row is not None
    cancel = TimerCancelled(timer_id=timer_id, reason="operator")
    store.append(participant_stream(row["participant_id"]), [cancel])
