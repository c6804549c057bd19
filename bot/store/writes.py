"""The event store's statements, built once and reused with parameters: the event INSERTs (one
event, one keyed, many), the stream's lock, version and key reads, and the projection writes
(a row; an append's rows in one statement of CTEs; a batch's rows of one kind in one statement
over `unnest`), with the ConstraintViolation a refused write raises."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import orjson
from orjson import Fragment
from sqlalchemy import (
    Insert,
    Integer,
    Table,
    Text,
    Update,
    and_,
    bindparam,
    cast,
    column,
    func,
    insert,
    literal_column,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.dialects.postgresql import Insert as PostgreSQLInsert
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import Insert as SQLiteInsert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError

from bot.store.database import json_dumps
from bot.store.direct import Direct
from bot.store.projections import Projection, Row
from bot.store.schema import PROJECTION_TABLES, UtcDateTime, events


class ConstraintViolation(Exception):
    """A projection refused the events (e.g. a phone number already enrolled)."""


# Statements are built once and reused with parameters: building them per append cost more
# than executing them.
# RETURNING pairs each seq with its event_id: the rows come back in no promised order, and
# asking SQLAlchemy for parameter order makes it insert one row at a time on SQLite.
INSERT_EVENTS = insert(events).returning(events.c.event_id, events.c.seq)
LOAD_STREAM = (
    select(events).where(events.c.stream_id == bindparam("s")).order_by(events.c.stream_version)
)
ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(hashtextextended(:s, 0))")
STREAM_VERSION = select(func.coalesce(func.max(events.c.stream_version), 0)).where(
    events.c.stream_id == bindparam("s")
)
SEEN_KEY = select(events.c.seq).where(
    and_(events.c.stream_id == bindparam("s"), events.c.idempotency_key == bindparam("k"))
)


# The columns of an event row, in the order the append builds it (seq is the database's).
EVENT_KEYS = tuple(c.name for c in events.columns if c.name != "seq")
INSERT_EVENT = Direct(INSERT_EVENTS, EVENT_KEYS)


# The most rows of one append inserted by `insert_events` (a turn appends 2 to 8 events; an
# append of more goes through SQLAlchemy's "insertmanyvalues" with INSERT_EVENTS).
INSERT_EVENTS_AT_MOST = 16


@functools.cache
def insert_events(count: int) -> Direct:
    """SQLite: INSERT of `count` event rows in one multi-row VALUES on the driver's cursor
    (PostgreSQL's is INSERT_EVENT_RECORDS), RETURNING
    each row's event_id and seq. Row n's values are its EVENT_KEYS suffixed `_n` (`event_rows`
    names them so); each placeholder has its column's type, so its bind processor (JSON, UTC
    times) is the one a single-row INSERT runs."""
    rows = [
        {key: bindparam(f"{key}_{n}", type_=events.c[key].type) for key in EVENT_KEYS}
        for n in range(count)
    ]
    return Direct(insert(events).values(rows).returning(events.c.event_id, events.c.seq))


def event_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The parameters of `insert_events(len(rows))` for these event rows."""
    return {f"{key}_{n}": row[key] for n, row in enumerate(rows) for key in EVENT_KEYS}


# PostgreSQL: the event rows of an append as one JSON document of records, read back into rows
# by `jsonb_to_recordset` and inserted in the order of their `n`: one parameter and one
# statement text for any number of rows. psycopg converts a query to PostgreSQL's placeholders
# in Python, and caches the conversion only for 50 parameters or fewer (its
# MAX_CACHED_STATEMENT_PARAMS), so `insert_events(6)` (60) was converted again at every turn,
# costing more client CPU than this way (docs/performance.md, Append). Arrays over `unnest`
# (`write_many`) cost more than VALUES: each element passes its type's bind processor.
_RECORDS = (
    func.jsonb_to_recordset(cast(bindparam("records", type_=Text), JSONB))
    .table_valued(
        column("n", Integer),
        column("seq", events.c.seq.type),
        *[column(key, events.c[key].type) for key in EVENT_KEYS],
    )
    .render_derived(name="given", with_types=True)
)
INSERT_EVENT_RECORDS = Direct(
    insert(events)
    .from_select(
        list(EVENT_KEYS), select(*[_RECORDS.c[key] for key in EVENT_KEYS]).order_by(_RECORDS.c.n)
    )
    .returning(events.c.event_id, events.c.seq)
)
# The same with each record's seq given (drawn beforehand by ALLOCATE_SEQS), returning nothing:
# an append sent in one flight with its commit (bot.store.flight) needs no answer back.
INSERT_SEQUENCED_RECORDS = Direct(
    insert(events).from_select(
        ["seq", *EVENT_KEYS],
        select(*[_RECORDS.c[key] for key in ("seq", *EVENT_KEYS)]).order_by(_RECORDS.c.n),
    )
)
# The same for a batch of appends (`Transaction.append_batch`), each row keyed or not: a row
# whose key its stream holds already is not written and not returned (`insert_keyed`'s
# clause). One statement text for any number of rows, where "insertmanyvalues" rendered (and
# psycopg converted) a new one for each size of batch.
INSERT_KEYED_RECORDS = Direct(
    postgresql_insert(events)
    .from_select(
        list(EVENT_KEYS), select(*[_RECORDS.c[key] for key in EVENT_KEYS]).order_by(_RECORDS.c.n)
    )
    .on_conflict_do_nothing(
        index_elements=[events.c.stream_id, events.c.idempotency_key],
        index_where=events.c.idempotency_key.isnot(None),
    )
    .returning(events.c.event_id, events.c.seq)
)
# PostgreSQL: `n` seqs drawn from the events' own sequence (what the column's default draws).
ALLOCATE_SEQS = Direct(
    select(
        func.nextval(literal_column("'events_seq_seq'::regclass"), type_=events.c.seq.type).label(
            "seq"
        )
    ).select_from(func.generate_series(1, bindparam("n", type_=Integer)))
)


@functools.cache
def lock_row(projection: Projection) -> Direct:
    """The lock `select_row(projection, lock=True)` takes, without reading the row back."""
    table = PROJECTION_TABLES[projection.name]
    return Direct(
        select(literal_column("1"))
        .select_from(table)
        .where(table.c[projection.key_column] == bindparam("key"))
        .with_for_update()
    )


def event_records(
    rows: list[dict[str, Any]], dialect: Any, seqs: list[int] | None = None
) -> dict[str, str]:
    """The parameter of INSERT_EVENT_RECORDS (or, with their `seqs`, INSERT_SEQUENCED_RECORDS)
    for these event rows, each with its place `n`:
    the payloads as the engine's JSON text (`json_dumps`, the serializer a single-row INSERT
    sends them through), embedded as they are; the times as their column's type (UtcDateTime,
    both) binds them: in UTC, a naive one refused."""
    utc_type = events.c.occurred_at.type
    assert isinstance(utc_type, UtcDateTime)
    utc = utc_type.process_bind_param
    records = [
        {
            **row,
            "n": n,
            "data": Fragment(json_dumps(row["data"])),
            "meta": Fragment(json_dumps(row["meta"])),
            "occurred_at": utc(row["occurred_at"], dialect),
            "recorded_at": utc(row["recorded_at"], dialect),
        }
        for n, row in enumerate(rows)
    ]
    if seqs is not None:
        for record, seq in zip(records, seqs, strict=True):
            record["seq"] = seq
    return {"records": orjson.dumps(records).decode()}


@functools.cache
def insert_keyed(dialect: str) -> Direct:
    """INSERT of an event carrying an idempotency key that writes nothing (and returns no seq)
    when the stream already holds the key: the duplicate check and the insert in one statement.
    Only a clash on the key is absorbed; any other unique clash still raises."""
    builds: dict[str, Callable[[Table], SQLiteInsert | PostgreSQLInsert]]
    builds = {"sqlite": sqlite_insert, "postgresql": postgresql_insert}
    build = builds[dialect]
    return Direct(
        build(events)
        .on_conflict_do_nothing(
            index_elements=[events.c.stream_id, events.c.idempotency_key],
            index_where=events.c.idempotency_key.isnot(None),
        )
        .returning(events.c.seq),
        EVENT_KEYS,
    )


@functools.cache
def insert_many(dialect: str) -> Any:
    """INSERT of many event rows, keyed or not, in one statement (SQLAlchemy's "insertmanyvalues"
    renders one multi-row VALUES), RETURNING each written row's event_id and seq; a row whose
    key its stream holds already is not written and not returned."""
    statement = insert_keyed(dialect).statement
    assert isinstance(statement, Insert)
    return statement.returning(events.c.event_id)


@functools.cache
def select_row(projection: Projection, lock: bool) -> Direct:
    table = PROJECTION_TABLES[projection.name]
    query = select(*[table.c[name] for name in projection.columns]).where(
        table.c[projection.key_column] == bindparam("key")
    )
    return Direct(query.with_for_update() if lock else query)


@functools.cache
def insert_row(name: str, columns: tuple[str, ...]) -> Direct:
    return Direct(insert(PROJECTION_TABLES[name]), columns)


@functools.cache
def update_row(projection: Projection, columns: frozenset[str]) -> Direct:
    table = PROJECTION_TABLES[projection.name]
    return Direct(
        update(table)
        .where(table.c[projection.key_column] == bindparam("key"))
        .values({name: bindparam(f"v_{name}") for name in columns})
    )


def row_write(
    projection: Projection, key: str, before: Row | None, after: Row
) -> tuple[Direct, dict[str, Any]] | None:
    """The statement that makes `projection`'s row `key` what it is `after` (an INSERT where
    there was none `before`, else an UPDATE of the columns that changed) and its parameters;
    None where nothing changed."""
    if before is None:
        return insert_row(projection.name, tuple(after)), after
    changed = {k: v for k, v in after.items() if before.get(k) != v}
    if not changed:
        return None
    params = {f"v_{k}": v for k, v in changed.items()}
    params["key"] = key
    return update_row(projection, frozenset(changed)), params


# One write of a projection row: (projection, "insert" or "update", its columns in order).
WriteShape = tuple[tuple[Projection, str, tuple[str, ...]], ...]


def combined(writes: list[tuple[Projection, str, Row | None, Row]]) -> tuple[WriteShape, dict]:
    """The shape of an append's projection writes and the parameters of their one statement."""
    shape, params = [], {}
    for n, (projection, key, before, after) in enumerate(writes):
        if before is None:
            columns = tuple(after)
            shape.append((projection, "insert", columns))
        else:
            columns = tuple(k for k, v in after.items() if before.get(k) != v)
            shape.append((projection, "update", columns))
            params[f"w{n}_key"] = key
        params.update({f"w{n}_{c}": after[c] for c in columns})
    return tuple(shape), params


@functools.lru_cache(maxsize=256)
def write_all(shape: WriteShape) -> Direct:
    """PostgreSQL: several projection writes as one statement of data-modifying CTEs (each on
    its own row: `_flush` writes a row once), one round trip instead of one each."""
    ctes = []
    for n, (projection, kind, columns) in enumerate(shape):
        table = PROJECTION_TABLES[projection.name]
        values: dict[str, Any] = {c: bindparam(f"w{n}_{c}") for c in columns}
        write: Insert | Update
        if kind == "insert":
            write = insert(table).values(values)
        else:
            key = table.c[projection.key_column] == bindparam(f"w{n}_key")
            write = update(table).where(key).values(values)
        ctes.append(write.cte(f"w{n}"))
    return Direct(select(literal_column("1")).add_cte(*ctes))


@functools.lru_cache(maxsize=64)
def write_many(projection: Projection, kind: str, columns: tuple[str, ...]) -> Direct:
    """PostgreSQL: rows of one projection written alike in one statement of the same text for
    any number of rows: an INSERT ... SELECT, or an UPDATE ... FROM, over `unnest` of one array
    parameter per column (`a_<column>`, and `a_key` for an update's keys)."""
    table = PROJECTION_TABLES[projection.name]
    names = columns if kind == "insert" else ("key", *columns)
    types = [table.c[projection.key_column if n == "key" else n].type for n in names]
    arrays = [
        cast(bindparam(f"a_{n}", type_=ARRAY(t, dimensions=1)), ARRAY(t, dimensions=1))
        for n, t in zip(names, types, strict=True)
    ]
    given = func.unnest(*arrays).table_valued(*names).render_derived(name="given")
    if kind == "insert":
        return Direct(
            insert(table).from_select(list(columns), select(*[given.c[c] for c in columns]))
        )
    key = table.c[projection.key_column]
    return Direct(update(table).where(key == given.c.key).values({c: given.c[c] for c in columns}))


def refusal(exc: IntegrityError) -> str:
    """What the database refused, without PostgreSQL's DETAIL line, which quotes the values
    (`Key (phone)=(+1...) already exists`): the message is logged and shown."""
    return str(exc.orig).splitlines()[0]


def refused(
    writes: list[tuple[Projection, str, Row | None, Row]], exc: IntegrityError
) -> ConstraintViolation:
    """The ConstraintViolation of a refused statement that wrote several projection rows."""
    names = ", ".join(sorted({w[0].name for w in writes}))
    return ConstraintViolation(f"{names}: {refusal(exc)}")
