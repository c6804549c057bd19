"""PostgreSQL: a transaction's last statements and its COMMIT sent as one message, so that the
locks they take are held only while the server runs them.

Why: a worker runs at the lowest CPU priority (`tandem worker`, bot/runtime/worker.py), so on a
busy machine it can wait tens of milliseconds for a core between two statements. When those
statements hold a participant's row lock, the webhook that records that participant's next
message waits as long (a priority inversion: bench/webhook.py counts these waits). Sent as one
message, the lock, the writes and the COMMIT reach the server together and it runs them back to
back; the client reads every answer once, after the COMMIT.

How: each statement's values are bound as its column types bind them (`Direct.bound`) and
adapted by psycopg, then sent apart from its text (the extended protocol's Parse, Bind and
Execute: the server binds them), in libpq's pipeline mode behind one Sync. libpq keeps the
messages in its buffer until the Sync (up to 64 KB), so they leave together; the server runs
them statement after statement, skipping the rest after the first that fails (the transaction
is then aborted, and rolled back by its owner). Bound by the server, a statement's text holds
placeholders only, so PostgreSQL's log of a failing statement (a routine version conflict)
holds no phone number or message text. Not psycopg's own pipeline: it flushes each statement
as it is queued, so the lock would be held while the client still prepared the ones after it.

`Transaction.stage` works an append out in full before the lock (bot/store/event_store.py);
`commit_in_one_flight` sends what was staged (appends to several streams go in the order they
were staged: stage them in key order, as every transaction that locks several takes them), then
the caller's own statements, then COMMIT.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import generators
from psycopg._queries import PostgresQuery
from psycopg.abc import Transformer as Adapting
from psycopg.adapt import Transformer
from psycopg.pq import ConnStatus, ExecStatus
from psycopg.pq.abc import PGresult
from sqlalchemy.exc import IntegrityError

from bot.store.direct import Direct, driver_error
from bot.store.event_store import Staged, Transaction
from bot.store.writes import refused

Statement = tuple[Direct, dict[str, Any]]


def commit_in_one_flight(
    tx: Transaction, staged: Sequence[Staged], then: Sequence[Statement] = ()
) -> list[list[dict[str, Any]]]:
    """Send the `staged` appends' statements, then `then`, then COMMIT, as one message on
    `tx`'s connection; the rows each statement of `then` returned, in order. The transaction is
    over when this returns: the `store.transaction()` block around it commits nothing more.

    A failure rolls everything back, none of it kept, and raises what the statement-by-statement
    append raises: SQLAlchemy's IntegrityError where the events' unique indexes refused the rows
    (the stream moved since the version the append was staged at: the caller's backstop makes
    it a ConcurrencyError), ConstraintViolation where a projection refused a write, and
    SQLAlchemy's exception for anything else (a lost connection invalidates it)."""
    conn = tx.conn
    if conn.dialect.name != "postgresql":
        raise ValueError("one flight is PostgreSQL's")
    if not conn.in_transaction():
        raise RuntimeError("a flight ends a transaction the connection began")
    appends = [statement for append in staged for statement in append.statements]
    driver = conn.connection.dbapi_connection
    assert isinstance(driver, psycopg.Connection)  # checked above: PostgreSQL's driver
    adapting = Transformer.from_context(driver)
    queries, shapes = [], []  # each with its values apart, as the server binds them
    for statement, params in [*appends, *then]:
        shape, bound = statement.bound(conn.dialect, params)
        query = PostgresQuery(adapting)
        query.convert(shape, bound)
        queries.append(query)
        shapes.append(shape)
    # Listeners see each statement, as Direct shows them its own, and errors the flight, with
    # placeholders: the values hold phone numbers and message texts, which go to no log
    # (hide_parameters, bot.store.direct). The COMMIT is the transaction's, shown to none.
    shown = ";\n".join([*shapes, "COMMIT"])
    before, after = conn.dispatch.before_cursor_execute, conn.dispatch.after_cursor_execute
    cursor = driver.cursor()
    try:
        for shape in shapes:
            for listener in before:
                listener(conn, cursor, shape, (), None, False)
        results = _pipeline(driver, queries)
        for shape in shapes:
            for listener in after:
                listener(conn, cursor, shape, (), None, False)
    except conn.dialect.loaded_dbapi.Error as exc:
        error = driver_error(conn, exc, shown, None, cursor)
        failed = getattr(getattr(exc, "diag", None), "table_name", None)
        if isinstance(error, IntegrityError) and failed not in (None, "events"):
            raise refused([w for append in staged for w in append.writes], error) from exc
        raise error from exc
    finally:
        cursor.close()
    answered = []
    for (statement, _), result in zip(then, results[len(appends) :], strict=True):
        answered.append(statement.read(conn, _Rows(adapting, result), keep_open=True))
    return answered


def _pipeline(driver: psycopg.Connection, queries: Sequence[PostgresQuery]) -> list[PGresult]:
    """Send `queries` and a COMMIT, each bound by the server (extended protocol: Parse, Bind,
    Execute), behind one Sync; libpq buffers them until the Sync, so they leave as one write.
    The server runs them in order and skips the rest after a failure; the first failure is
    raised once every answer is read. Each query's result, in order (the COMMIT's left out)."""
    pg = driver.pgconn
    pg.enter_pipeline_mode()
    results: list[PGresult] = []
    failure: psycopg.Error | None = None
    try:
        for query in queries:
            pg.send_query_params(
                query.query, query.params, param_types=query.types, param_formats=query.formats
            )
        pg.send_query_params(b"COMMIT", None)
        pg.pipeline_sync()
        driver.wait(generators.send(pg))
        for _ in range(len(queries) + 1):
            for result in driver.wait(generators.fetch_many(pg)):
                if result.status == ExecStatus.FATAL_ERROR and failure is None:
                    failure = psycopg.errors.error_from_result(
                        result, encoding=driver.info.encoding
                    )
                results.append(result)
        synced = driver.wait(generators.fetch(pg))
        assert synced is not None and synced.status == ExecStatus.PIPELINE_SYNC, synced
    finally:
        if pg.status == ConnStatus.OK:
            pg.exit_pipeline_mode()
    if failure is not None:
        raise failure
    return results[: len(queries)]


class _Rows:
    """A query's result as `Direct.read` reads a cursor: `fetchall()` and `description`."""

    def __init__(self, adapting: Adapting, result: PGresult) -> None:
        self.adapting, self.result = adapting, result

    @property
    def description(self) -> list[tuple[str, int]]:
        result = self.result
        return [
            (bytes(result.fname(i) or b"").decode(), result.ftype(i)) for i in range(result.nfields)
        ]

    def fetchall(self) -> list[tuple[Any, ...]]:
        self.adapting.set_pgresult(self.result)
        return self.adapting.load_rows(0, self.result.ntuples, tuple)

    def close(self) -> None:
        pass
