"""The console's alerts inbox: alerts with their participant's name and phone, open first.
Review items are not in it (the review queue, bot.store.reads.reviews); for a supervisor, only
the alerts that ask supervisors to act (a crisis, or one texted to them), never an operational
one (`turn_failed`, `degraded`...), which is for the research team and operators."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, or_, select

from bot.store.event_store import EventStore
from bot.store.schema import alerts, participants

LIMIT = 500


def for_supervisors() -> ColumnElement[bool]:
    """An alert that asks supervisors to act: a crisis, or one texted to them."""
    return or_(alerts.c.kind == "crisis", alerts.c.notify_supervisors.is_(True))


def _shown(supervisor: bool) -> ColumnElement[bool]:
    not_review = alerts.c.severity != "review"
    return and_(not_review, for_supervisors()) if supervisor else not_review


def inbox_rows(
    store: EventStore, status: str = "", *, supervisor: bool = False
) -> list[dict[str, Any]]:
    """Alerts (of `status`, or all), open then acknowledged then resolved, newest first in
    each, with the participant's name and phone; at most LIMIT. With `supervisor`, only those
    that ask supervisors to act."""
    order = case({"open": 0, "acknowledged": 1}, value=alerts.c.status, else_=2)
    query = (
        select(alerts, participants.c.name, participants.c.phone)
        .join(participants, participants.c.participant_id == alerts.c.participant_id, isouter=True)
        .where(_shown(supervisor))
        .order_by(order, alerts.c.raised_at.desc())
        .limit(LIMIT)
    )
    if status:
        query = query.where(alerts.c.status == status)
    with store.reading() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def open_count(store: EventStore, *, supervisor: bool = False) -> int:
    """How many alerts are open (for the console's nav), review items aside; with
    `supervisor`, only those that ask supervisors to act."""
    query = (
        select(func.count())
        .select_from(alerts)
        .where(alerts.c.status == "open", _shown(supervisor))
    )
    with store.reading() as conn:
        return int(conn.execute(query).scalar() or 0)
