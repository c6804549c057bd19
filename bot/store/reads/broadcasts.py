"""Named reads of broadcasts: their audience, the list, one broadcast's progress, the
recipients due to be sent, and the export's rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, select

from bot.store.event_store import EventStore
from bot.store.schema import broadcast_recipients, broadcasts, outbox, participants

Row = dict[str, Any]
AUDIENCE_COLUMNS = (
    "participant_id",
    "channel",
    "status",
    "timezone",
    "intervention",
    "study",
    "arm",
    "name",
    "profile",
    "opted_out",
)
# An outbox row's status, as a broadcast's progress counts it.
SENT_STATES = frozenset({"sent", "delivered", "read", "accepted", "sending", "queued"})
FAILED_STATES = frozenset({"failed", "undelivered", "canceled"})


def audience(
    store: EventStore,
    *,
    study: str | None,
    arm: str | None,
    intervention: str | None,
    status: str | None,
) -> list[Row]:
    """Participants matching the filter's columns (status `active` unless given), in order of
    enrollment; the profile condition is the caller's to check."""
    c = participants.c
    where = [c.status == (status or "active")]
    for column, value in ((c.study, study), (c.arm, arm), (c.intervention, intervention)):
        if value is not None:
            where.append(column == value)
    query = (
        select(*(c[name] for name in AUDIENCE_COLUMNS))
        .where(and_(*where))
        .order_by(c.enrolled_at, c.participant_id)
    )
    with store.reading() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def broadcast_list(store: EventStore, limit: int = 100) -> list[Row]:
    """The latest broadcasts first."""
    with store.reading() as conn:
        rows = conn.execute(select(broadcasts).order_by(broadcasts.c.seq.desc()).limit(limit))
        return [dict(r._mapping) for r in rows]


def broadcast(store: EventStore, broadcast_id: str) -> Row | None:
    return store.projection_row("broadcasts", broadcast_id)


def progress(store: EventStore, broadcast_id: str, cancelled: bool) -> dict[str, int]:
    """How many recipients were sent, held, failed, are pending (and, after a cancel, were
    cancelled before their turn), from their rows and their outbox rows."""
    r, o = broadcast_recipients.c, outbox.c
    query = (
        select(r.status, o.status.label("outbox_status"))
        .select_from(broadcast_recipients.outerjoin(outbox, o.outbox_id == r.outbox_id))
        .where(r.broadcast_id == broadcast_id)
    )
    counts: Counter[str] = Counter({"sent": 0, "held": 0, "failed": 0, "pending": 0})
    with store.reading() as conn:
        for status, sent in conn.execute(query):
            counts[recipient_state(status, sent, cancelled)] += 1
    return dict(counts)


def recipient_state(status: str, outbox_status: str | None, cancelled: bool) -> str:
    """sent | held | failed | pending | cancelled: one recipient, as progress counts them (a
    step started and not yet answered by its turn is pending)."""
    if status == "held":
        return "held"
    if status == "started":
        return "pending"
    if status == "pending":
        return "cancelled" if cancelled else "pending"
    if outbox_status == "suppressed":
        return "held"
    if outbox_status in FAILED_STATES:
        return "failed"
    if outbox_status in SENT_STATES:
        return "sent"
    return "pending"  # queued, not yet sent (or its outcome not yet known)


def due_recipients(store: EventStore, now: datetime, limit: int) -> list[Row]:
    """Up to `limit` pending recipients of active broadcasts due by `now`, soonest first."""
    r, b = broadcast_recipients.c, broadcasts.c
    query = (
        select(r.broadcast_id, r.participant_id, r.due_at)
        .select_from(broadcast_recipients.join(broadcasts, b.broadcast_id == r.broadcast_id))
        .where(and_(r.status == "pending", r.due_at <= now, b.status == "active"))
        .order_by(r.due_at, r.recipient_id)
        .limit(limit)
    )
    with store.reading() as conn:
        return [dict(row._mapping) for row in conn.execute(query)]


def next_due(store: EventStore) -> datetime | None:
    """When the soonest pending recipient of an active broadcast is due (None: none is)."""
    r, b = broadcast_recipients.c, broadcasts.c
    query = (
        select(r.due_at)
        .select_from(broadcast_recipients.join(broadcasts, b.broadcast_id == r.broadcast_id))
        .where(and_(r.status == "pending", b.status == "active"))
        .order_by(r.due_at)
        .limit(1)
    )
    with store.reading() as conn:
        return conn.execute(query).scalar()


def recipient_rows(store: EventStore, broadcast_id: str | None = None) -> list[Row]:
    """Every recipient (of one broadcast, or of all) with its outbox row's status and sent
    time, in the order broadcasts were made."""
    with store.reading() as conn:
        return recipient_rows_on(conn, broadcast_id)


def recipient_rows_on(
    conn: Connection, broadcast_id: str | None = None, participant_ids: Sequence[str] = ()
) -> list[Row]:
    """`recipient_rows` on an open connection (an export's snapshot), of `participant_ids`
    only if given."""
    r, o, b = broadcast_recipients.c, outbox.c, broadcasts.c
    query = (
        select(
            r.broadcast_id,
            r.participant_id,
            r.status,
            r.reason,
            r.due_at,
            r.outbox_id,
            o.status.label("outbox_status"),
            o.error_message.label("outbox_error"),
            o.sent_at,
            b.status.label("broadcast_status"),
        )
        .select_from(
            broadcast_recipients.join(broadcasts, b.broadcast_id == r.broadcast_id).outerjoin(
                outbox, o.outbox_id == r.outbox_id
            )
        )
        .order_by(b.seq, r.participant_id)
    )
    if broadcast_id is not None:
        query = query.where(r.broadcast_id == broadcast_id)
    if participant_ids:
        query = query.where(r.participant_id.in_(list(participant_ids)))
    return [dict(row._mapping) for row in conn.execute(query)]


def scheduled(store: EventStore, schedule: str) -> list[str]:
    """The `schedule` of every broadcast a study's declared broadcast made (`schedule` is
    `<study>/<name>`; each is `<study>/<name>@<date>`)."""
    query = select(broadcasts.c.schedule).where(
        broadcasts.c.schedule.startswith(f"{schedule}@", autoescape=True)
    )
    with store.reading() as conn:
        return [str(row[0]) for row in conn.execute(query)]


def study_in_use(store: EventStore, study: str) -> bool:
    """Whether anyone was ever allocated in `study` (whatever their status now)."""
    query = select(participants.c.participant_id).where(participants.c.study == study).limit(1)
    with store.reading() as conn:
        return conn.execute(query).first() is not None
