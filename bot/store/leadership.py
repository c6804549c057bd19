"""Scheduler leadership's storage: a PostgreSQL advisory lock, or a `leases` row elsewhere.

PostgreSQL: a session-level `pg_try_advisory_lock` on a dedicated connection held for as long as
this process leads; if the process or its connection dies, the lock is gone at once and a
standby takes it on its next try. SQLite (no advisory locks): the `leases` row "scheduler",
renewed every third of its time to live and taken over once it has expired. Both satisfy
`bot.timers.leadership.Leadership`; which one a deployment gets is the store's choice.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from datetime import timedelta

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import SQLAlchemyError

from bot.core.clock import Clock
from bot.store import leases

log = logging.getLogger("bot.timers.leadership")  # where an operator looks for leadership
NAME = "scheduler"


class AdvisoryLock:
    """Leadership held as a PostgreSQL session advisory lock on a connection of its own."""

    def __init__(self, engine: Engine, name: str = NAME, ttl: timedelta | None = None) -> None:
        self.engine = engine
        self.key = f"tandem:{name}"
        # How often a standby tries again and a leader checks its connection.
        self.ttl = ttl or timedelta(seconds=30)
        self._conn: Connection | None = None

    def acquire(self) -> bool:
        if self._conn is not None:
            return self.renew()
        conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        try:
            taken = conn.execute(
                text("SELECT pg_try_advisory_lock(hashtextextended(:k, 0))"), {"k": self.key}
            ).scalar_one()
        except SQLAlchemyError:
            conn.invalidate()
            conn.close()
            raise
        if not taken:
            conn.close()
            return False
        self._conn = conn
        return True

    def renew(self) -> bool:
        if self._conn is None:
            return False
        try:
            self._conn.execute(text("SELECT 1"))
            return True
        except SQLAlchemyError as exc:
            log.warning("scheduler leadership lost: its connection failed (%s)", type(exc).__name__)
            self._drop()
            return False

    def release(self) -> None:
        if self._conn is None:
            return
        try:
            self._conn.execute(
                text("SELECT pg_advisory_unlock(hashtextextended(:k, 0))"), {"k": self.key}
            )
        except SQLAlchemyError:
            pass  # closing the connection below releases the lock anyway
        self._drop()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.invalidate()  # never hand a connection holding a session lock back to the pool
            conn.close()


class LeaseRow:
    """Leadership held as the `leases` row `name`, renewed before it expires."""

    def __init__(
        self,
        engine: Engine,
        clock: Clock,
        holder: str,
        name: str = NAME,
        ttl: timedelta = timedelta(seconds=30),
    ) -> None:
        self.engine = engine
        self.clock = clock
        self.holder = holder
        self.name = name
        self.ttl = ttl

    def acquire(self) -> bool:
        return leases.acquire(self.engine, self.name, self.holder, self.clock.now(), self.ttl)

    def renew(self) -> bool:
        try:
            return self.acquire()
        except SQLAlchemyError as exc:
            log.warning("scheduler lease not renewed (%s)", type(exc).__name__)
            return False

    def release(self) -> None:
        leases.release(self.engine, self.name, self.holder)


def holder_name() -> str:
    """A name for this process in the leases table (host, pid and a random suffix)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def leadership_for(
    engine: Engine, clock: Clock, ttl: timedelta, holder: str | None = None, name: str = NAME
) -> AdvisoryLock | LeaseRow:
    """An advisory lock on PostgreSQL, a lease row anywhere else (`name`: what is led, the
    scheduler unless said)."""
    if engine.dialect.name == "postgresql":
        return AdvisoryLock(engine, name, ttl=ttl)
    return LeaseRow(engine, clock, holder or holder_name(), name, ttl=ttl)
