"""Sign-in throttling: too many failures for one email or one client address lock it a while.

Kept in the database (`login_throttle`), so that every web process counts the same failures.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, insert, select, update

from bot.store.event_store import EventStore
from bot.store.schema import login_throttle


@dataclass(frozen=True)
class Limit:
    failures: int
    window: timedelta
    lock: timedelta


# An address may try more emails than one email may be tried: a shared hospital NAT.
LIMITS = {
    "email": Limit(5, timedelta(minutes=15), timedelta(minutes=15)),
    "ip": Limit(20, timedelta(minutes=15), timedelta(minutes=15)),
}


def keys(email: str, address: str) -> list[str]:
    return [f"email:{email.strip().lower()}", f"ip:{address}"]


def locked_until(store: EventStore, names: list[str], now: datetime) -> datetime | None:
    """The latest lock among `names` still in force, or None if sign-in may be tried."""
    with store.reading() as conn:
        rows = conn.execute(select(login_throttle).where(login_throttle.c.key.in_(names))).all()
    locks = [r.locked_until for r in rows if r.locked_until is not None and r.locked_until > now]
    return max(locks) if locks else None


def failed(store: EventStore, names: list[str], now: datetime) -> None:
    """Count one failure against each key, locking those that reached their limit."""
    with store.transaction() as tx:
        for name in names:
            limit = LIMITS[name.split(":", 1)[0]]
            row = tx.conn.execute(
                select(login_throttle).where(login_throttle.c.key == name)
            ).first()
            if row is None or row.window_started_at + limit.window <= now:
                tx.conn.execute(delete(login_throttle).where(login_throttle.c.key == name))
                tx.conn.execute(
                    insert(login_throttle).values(
                        key=name, failures=1, window_started_at=now, locked_until=None
                    )
                )
                continue
            failures = row.failures + 1
            lock = now + limit.lock if failures >= limit.failures else row.locked_until
            tx.conn.execute(
                update(login_throttle)
                .where(login_throttle.c.key == name)
                .values(failures=failures, locked_until=lock)
            )


def succeeded(store: EventStore, email_key: str) -> None:
    """A successful sign-in clears the email's failures (not the address's)."""
    with store.transaction() as tx:
        tx.conn.execute(delete(login_throttle).where(login_throttle.c.key == email_key))
