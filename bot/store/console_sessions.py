"""Console session records: open, look up, touch and end the server-side sessions of staff.

An operational table (`console_sessions`), written directly like `login_throttle`: a session
is not a fact about anyone worth keeping for ever (`staff.signed_in`/`signed_out` are), only a
key the server can forget. The cookie carries a random token; the table keeps its SHA-256, so
that a copy of the database opens no session.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Insert, and_, delete, insert, select, update

from bot.store.event_store import EventStore
from bot.store.schema import console_sessions, staff_credentials


@dataclass(frozen=True)
class SessionRecord:
    """One open session: whose, when it began, when its owner last did something."""

    email: str
    created_at: datetime
    last_active_at: datetime
    via_code: bool


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def open_session(store: EventStore, email: str, now: datetime) -> str:
    """A new session for `email` (signed in with a password); returns its cookie token."""
    token = secrets.token_urlsafe(32)
    with store.transaction() as tx:
        tx.conn.execute(_row(token, email, now, via_code=False))
    return token


def open_session_with_code(store: EventStore, email: str, now: datetime) -> str | None:
    """A new session for `email` signed in with its first-sign-in code, using the code up in
    the same transaction (its expiry becomes `now`, so it never signs anyone in again).
    None if another sign-in used the code first."""
    token = secrets.token_urlsafe(32)
    with store.transaction() as tx:
        used = tx.conn.execute(
            update(staff_credentials)
            .where(
                and_(
                    staff_credentials.c.email == email,
                    staff_credentials.c.one_time.is_(True),
                    staff_credentials.c.expires_at > now,
                )
            )
            .values(expires_at=now)
        )
        if used.rowcount != 1:
            return None
        tx.conn.execute(_row(token, email, now, via_code=True))
    return token


def find(store: EventStore, token: str) -> SessionRecord | None:
    with store.reading() as conn:
        row = conn.execute(
            select(console_sessions).where(console_sessions.c.token_hash == token_hash(token))
        ).first()
    if row is None:
        return None
    return SessionRecord(row.email, row.created_at, row.last_active_at, row.via_code)


def touch(store: EventStore, token: str, now: datetime) -> None:
    """Record that the session's owner did something at `now` (restarts its idle time)."""
    with store.transaction() as tx:
        tx.conn.execute(
            update(console_sessions)
            .where(console_sessions.c.token_hash == token_hash(token))
            .values(last_active_at=now)
        )


def end(store: EventStore, token: str) -> None:
    with store.transaction() as tx:
        tx.conn.execute(
            delete(console_sessions).where(console_sessions.c.token_hash == token_hash(token))
        )


def end_all(store: EventStore, email: str) -> int:
    """End every session of `email`; returns how many were open."""
    with store.transaction() as tx:
        ended = tx.conn.execute(delete(console_sessions).where(console_sessions.c.email == email))
    return int(ended.rowcount or 0)


def end_started_before(store: EventStore, cutoff: datetime) -> int:
    """Forget sessions begun before `cutoff` (past their absolute lifetime in any case)."""
    with store.transaction() as tx:
        ended = tx.conn.execute(
            delete(console_sessions).where(console_sessions.c.created_at < cutoff)
        )
    return int(ended.rowcount or 0)


def _row(token: str, email: str, now: datetime, *, via_code: bool) -> Insert:
    return insert(console_sessions).values(
        token_hash=token_hash(token),
        email=email,
        created_at=now,
        last_active_at=now,
        via_code=via_code,
    )
