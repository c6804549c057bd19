"""Sign-in throttling: each attempt is counted before the password is checked, per account and
client address (increasing delays) and per address (a looser limit, against password spraying).

The owner signing in from another address is not held back by an attacker's failures. Kept in
the database (`login_throttle`) so that every web process counts the same attempts, and counted
by one conditional UPDATE per key: concurrent attempts are serialised by the row lock, and past
the limit the UPDATE itself refuses, so 40 parallel guesses check at most the limit's passwords.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, and_, case, delete, literal, null, or_, update
from sqlalchemy.dialects import postgresql, sqlite

from bot.store.event_store import EventStore
from bot.store.schema import login_throttle


@dataclass(frozen=True)
class Limit:
    """`free` attempts without delay, then a lock after each further one: `delays` in turn,
    the last repeated; the count is forgotten after `forget` without an attempt."""

    free: int
    delays: tuple[timedelta, ...]
    forget: timedelta

    def lock_after(self, attempt: int) -> timedelta | None:
        if attempt < self.free:
            return None
        return self.delays[min(attempt - self.free, len(self.delays) - 1)]


_MINUTE = timedelta(minutes=1)
# One account from one address: five tries, then 1, 2, 4, 8 and 15 minutes between tries.
PAIR = Limit(5, (_MINUTE, 2 * _MINUTE, 4 * _MINUTE, 8 * _MINUTE, 15 * _MINUTE), timedelta(hours=1))
# One address, any accounts: a shared hospital NAT signs many people in; a sprayer is slowed.
ADDRESS = Limit(30, (15 * _MINUTE,), timedelta(minutes=15))
LIMITS = {"pair": PAIR, "ip": ADDRESS}


def keys(email: str, address: str) -> list[str]:
    """The address's key, then the account+address pair's (hashed: an email can be long)."""
    pair = f"{email.strip().lower()}|{address}".encode()
    return [f"ip:{address[:64]}", f"pair:{hashlib.sha256(pair).hexdigest()}"]


def attempt(store: EventStore, names: list[str], now: datetime) -> datetime | None:
    """Count one attempt against each key, in order; the lock in force if one refuses it
    (and the later keys are not counted), None if the password may be checked."""
    for name in names:
        with store.transaction() as tx:
            until = _count(tx.conn, name, LIMITS[name.split(":", 1)[0]], now)
        if until is not None:
            return until
    return None


def _count(conn: Connection, name: str, limit: Limit, now: datetime) -> datetime | None:
    t = login_throttle
    free = or_(t.c.locked_until.is_(None), t.c.locked_until <= now)
    conn.execute(  # forgotten: quiet for `forget` and not locked
        update(t)
        .where(and_(t.c.key == name, t.c.window_started_at <= now - limit.forget, free))
        .values(failures=0, locked_until=None)
    )
    dialect_insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    conn.execute(
        dialect_insert(t)
        .values(key=name, failures=0, window_started_at=now, locked_until=None)
        .on_conflict_do_nothing(index_elements=["key"])
    )
    # The lock each attempt number leaves, spelled out: None below `free`.
    when = t.c.locked_until.type
    steps = range(limit.free, limit.free + len(limit.delays))
    locks = {n: literal(now + d, when) for n in steps if (d := limit.lock_after(n)) is not None}
    counted = conn.execute(
        update(t)
        .where(and_(t.c.key == name, free))
        .values(
            failures=t.c.failures + 1,
            window_started_at=now,
            locked_until=case(
                *((t.c.failures + 1 == n, at) for n, at in locks.items()),
                (t.c.failures + 1 < limit.free, null()),
                else_=literal(now + limit.delays[-1], when),
            ),
        )
        .returning(t.c.failures)
    ).first()
    if counted is not None:
        return None
    row = conn.execute(t.select().where(t.c.key == name)).first()
    return row.locked_until if row is not None else now


def succeeded(store: EventStore, names: list[str]) -> None:
    """The password was right: the pair is forgotten and the address's attempt given back."""
    address, pair = names
    with store.transaction() as tx:
        tx.conn.execute(delete(login_throttle).where(login_throttle.c.key == pair))
        tx.conn.execute(
            update(login_throttle)
            .where(and_(login_throttle.c.key == address, login_throttle.c.failures > 0))
            .values(failures=login_throttle.c.failures - 1)
        )
