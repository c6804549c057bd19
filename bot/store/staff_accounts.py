"""Staff accounts' rows: the `staff` projection read, and `staff_credentials` (hashes) written.

The account logic (bot.console.accounts) records the facts as events; the secrets' hashes are
kept out of events, in `staff_credentials`, written here in the caller's transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select

from bot.store.event_store import EventStore, Transaction
from bot.store.schema import staff, staff_credentials

Row = dict[str, Any]


def account_and_credential(store: EventStore, email: str) -> tuple[Row | None, Row | None]:
    """The account's `staff` row and its `staff_credentials` row, each None if missing."""
    with store.reading() as conn:
        account = conn.execute(select(staff).where(staff.c.email == email)).first()
        cred = conn.execute(
            select(staff_credentials).where(staff_credentials.c.email == email)
        ).first()
    return (
        None if account is None else dict(account._mapping),
        None if cred is None else dict(cred._mapping),
    )


def locked_account(tx: Transaction, email: str) -> Row | None:
    """The account's `staff` row in `tx` (the caller holds its stream's lock)."""
    row = tx.conn.execute(select(staff).where(staff.c.email == email)).first()
    return None if row is None else dict(row._mapping)


def all_staff(store: EventStore) -> list[Row]:
    """Every account's `staff` row, by email."""
    with store.reading() as conn:
        rows = conn.execute(select(staff).order_by(staff.c.email)).all()
    return [dict(r._mapping) for r in rows]


def forget_secret(tx: Transaction, email: str) -> None:
    """Delete the account's stored secret (a disabled account signs in with nothing)."""
    tx.conn.execute(delete(staff_credentials).where(staff_credentials.c.email == email))


def replace_secret(
    tx: Transaction,
    email: str,
    secret_hash: str,
    *,
    one_time: bool,
    expires_at: datetime | None,
    now: datetime,
) -> None:
    """Store `secret_hash` as the account's only secret, in `tx`."""
    forget_secret(tx, email)
    tx.conn.execute(
        insert(staff_credentials).values(
            email=email,
            secret_hash=secret_hash,
            one_time=one_time,
            expires_at=expires_at,
            updated_at=now,
        )
    )
