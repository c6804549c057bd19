"""Reads run one step ahead of the work that uses them, in the same snapshot.

An export reads each batch of participants' events, then spends most of its time turning them
into lines. On PostgreSQL the reading is mostly waiting on the server (a large share of an
export's time: docs/performance.md), which a second connection can do while this one works: `ahead`
exports the snapshot of the caller's REPEATABLE READ transaction (`pg_export_snapshot`), and a
thread of its own reads on a second connection that imports it (`SET TRANSACTION SNAPSHOT`),
so what it reads is what the caller's connection would have read, to the row (what `pg_dump
--jobs` does). On SQLite, whose reads cost the process's own CPU (a tenth of an export) and
which cannot share a snapshot between connections, each read runs on the caller's connection
when its result is asked for, as it would without `ahead`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine

T = TypeVar("T")
# What pg_export_snapshot() returns: hexadecimal fields joined by hyphens (00000003-0000001B-1).
_SNAPSHOT_ID = re.compile(r"[0-9A-Fa-f]+(-[0-9A-Fa-f]+)+")

# What `ahead` gives: submit a read (a function of a connection); get back what returns its
# result when called (waiting for it if it is still running).
Submit = Callable[[Callable[[Connection], T]], Callable[[], T]]


@contextmanager
def ahead(conn: Connection, *, enabled: bool = True) -> Iterator[Submit[Any]]:
    """A function that starts a read now (on PostgreSQL, in a thread, on a second connection in
    `conn`'s snapshot; reads run one at a time, in the order submitted) and returns what gives
    its result. `conn` must be in a REPEATABLE READ (or SERIALIZABLE) transaction on
    PostgreSQL: `EventStore.snapshot`. Leaving waits for a read still running and discards
    those not started. Not `enabled` (a read that should hold one connection, not two), or
    not on PostgreSQL, each read runs on `conn` when its result is asked for."""
    if not enabled or conn.dialect.name != "postgresql":
        yield _inline(conn)
        return
    with ExitStack() as stack:
        other = stack.enter_context(joined(conn.engine, exported_snapshot(conn)))
        pool = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="read-ahead"))
        submitted: list[Future[Any]] = []

        def submit(read: Callable[[Connection], T]) -> Callable[[], T]:
            future = pool.submit(read, other)
            submitted.append(future)
            return future.result

        try:
            yield submit
        finally:
            for future in submitted:
                future.cancel()  # one running is waited for as the pool shuts down


def exported_snapshot(conn: Connection) -> str:
    """The id of the snapshot of `conn`'s transaction (PostgreSQL, REPEATABLE READ), which
    other transactions can take (`joined`) while it lasts."""
    snapshot = conn.exec_driver_sql("SELECT pg_export_snapshot()").scalar_one()
    # SET takes no bound parameter: the id (the server's own, checked) is written into it.
    if not _SNAPSHOT_ID.fullmatch(snapshot):
        raise RuntimeError(f"pg_export_snapshot() returned {snapshot!r}, not a snapshot id")
    return str(snapshot)


@contextmanager
def joined(engine: Engine, snapshot: str) -> Iterator[Connection]:
    """A read-only REPEATABLE READ transaction on a connection of its own in `snapshot` (an
    `exported_snapshot`), ended on leaving (it only reads)."""
    if not _SNAPSHOT_ID.fullmatch(snapshot):
        raise ValueError(f"{snapshot!r} is not a snapshot id")
    with engine.connect() as conn:
        conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        with conn.begin():
            # The first statement of its transaction, as PostgreSQL requires.
            conn.exec_driver_sql(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
            yield conn


def _inline(conn: Connection) -> Submit[Any]:
    def submit(read: Callable[[Connection], T]) -> Callable[[], T]:
        return lambda: read(conn)

    return submit
