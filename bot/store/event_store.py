"""The event store: append with optimistic concurrency and idempotency, load, and read all."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    and_,
    delete,
    func,
    insert,
    select,
)
from sqlalchemy.engine import RootTransaction
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.base import Executable

import bot.store.event_types  # noqa: F401  (importing the catalogue registers every type)
from bot.core.addresses import parse_address
from bot.core.clock import Clock, SystemClock
from bot.core.storable import storable_json
from bot.store.database import READ_ONLY
from bot.store.direct import Direct
from bot.store.event_types.messages import MessageReceived
from bot.store.event_types.participants import ParticipantEnrolled
from bot.store.events import (
    Event,
    EventData,
    NewEvent,
    encode,
    participant_of,
    sender_of,
)
from bot.store.projections import Folding, Projection, Row, all_projections
from bot.store.schema import PROJECTION_TABLES, events, participant_phones, sender_phones
from bot.store.sealing import Sealer
from bot.store.stored_rows import opened_scanned, row_to_event
from bot.store.writes import (
    ADVISORY_LOCK,
    ALLOCATE_SEQS,
    INSERT_EVENT,
    INSERT_EVENT_RECORDS,
    INSERT_EVENTS,
    INSERT_EVENTS_AT_MOST,
    INSERT_KEYED_RECORDS,
    INSERT_SEQUENCED_RECORDS,
    LOAD_STREAM,
    SEEN_KEY,
    STREAM_VERSION,
    ConstraintViolation,
    combined,
    event_records,
    event_rows,
    insert_events,
    insert_keyed,
    insert_many,
    insert_row,
    lock_row,
    refusal,
    refused,
    row_write,
    select_row,
    update_row,
    write_all,
    write_many,
)

log = logging.getLogger(__name__)


class ConcurrencyError(Exception):
    """The stream moved on since the caller read it: reload and decide again."""

    def __init__(self, stream_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"stream {stream_id!r} is at version {actual}, not the expected {expected}"
        )
        self.stream_id = stream_id
        self.expected = expected
        self.actual = actual


class DuplicateInBatch(Exception):
    """An append of `Transaction.append_batch` carried a key its stream holds already; the rest
    of the batch was written, so the transaction must not commit (see `append_batch`)."""

    def __init__(self, stream_id: str, key: str | None) -> None:
        super().__init__(f"stream {stream_id!r} holds the idempotency key {key!r} already")
        self.stream_id = stream_id
        self.key = key


@dataclass
class AppendResult:
    """What an append did: the recorded events, or `duplicate` when the key was seen before."""

    events: list[Event] = field(default_factory=list)
    duplicate: bool = False

    @property
    def version(self) -> int:
        return self.events[-1].stream_version if self.events else 0


@dataclass
class _Built:
    """One append's rows, ready to insert, with its events as the layers above see them."""

    stream_id: str
    proposed: list[NewEvent]
    rows: list[dict[str, Any]] = field(default_factory=list)
    payloads: list[EventData] = field(default_factory=list)
    metas: list[dict[str, Any]] = field(default_factory=list)  # nothing kept aside


@dataclass
class Staged:
    """An append worked out in full before its stream's lock (`Transaction.stage`): its events,
    the statements that write it, lock first, and the projection writes among them (for what
    a refusal names)."""

    result: AppendResult
    statements: list[tuple[Direct, dict[str, Any]]]
    writes: list[tuple[Projection, str, Row | None, Row]]


def _proposed(new_events: Sequence[NewEvent | EventData]) -> list[NewEvent]:
    proposed = [e if isinstance(e, NewEvent) else NewEvent(e) for e in new_events]
    if not proposed:
        raise ValueError("nothing to append")
    return proposed


def _end_read(transaction: RootTransaction) -> None:
    """End a read-only transaction. On PostgreSQL by COMMIT, which ends a transaction that wrote
    nothing exactly as ROLLBACK does: psycopg forgets every statement it has prepared on the
    connection at a ROLLBACK (a dropped object might be re-created), so reads ending that way
    would keep a turn's statements from ever reaching its `prepare_threshold` and being planned
    once. On SQLite, ROLLBACK (the writer lock is never taken by a deferred read)."""
    if transaction.connection.dialect.name == "postgresql":
        transaction.commit()
    else:
        transaction.rollback()


class Transaction:
    """One database transaction in which several appends (and their projections) commit together."""

    def __init__(self, conn: Connection, store: EventStore) -> None:
        self.conn = conn
        self.store = store
        self.recorded: list[Event] = []
        self._rows: dict[tuple[str, str], Row | None] = {}
        self._locked_rows: set[tuple[str, str]] = set()
        self._locked_streams: set[str] = set()
        # Rows an append's events moved, with what they were before it (None: a new row).
        self._pending: dict[tuple[str, str], tuple[Projection, Row | None]] = {}
        self.made: dict[str, Any] = {}  # data keys made in this transaction
        self._staged: set[str] = set()  # streams whose writes wait for the flight (`stage`)

    def append(
        self,
        stream_id: str,
        new_events: Sequence[NewEvent | EventData],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> AppendResult:
        proposed = _proposed(new_events)
        current = self._locked_version(stream_id)
        if expected_version is not None and expected_version != current:
            # A redelivery of what was recorded since is a duplicate, not a conflict.
            if idempotency_key is not None and self._seen(stream_id, idempotency_key):
                return AppendResult(duplicate=True)
            raise ConcurrencyError(stream_id, expected_version, current)
        built = self._build(stream_id, proposed, idempotency_key, current, self.store.clock.now())
        seqs = self._insert(built.rows)
        if seqs is None:
            return AppendResult(duplicate=True)
        result = self._recorded(built, seqs)
        self._flush()
        self._noted(result.events)
        return result

    def append_batch(
        self, appends: Sequence[tuple[str, Sequence[NewEvent | EventData], str | None]]
    ) -> list[AppendResult]:
        """Several appends (stream, events, idempotency key), each recorded as `append` would
        record it with no expected version, in a constant number of round trips however many
        there are: every event row in one INSERT, the projection rows in one flush (a
        statement for each kind of write). A key its stream holds already raises
        `DuplicateInBatch` after the other rows were written (the rest of that append's events
        too): the caller lets the transaction roll back and appends one at a time, the
        duplicate then writing nothing."""
        if not appends:
            return []
        now = self.store.clock.now()
        versions: dict[str, int] = {}  # each stream's version after the appends built so far
        batch: list[_Built] = []
        for stream_id, new_events, key in appends:
            proposed = _proposed(new_events)
            if stream_id not in versions:
                versions[stream_id] = self._locked_version(stream_id)
            batch.append(self._build(stream_id, proposed, key, versions[stream_id], now))
            versions[stream_id] += len(proposed)
        rows = [row for built in batch for row in built.rows]
        if self.conn.dialect.name == "postgresql":
            records = event_records(rows, self.conn.dialect)
            seq_of = {
                r["event_id"]: r["seq"] for r in INSERT_KEYED_RECORDS.rows(self.conn, records)
            }
        else:
            written = self.conn.execute(insert_many(self.conn.dialect.name), rows)
            seq_of = {r.event_id: r.seq for r in written}
        if len(seq_of) < len(rows):  # only a key's clash writes nothing without raising
            absent = next(row for row in rows if row["event_id"] not in seq_of)
            raise DuplicateInBatch(absent["stream_id"], absent["idempotency_key"])
        results = [
            self._recorded(built, [seq_of[row["event_id"]] for row in built.rows])
            for built in batch
        ]
        self._flush(grouped=True)
        self._noted([event for result in results for event in result.events])
        return results

    def stage(
        self,
        stream_id: str,
        new_events: Sequence[NewEvent | EventData],
        expected_version: int,
        head: Row,
    ) -> Staged:
        """PostgreSQL: an append to a participant's stream, decided at `expected_version` on
        the stream's head row `head` (read without the lock, at that version), worked out in
        full before the lock is taken: encoded and sealed, its seqs drawn from the events'
        sequence, folded into the projection rows (any other row it moves read now, unlocked).
        Nothing is written: the statements it returns (the head row's lock, the events' INSERT,
        the projection writes) go to the server with the COMMIT in one flight
        (bot.store.flight.commit_in_one_flight), so that the lock is held only while the
        server runs them, never while this process waits for the CPU. A stream that moved
        since `expected_version` makes the INSERT fail on (stream_id, stream_version), and the
        whole transaction with it: nothing folded from rows that were no longer current is
        kept. A row read unlocked here is current for the same reason `_adopt_row` gives: only
        that stream's events move it, and the INSERT proves the stream did not move."""
        projection, pid = self.store.head_projection, participant_of(stream_id)
        if self.conn.dialect.name != "postgresql" or projection is None or pid is None:
            raise ValueError(f"stream {stream_id!r}: only a participant's stream on PostgreSQL")
        if stream_id in self._locked_streams or stream_id in self._staged:
            raise ValueError(f"stream {stream_id!r} is locked or staged already: append to it")
        if int(head["version"]) != expected_version:
            raise ConcurrencyError(stream_id, expected_version, int(head["version"]))
        proposed = _proposed(new_events)
        if any(isinstance(new.data, ParticipantEnrolled) for new in proposed):
            raise ValueError("an enrollment indexes its phone number: append it instead")
        self._rows[(projection.name, pid)] = {name: head[name] for name in projection.columns}
        self._staged.add(stream_id)  # its lock is the first statement staged
        built = self._build(stream_id, proposed, None, expected_version, self.store.clock.now())
        # in ascending order, as the events' versions go (nextval's rows come so; not promised)
        seqs = sorted(row["seq"] for row in ALLOCATE_SEQS.rows(self.conn, {"n": len(built.rows)}))
        result = self._recorded(built, seqs)
        writes = self._writes()
        statements: list[tuple[Direct, dict[str, Any]]] = [
            (lock_row(projection), {"key": pid}),
            (INSERT_SEQUENCED_RECORDS, event_records(built.rows, self.conn.dialect, seqs)),
        ]
        if len(writes) > 1:
            shape, params = combined(writes)
            statements.append((write_all(shape), params))
        elif writes:
            write = row_write(*writes[0])
            if write is not None:
                statements.append(write)
        self._noted(result.events)
        return Staged(result, statements, writes)

    def _build(
        self,
        stream_id: str,
        proposed: list[NewEvent],
        idempotency_key: str | None,
        current: int,
        now: datetime,
    ) -> _Built:
        """The rows of an append to `stream_id` at version `current`, encoded and sealed, and
        its payloads and metas as the layers above see them."""
        built = _Built(stream_id, proposed)
        for offset, new in enumerate(proposed):
            data, meta = encode(new.data), dict(new.meta)
            payload = new.data
            # Text no database stores (NUL from an SMS, say) is kept recoverable in the meta,
            # or in the sealed part when it is personal.
            data, escaped = storable_json(data)
            if escaped:
                payload = type(new.data).model_validate(data)
            built.metas.append({**meta, "escaped": escaped} if escaped else dict(meta))
            data, escaped = self.store.sealer.seal(
                self.conn, stream_id, new.event_id, type(new.data), data, escaped, now, self.made
            )
            if escaped:
                meta["escaped"] = escaped
            built.payloads.append(payload)
            built.rows.append(
                {
                    "event_id": new.event_id,
                    "stream_id": stream_id,
                    "stream_version": current + offset + 1,
                    "event_type": new.data.event_type,
                    "schema_version": new.data.schema_version,
                    "data": data,
                    "meta": meta,
                    "idempotency_key": idempotency_key if offset == 0 else None,
                    "occurred_at": new.occurred_at or now,
                    "recorded_at": now,
                }
            )
        return built

    def _recorded(self, built: _Built, seqs: list[int]) -> AppendResult:
        """The events of inserted rows, folded into the projection rows (written by `_flush`)."""
        result = AppendResult()
        for new, payload, event_meta, stored, seq in zip(
            built.proposed, built.payloads, built.metas, built.rows, seqs, strict=True
        ):
            recorded = Event(
                seq=seq,
                event_id=new.event_id,
                stream_id=built.stream_id,
                stream_version=stored["stream_version"],
                data=payload,
                meta=event_meta,
                idempotency_key=stored["idempotency_key"],
                occurred_at=stored["occurred_at"],
                recorded_at=stored["recorded_at"],
            )
            self._project(recorded)
            result.events.append(recorded)
        return result

    def _noted(self, recorded: list[Event]) -> None:
        """After the flush: index new phone numbers, and remember the events for the listeners."""
        for event in recorded:
            if isinstance(event.data, ParticipantEnrolled):
                self._index_phone(event.data)
            elif event.stream_version == 1 and isinstance(event.data, MessageReceived):
                self._index_sender(event.stream_id, event.data)
        self.recorded.extend(recorded)

    def _insert(self, rows: list[dict[str, Any]]) -> list[int] | None:
        """Insert the rows in one round trip (two when the first carries an idempotency key);
        their seqs in order, or None when the key was recorded before."""
        seqs: list[int] = []
        if rows[0]["idempotency_key"] is not None:
            keyed = insert_keyed(self.conn.dialect.name).rows(self.conn, rows[0])
            if not keyed:
                return None
            seqs.append(keyed[0]["seq"])
            rows = rows[1:]
        if len(rows) == 1:
            seqs.append(INSERT_EVENT.rows(self.conn, rows[0])[0]["seq"])
        elif rows:
            inserted: Sequence[Mapping[str, Any]]
            if len(rows) > INSERT_EVENTS_AT_MOST:
                inserted = [dict(r._mapping) for r in self.conn.execute(INSERT_EVENTS, rows)]
            elif self.conn.dialect.name == "postgresql":
                records = event_records(rows, self.conn.dialect)
                inserted = INSERT_EVENT_RECORDS.rows(self.conn, records)
            else:
                inserted = insert_events(len(rows)).rows(self.conn, event_rows(rows))
            seq_of = {r["event_id"]: r["seq"] for r in inserted}
            seqs += [seq_of[row["event_id"]] for row in rows]
        return seqs

    def _index_phone(self, enrolled: ParticipantEnrolled) -> None:
        """Keep the keyed hash by which inbound messages find this participant."""
        pid = enrolled.participant_id
        self.conn.execute(
            delete(participant_phones).where(participant_phones.c.participant_id == pid)
        )
        digest = self.store.sealer.phones.digest(enrolled.phone)
        self.conn.execute(insert(participant_phones).values(participant_id=pid, phone_hmac=digest))

    def _index_sender(self, stream_id: str, received: MessageReceived) -> None:
        """Keep the keyed hash by which an unknown sender's next message (and `tandem erase
        --phone`) finds their stream, when their first message starts it. Unique: a second
        stream started for the same number at once fails, and its webhook decides again."""
        sender_id = sender_of(stream_id)
        if sender_id is None:
            return
        digest = self.store.sealer.phones.digest(parse_address(received.from_address).e164)
        try:
            self.conn.execute(insert(sender_phones).values(sender_id=sender_id, phone_hmac=digest))
        except IntegrityError as exc:
            raise ConstraintViolation(f"sender_phones: {refusal(exc)}") from exc

    def _locked_version(self, stream_id: str) -> int:
        """Take the stream's lock (`lock`) and return its version."""
        head = self.lock(stream_id)
        return int(head["version"]) if head is not None else self.version(stream_id)

    def version(self, stream_id: str) -> int:
        return int(self.conn.execute(STREAM_VERSION, {"s": stream_id}).scalar_one())

    def load(self, stream_id: str) -> list[Event]:
        """A stream's events as this transaction sees them."""
        rows = self.conn.execute(LOAD_STREAM, {"s": stream_id})
        return [row_to_event(row, self.store.sealer, self.conn) for row in rows]

    def _seen(self, stream_id: str, key: str) -> bool:
        return self.conn.execute(SEEN_KEY, {"s": stream_id, "k": key}).first() is not None

    def lock(self, stream_id: str) -> Row | None:
        """Take the lock that appends to `stream_id` take, and return the stream's head row.

        A participant stream is locked by reading its head row (the participants row) FOR
        UPDATE; a stream without one by a transaction-level advisory lock. On SQLite, BEGIN
        IMMEDIATE already serialises every writer. Anyone who reads state to decide on and then
        appends in the same transaction should call this first, so that what was read is what
        the append sees.
        """
        head = self.store.head_projection
        pid = participant_of(stream_id)
        if stream_id in self._staged:
            raise ValueError(f"stream {stream_id!r} is staged: its lock comes with the flight")
        if stream_id not in self._locked_streams:
            row = self.row(head, pid, lock=True) if head and pid else None
            if row is None and self.conn.dialect.name == "postgresql":
                self.conn.execute(ADVISORY_LOCK, {"s": stream_id})
            self._locked_streams.add(stream_id)
        if head is None or pid is None:
            return None
        return self._rows.get((head.name, pid))

    def adopt_head(self, stream_id: str, row: Row) -> Row:
        """Take `row`, read by the caller under the stream's lock (FOR UPDATE on PostgreSQL;
        BEGIN IMMEDIATE holds it on SQLite), as the stream's locked head row, so that `lock`
        need not read it again."""
        head = self.store.head_projection
        if head is None or participant_of(stream_id) is None:
            raise ValueError(f"stream {stream_id!r} has no head row to adopt")
        key = (head.name, str(participant_of(stream_id)))
        adopted = {name: row[name] for name in head.columns}
        self._rows[key] = adopted
        self._locked_rows.add(key)
        self._locked_streams.add(stream_id)
        return adopted

    def _adopt_row(self, projection: Projection, key: str, row: Row | None) -> None:
        """Take `row` as `projection`'s row for `key` (None: there is none), so that an append
        need not read it again. The caller vouches for it: read in this transaction under the
        lock of the stream that writes it, or known from what this transaction's lock confirms
        (a row only that stream's events move, read at the version the append expects)."""
        self._rows[(projection.name, key)] = (
            None if row is None else {name: row[name] for name in projection.columns}
        )

    def _project(self, ev: Event) -> None:
        """Fold `ev` into the rows it moves (through the projections that fold its type);
        what is written waits for `_flush`."""
        for projection in self.store.folding[ev.event_type]:
            key = projection.key(ev)
            if key is None:
                continue
            cache_key = (projection.name, key)
            if key == ev.event_id:  # a row keyed by this very event cannot exist yet
                self._rows[cache_key] = None
            before = self.row(projection, key)
            after = projection.apply(before, ev)
            if after is None or after is before:
                continue
            if cache_key not in self._pending:
                self._pending[cache_key] = (projection, before)
            self._rows[cache_key] = after

    def _flush(self, grouped: bool = False) -> None:
        """Write what an append's events did to the projection rows: each row once, however
        many of the events moved it (a turn's decision moves the participant's row with each of
        its events), and on PostgreSQL every write of the append in one statement. `grouped`
        (a batch of appends, each moving rows of the same kinds): one statement for each kind
        of write instead, a few statements however many rows (`_write_grouped`)."""
        writes = self._writes()
        if grouped and len(writes) > 1:
            self._write_grouped(writes)
            return
        if len(writes) > 1 and self.conn.dialect.name == "postgresql":
            shape, params = combined(writes)
            try:
                write_all(shape).run(self.conn, params)
            except IntegrityError as exc:
                raise refused(writes, exc) from exc
            return
        for projection, key, before, after in writes:
            self._write(projection, key, before, after)

    def _writes(self) -> list[tuple[Projection, str, Row | None, Row]]:
        """The projection rows the events folded since the last flush moved, each once: what it
        was before them (None: a new row) and what it is now."""
        pending, self._pending = self._pending, {}
        writes: list[tuple[Projection, str, Row | None, Row]] = []
        for (name, key), (projection, before) in pending.items():
            after = self._rows[(name, key)]
            if after is not None and after != before:
                writes.append((projection, key, before, after))
        return writes

    def _write_grouped(self, writes: list[tuple[Projection, str, Row | None, Row]]) -> None:
        """The writes grouped by (table, insert or update, columns), in the order each group
        first appears, a statement per group: on PostgreSQL an INSERT ... SELECT or an
        UPDATE ... FROM over `unnest` of one array per column (`write_many`); elsewhere an
        executemany (SQLite's run in-process). Not one statement of CTEs, nor a multi-row
        VALUES: at hundreds of writes such a statement costs more to compile, for psycopg to
        parse (it caches only short statements) and for the server to plan than the round
        trips it saves; nor a pipelined executemany, which still has the server run each row
        as a statement of its own."""
        groups: dict[tuple[Projection, str, tuple[str, ...]], list[tuple[str, Row]]] = {}
        for projection, key, before, after in writes:
            if before is None:
                groups.setdefault((projection, "insert", tuple(sorted(after))), []).append(
                    (key, after)
                )
                continue
            changed = {k: v for k, v in after.items() if before.get(k) != v}
            if changed:
                group = groups.setdefault((projection, "update", tuple(sorted(changed))), [])
                group.append((key, changed))
        try:
            for (projection, kind, columns), rows in groups.items():
                if self.conn.dialect.name == "postgresql" and len(rows) > 1:
                    params = {f"a_{c}": [row[c] for _, row in rows] for c in columns}
                    if kind == "update":
                        params["a_key"] = [key for key, _ in rows]
                    write_many(projection, kind, columns).run(self.conn, params)
                elif kind == "insert":
                    statement = insert_row(projection.name, columns).statement
                    assert isinstance(statement, Executable)
                    self.conn.execute(statement, [row for _, row in rows])
                else:
                    many = [
                        {**{f"v_{c}": row[c] for c in columns}, "key": key} for key, row in rows
                    ]
                    updating = update_row(projection, frozenset(columns)).statement
                    assert isinstance(updating, Executable)
                    self.conn.execute(updating, many)
        except IntegrityError as exc:
            raise refused(writes, exc) from exc

    def row(self, projection: Projection, key: str, lock: bool = False) -> Row | None:
        """A projection row as this transaction sees it (cached for the transaction)."""
        cache_key = (projection.name, key)
        if cache_key not in self._rows or (lock and cache_key not in self._locked_rows):
            found = select_row(projection, lock).rows(self.conn, {"key": key})
            self._rows[cache_key] = found[0] if found else None
            if lock:
                self._locked_rows.add(cache_key)
        return self._rows[cache_key]

    def _write(self, projection: Projection, key: str, before: Row | None, after: Row) -> None:
        try:
            write = row_write(projection, key, before, after)
            if write is not None:
                write[0].run(self.conn, write[1])
        except IntegrityError as exc:
            # The whole transaction rolls back with this error: nothing of the append is kept.
            raise ConstraintViolation(f"{projection.name}: {refusal(exc)}") from exc
        self._rows[(projection.name, key)] = after


class EventStore:
    """Appends events and keeps every projection in step, in the same transaction."""

    def __init__(
        self,
        engine: Engine,
        projections: Sequence[Projection] | None = None,
        clock: Clock | None = None,
        sealer: Sealer | None = None,
    ) -> None:
        self.engine = engine
        # Seals participants' personal data (TANDEM_MASTER_KEY); without it, plain payloads.
        self.sealer = sealer or Sealer(None)
        self.projections = list(projections) if projections is not None else all_projections()
        self.clock = clock or SystemClock()
        self.head_projection = next((p for p in self.projections if p.stream_head), None)
        # The projections that fold each event type (`Projection.types`), for `_project`.
        self.folding = Folding(self.projections)
        # Called after each commit with the events it recorded (e.g. to wake local threads).
        self.listeners: list[Callable[[list[Event]], None]] = []
        self._pinned = threading.local()  # this thread's connection while `pinned()`

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A write transaction; everything appended in it commits or rolls back together."""
        with self._begun(read_only=False) as conn:
            tx = Transaction(conn, self)
            yield tx
        if tx.made:
            self.sealer.remember(tx.made)
        if tx.recorded:
            for listener in self.listeners:
                listener(tx.recorded)

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A read-only connection (a deferred transaction on SQLite)."""
        with self._begun(read_only=True) as conn:
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read-only transaction whose every statement sees the database as it was at one
        moment, for reads that must agree with each other (an export's files): REPEATABLE
        READ on PostgreSQL (under READ COMMITTED, `reading()`'s, each statement takes a
        snapshot of its own), a deferred transaction on SQLite (in WAL mode one snapshot,
        taken at its first read). On a connection of its own, never this thread's pinned one."""
        with self.engine.connect() as conn:
            options: dict[str, Any] = {READ_ONLY: True}
            if conn.dialect.name == "postgresql":
                options |= {"isolation_level": "REPEATABLE READ", "postgresql_readonly": True}
            conn.execution_options(**options)
            with conn.begin() as transaction:
                yield conn
                _end_read(transaction)

    @contextmanager
    def _statements(self, *, writes: bool = False) -> Iterator[Connection]:
        """Statements that need no transaction around them: reads whose snapshot may be each
        statement's own, or (`writes`) one statement that writes. On PostgreSQL, on this
        thread's pinned connection, each runs in a transaction of its own (autocommit: no
        BEGIN and COMMIT or ROLLBACK round trips); READ COMMITTED gives every statement of a
        transaction its own snapshot anyway. Elsewhere a transaction as `reading()` (a
        deferred one on SQLite: one snapshot, nothing to save) or `transaction()` opens."""
        conn: Connection | None = getattr(self._pinned, "conn", None)
        if (
            conn is None
            or conn.dialect.name != "postgresql"
            or conn.in_transaction()
            or conn.closed
        ):
            with self._begun(read_only=not writes) as conn:
                yield conn
            return
        conn.execution_options(isolation_level="AUTOCOMMIT")
        try:
            with conn.begin():  # SQLAlchemy's own; the driver, in autocommit, sends no BEGIN
                yield conn
        finally:
            if not conn.invalidated:  # an invalidated one is reset as the pool replaces it
                conn.execution_options(isolation_level=conn.default_isolation_level)

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Within it, this thread's `reading()` and `transaction()` reuse one checked-out
        connection, each still a transaction of its own: one pool checkout (and on PostgreSQL
        one `pool_pre_ping` round trip) for a run of short transactions, such as a worker's
        claim and drain of one participant. Nested, it keeps the outer connection."""
        if getattr(self._pinned, "conn", None) is not None:
            yield
            return
        with self.engine.connect() as conn:
            self._pinned.conn = conn
            try:
                yield
            finally:
                self._pinned.conn = None

    @contextmanager
    def _begun(self, *, read_only: bool) -> Iterator[Connection]:
        """A transaction on this thread's pinned connection if it has one and it is free,
        otherwise on a connection of its own. A read-only one is rolled back at the end."""
        conn: Connection | None = getattr(self._pinned, "conn", None)
        if conn is None or conn.in_transaction() or conn.closed:
            if not read_only:
                with self.engine.begin() as conn:
                    yield conn
                return
            with self.engine.connect() as conn:
                conn.execution_options(**{READ_ONLY: True})
                with conn.begin() as transaction:
                    yield conn
                    _end_read(transaction)
            return
        # Execution options set on a Connection apply to it in place (SQLite's BEGIN or BEGIN
        # IMMEDIATE is chosen from them, bot.store.database): set for each transaction.
        conn.execution_options(**{READ_ONLY: read_only})
        with conn.begin() as transaction:
            yield conn
            if read_only:
                _end_read(transaction)

    def append(
        self,
        stream_id: str,
        new_events: Sequence[NewEvent | EventData],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> AppendResult:
        """Append events to one stream atomically.

        `expected_version` is the version the caller decided on (0 = a new stream, None = any);
        a stream that moved raises ConcurrencyError. A repeated `idempotency_key` on the stream
        writes nothing and returns a duplicate result.
        """
        try:
            with self.transaction() as tx:
                return tx.append(stream_id, new_events, expected_version, idempotency_key)
        except IntegrityError as exc:
            # The unique indexes are the backstop for races the lock did not cover.
            if idempotency_key is not None and self._has_key(stream_id, idempotency_key):
                return AppendResult(duplicate=True)
            actual = self.version(stream_id)
            raise ConcurrencyError(stream_id, expected_version or actual - 1, actual) from exc

    def _has_key(self, stream_id: str, key: str) -> bool:
        with self.reading() as conn:
            query = select(events.c.seq).where(
                and_(events.c.stream_id == stream_id, events.c.idempotency_key == key)
            )
            return conn.execute(query).first() is not None

    def version(self, stream_id: str) -> int:
        with self.reading() as conn:
            query = select(func.coalesce(func.max(events.c.stream_version), 0)).where(
                events.c.stream_id == stream_id
            )
            return int(conn.execute(query).scalar_one())

    def load(
        self, stream_id: str, after_version: int = 0, exclude: Sequence[str] = ()
    ) -> list[Event]:
        """A stream's events in order, leaving out the event types in `exclude`."""
        query = (
            select(events)
            .where(and_(events.c.stream_id == stream_id, events.c.stream_version > after_version))
            .order_by(events.c.stream_version)
        )
        if exclude:
            query = query.where(events.c.event_type.not_in(list(exclude)))
        with self.reading() as conn:
            return [row_to_event(row, self.sealer, conn) for row in conn.execute(query)]

    def read_all(
        self,
        after_seq: int = 0,
        *,
        stream_id: str | None = None,
        event_types: Sequence[str] = (),
        batch: int = 1000,
    ) -> Iterator[Event]:
        """Every event in global order, fetched in batches."""
        for row in self.read_rows(
            after_seq, stream_id=stream_id, event_types=event_types, batch=batch
        ):
            yield row_to_event(row)

    def read_rows(
        self,
        after_seq: int = 0,
        *,
        stream_id: str | None = None,
        event_types: Sequence[str] = (),
        batch: int = 1000,
    ) -> Iterator[Any]:
        """Raw event rows in global order (undecoded), streamed `batch` rows at a time from one
        query (a server-side cursor on PostgreSQL) in one read transaction, so a replay or an
        export sees one snapshot and never holds the whole table in memory."""
        where = [events.c.seq > after_seq]
        if stream_id is not None:
            where.append(events.c.stream_id == stream_id)
        if event_types:
            where.append(events.c.event_type.in_(list(event_types)))
        with self.reading() as conn:
            yield from opened_scanned(conn, where, [events.c.seq], self.sealer, batch)

    def projection_row(self, projection_name: str, key: str) -> Row | None:
        """The stored row of one projection."""
        projection = next(p for p in self.projections if p.name == projection_name)
        with self.reading() as conn:
            table = PROJECTION_TABLES[projection_name]
            found = conn.execute(select(table).where(table.c[projection.key_column] == key)).first()
            return dict(found._mapping) if found else None
