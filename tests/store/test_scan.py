"""`scan` reads event rows, and `records` any table's rows, as a typed select reads them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select
from sqlalchemy import text as sql
from sqlalchemy.dialects import sqlite

from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types.messages import MessageQueued
from bot.store.events import NewEvent, participant_stream
from bot.store.scan import _sqlite_utc, processors, records, scan
from bot.store.schema import events, outbox, participants
from tests.factories import enrolled, received
from tests.store.statements import statements


def test_scanned_rows_hold_what_a_typed_select_returns(store: EventStore) -> None:
    person = enrolled()
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    whole_second = datetime(2026, 1, 31, 8, 0, tzinfo=UTC)  # stored without a fraction shown
    store.append(stream, [NewEvent(received("SM1", 'café, "quoted"\n'), whole_second)])
    store.append(stream, [received("SM2", "nul\x00byte")], idempotency_key="k-1")  # escaped
    store.append("system", [NewEvent(enrolled(phone="+14155550000"), meta={"actor": "cli"})])

    with store.reading() as conn:
        typed = [tuple(r) for r in conn.execute(select(events).order_by(events.c.seq))]
        scanned = [tuple(r) for r in scan(conn, order_by=[events.c.seq], batch=2)]

    assert scanned == typed
    assert [type(v) for v in scanned[1]] == [type(v) for v in typed[1]]
    assert scanned[1][9].tzinfo is not None


@pytest.mark.parametrize("batch", [1, 2, 10])
def test_records_hold_what_a_typed_select_returns(store: EventStore, batch: int) -> None:
    """Rows of any table (JSON, times, numbers, nulls), in lists of `batch`."""
    for n in range(3):
        person = enrolled(phone=f"+1415555000{n}")
        queued = MessageQueued(
            outbox_id=f"ob-{n}", to_address=person.phone, channel="sms", body=f"hi {n}"
        )
        store.append(participant_stream(person.participant_id), [person, queued])
    for table in (outbox, participants):
        key = next(iter(table.primary_key.columns))
        names = [c.name for c in table.c]
        with store.reading() as conn:
            typed = [dict(r._mapping) for r in conn.execute(select(table).order_by(key))]
            lists = list(records(conn, table, names, batch=batch))
            where = [key == "no such row"]
            assert list(records(conn, table, names, where, batch=batch)) == []
        read = sorted((row for rows in lists for row in rows), key=lambda row: row[key.name])
        assert read == typed
        assert [type(v) for v in read[0].values()] == [type(v) for v in typed[0].values()]
        assert [len(rows) for rows in lists] == {1: [1, 1, 1], 2: [2, 1], 10: [3]}[batch]


def test_a_scan_streams_its_own_query_only(store: EventStore) -> None:
    """The connection a scan ran on reads buffered again: on PostgreSQL a later query on it
    (an unseal's key read, the next transaction of a pinned connection) would otherwise open
    a server-side cursor of its own."""
    person = enrolled()
    store.append(participant_stream(person.participant_id), [person])
    with store.reading() as conn:
        assert len(list(scan(conn, batch=1))) == 1
        assert "yield_per" not in conn.get_execution_options()
        later = conn.execute(select(events.c.seq))
        assert not later.context.execution_options.get("yield_per")
        assert not getattr(later.cursor, "name", None)  # psycopg's ServerCursor has a name
        assert len(later.all()) == 1


def test_a_scan_left_early_closes_its_cursor(store: EventStore) -> None:
    """A reader that stops (or fails, as an export at a key that does not open) closes the
    scan's cursor when it closes the scan, not when the generator is collected: on PostgreSQL
    a server-side cursor stayed open in the transaction."""
    if store.engine.dialect.name != "postgresql":
        pytest.skip("SQLite keeps no cursor open on the server")
    for n in range(3):
        person = enrolled(phone=f"+1415555000{n}")
        store.append(participant_stream(person.participant_id), [person])
    with store.reading() as conn:
        rows = scan(conn, batch=1)
        next(rows)
        assert conn.execute(sql("SELECT count(*) FROM pg_cursors")).scalar_one() == 1
        rows.close()
        assert conn.execute(sql("SELECT count(*) FROM pg_cursors")).scalar_one() == 0


def test_sqlite_times_parse_fast_to_what_the_typed_column_reads() -> None:
    dialect = sqlite.dialect()
    generic = events.c.occurred_at.type.dialect_impl(dialect).result_processor(dialect, None)
    fast = _sqlite_utc(generic)
    stored = [
        "2026-11-01 05:30:00.123456",  # as SQLAlchemy writes it
        "2026-11-01 05:30:00",  # written by SQL (CURRENT_TIMESTAMP)
        "2026-11-01 05:30:00.000000+05:30",  # an offset, read as the instant it names
        "2026-11-01T01:30:00-04:00",
        None,
    ]
    for text in stored:
        assert fast(text) == generic(text), text
        if text is not None:
            assert fast(text).tzinfo is UTC, text
    assert fast("2026-11-01 05:30:00").isoformat() == "2026-11-01T05:30:00+00:00"
    for refused in ("not a time", b"2026-11-01"):
        with pytest.raises((ValueError, TypeError)):
            generic(refused)
        with pytest.raises((ValueError, TypeError)):
            fast(refused)


def test_sqlite_json_is_decoded_directly_to_what_the_typed_column_reads() -> None:
    dialect = make_engine("sqlite://").dialect  # with the engine's JSON deserializer
    [(_, process)] = processors(dialect, [events.c.data])
    generic = events.c.data.type.dialect_impl(dialect).result_processor(dialect, None)
    assert process is not generic
    for stored in ('{"a": [1, "x"], "b": null}', '{"a":1}', "[]", "null", "3", None, 5, 2.5):
        assert process(stored) == generic(stored), stored
    assert process('{"n": NaN}')["n"] != process('{"n": NaN}')["n"]  # json's NaN, as before
    for refused in ("{not json", b"\xff"):
        with pytest.raises(ValueError):
            generic(refused)
        with pytest.raises(ValueError):
            process(refused)


def test_json_reads_as_the_typed_column_reads_it_on_either_engine(store: EventStore) -> None:
    """On PostgreSQL a JSON column is fetched as its text and decoded by the engine's reader
    (not by psycopg's loader): the values are what a typed select returns, whatever the JSON
    holds: JSON null beside SQL NULL, text beyond ASCII and with escapes, numbers of every
    kind, nesting, an empty object."""
    payloads = [
        {"a": None, "b": [], "c": {}},
        {"text": 'caf\u00e9 \u2014 "quoted"\n\ttab \\ back', "emoji": "\U0001f600"},
        {"n": 9223372036854775807, "f": 1.5e300, "neg": -0.0, "tiny": 5e-324, "i": 0},
        {"deep": {"x": [1, [2, [3, {"y": True, "z": False}]]]}},
        {},
    ]
    with store.transaction() as tx:
        for n, payload in enumerate(payloads):
            tx.conn.execute(
                events.insert().values(
                    event_id=f"json-{n}", stream_id="system:json", stream_version=n + 1,
                    event_type="test.json", schema_version=1, data=payload,
                    meta=None if n == 0 else {"k": payload}, idempotency_key=None,
                    occurred_at=datetime(2026, 1, 31, tzinfo=UTC),
                    recorded_at=datetime(2026, 1, 31, tzinfo=UTC),
                )
            )  # fmt: skip
    where = [events.c.stream_id == "system:json"]
    with statements(store.engine) as seen, store.reading() as conn:
        typed = [tuple(r) for r in conn.execute(select(events).where(*where).order_by("seq"))]
        scanned = [tuple(r) for r in scan(conn, where, [events.c.seq], batch=2)]
        names = ["data", "meta"]
        as_records = [
            (row["data"], row["meta"])
            for rows in records(conn, events, names, where, order_by=[events.c.seq])
            for row in rows
        ]
    assert scanned == typed
    assert [row[6] for row in scanned] == payloads
    assert scanned[0][7] is None and scanned[1][7] == {"k": payloads[1]}
    assert as_records == [(row[6], row[7]) for row in typed]
    # On PostgreSQL the scan and the records (not the typed select) read the JSON columns as
    # text, which the engine's reader decodes; SQLite stores JSON as text already.
    postgres = store.engine.dialect.name == "postgresql"
    reads = [s for s in seen if "FROM events" in s]
    as_text = [("CAST(events.data AS TEXT)" in s, "CAST(events.meta AS TEXT)" in s) for s in reads]
    assert as_text == [(False, False), (postgres, postgres), (postgres, postgres)], reads
