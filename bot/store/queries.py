"""Reads of projection rows that several parts of Tandem need, written once."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, and_, bindparam, select

from bot.core.keys import PhoneHasher
from bot.store.direct import Direct
from bot.store.schema import (
    data_keys,
    outbox,
    participant_phones,
    participants,
    sender_phones,
    timers,
)


def _by_phone() -> Select:
    return (
        select(participants)
        .join(
            participant_phones,
            participant_phones.c.participant_id == participants.c.participant_id,
        )
        .where(
            participant_phones.c.phone_hmac == bindparam("phone_hmac"),
            # two comparisons, not NOT IN: an IN of literals is re-expanded at every execution
            participants.c.status != "unenrolled",
            participants.c.status != "erased",
        )
    )


# Built once: every inbound webhook runs one of these, and building and compiling a select
# with a join costs several times its execution. The webhook's
# (locked, in its write transaction) runs on the driver's cursor (bot.store.direct).
_BY_PHONE = _by_phone()
_BY_PHONE_LOCKED = Direct(_by_phone().with_for_update())


def enrolled_with_phone(
    conn: Connection, phone: str, phones: PhoneHasher, *, lock: bool = False
) -> dict[str, Any] | None:
    """The enrolled participant with this E.164 phone, whatever channel or number they used,
    found by the phone's keyed hash (`phones`, the store's `sealer.phones`), never by the
    number itself; `lock` reads the row FOR UPDATE (the lock appends to their stream take)."""
    params = {"phone_hmac": phones.digest(phone)}
    if lock:
        rows = _BY_PHONE_LOCKED.rows(conn, params)
        return rows[0] if rows else None
    row = conn.execute(_BY_PHONE, params).first()
    return dict(row._mapping) if row else None


_SENDER_BY_PHONE = Direct(
    select(sender_phones.c.sender_id).where(sender_phones.c.phone_hmac == bindparam("phone_hmac"))
)


def sender_with_phone(conn: Connection, phone: str, phones: PhoneHasher) -> str | None:
    """The id of the unknown sender with this E.164 phone (whose key is not destroyed), found
    by the phone's keyed hash, never by the number itself."""
    rows = _SENDER_BY_PHONE.rows(conn, {"phone_hmac": phones.digest(phone)})
    return str(rows[0]["sender_id"]) if rows else None


# Read on every turn, and by every webhook that acts on timers: run on the driver's cursor.
_PENDING_TIMERS = Direct(
    select(timers)
    .where(timers.c.participant_id == bindparam("pid"), timers.c.status == "scheduled")
    .order_by(timers.c.due_at)
)


def pending_timers(conn: Connection, participant_id: str) -> list[dict[str, Any]]:
    """A participant's timers that have not fired, been skipped or been cancelled, by due time
    (in `conn`'s open transaction)."""
    return _PENDING_TIMERS.rows(conn, {"pid": participant_id})


def pending_outbox(conn: Connection, participant_id: str) -> list[str]:
    """The ids of a participant's outbound messages not yet sent (pending or deferred), in order."""
    query = select(outbox.c.outbox_id).where(
        and_(
            outbox.c.participant_id == participant_id, outbox.c.status.in_(("pending", "deferred"))
        )
    )
    return [r.outbox_id for r in conn.execute(query.order_by(outbox.c.position))]


def pending_outbox_of_stream(conn: Connection, stream_id: str) -> list[str]:
    """The ids of a stream's outbound messages not yet sent (an unknown sender's notices)."""
    query = select(outbox.c.outbox_id).where(
        and_(outbox.c.stream_id == stream_id, outbox.c.status.in_(("pending", "deferred")))
    )
    return [r.outbox_id for r in conn.execute(query.order_by(outbox.c.position))]


def senders_keyed_before(conn: Connection, cutoff: datetime) -> list[str]:
    """The unknown senders whose data key was made before `cutoff` and is not destroyed."""
    query = (
        select(sender_phones.c.sender_id)
        .join(data_keys, data_keys.c.participant_id == sender_phones.c.sender_id)
        .where(and_(data_keys.c.wrapped.isnot(None), data_keys.c.created_at < cutoff))
        .order_by(sender_phones.c.sender_id)
    )
    return [row.sender_id for row in conn.execute(query)]
