"""The real APScheduler trigger, on the wall clock, with timers due a fraction of a second ahead."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.clock import SystemClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types.timers import TimerCancelled
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.timers import firing, one_shot
from bot.timers.scheduler import Scheduler, run_forever
from tests.factories import enrolled
from tests.timers.live import firings_per_timer, outcome_counts, wait_for


@pytest.fixture
def services(database_url: str) -> Iterator[Services]:
    settings = load_settings(
        {
            "DATABASE_URL": database_url,
            "TIMER_SWEEP_SECONDS": "0.2",
            "SCHEDULER_LEASE_SECONDS": "1",
        },
        env_file=None,
    )
    services = build_services(settings, clock=SystemClock())
    yield services
    services.close()


@pytest.fixture
def person(services: Services) -> dict:
    data = enrolled(timezone="UTC")
    services.store.append(participant_stream(data.participant_id), [data])
    return {"participant_id": data.participant_id, "timezone": "UTC"}


@pytest.fixture
def scheduler(services: Services) -> Iterator[Scheduler]:
    scheduler = Scheduler(services, quiet_hours=None)
    yield scheduler
    scheduler.stop()


def _add(store: EventStore, person: dict, seconds: float) -> str:
    timer = one_shot.scheduled(person, "at", datetime.now(UTC) + timedelta(seconds=seconds))
    store.append(participant_stream(person["participant_id"]), [timer])
    return timer.timer_id


def _status(services: Services, timer_id: str) -> str:
    row = services.store.projection_row("timers", timer_id)
    assert row is not None
    return str(row["status"])


def test_start_arms_every_pending_timer(
    services: Services, person: dict, scheduler: Scheduler
) -> None:
    for _ in range(25):
        _add(services.store, person, 300)
    scheduler.start()
    assert scheduler.armed == 25


def test_a_timer_due_a_moment_after_start_fires(
    services: Services, person: dict, scheduler: Scheduler
) -> None:
    timer_id = _add(services.store, person, 0.3)
    scheduler.start()
    wait_for(lambda: _status(services, timer_id) == "fired", 10, "the timer to fire")


def test_a_timer_set_in_this_process_after_start_is_armed_at_once(
    services: Services, person: dict
) -> None:
    slow_sweep = Scheduler(services, quiet_hours=None, sweep_seconds=3600)
    slow_sweep.start()
    try:
        timer_id = _add(services.store, person, 0.3)
        wait_for(lambda: _status(services, timer_id) == "fired", 5, "the timer to fire")
    finally:
        slow_sweep.stop()


def test_a_timer_written_by_another_process_is_picked_up_by_the_sweep(
    services: Services, database_url: str, person: dict, scheduler: Scheduler
) -> None:
    scheduler.start()
    elsewhere = EventStore(make_engine(database_url), clock=SystemClock())  # not this process's
    try:
        timer_id = _add(elsewhere, person, 0.3)
        wait_for(lambda: _status(services, timer_id) == "fired", 10, "the sweep to arm it")
    finally:
        elsewhere.engine.dispose()


def test_a_timer_cancelled_by_another_process_is_disarmed_by_the_sweep(
    services: Services, database_url: str, person: dict, scheduler: Scheduler
) -> None:
    timer_id = _add(services.store, person, 300)
    scheduler.start()
    assert scheduler.armed == 1
    elsewhere = EventStore(make_engine(database_url), clock=SystemClock())
    try:
        cancel = TimerCancelled(timer_id=timer_id, reason="operator")
        elsewhere.append(participant_stream(person["participant_id"]), [cancel])
        wait_for(lambda: scheduler.armed == 0, 10, "the sweep to disarm it")
    finally:
        elsewhere.engine.dispose()


def test_timers_overdue_at_start_fire_at_once(
    services: Services, person: dict, scheduler: Scheduler
) -> None:
    overdue = [_add(services.store, person, -120) for _ in range(20)]
    scheduler.start()
    wait_for(lambda: all(_status(services, t) == "fired" for t in overdue), 10, "overdue timers")


def test_run_forever_leads_fires_and_stops_when_told(services: Services, person: dict) -> None:
    stop = threading.Event()
    runner = threading.Thread(target=run_forever, args=(services, stop), daemon=True)
    runner.start()
    try:
        timer_id = _add(services.store, person, 0.3)
        wait_for(lambda: _status(services, timer_id) == "fired", 10, "the leader to fire it")
    finally:
        stop.set()
        runner.join(timeout=10)
    assert not runner.is_alive()


@pytest.mark.parametrize("firing_threads", [1, 2])
def test_a_burst_due_at_one_instant_is_one_job_and_each_timer_fires_once(
    services: Services, firing_threads: int
) -> None:
    # Due after the scheduler starts, however slow 25 appends are on a loaded machine.
    due = datetime.now(UTC) + timedelta(seconds=10)
    for n in range(25):
        data = enrolled(phone=f"+1415777{n:04d}", timezone="UTC")
        person = {"participant_id": data.participant_id, "timezone": "UTC"}
        made = [one_shot.scheduled(person, "at", due) for _ in range(10)]
        services.store.append(participant_stream(data.participant_id), [data, *made])
    assert datetime.now(UTC) < due, "the appends outlasted the margin: the burst is already due"
    scheduler = Scheduler(services, quiet_hours=None, firing_threads=firing_threads)
    scheduler.start()
    try:
        assert (scheduler.armed, scheduler.jobs) == (250, 1)
        done = lambda: len(firings_per_timer(services.store)) == 250  # noqa: E731
        wait_for(done, 30, "every timer of the burst to fire")
    finally:
        scheduler.stop()
    assert set(firings_per_timer(services.store).values()) == {1}
    assert outcome_counts(services.store) == {"fired": 250}


def test_a_timer_that_cannot_be_fired_holds_up_none_of_its_batch(
    services: Services, person: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    due = datetime.now(UTC) + timedelta(seconds=2)
    made = [one_shot.scheduled(person, "at", due) for _ in range(5)]
    services.store.append(participant_stream(person["participant_id"]), made)
    poison = made[2].timer_id
    real_fire_one = firing.fire_one

    def batch_fails(*_args: object) -> list:
        raise RuntimeError("the batch fails")

    def fire_one(store: EventStore, timer_id: str, *args: object) -> firing.Decision:
        if timer_id == poison:
            raise RuntimeError("this timer fails")
        return real_fire_one(store, timer_id, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(firing, "fire_many", batch_fails)
    monkeypatch.setattr(firing, "fire_one", fire_one)
    scheduler = Scheduler(services, quiet_hours=None, sweep_seconds=3600)
    scheduler.start()
    try:
        others = [t.timer_id for t in made if t.timer_id != poison]
        wait_for(lambda: all(_status(services, t) == "fired" for t in others), 15, "the others")
        assert _status(services, poison) == "scheduled"
        wait_for(lambda: scheduler.armed == 1, 5, "the failed timer to be armed for a retry")
    finally:
        scheduler.stop()


def test_stop_does_not_wait_for_a_job_that_waits_for_a_thread_calling_into_apscheduler(
    services: Services, person: dict
) -> None:
    """A job (`_run`) waits for the scheduler's lock while the thread holding it calls into
    APScheduler, as `_arm` and `_unslot` do. APScheduler's `shutdown(wait=True)` held its
    job-store lock while it waited for the job: the three waited for each other for ever, and
    a process stopping its scheduler never ended."""
    scheduler = Scheduler(services, quiet_hours=None, sweep_seconds=3600)
    scheduler.start()
    _add(services.store, person, 0.5)
    wait_for(lambda: scheduler.armed == 1, 10, "the timer to be armed")
    aps = scheduler._aps  # noqa: SLF001
    assert aps is not None

    def hold_then_call_in() -> None:
        with scheduler._lock:  # noqa: SLF001 - as _arm holds it
            time.sleep(3)  # the job comes due and waits; stop() begins meanwhile
            aps.add_job(print, "date", run_date=datetime.now(UTC) + timedelta(hours=1))

    holder = threading.Thread(target=hold_then_call_in, daemon=True)
    holder.start()
    time.sleep(1.5)
    stopping = threading.Thread(target=scheduler.stop, daemon=True)
    stopping.start()
    stopping.join(20)
    holder.join(20)
    assert not stopping.is_alive(), "stop() waits for ever"
    assert not holder.is_alive()


class _Lead:
    """Leadership that is always granted, renewed every 0.3 s (a third of its ttl)."""

    ttl = timedelta(seconds=0.9)

    def acquire(self) -> bool:
        return True

    def renew(self) -> bool:
        return True

    def release(self) -> None:
        pass


def test_the_leader_runs_its_periodic_check_at_each_beat_and_survives_its_failure(
    services: Services,
) -> None:
    beats: list[int] = []

    def check() -> None:
        beats.append(1)
        if len(beats) == 1:
            raise RuntimeError("the first check fails")  # logged; the leader keeps leading

    stop = threading.Event()
    args = (services, stop)
    runner = threading.Thread(
        target=run_forever, args=args, kwargs={"leadership": _Lead(), "on_beat": check}, daemon=True
    )
    runner.start()
    try:
        wait_for(lambda: len(beats) >= 3, 10, "three beats")
    finally:
        stop.set()
        runner.join(timeout=10)
    assert not runner.is_alive()
