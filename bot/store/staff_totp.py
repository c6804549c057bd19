"""Staff TOTP secrets (`staff_totp`), written directly like `console_sessions`: the sealed
secret, whether enrolment was confirmed, and the last accepted code's time step."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, delete, insert, select, update

from bot.store.event_store import EventStore, Transaction
from bot.store.schema import staff_totp


@dataclass(frozen=True)
class TotpRecord:
    email: str
    sealed: str
    enabled: bool
    last_step: int


def find(store: EventStore, email: str) -> TotpRecord | None:
    with store.reading() as conn:
        row = conn.execute(select(staff_totp).where(staff_totp.c.email == email)).first()
    if row is None:
        return None
    return TotpRecord(row.email, row.sealed, row.enabled, row.last_step)


def enabled_emails(store: EventStore) -> set[str]:
    """The accounts with a confirmed second factor (the users page shows which)."""
    with store.reading() as conn:
        rows = conn.execute(select(staff_totp.c.email).where(staff_totp.c.enabled)).all()
    return {email for (email,) in rows}


def start(store: EventStore, email: str, sealed: str, now: datetime) -> None:
    """A new secret awaiting its first code, replacing an unconfirmed one (never a confirmed
    one: that is turned off first)."""
    with store.transaction() as tx:
        tx.conn.execute(
            delete(staff_totp).where(and_(staff_totp.c.email == email, ~staff_totp.c.enabled))
        )
        tx.conn.execute(
            insert(staff_totp).values(
                email=email, sealed=sealed, enabled=False, last_step=0, updated_at=now
            )
        )


def use_step(store: EventStore, email: str, step: int, *, enable: bool, now: datetime) -> bool:
    """Accept a code of time `step` if no code of that step or a later one was: one UPDATE,
    so two requests with the same code cannot both pass. `enable` confirms enrolment."""
    values: dict[str, object] = {"last_step": step, "updated_at": now}
    if enable:
        values["enabled"] = True
    with store.transaction() as tx:
        row = tx.conn.execute(
            update(staff_totp)
            .where(and_(staff_totp.c.email == email, staff_totp.c.last_step < step))
            .values(**values)
            .returning(staff_totp.c.email)
        ).first()
    return row is not None


def remove(store: EventStore, email: str) -> None:
    with store.transaction() as tx:
        remove_in(tx, email)


def remove_in(tx: Transaction, email: str) -> bool:
    """Delete the account's secret (confirmed or being enrolled) in `tx`; whether it had one."""
    result = tx.conn.execute(delete(staff_totp).where(staff_totp.c.email == email))
    return bool(result.rowcount)


def sealed_in(tx: Transaction) -> list[tuple[str, str]]:
    """Every (email, sealed secret), enrolled or being enrolled, read in `tx` (a rotation's)."""
    query = select(staff_totp.c.email, staff_totp.c.sealed).order_by(staff_totp.c.email)
    return [(email, sealed) for email, sealed in tx.conn.execute(query).all()]


def reseal_in(tx: Transaction, email: str, sealed: str) -> None:
    """Replace the account's sealed secret in `tx`; its step and state stay."""
    tx.conn.execute(update(staff_totp).where(staff_totp.c.email == email).values(sealed=sealed))
