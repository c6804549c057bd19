"""Named reads for transcripts (bot.reporting.transcript): message events paged, their details.

Every read walks the (stream_id, stream_version) index: a page of the 100th page reads one
page of rows, and an export's participant is read in batches without scanning other streams.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, bindparam, select

from bot.store.event_store import EventStore
from bot.store.events import Event
from bot.store.schema import events, outbox
from bot.store.stored_rows import row_to_event

_VERSION_OF_SEQ = select(events.c.stream_version).where(
    and_(events.c.seq == bindparam("seq"), events.c.stream_id == bindparam("s"))
)


def events_page(
    store: EventStore,
    stream_id: str,
    event_types: Sequence[str],
    after: int,
    limit: int,
    keep: Callable[[Event], bool],
) -> list[Event]:
    """Up to `limit + 1` events of `event_types` that `keep` keeps, with seq > `after`, in order
    (more rows are read while fewer are kept)."""
    found: list[Event] = []
    cursor = after
    with store.reading() as conn:
        # The stream's index is walked from the cursor's own version (a cursor given out is a
        # seq of the stream: one lookup by primary key), not from the first event.
        version = conn.execute(_VERSION_OF_SEQ, {"seq": after, "s": stream_id}).scalar() or 0
        while True:
            query = (
                select(events)
                .where(
                    and_(
                        events.c.stream_id == stream_id,
                        events.c.event_type.in_(event_types),
                        events.c.stream_version > version,  # the stream's index
                        events.c.seq > cursor,
                    )
                )
                .order_by(events.c.stream_version)
                .limit(limit + 1)
            )
            rows = conn.execute(query).all()
            found.extend(e for e in _decoded(store, conn, rows) if keep(e))
            if len(rows) <= limit or len(found) > limit:
                break
            cursor, version = rows[-1].seq, rows[-1].stream_version
    return found[: limit + 1]


def event_batches(
    store: EventStore,
    stream_id: str,
    event_types: Sequence[str],
    keep: Callable[[Event], bool],
    *,
    since: datetime | None = None,
    upto: int | None = None,
    batch: int = 1000,
) -> Iterator[list[Event]]:
    """The stream's events of `event_types` that `keep` keeps (from `since`, up to seq `upto`),
    read `batch` rows at a time, one list per batch."""
    cursor = 0
    while True:
        # Paged by stream_version (in a stream, the order of seq): the (stream_id,
        # stream_version) index then serves filter and order, where ordering by seq made the
        # planner scan every message event of every participant by (event_type, seq).
        clauses = [
            events.c.stream_id == stream_id,
            events.c.event_type.in_(event_types),
            events.c.stream_version > cursor,
        ]
        if since is not None:
            clauses.append(events.c.occurred_at >= since.astimezone(UTC))
        if upto is not None:
            clauses.append(events.c.seq <= upto)
        query = select(events).where(and_(*clauses)).order_by(events.c.stream_version).limit(batch)
        with store.reading() as conn:
            rows = conn.execute(query).all()
            found = [e for e in _decoded(store, conn, rows) if keep(e)]
        if not rows:
            return
        yield found
        cursor = rows[-1].stream_version


def events_about_outbox(
    store: EventStore, stream_id: str, event_type: str, outbox_ids: Sequence[str]
) -> list[Event]:
    """The stream's events of `event_type` about the outbox rows `outbox_ids`."""
    query = select(events).where(
        and_(
            events.c.stream_id == stream_id,
            events.c.stream_version > 0,  # so the planner takes the stream's index (see above)
            events.c.event_type == event_type,
            events.c.data["outbox_id"].as_string().in_(list(outbox_ids)),
        )
    )
    with store.reading() as conn:
        return _decoded(store, conn, conn.execute(query))


def outbox_rows(store: EventStore, outbox_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The outbox rows `outbox_ids`, by id."""
    with store.reading() as conn:
        rows = conn.execute(select(outbox).where(outbox.c.outbox_id.in_(list(outbox_ids))))
        return {row.outbox_id: dict(row._mapping) for row in rows}


def _decoded(store: EventStore, conn: Any, rows: Any) -> list[Event]:
    return [row_to_event(row, store.sealer, conn) for row in rows]
