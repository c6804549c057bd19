"""The timer firing's reads and locks: due timers, a timer's row, a batch's owners locked.

Private to the store what they run; the scheduler's firing path (bot.timers.firing) decides
what each timer gets and appends it. `StorageError` is what a failed batch raises beside the
store's own errors (the database's refusal, a deadlock), for callers that retry one by one.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, and_, bindparam, select
from sqlalchemy.exc import SQLAlchemyError

from bot.store.event_store import EventStore, Transaction
from bot.store.events import participant_stream
from bot.store.projections import Projection
from bot.store.schema import PROJECTION_TABLES, timers

StorageError = SQLAlchemyError
Row = dict[str, Any]


@functools.cache
def _lock_participants(head: Projection) -> Select[Any]:
    table = PROJECTION_TABLES[head.name]
    key = table.c[head.key_column]
    owners = select(timers.c.participant_id).where(timers.c.timer_id.in_(bindparam("ids")))
    return (
        select(*[table.c[name] for name in head.columns])
        .where(key.in_(owners.scalar_subquery()))
        .order_by(key)
        .with_for_update()
    )


_READ_TIMERS = (
    select(timers)
    .where(timers.c.timer_id.in_(bindparam("ids")))
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
    for row in tx.conn.execute(_lock_participants(head), {"ids": ids}):
        tx.adopt_head(participant_stream(row.participant_id), dict(row._mapping))
    return [dict(found._mapping) for found in tx.conn.execute(_READ_TIMERS, {"ids": ids})]


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
