"""Leases: short-lived, renewable claims on a name (a participant's queue, a singleton role)."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine, Insert, and_, bindparam, delete, or_, select
from sqlalchemy.dialects import postgresql, sqlite

from bot.store.direct import Direct
from bot.store.schema import leases


def acquire(
    bind: Engine | Connection, name: str, holder: str, now: datetime, ttl: timedelta
) -> bool:
    """Take or renew the lease `name` for `holder`; false if someone else holds it unexpired.

    One statement: an INSERT that, when the name is taken, updates the row only if it expired
    or is the holder's own (ON CONFLICT DO UPDATE ... WHERE, re-checked under the row lock on
    PostgreSQL, serialised by BEGIN IMMEDIATE on SQLite); RETURNING says whether it is theirs.
    Given an Engine it runs in a transaction of its own; given a Connection, in the caller's.
    """
    if isinstance(bind, Engine):
        with bind.begin() as conn:
            return _acquire(conn, name, holder, now, ttl)
    return _acquire(bind, name, holder, now, ttl)


@functools.cache
def _upsert(dialect: str) -> Direct:
    """The acquiring upsert, built once per dialect (building it cost more than running it)
    and run on the driver's cursor (bot.store.direct): a worker takes a lease every turn."""
    dialect_insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    insert = dialect_insert(leases).values(
        name=bindparam("name"), holder=bindparam("holder"), expires_at=bindparam("expires_at")
    )
    upsert: Insert = insert.on_conflict_do_update(
        index_elements=["name"],
        set_={"holder": insert.excluded.holder, "expires_at": insert.excluded.expires_at},
        where=or_(leases.c.expires_at <= bindparam("now"), leases.c.holder == bindparam("holder")),
    ).returning(leases.c.name)
    return Direct(upsert)


_RELEASE = Direct(
    delete(leases).where(
        and_(leases.c.name == bindparam("name"), leases.c.holder == bindparam("holder"))
    )
)


def _acquire(conn: Connection, name: str, holder: str, now: datetime, ttl: timedelta) -> bool:
    params = {"name": name, "holder": holder, "expires_at": now + ttl, "now": now}
    # RETURNING, not rowcount: psycopg reports a rowcount for a conflict left alone too.
    return bool(_upsert(conn.dialect.name).rows(conn, params))


def release(bind: Engine | Connection, name: str, holder: str) -> None:
    """Give the lease up, if `holder` still has it (in the caller's transaction if given a
    Connection)."""
    params = {"name": name, "holder": holder}
    if isinstance(bind, Engine):
        with bind.begin() as conn:
            _RELEASE.run(conn, params)
        return
    _RELEASE.run(bind, params)


def holder_of(engine: Engine, name: str, now: datetime) -> str | None:
    """Who holds `name` unexpired at `now`, if anyone."""
    with engine.connect() as conn:
        row = conn.execute(select(leases).where(leases.c.name == name)).first()
    if row is None or row.expires_at <= now:
        return None
    return row.holder
