"""The scheduler's trigger on a simulated clock: a job runs once the clock reaches it, not on
the wall clock; in instant order; a removed job never runs."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.clock import FakeClock
from bot.timers.simulated_trigger import SimulatedTrigger

START = datetime(2026, 1, 5, 6, 0, tzinfo=UTC)


def wait_for(condition, seconds: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the trigger did not run the job in time"
        time.sleep(0.01)


def test_jobs_run_when_the_simulated_clock_reaches_them_in_order() -> None:
    clock = FakeClock(START)
    trigger = SimulatedTrigger(clock)
    ran: list[str] = []
    lock = threading.Lock()

    def run(name: str) -> None:
        with lock:
            ran.append(name)

    trigger.start(paused=True)
    try:
        trigger.add_job(run, "date", run_date=START + timedelta(days=1), id="b", args=["b"])
        trigger.add_job(run, "date", run_date=START + timedelta(hours=1), id="a", args=["a"])
        trigger.add_job(run, "date", run_date=START + timedelta(days=2), id="c", args=["c"])
        trigger.remove_job("c")
        clock.advance(timedelta(days=3))
        time.sleep(0.1)
        assert ran == []  # paused
        trigger.resume()
        wait_for(lambda: len(ran) == 2)
        time.sleep(0.1)
        assert ran == ["a", "b"]  # by instant, and the removed one never
        trigger.remove_job("a")  # it has run: nothing to remove, no error
        trigger.add_job(
            run, "date", run_date=clock.now() + timedelta(minutes=1), id="d", args=["d"]
        )
        time.sleep(0.1)
        assert ran == ["a", "b"]  # not yet due on the simulated clock, however long the wait
        clock.advance(timedelta(minutes=1))
        wait_for(lambda: ran[-1:] == ["d"])
    finally:
        trigger.shutdown()
    assert not trigger.running


def test_only_date_jobs_are_taken() -> None:
    with pytest.raises(ValueError, match="date jobs only"):
        SimulatedTrigger(FakeClock(START)).add_job(
            print, "interval", run_date=START, id="x", args=[]
        )
