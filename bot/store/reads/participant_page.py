"""Named reads for the console's participant page: alerts, transcript bounds, timeline, ending."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, select

from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.queries import pending_timers
from bot.store.schema import alerts, events
from bot.store.stored_rows import opened_row

Row = dict[str, Any]


@dataclass(frozen=True)
class PageReads:
    """What the page shows beside the participant's row, read in one transaction."""

    timers: list[Row]  # pending timers
    timeline: list[Any]  # the newest events, opened, newest first
    ended: Any  # the withdrawal's or erasure's event, opened, or None


def participant_alerts(store: EventStore, participant_id: str) -> list[Row]:
    """The participant's alerts, newest first."""
    with store.reading() as conn:
        found = conn.execute(
            select(alerts)
            .where(alerts.c.participant_id == participant_id)
            .order_by(alerts.c.raised_at.desc())
        ).all()
    return [dict(r._mapping) for r in found]


def last_seqs(
    store: EventStore,
    participant_id: str,
    event_types: Sequence[str],
    count: int,
    before: int | None = None,
) -> list[int]:
    """The seqs of the participant's last `count` events of `event_types` (before seq `before`
    if given), newest first: a transcript page read backwards by its key."""
    clauses = [
        events.c.stream_id == participant_stream(participant_id),
        events.c.event_type.in_(event_types),
    ]
    if before is not None:
        clauses.append(events.c.seq < before)
    with store.reading() as conn:
        seqs = conn.execute(
            select(events.c.seq).where(and_(*clauses)).order_by(events.c.seq.desc()).limit(count)
        ).all()
    return [r.seq for r in seqs]


def page_reads(
    store: EventStore,
    participant_id: str,
    *,
    ending_type: str | None,
    family: str,
    before: int | None,
    limit: int,
) -> PageReads:
    """The pending timers, the newest `limit` events (of `family` if given, before event
    `before` if given) and the event of type `ending_type` that ended the participation."""
    with store.reading() as conn:
        timers = pending_timers(conn, participant_id)
        timeline = [
            opened_row(r, store.sealer, conn)
            for r in _timeline(conn, participant_id, family, before, limit)
        ]
        ended = _ending(store, conn, participant_id, ending_type)
    return PageReads(timers, timeline, ended)


_COLUMNS = (
    events.c.event_id,
    events.c.stream_id,
    events.c.event_type,
    events.c.recorded_at,
    events.c.data,
    events.c.meta,
)


def _ending(
    store: EventStore, conn: Connection, participant_id: str, event_type: str | None
) -> Any:
    """For a withdrawn or erased participant, the event that made them so: when, why, who
    asked, who recorded it (a withdrawal's reason is sealed personal data: opened here)."""
    if event_type is None:
        return None
    found = conn.execute(
        select(*_COLUMNS)
        .where(
            and_(
                events.c.stream_id == participant_stream(participant_id),
                events.c.event_type == event_type,
            )
        )
        .order_by(events.c.seq.desc())
        .limit(1)
    ).first()
    return None if found is None else opened_row(found, store.sealer, conn)


def _timeline(
    conn: Connection, participant_id: str, family: str, before: int | None, limit: int
) -> list[Any]:
    """The newest events (of one family if asked), before event `before` if given."""
    clauses = [events.c.stream_id == participant_stream(participant_id)]
    if family:
        clauses.append(events.c.event_type.like(f"{family}.%"))
    if before is not None:
        clauses.append(events.c.seq < before)
    query = (
        select(events.c.seq, *_COLUMNS)
        .where(and_(*clauses))
        .order_by(events.c.seq.desc())
        .limit(limit)
    )
    return list(conn.execute(query).all())
