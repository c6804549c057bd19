"""The timer firing's reads and locks: due timers, a timer's row, a batch's owners locked, and
what a batch's timers decided as they fire are decided on (`turn_reads`).

Private to the store what they run; the scheduler's firing path (bot.timers.firing) decides
what each timer gets and appends it. `StorageError` is what a failed batch raises beside the
store's own errors (the database's refusal, a deadlock), for callers that retry one by one.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, String, and_, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import SQLAlchemyError

from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.messages import MessageQueued
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import Event, NewEvent, participant_stream
from bot.store.projections import Projection
from bot.store.projections.outbox import PROJECTION as OUTBOX
from bot.store.projections.work_items import PROJECTION as WORK_ITEMS
from bot.store.recent import RecentWindows
from bot.store.schema import PROJECTION_TABLES, takeovers, timers, work_items

StorageError = SQLAlchemyError
Row = dict[str, Any]


@functools.cache
def _lock_participants(head: Projection, dialect: str) -> Select[Any]:
    table = PROJECTION_TABLES[head.name]
    key = table.c[head.key_column]
    owners = select(timers.c.participant_id).where(_among(timers.c.timer_id, dialect))
    return (
        select(*[table.c[name] for name in head.columns])
        .where(key.in_(owners.scalar_subquery()))
        .order_by(key)
        .with_for_update()
    )


@functools.cache
def _read_timers(dialect: str) -> Select[Any]:
    return (
        select(timers)
        .where(_among(timers.c.timer_id, dialect))
        .order_by(timers.c.due_at, timers.c.timer_id)
    )


_TIMER_ROW = select(timers).where(timers.c.timer_id == bindparam("timer_id"))


def timers_locked(tx: Transaction, timer_ids: Sequence[str]) -> list[Row] | None:
    """Lock every participant the timers belong to (one statement, in participant order, so
    two schedulers never deadlock; their rows adopted as the streams' locked heads) and read
    the timers under those locks (one statement), by due time. None for a store without a
    head or timers projection (the caller takes the plain path)."""
    head = tx.store.head_projection
    if head is None or _timers_projection(tx) is None:
        return None
    ids = list(timer_ids)
    dialect = tx.conn.dialect.name
    for row in tx.conn.execute(_lock_participants(head, dialect), {"ids": ids}):
        tx.adopt_head(participant_stream(row.participant_id), dict(row._mapping))
    return [dict(found._mapping) for found in tx.conn.execute(_read_timers(dialect), {"ids": ids})]


def adopt_timer(tx: Transaction, row: Row) -> None:
    """Take `row`, read by `timers_locked` under its participant's lock, as the timers row the
    append moves, so that it is not read again."""
    projection = _timers_projection(tx)
    if projection is not None:
        tx._adopt_row(projection, row["timer_id"], row)


def _timers_projection(tx: Transaction) -> Projection | None:
    return next((p for p in tx.store.projections if p.name == "timers"), None)


def timer_row(conn: Connection | Transaction, timer_id: str) -> Row | None:
    """The timers row `timer_id` as the connection (or the transaction's) sees it."""
    bind = conn.conn if isinstance(conn, Transaction) else conn
    found = bind.execute(_TIMER_ROW, {"timer_id": timer_id}).first()
    return dict(found._mapping) if found else None


def due_timer_ids(store: EventStore, now: datetime, limit: int | None = None) -> list[str]:
    """Ids of scheduled timers due at `now`, oldest first."""
    query = (
        select(timers.c.timer_id)
        .where(and_(timers.c.status == "scheduled", timers.c.due_at <= now))
        .order_by(timers.c.due_at, timers.c.timer_id)
    )
    if limit is not None:
        query = query.limit(limit)
    with store.reading() as conn:
        return [row.timer_id for row in conn.execute(query)]


@dataclass(frozen=True)
class TurnReads:
    """What a participant's timer decided in its firing batch is decided on, besides their
    locked row and the timer's: as the worker's turn reads them (bot.store.work_queue)."""

    takeover: Row | None  # their `takeovers` row (None: never taken over)
    pending: list[Row]  # their pending timers rows, by due time
    window: list[Event]  # their last messages (bot.store.recent)


def _among(column: Any, dialect: str) -> Any:
    """`column IN :ids`: on PostgreSQL `= ANY(:ids)`, one array parameter, so that the
    statement's text is the same for every batch (psycopg parses and prepares it once)."""
    if dialect == "postgresql":
        return column == func.any(bindparam("ids", type_=ARRAY(String)))
    return column.in_(bindparam("ids", expanding=True))


@functools.cache
def _busy(dialect: str) -> Select[Any]:
    pending = work_items.c.status == "pending"
    return (
        select(work_items.c.participant_id)
        .where(and_(_among(work_items.c.participant_id, dialect), pending))
        .distinct()
    )


@functools.cache
def _takeovers(dialect: str) -> Select[Any]:
    return select(takeovers).where(_among(takeovers.c.participant_id, dialect))


@functools.cache
def _pending(dialect: str) -> Select[Any]:
    scheduled = timers.c.status == "scheduled"
    return (
        select(timers)
        .where(and_(_among(timers.c.participant_id, dialect), scheduled))
        .order_by(timers.c.participant_id, timers.c.due_at)
    )


def busy(tx: Transaction, participant_ids: Collection[str]) -> set[str]:
    """Which of the participants (locked in `tx`) have work pending: a turn of theirs waits,
    or is being decided, so what comes next for them waits behind it (one statement)."""
    if not participant_ids:
        return set()
    found = tx.conn.execute(_busy(tx.conn.dialect.name), {"ids": list(participant_ids)})
    return {row.participant_id for row in found}


def turn_reads(
    tx: Transaction,
    versions: Mapping[str, int],
    windows: RecentWindows,
    history_limit: int,
) -> dict[str, TurnReads]:
    """For each participant in `versions` (participant id -> their locked row's version): their
    takeover, pending timers and last messages, by participant, in three statements for the
    whole batch (bot.store.recent's windows: one on PostgreSQL), their data keys read
    beforehand (one more, for those not cached)."""
    ids = list(versions)
    if not ids:
        return {}
    # Their data keys, which the turns' appends seal with and their windows open with: one
    # statement for those not cached, not one each as the first use of each would read it.
    tx.store.sealer.preload(tx.conn, ids)
    dialect = tx.conn.dialect.name
    held = {
        row.participant_id: dict(row._mapping)
        for row in tx.conn.execute(_takeovers(dialect), {"ids": ids})
    }
    pending: dict[str, list[Row]] = {pid: [] for pid in ids}
    for row in tx.conn.execute(_pending(dialect), {"ids": ids}):
        pending[row.participant_id].append(dict(row._mapping))
    streams = {participant_stream(pid): version for pid, version in versions.items()}
    found = windows.last_messages_many(tx.conn, streams, history_limit, tx.store.sealer)
    return {
        pid: TurnReads(held.get(pid), pending[pid], found[participant_stream(pid)]) for pid in ids
    }


def adopt_new_rows(tx: Transaction, work_id: str, events: Sequence[NewEvent]) -> None:
    """Spare a turn decided at firing the reads of rows its append creates (a round trip
    each), as the worker's commit spares its own (bot.store.work_queue): the work item
    `timer.fired` creates (`work_id`, its event's id, drawn for it), the outbox rows of the
    messages it queues and the timers rows of the timers it schedules (ids drawn at random
    for the turn, `new_id()`). Were one ever to exist, its insert would fail the batch, which
    is then fired one timer at a time, each turn left to a worker."""
    timer_rows = _timers_projection(tx)
    tx._adopt_row(WORK_ITEMS, work_id, None)
    for event in events:
        data = event.data
        if isinstance(data, MessageQueued):
            tx._adopt_row(OUTBOX, data.outbox_id, None)
        elif isinstance(data, TimerScheduled) and timer_rows is not None:
            tx._adopt_row(timer_rows, data.timer_id, None)
