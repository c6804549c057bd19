"""PostgreSQL: a transaction's last statements and its COMMIT sent as one message, so that the
locks they take are held only while the server runs them.

Why: a worker runs at the lowest CPU priority (`tandem worker`, bot/runtime/worker.py), so on a
busy machine it can wait tens of milliseconds for a core between two statements. When those
statements hold a participant's row lock, the webhook that records that participant's next
message waits as long (a priority inversion: bench/webhook.py counts these waits). Sent as one
message, the lock, the writes and the COMMIT reach the server together and it runs them back to
back; the client reads every answer once, after the COMMIT.

How: each statement's values are bound as its column types bind them (`Direct.bound`) and
written into its text by psycopg's own client-side quoting (`ClientCursor.mogrify`); the texts
go as one simple-protocol Query, which PostgreSQL runs statement after statement, stopping at
the first that fails (the transaction is then aborted, and rolled back by its owner). Not
psycopg's pipeline mode: it sends each statement as soon as it is queued, so the lock would
be held while the client still prepared the statements after it.

`Transaction.stage` works an append out in full before the lock (bot/store/event_store.py);
`commit_in_one_flight` sends what was staged (appends to several streams go in the order they
were staged: stage them in key order, as every transaction that locks several takes them), then
the caller's own statements, then COMMIT.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import ClientCursor
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
    texts, shapes = [], []  # with the values written in; with placeholders (what is shown)
    with ClientCursor(driver) as quoting:  # quotes; runs nothing
        for statement, params in [*appends, *then]:
            shape, bound = statement.bound(conn.dialect, params)
            texts.append(quoting.mogrify(shape, bound))
            shapes.append(shape)
    sql = ";\n".join([*texts, "COMMIT"])
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
        cursor.execute(sql)  # no parameters: the simple protocol, several statements in one
        for shape in shapes:
            for listener in after:
                listener(conn, cursor, shape, (), None, False)
    except conn.dialect.loaded_dbapi.Error as exc:
        cursor.close()
        error = driver_error(conn, exc, shown, None, cursor)
        failed = getattr(getattr(exc, "diag", None), "table_name", None)
        if isinstance(error, IntegrityError) and failed not in (None, "events"):
            raise refused([w for append in staged for w in append.writes], error) from exc
        raise error from exc
    for _ in appends:  # one result a statement, in order: the appends' answer nothing
        cursor.nextset()
    answered = []
    for statement, _ in then:
        answered.append(statement.read(conn, cursor, keep_open=True))
        cursor.nextset()
    cursor.close()
    return answered
