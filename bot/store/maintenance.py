"""Rewriting the database files so that what was overwritten or deleted leaves no copy there:
the store's part of `tandem maintenance` and of an erasure run by the schema's owner.

PostgreSQL keeps an updated or deleted row as a dead row version until VACUUM removes it, and
only the table's owner may VACUUM; the app role cannot (docs/operations.md). `data_keys` is
rewritten whole (VACUUM FULL: a new file holding only the live rows, the old one unlinked), so
that no destroyed data key stays in its pages, not even in a page's free space; the other
tables get a plain VACUUM (their dead row versions marked free). SQLite: VACUUM rewrites
every page and a TRUNCATE checkpoint empties the WAL.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, func, select, text
from sqlalchemy.exc import DBAPIError

from bot.store.schema import data_keys

log = logging.getLogger(__name__)

# Rewritten whole by every maintenance run: the tables that hold keys.
REWRITTEN = (data_keys.name,)


@dataclass
class Scrubbed:
    """What the files now hold: `vacuumed` is False where some table was left for later."""

    vacuumed: bool
    tables: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    wal_truncated: bool = True
    pending: int = 0  # erasures whose old key version a still-open transaction may see


class NotOwner(Exception):
    """The role connected does not own the tables maintenance must rewrite."""


def owns_keys(engine: Engine) -> bool:
    """Whether the connected role may rewrite `data_keys` (SQLite: always)."""
    if engine.dialect.name == "sqlite":
        return True
    with engine.connect() as conn:
        return dict(_tables(conn)).get(data_keys.name, False)


def scrub(engine: Engine, *, require_owner: bool = False, wait: float = 0.0) -> Scrubbed:
    """Rewrite what the connected role may: every table it owns (data_keys whole). With
    `require_owner`, refuse (`NotOwner`) unless it owns data_keys.

    VACUUM FULL still copies a row version that a transaction older than its deletion may
    see: first wait (up to `wait` seconds) until every running transaction, in any
    database, began after the latest erasure; `pending` counts the erasures it could not
    wait for (the next run completes them)."""
    if engine.dialect.name == "sqlite":
        return _sqlite(engine)
    done = Scrubbed(vacuumed=True)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        tables = _tables(conn)
        if require_owner and not dict(tables).get(data_keys.name, False):
            raise NotOwner(
                f"the role {conn.execute(text('SELECT current_user')).scalar()} does not own "
                f"{data_keys.name}: run this with the schema owner's DATABASE_URL (the one "
                "`tandem migrate` runs with), not the app role's"
            )
        for table, owned in tables:
            if not owned:  # the app role: `tandem maintenance`, run by the owner, does it
                done.skipped.append(table)
                continue
            full = table in REWRITTEN
            if full:
                done.pending = _await_horizon(conn, wait)
            try:
                conn.execute(text(f'VACUUM {"FULL " if full else ""}"{table}"'))
            except DBAPIError as exc:
                log.warning("could not VACUUM %s (%s)", table, type(exc.orig))
                done.skipped.append(table)
                continue
            (done.rewritten if full else done.tables).append(table)
    done.vacuumed = not done.skipped
    return done


def _pending(conn: Connection) -> int:
    """Erasures (rows holding no key) whose transaction is not older than the oldest one
    still running: their key's old version is not yet removable by VACUUM."""
    query = text(
        "SELECT count(*) FROM data_keys WHERE wrapped IS NULL AND age(xmin) <= "
        "age((pg_snapshot_xmin(pg_current_snapshot())::text::bigint % 4294967296)::text::xid)"
    )
    return int(conn.execute(query).scalar_one())


def _await_horizon(conn: Connection, wait: float) -> int:
    deadline = time.monotonic() + wait
    while (pending := _pending(conn)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return pending


def _sqlite(engine: Engine) -> Scrubbed:
    try:
        with engine.connect() as conn:
            raw = conn.connection.driver_connection
            assert raw is not None  # an open Connection holds its driver's
            raw.execute("PRAGMA secure_delete=ON")
            raw.execute("VACUUM")
            busy, _, _ = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.Error as exc:  # what was done stands; the files wait for the next VACUUM
        log.warning("the database could not be vacuumed (%s)", type(exc))
        return Scrubbed(vacuumed=False, wal_truncated=False)
    return Scrubbed(vacuumed=True, rewritten=["database file"], wal_truncated=not busy)


def _tables(conn: Connection) -> list[tuple[str, bool]]:
    query = text(
        "SELECT tablename, tableowner = current_user FROM pg_tables "
        "WHERE schemaname = current_schema() ORDER BY tablename"
    )
    return [(r[0], bool(r[1])) for r in conn.execute(query)]


def erased_key_count(conn: Connection) -> int:
    """How many data keys have been destroyed (rows of `data_keys` holding no key)."""
    query = select(func.count()).select_from(data_keys).where(data_keys.c.wrapped.is_(None))
    return int(conn.execute(query).scalar_one())
