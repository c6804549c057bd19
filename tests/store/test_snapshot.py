"""`EventStore.snapshot`: reads that agree with each other, whatever commits meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Connection, Table, func, select, text
from sqlalchemy.exc import DBAPIError

from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.schema import events, participants
from tests.conftest import fresh_database
from tests.factories import enrolled


def _enroll(store: EventStore, n: int) -> None:
    person = enrolled(phone=f"+1415555{n:04d}")
    store.append(participant_stream(person.participant_id), [person])


def _counts(conn: Connection, *tables: Table) -> tuple[int, ...]:
    return tuple(conn.execute(select(func.count()).select_from(t)).scalar_one() for t in tables)


def test_every_read_in_a_snapshot_sees_the_same_moment(store: EventStore) -> None:
    _enroll(store, 1)
    with store.snapshot() as conn:
        before = _counts(conn, events, participants)
        _enroll(store, 2)  # commits on another connection
        after = _counts(conn, events, participants)
    assert before == after == (1, 1)
    with store.reading() as conn:
        assert _counts(conn, events, participants) == (2, 2)


@pytest.fixture
def postgres_store(request: pytest.FixtureRequest, tmp_path: Path) -> EventStore:
    store = EventStore(make_engine(fresh_database("postgresql", request, tmp_path), pool_size=1))
    request.addfinalizer(store.engine.dispose)
    return store


def test_a_postgresql_snapshot_is_read_only_and_leaves_its_connection_as_it_found_it(
    postgres_store: EventStore,
) -> None:
    store = postgres_store
    with store.snapshot() as conn:
        assert conn.execute(text("SHOW transaction_isolation")).scalar_one() == "repeatable read"
        pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
    with pytest.raises(DBAPIError, match="read-only transaction"):
        with store.snapshot() as conn:
            conn.execute(text("CREATE TEMP TABLE t (x int)"))
    with store.reading() as conn:  # the pooled connection, back at the defaults
        assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() == pid
        assert conn.execute(text("SHOW transaction_isolation")).scalar_one() == "read committed"
        assert conn.execute(text("SHOW transaction_read_only")).scalar_one() == "off"
