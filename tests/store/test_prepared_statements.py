"""On PostgreSQL the statements a turn repeats are prepared once per connection: read-only
transactions end without the ROLLBACK that makes psycopg forget what it has prepared."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, select, text

from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import participant_of, participant_stream
from bot.store.schema import participants
from bot.store.sealing import Sealer
from tests.conftest import TEST_MASTER_KEY, fresh_database
from tests.factories import enrolled, received

THRESHOLD_AND_MORE = 8  # psycopg prepares a statement at its 6th execution (prepare_threshold 5)


@pytest.fixture
def pg_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    engine = make_engine(fresh_database("postgresql", request, tmp_path))
    store = EventStore(engine, sealer=Sealer(TEST_MASTER_KEY))
    yield store
    engine.dispose()


def _participant(store: EventStore) -> str:
    person = enrolled()
    store.append(participant_stream(person.participant_id), [person])
    return participant_of(participant_stream(person.participant_id))


def _prepared(conn: Connection) -> list[str]:
    rows = conn.execute(text("SELECT statement FROM pg_prepared_statements")).scalars()
    return [" ".join(s.split()) for s in rows]


def _read(store: EventStore, pid: str) -> None:
    with store.reading() as conn:
        assert conn.execute(select(participants).where(participants.c.participant_id == pid)).one()


def test_reads_on_a_pinned_connection_keep_their_statement_prepared(pg_store: EventStore) -> None:
    pid = _participant(pg_store)
    with pg_store.pinned():
        for _ in range(THRESHOLD_AND_MORE):
            _read(pg_store, pid)
        with pg_store._statements() as conn:
            prepared = _prepared(conn)
    assert any(s.startswith("SELECT participants.participant_id") for s in prepared), prepared


def test_reads_on_pooled_connections_keep_their_statement_prepared(pg_store: EventStore) -> None:
    pid = _participant(pg_store)
    for _ in range(THRESHOLD_AND_MORE):  # one connection in the pool: each read checks it out
        _read(pg_store, pid)
    with pg_store.engine.connect() as conn:
        prepared = _prepared(conn)
    assert any(s.startswith("SELECT participants.participant_id") for s in prepared), prepared


def test_appends_of_any_number_of_events_share_one_prepared_insert(pg_store: EventStore) -> None:
    # One statement text for 2 to INSERT_EVENTS_AT_MOST rows (a JSON document of records): a
    # multi-row VALUES was a statement of its own for each count, none executed often enough
    # to be prepared, and psycopg converted its placeholders again each time past 50 values.
    stream = participant_stream(_participant(pg_store))
    with pg_store.pinned():
        for count in range(2, 2 + THRESHOLD_AND_MORE):
            pg_store.append(stream, [received(f"SM{count}-{n}") for n in range(count)])
        with pg_store._statements() as conn:
            prepared = _prepared(conn)
    inserts = [s for s in prepared if s.startswith("INSERT INTO events")]
    assert len(inserts) == 1 and "jsonb_to_recordset" in inserts[0], prepared
