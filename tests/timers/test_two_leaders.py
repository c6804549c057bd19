"""Two scheduler processes: exactly one leads; when it dies the other takes over (that a
standby takes an expired lease, and when, is tested on a fake clock: tests/store/test_leases.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.clock import SystemClock
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from tests.timers.live import SchedulerProcess, firings_per_timer, outcome_counts, wait_for
from tests.timers.test_restart import schedule_spread

LEASE = 2.0  # seconds; a standby tries again every third of it


@pytest.fixture
def live_store(database_url: str) -> Iterator[EventStore]:
    store = EventStore(make_engine(database_url), clock=SystemClock())
    yield store
    store.engine.dispose()


@pytest.mark.slow
def test_one_of_two_processes_leads_and_the_other_takes_over_when_it_dies(
    database_url: str, live_store: EventStore
) -> None:
    schedule_spread(live_store, 300, datetime.now(UTC) + timedelta(seconds=3), timedelta(seconds=6))
    args = ("--lease", str(LEASE), "--sweep", "0.5", "--grace", "reminder=none")
    pair = [SchedulerProcess(database_url, name, *args) for name in ("one", "two")]
    try:
        wait_for(lambda: outcome_counts(live_store).get("fired", 0) >= 60, 60, "first firings")
        leaders = [p for p in pair if p.became_leader() is not None]
        assert len(leaders) == 1, "exactly one scheduler runs"
        (leader,) = leaders
        (standby,) = [p for p in pair if p is not leader]
        leader.kill()
        # A liveness bound, not a timing claim: a loaded machine may be slow to schedule it.
        wait_for(standby.became_leader, 60, "the standby to take over")
        wait_for(lambda: outcome_counts(live_store).get("scheduled", 0) == 0, 60, "every firing")
    finally:
        for process in pair:
            if process.proc.returncode is None:
                process.stop()
    per_timer = firings_per_timer(live_store)
    assert len(per_timer) == 300 and set(per_timer.values()) == {1}
    assert outcome_counts(live_store) == {"fired": 300}
