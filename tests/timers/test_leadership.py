"""Leadership: one holder at a time, on a lease row (SQLite) or an advisory lock (PostgreSQL)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from bot.core.clock import FakeClock
from bot.store.database import make_engine
from bot.timers.leadership import AdvisoryLock, LeaseRow, leadership_for
from tests.conftest import fresh_database

TTL = timedelta(seconds=30)


@pytest.fixture
def sqlite_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(fresh_database("sqlite", request, tmp_path))
    yield engine
    engine.dispose()


@pytest.fixture
def pg_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(fresh_database("postgresql", request, tmp_path))
    yield engine
    engine.dispose()


def test_only_one_process_holds_the_lease(sqlite_engine: Engine, clock: FakeClock) -> None:
    one, two = (LeaseRow(sqlite_engine, clock, name, ttl=TTL) for name in ("one", "two"))
    assert one.acquire() and not two.acquire()
    clock.advance(TTL / 2)
    assert one.renew() and not two.acquire()


def test_a_lease_not_renewed_is_taken_over_once_it_expires(
    sqlite_engine: Engine, clock: FakeClock
) -> None:
    one, two = (LeaseRow(sqlite_engine, clock, name, ttl=TTL) for name in ("one", "two"))
    one.acquire()
    clock.advance(TTL - timedelta(seconds=1))
    assert not two.acquire()
    clock.advance(timedelta(seconds=1))
    assert two.acquire()
    assert not one.renew()  # the old leader learns it lost


def test_a_released_lease_is_free_at_once(sqlite_engine: Engine, clock: FakeClock) -> None:
    one, two = (LeaseRow(sqlite_engine, clock, name, ttl=TTL) for name in ("one", "two"))
    one.acquire()
    one.release()
    assert two.acquire()


def test_postgresql_leadership_is_an_advisory_lock_only_one_session_holds(
    pg_engine: Engine, clock: FakeClock
) -> None:
    one, two = AdvisoryLock(pg_engine), AdvisoryLock(pg_engine)
    assert isinstance(leadership_for(pg_engine, clock, TTL), AdvisoryLock)
    try:
        assert one.acquire() and not two.acquire()
        assert one.renew()
        one.release()
        assert two.acquire()
    finally:
        one.release()
        two.release()


def test_a_leader_whose_connection_dies_loses_the_lock_to_the_standby(
    pg_engine: Engine, clock: FakeClock
) -> None:
    one, two = AdvisoryLock(pg_engine), AdvisoryLock(pg_engine)
    try:
        assert one.acquire()
        with pg_engine.connect() as admin:
            killed = (
                admin.execute(
                    text(
                        "SELECT l.pid FROM pg_locks l "
                        "JOIN pg_database d ON d.oid = l.database "
                        "WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_backend_pid() "
                        "AND d.datname = current_database()"  # this test's own database only
                    )
                )
                .scalars()
                .all()
            )
            assert killed
            admin.execute(
                text("SELECT pg_terminate_backend(pid) FROM unnest(:p) pid"), {"p": killed}
            )
            admin.commit()
            # pg_terminate_backend only signals: the lock goes when the backend has exited.
            for _ in range(500):
                gone = admin.execute(
                    text("SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ANY(:p))"),
                    {"p": killed},
                ).scalar()
                admin.commit()
                if gone:
                    break
                time.sleep(0.01)
        assert two.acquire()
        assert not one.renew()
    finally:
        one.release()
        two.release()
