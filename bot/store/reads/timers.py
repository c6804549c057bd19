"""Named reads of the timers table: what the scheduler's sweep arms, moves or disarms."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from bot.store.event_store import EventStore
from bot.store.schema import timers

_PENDING = (timers.c.timer_id, timers.c.due_at, timers.c.status)
# A timer that fired or was skipped was taken from its slot when its job ran; only these matter.
_ARMABLE_OR_CANCELLED = ("scheduled", "cancelled")

Pending = tuple[str, datetime, str]


def timers_to_sweep(
    store: EventStore,
    horizon_end: datetime,
    *,
    last_horizon_end: datetime | None = None,
    changed_since: datetime | None = None,
) -> list[Pending]:
    """(timer id, due, status) of the timers a sweep must look at, oldest change last: on the
    first sweep (no `last_horizon_end` or `changed_since`) every scheduled timer due by
    `horizon_end`; then those the horizon moved over and those changed since `changed_since`."""
    pending = timers.c.status == "scheduled"
    with store.reading() as conn:
        if last_horizon_end is None or changed_since is None:
            query = select(*_PENDING).where(pending, timers.c.due_at <= horizon_end)
            return [tuple(r) for r in conn.execute(query)]
        entered = select(*_PENDING).where(
            pending, timers.c.due_at > last_horizon_end, timers.c.due_at <= horizon_end
        )
        changed = (
            select(*_PENDING)
            .where(timers.c.updated_at > changed_since, timers.c.status.in_(_ARMABLE_OR_CANCELLED))
            .order_by(timers.c.updated_at)
        )
        rows = [*conn.execute(entered), *conn.execute(changed)]
    return [tuple(r) for r in rows]


def next_scheduled_due(store: EventStore) -> datetime | None:
    """When the next scheduled timer is due (None if none is)."""
    with store.reading() as conn:
        query = select(func.min(timers.c.due_at)).where(timers.c.status == "scheduled")
        return conn.execute(query).scalar_one()
