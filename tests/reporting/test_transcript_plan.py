"""A transcript is read through its stream's index, not by scanning every message event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from bot.reporting.transcript import LINE_TYPES, read_lines, read_page
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types.messages import MessageQueued
from bot.store.events import new_id, participant_stream
from tests.conftest import fresh_database
from tests.factories import enrolled, received


@pytest.fixture
def sqlite_store(request: pytest.FixtureRequest, tmp_path: Path) -> EventStore:
    store = EventStore(make_engine(fresh_database("sqlite", request, tmp_path)))
    request.addfinalizer(store.engine.dispose)
    return store


def _plans(store: EventStore, read: Any) -> list[str]:
    """SQLite's plan of every SELECT on events that `read()` issues."""
    issued: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        if statement.startswith("SELECT") and "FROM events" in statement:
            issued.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        read()
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    with store.engine.connect() as conn:
        return [
            " ".join(row[3] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params))
            for sql, params in issued
        ]


def test_reading_a_transcript_searches_the_stream_index_only(sqlite_store: EventStore) -> None:
    first = enrolled()
    phone = first.phone
    sent = MessageQueued(outbox_id=new_id(), to_address=phone, channel="sms", body="hello")
    sqlite_store.append(participant_stream(first.participant_id), [first, received(), sent])
    pid = first.participant_id
    plans = _plans(sqlite_store, lambda: list(read_lines(sqlite_store, pid)))
    plans += _plans(sqlite_store, lambda: read_page(sqlite_store, pid, 0, 10))
    assert len(plans) >= 3, plans
    for plan in plans:
        # The stream's index, or the primary key (the page cursor's own version)
        assert "(stream_id=? AND stream_version>?)" in plan or "(rowid=?)" in plan, plan
        assert "ix_events_event_type_seq" not in plan and "SCAN" not in plan, plan
    assert sum("(stream_id=? AND stream_version>?)" in plan for plan in plans) >= 2, plans


def test_a_later_page_starts_its_walk_of_the_stream_at_the_cursor(
    sqlite_store: EventStore,
) -> None:
    other = enrolled(
        phone="+14155550199"
    )  # another stream first, so that a seq is not its stream's version
    sqlite_store.append(participant_stream(other.participant_id), [other, received("SMx")])
    first = enrolled()
    stream = participant_stream(first.participant_id)
    sqlite_store.append(stream, [first, *[received(f"SM{n}", body=f"m{n}") for n in range(30)]])
    pid = first.participant_id
    page1, cursor = read_page(sqlite_store, pid, 0, 10)
    assert cursor is not None
    bounds: list[Any] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        if "stream_version >" in statement and "FROM events" in statement:
            bounds.append(parameters)

    event.listen(sqlite_store.engine, "before_cursor_execute", record)
    try:
        page2, _ = read_page(sqlite_store, pid, cursor, 5)
    finally:
        event.remove(sqlite_store.engine, "before_cursor_execute", record)
    cursor_version = next(e.stream_version for e in sqlite_store.load(stream) if e.seq == cursor)
    assert cursor_version > 10 and cursor_version != cursor
    # The lower bound of stream_version (bound after the stream and the line types) is the
    # cursor's version, not 0, the stream's start.
    assert bounds and all(p[1 + len(LINE_TYPES)] == cursor_version for p in bounds), bounds
    assert [line.seq for line in page2][0] > cursor
    assert [line.text for line in page1 + page2] == [f"m{n}" for n in range(15)]
