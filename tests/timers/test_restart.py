"""A scheduler killed with SIGKILL and restarted loses no timer and fires none twice."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from bot.core.clock import SystemClock
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.schema import timers
from bot.timers import one_shot
from tests.factories import enrolled
from tests.timers.live import SchedulerProcess, firings_per_timer, outcome_counts, wait_for

GRACE = "reminder=1"  # reminders more than 1 s late are skipped as missed; "at" has 1 hour


@pytest.fixture
def live_store(database_url: str) -> Iterator[EventStore]:
    store = EventStore(make_engine(database_url), clock=SystemClock())
    yield store
    store.engine.dispose()


def schedule_spread(store: EventStore, count: int, first: datetime, spread: timedelta) -> None:
    """`count` timers for ten participants, due evenly over `spread` from `first`, half of
    them "at" (fire however late within an hour) and half "reminder" (1 s grace)."""
    people = []
    for n in range(10):
        data = enrolled(phone=f"+1415555{n:04d}", timezone="UTC")
        store.append(participant_stream(data.participant_id), [data])
        people.append({"participant_id": data.participant_id, "timezone": "UTC"})
    with store.transaction() as tx:
        for n in range(count):
            person = people[n % len(people)]
            kind = "at" if n % 2 == 0 else "reminder"
            due = first + spread * (n / count)
            tx.append(
                participant_stream(person["participant_id"]),
                [one_shot.scheduled(person, kind, due, payload={"n": n})],
            )


@pytest.mark.slow
def test_after_sigkill_and_restart_every_timer_is_fired_once_or_skipped_per_policy(
    database_url: str, live_store: EventStore
) -> None:
    first = datetime.now(UTC) + timedelta(seconds=3)
    schedule_spread(live_store, 1000, first, timedelta(seconds=6))
    args = ("--grace", GRACE, "--lease", "2", "--sweep", "0.5")

    before = SchedulerProcess(database_url, "before", *args)
    try:
        wait_for(lambda: outcome_counts(live_store).get("fired", 0) >= 150, 60, "first firings")
    finally:
        killed = before.kill()
    time.sleep(3)  # downtime: nothing runs while timers fall due
    after = SchedulerProcess(database_url, "after", *args)
    try:
        wait_for(lambda: outcome_counts(live_store).get("scheduled", 0) == 0, 60, "every outcome")
    finally:
        after.stop()

    per_timer = firings_per_timer(live_store)
    assert len(per_timer) == 1000  # none lost
    assert set(per_timer.values()) == {1}  # none fired (or skipped) twice
    with live_store.reading() as conn:
        rows = [dict(r._mapping) for r in conn.execute(select(timers))]
    skipped = [r for r in rows if r["status"] == "skipped"]
    assert skipped, "some reminders fell due during the downtime"
    assert {(r["kind"], r["reason"]) for r in skipped} == {("reminder", "missed")}
    assert all(r["late_seconds"] > 1 for r in skipped)
    late_fired = [r for r in rows if r["status"] == "fired" and r["late_seconds"] > 2]
    assert late_fired and {r["kind"] for r in late_fired} == {"at"}  # within their grace
    assert all(r["due_at"].timestamp() < killed + 60 for r in rows)
