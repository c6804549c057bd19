"""Event rows for whole-table work (export, replay, `tandem events`): one query streamed in
batches (a server-side cursor on PostgreSQL), each value converted as a `select(events)` would
convert it, with none of the per-row work that select does besides.

A typed select runs every column through SQLAlchemy's result processing; for the events table
only four columns need it (the two JSON payloads and the two timestamps), and SQLAlchemy's own
processors for those are what `scan` applies, so the values are the same by construction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from itertools import repeat
from typing import Any, NamedTuple

from sqlalchemy import Connection, Table, cast, select, type_coerce
from sqlalchemy.types import JSON, NullType, Text

from bot.store.schema import UtcDateTime, events


class StoredEvent(NamedTuple):
    """An event row as stored (its payload not decoded into a model)."""

    seq: int
    event_id: str
    stream_id: str
    stream_version: int
    event_type: str
    schema_version: int
    data: dict[str, Any]
    meta: dict[str, Any]
    idempotency_key: str | None
    occurred_at: datetime
    recorded_at: datetime


_NAMES = StoredEvent._fields


def raw_columns(dialect: Any, columns: Sequence[Any]) -> list[Any]:
    """What a query selects of `columns` for `processors` to convert: each column as the
    driver returns it (no result processing), labelled with its name; on PostgreSQL a JSON
    column as its text (`CAST(... AS TEXT)`), which `processors` decodes. psycopg's own JSONB
    loader, a Python call for each value, costs more than fetching the text and decoding it
    with the engine's reader."""
    return [
        type_coerce(cast(c, Text) if _pg_json(c, dialect) else c, NullType()).label(c.name)
        for c in columns
    ]


def scan(
    conn: Connection, where: Sequence[Any] = (), order_by: Sequence[Any] = (), batch: int = 1000
) -> Iterator[StoredEvent]:
    """The event rows matching `where`, in `order_by` order, fetched `batch` at a time."""
    make = maker(conn.dialect)
    for rows in batches(conn, scan_query(conn.dialect, where, order_by), batch):
        yield from map(make, rows)


def scan_query(dialect: Any, where: Sequence[Any] = (), order_by: Sequence[Any] = ()) -> Any:
    """`scan`'s query: its rows as the driver returns them, which `maker` makes StoredEvents
    of (for a read that fetches in one place and converts in another: bot.store.prefetch)."""
    columns = raw_columns(dialect, [events.c[name] for name in _NAMES])
    return select(*columns).where(*where).order_by(*order_by)


def batches(conn: Connection, query: Any, batch: int) -> Iterator[Sequence[Any]]:
    """The rows of `query` in lists of `batch`, streamed (a server-side cursor on PostgreSQL);
    a reader that stops early (or fails) closes the cursor at once, not at collection (on
    PostgreSQL it would stay open in the transaction)."""
    with _streamed(conn, query, batch) as result:
        yield from result.partitions()


@contextmanager
def _streamed(conn: Connection, query: Any, batch: int) -> Iterator[Any]:
    """The result of `query`, fetched `batch` rows at a time, closed on leaving (a generator
    reading it that is closed early closes it then)."""
    # Per statement: `Connection.execution_options` would set yield_per on the connection in
    # place, and every later query on it (an unseal's key read, a pinned connection's next
    # transaction) would open a server-side cursor of its own.
    result = conn.execute(query, execution_options={"yield_per": batch})
    try:
        yield result
    finally:
        result.close()


def records(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    where: Sequence[Any] = (),
    batch: int = 1000,
    *,
    order_by: Sequence[Any] = (),
) -> Iterator[list[dict[str, Any]]]:
    """The rows of `table` matching `where` (which may join other tables), in `order_by` order,
    as dicts of `columns` in lists of `batch`, streamed (a server-side cursor on PostgreSQL);
    each value as a typed select reads it (`value_rows`, each row zipped with the column names
    in C)."""
    names = list(columns)
    for rows in value_rows(conn, table, names, where, batch, order_by=order_by):
        yield list(map(dict, map(zip, repeat(names), rows)))


def value_rows(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    where: Sequence[Any] = (),
    batch: int = 1000,
    *,
    order_by: Sequence[Any] = (),
) -> Iterator[list[tuple[Any, ...]]]:
    """`records`' rows as tuples of the values of `columns`, in that order, for a reader that needs
    no names (a replay's comparison, where a dict for each row costs more than its tuple). Each
    value as a typed select reads it: the columns read as stored, then converted by their
    `processors`, column by column (each processor mapped over its column and the rows zipped back,
    the loops over the rows running in C; a typed select converts and wraps each value of each
    row in Python, at several times the cost)."""
    query = select(*raw_columns(conn.dialect, [table.c[n] for n in columns]))
    query = query.where(*where).order_by(*order_by)
    with _streamed(conn, query, batch) as result:  # a reader that stops early closes it now
        coltypes = [d[1] for d in result.cursor.description]
        converted = processors(conn.dialect, [table.c[n] for n in columns], coltypes)
        for rows in result.partitions():
            values: list[Any] = list(zip(*rows, strict=True))
            for index, process in converted:
                values[index] = list(map(process, values[index]))
            yield list(zip(*values, strict=True))


def processors(
    dialect: Any, columns: Sequence[Any], coltypes: Sequence[Any] = ()
) -> list[tuple[int, Callable[[Any], Any]]]:
    """(index, processor) of each of `columns` (as `raw_columns` selects them) whose values a
    typed select converts: the column type's own result processor (given the driver's type
    code of each column, from the cursor's description, which numeric columns on PostgreSQL
    need), or on SQLite for a `UtcDateTime` column the same conversion done directly
    (`_sqlite_utc`), or on PostgreSQL for a JSON column (selected as text) the engine's
    reader of JSON, which psycopg would have called on the same text."""
    converted: list[tuple[int, Callable[[Any], Any]]] = []
    for index, column in enumerate(columns):
        if _pg_json(column, dialect):
            converted.append((index, _json_text(dialect._json_deserializer or json.loads)))
            continue
        coltype = coltypes[index] if coltypes else None
        process = column.type.dialect_impl(dialect).result_processor(dialect, coltype)
        if process is None:
            continue
        if dialect.name == "sqlite" and isinstance(column.type, UtcDateTime):
            process = _sqlite_utc(process)
        elif dialect.name == "sqlite" and _plain_json(column, dialect, coltype):
            process = _sqlite_json(process, dialect._json_deserializer or json.loads)
        converted.append((index, process))
    return converted


# What `typed_four` returns: the processors of data, meta, occurred_at and recorded_at.
Four = tuple[Callable[[Any], Any], Callable[[Any], Any], Callable[[Any], Any], Callable[[Any], Any]]


def typed_four(dialect: Any) -> Four | None:
    """The processors of a raw row of `scan_query` when the only columns it converts are
    data, meta, occurred_at and recorded_at (SQLite and PostgreSQL both): those four, in that
    order; else None (each converted column is then `processors`' to apply)."""
    converted = processors(dialect, [events.c[name] for name in _NAMES])
    if [i for i, _ in converted] != [6, 7, 9, 10]:
        return None
    (_, data), (_, meta), (_, occurred), (_, recorded) = converted
    return data, meta, occurred, recorded


def maker(dialect: Any) -> Callable[[Any], StoredEvent]:
    """A function from a raw row of `scan_query` to its StoredEvent, with the typed columns'
    own processors."""
    new = StoredEvent._make
    four = typed_four(dialect)
    if four is not None:
        data, meta, occurred, recorded = four

        def make(row: Any) -> StoredEvent:
            (seq, eid, sid, ver, kind, schema, d, m, key, occ, rec) = row
            return new((seq, eid, sid, ver, kind, schema, data(d), meta(m), key, occurred(occ),
                        recorded(rec)))  # fmt: skip

        return make

    converted = processors(dialect, [events.c[name] for name in _NAMES])

    def make_any(row: Any) -> StoredEvent:
        values = list(row)
        for index, process in converted:
            values[index] = process(values[index])
        return new(values)

    return make_any


def _sqlite_utc(generic: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A UTC column's processor on SQLite: what `generic` (SQLAlchemy's chain: the dialect's
    `datetime.fromisoformat` of the stored text, then `UtcDateTime`'s UTC) returns, parsed
    directly as the stored text with a UTC offset (cheaper: attaching the zone with `replace` costs
    four parses); SQL NULL is None at once (not through the fast path's exception and `generic`:
    most of the outbox's `sent_at` are NULL); any other value the fast path refuses (one that
    carries its own offset, not text) goes through `generic` itself."""
    parse = datetime.fromisoformat

    def utc(value: Any) -> Any:
        if value is None:
            return None
        try:
            return parse(value + "+00:00")
        except (TypeError, ValueError):
            return generic(value)

    return utc


def _pg_json(column: Any, dialect: Any) -> bool:
    """Whether a column is JSON (or JSONB) on PostgreSQL."""
    return dialect.name == "postgresql" and isinstance(column.type.dialect_impl(dialect), JSON)


def _json_text(loads: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A JSON column's processor on PostgreSQL, where it is selected as text: the value that
    text decodes to (SQL NULL is None)."""

    def decoded(value: Any) -> Any:
        return None if value is None else loads(value)

    return decoded


def _plain_json(column: Any, dialect: Any, coltype: Any) -> bool:
    """Whether a column is JSON whose stored text SQLAlchemy hands straight to the dialect's
    deserializer (no string processing first)."""
    impl = column.type.dialect_impl(dialect)
    return isinstance(impl, JSON) and impl._str_impl.result_processor(dialect, coltype) is None


def _sqlite_json(
    generic: Callable[[Any], Any], loads: Callable[[Any], Any]
) -> Callable[[Any], Any]:
    """A JSON column's processor on SQLite: what `generic` (the dialect's wrapper, then
    SQLAlchemy's JSON processor, then the engine's deserializer) returns, with the
    deserializer called directly; a value it refuses by type (a number) goes through
    `generic`, which passes numbers through."""

    def direct(value: Any) -> Any:
        if value is None:
            return None
        try:
            return loads(value)
        except TypeError:
            return generic(value)

    return direct
