"""Leases: short-lived, renewable claims on a name (a participant's queue, a singleton role)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Engine, and_, delete, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from bot.store.schema import leases


def acquire(engine: Engine, name: str, holder: str, now: datetime, ttl: timedelta) -> bool:
    """Take or renew the lease `name` for `holder`; false if someone else holds it unexpired.

    One conditional UPDATE (re-checked under the row lock on PostgreSQL, serialised by
    BEGIN IMMEDIATE on SQLite), then an INSERT that does nothing on conflict.
    """
    expires = now + ttl
    with engine.begin() as conn:
        taken = conn.execute(
            update(leases)
            .where(
                and_(
                    leases.c.name == name,
                    or_(leases.c.expires_at <= now, leases.c.holder == holder),
                )
            )
            .values(holder=holder, expires_at=expires)
            .returning(leases.c.name)
        ).first()
        if taken is not None:
            return True
        # RETURNING, not rowcount: psycopg reports a rowcount for ON CONFLICT DO NOTHING too.
        dialect_insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        inserted = conn.execute(
            dialect_insert(leases)
            .values(name=name, holder=holder, expires_at=expires)
            .on_conflict_do_nothing(index_elements=["name"])
            .returning(leases.c.name)
        ).first()
        return inserted is not None


def release(engine: Engine, name: str, holder: str) -> None:
    """Give the lease up, if `holder` still has it."""
    with engine.begin() as conn:
        conn.execute(delete(leases).where(and_(leases.c.name == name, leases.c.holder == holder)))


def holder_of(engine: Engine, name: str, now: datetime) -> str | None:
    """Who holds `name` unexpired at `now`, if anyone."""
    with engine.connect() as conn:
        row = conn.execute(select(leases).where(leases.c.name == name)).first()
    if row is None or row.expires_at <= now:
        return None
    return row.holder
