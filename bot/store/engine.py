"""Engines for SQLite (WAL, BEGIN IMMEDIATE) and PostgreSQL (psycopg 3)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import QueuePool

READ_ONLY = "tandem_read_only"


def normalise_url(url: str) -> str:
    """Accept `postgres://` and `postgresql://` and use the psycopg 3 driver for both."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_engine(url: str, *, pool_size: int = 5, echo: bool = False) -> Engine:
    """An engine configured for Tandem's write pattern on the URL's database."""
    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, echo)
    if parsed.get_backend_name() == "postgresql":
        return create_engine(
            url,
            echo=echo,
            hide_parameters=True,  # a failed statement's values (phones, texts) stay out of logs
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_pre_ping=True,
            connect_args={"connect_timeout": 10},
        )
    raise ValueError(
        f"unsupported database {parsed.get_backend_name()!r}: use sqlite or postgresql"
    )


def _sqlite_engine(url: str, echo: bool) -> Engine:
    # A pool of connections, each used by one thread at a time: opening a SQLite connection
    # (and setting WAL on it) costs more than the append it serves.
    engine = create_engine(
        url,
        echo=echo,
        hide_parameters=True,  # a failed statement's values (phones, texts) stay out of logs
        poolclass=QueuePool,
        pool_size=8,
        max_overflow=16,
        connect_args={"timeout": 30, "check_same_thread": False},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from pysqlite so that we can say BEGIN IMMEDIATE ourselves.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        # A REPLACE that removes a row fires its DELETE trigger, which refuses it on `events`.
        cursor.execute("PRAGMA recursive_triggers=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # A deferred transaction that reads and then writes cannot wait for the write lock;
        # every transaction writes unless it says it only reads.
        if conn.get_execution_options().get(READ_ONLY):
            conn.exec_driver_sql("BEGIN")
        else:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine
