"""Hot statements compiled once and run on the driver's cursor.

SQLAlchemy's execution of a compiled, cached statement costs many times the driver's own
work for a short statement (docs/performance.md, Append). An append issues four statements, so
that overhead was most of what separated it from a bare INSERT+COMMIT.

`Direct` keeps everything that makes SQLAlchemy's execution safe and runs only the rest itself:
the statement is a Core construct compiled by the dialect (quoting, casts, RETURNING, ON
CONFLICT exactly as SQLAlchemy renders them), its values go through the column types' own bind
processors (`TypeEngine.bind_processor`: the same JSON serialiser, the same UTC handling) and its
rows through their result processors; `before_cursor_execute` and `after_cursor_execute`
listeners still see each statement (the statement-counting tests rely on them; a listener
registered with `retval=True` sees it but cannot rewrite it); a driver error
is raised as SQLAlchemy's own exception (`IntegrityError` stays `IntegrityError`), and a lost
connection invalidates the pooled connection as SQLAlchemy would. It runs only inside a
transaction the Connection began, so SQLAlchemy's transaction bookkeeping (BEGIN IMMEDIATE on
SQLite, COMMIT, ROLLBACK) is untouched.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.engine.interfaces import DBAPIModule
from sqlalchemy.exc import DBAPIError, StatementError
from sqlalchemy.sql import ClauseElement, Select
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import UpdateBase

Processor = Callable[[Any], Any] | None


@dataclass(frozen=True)
class _Compiled:
    sql: str
    positional: tuple[str, ...] | None  # parameter names in order for a positional paramstyle
    binds: tuple[tuple[str, Processor], ...]
    fixed: dict[str, Any]  # values the statement binds itself (`status != "erased"`)
    results: tuple[tuple[str, Any], ...]  # the returned columns: name, type


class Direct:
    """A Core statement executed on the DBAPI cursor of a SQLAlchemy Connection (see module)."""

    def __init__(self, statement: ClauseElement, keys: Sequence[str] | None = None) -> None:
        """`keys`: the parameter names every execution passes (an INSERT's columns)."""
        self.statement = statement
        self.keys = list(keys) if keys is not None else None
        self._compiled: dict[str, _Compiled] = {}
        # Result processors, made from the first cursor's description (PostgreSQL's numeric
        # processors depend on the type the server reports).
        self._processors: dict[str, tuple[tuple[str, Processor], ...]] = {}
        self._lock = threading.Lock()

    def _for(self, dialect: Dialect) -> _Compiled:
        found = self._compiled.get(dialect.name)
        if found is not None:
            return found
        with self._lock:
            compiled = self.statement.compile(dialect=dialect, column_keys=self.keys)
            assert isinstance(compiled, SQLCompiler)  # Core statements compile to SQL
            binds = tuple(
                (name, bind.type.dialect_impl(dialect).bind_processor(dialect))
                for name, bind in compiled.binds.items()
            )
            results = tuple(_returned(self.statement))
            positional = tuple(compiled.positiontup or ()) if dialect.positional else None
            fixed = {
                name: bind.effective_value
                for name, bind in compiled.binds.items()
                if not bind.required
            }
            found = _Compiled(compiled.string, positional, binds, fixed, results)
            self._compiled[dialect.name] = found
        return found

    def bound(self, dialect: Dialect, params: dict[str, Any]) -> tuple[str, Any]:
        """The statement's SQL and `params` as the driver takes them, each value through its
        column type's bind processor."""
        compiled = self._for(dialect)
        values = {**compiled.fixed, **params} if compiled.fixed else dict(params)
        for name, process in compiled.binds:
            if process is not None and name in values:
                values[name] = process(values[name])
        bound: Any = (
            tuple(values[name] for name in compiled.positional)
            if compiled.positional is not None
            else values
        )
        return compiled.sql, bound

    def execute(self, conn: Connection, params: dict[str, Any]) -> Any:
        """Run the statement with `params` in `conn`'s open transaction; the DBAPI cursor."""
        if not conn.in_transaction():
            raise RuntimeError("Direct statements run only inside a transaction")
        dialect = conn.dialect
        sql, bound = self.bound(dialect, params)
        dispatch = conn.dispatch
        before, after = dispatch.before_cursor_execute, dispatch.after_cursor_execute
        dbapi_connection = conn.connection.dbapi_connection
        assert dbapi_connection is not None  # a Connection in use holds its driver's
        cursor = dbapi_connection.cursor()
        try:
            if before:
                for listener in before:
                    listener(conn, cursor, sql, bound, None, False)
            cursor.execute(sql, bound)
            if after:
                for listener in after:
                    listener(conn, cursor, sql, bound, None, False)
        except dialect.loaded_dbapi.Error as exc:
            cursor.close()
            raise driver_error(conn, exc, sql, bound, cursor) from exc
        return cursor

    def rows(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Execute and return the rows of its RETURNING or SELECT as dicts, processed."""
        return self.read(conn, self.execute(conn, params))

    def read(self, conn: Connection, cursor: Any, keep_open: bool = False) -> list[dict[str, Any]]:
        """The rows of `cursor`'s current result, this statement's, as dicts, processed (none
        of a statement that returns no rows); the cursor is closed unless `keep_open` (its
        further results are read next)."""
        dialect = conn.dialect
        # Whether it returns rows, from the statement (a SELECT, or a RETURNING), not from the
        # cursor: psycopg builds `cursor.description` anew at each read, a Column object for
        # each column, a noticeable share of a webhook's CPU on PostgreSQL
        if not self._for(dialect).results:
            if not keep_open:
                cursor.close()
            return []
        try:
            fetched = cursor.fetchall()
            processors = self._processors.get(dialect.name)
            if processors is None:
                processors = tuple(
                    (name, type_.dialect_impl(dialect).result_processor(dialect, described[1]))
                    for (name, type_), described in zip(
                        self._for(dialect).results, cursor.description, strict=True
                    )
                )
                self._processors[dialect.name] = processors
        finally:
            if not keep_open:
                cursor.close()
        out = []
        for raw in fetched:
            row = {}
            for (name, process), value in zip(processors, raw, strict=True):
                row[name] = process(value) if process is not None else value
            out.append(row)
        return out

    def run(self, conn: Connection, params: dict[str, Any]) -> int:
        """Execute a statement that returns no rows; the rows it changed."""
        cursor = self.execute(conn, params)
        try:
            return cursor.rowcount
        finally:
            cursor.close()


def driver_error(
    conn: Connection, exc: DBAPIModule.Error, sql: str, bound: Any, cursor: Any
) -> StatementError:
    """SQLAlchemy's exception for the driver's `exc` (an IntegrityError stays one), its values
    hidden; a lost connection is invalidated, as SQLAlchemy's own execution does."""
    dialect = conn.dialect
    disconnected = dialect.is_disconnect(exc, conn.connection.dbapi_connection, cursor)
    if disconnected:
        conn.invalidate(exc)
    return DBAPIError.instance(
        sql,
        bound,
        exc,
        dialect.loaded_dbapi.Error,
        hide_parameters=True,  # phones and texts stay out of tracebacks and logs
        dialect=dialect,
        connection_invalidated=disconnected,
    )


def _returned(statement: ClauseElement) -> list[tuple[str, Any]]:
    """The columns a SELECT or a RETURNING gives back: name and type, in order."""
    if isinstance(statement, Select):
        return [(str(c.key), c.type) for c in statement.selected_columns]  # a SELECT's are named
    if isinstance(statement, UpdateBase):
        return [(d["name"], d["type"]) for d in statement.returning_column_descriptions]
    return []
