"""Named reads of participants for the web API and health: counts, a page, their raw events."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, func, select

from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.schema import events, participants, timers
from bot.store.stored_rows import opened_row

Row = dict[str, Any]


def active_participants(store: EventStore) -> int:
    """How many participants are active (`GET /health`)."""
    with store.reading() as conn:
        active = conn.execute(
            select(func.count()).select_from(participants).where(participants.c.status == "active")
        ).scalar()
    return int(active or 0)


def participants_page(
    store: EventStore, *, status: str | None, limit: int, offset: int
) -> tuple[int, list[Any]]:
    """(how many match, the page's rows) of participants in order of enrollment: of `status`
    if given, else every one still enrolled or ever enrolled (not `unenrolled`)."""
    where = participants.c.status == status if status else participants.c.status != "unenrolled"
    with store.reading() as conn:
        total = conn.execute(select(func.count()).select_from(participants).where(where)).scalar()
        rows = conn.execute(
            select(participants)
            .where(where)
            .order_by(participants.c.enrolled_at, participants.c.participant_id)
            .limit(limit)
            .offset(offset)
        ).all()
    return int(total or 0), list(rows)


def stream_rows_after(store: EventStore, participant_id: str, after: int, limit: int) -> list[Any]:
    """Up to `limit` of the participant's stored event rows after seq `after`, in order, their
    sealed fields opened."""
    with store.reading() as conn:
        rows = conn.execute(
            select(events)
            .where(
                and_(
                    events.c.stream_id == participant_stream(participant_id),
                    events.c.seq > after,
                )
            )
            .order_by(events.c.seq)
            .limit(limit)
        ).all()
        return [opened_row(r, store.sealer, conn) for r in rows]


def participant_timers(store: EventStore, participant_id: str, status: str | None) -> list[Row]:
    """The participant's timers (of `status` if given), soonest due first."""
    query = select(timers).where(timers.c.participant_id == participant_id)
    if status is not None:
        query = query.where(timers.c.status == status)
    with store.reading() as conn:
        return [dict(r._mapping) for r in conn.execute(query.order_by(timers.c.due_at))]
