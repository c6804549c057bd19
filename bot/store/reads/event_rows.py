"""Named read: the opened event rows of some types, up to a seq, for some participants (the
export's lifecycle facts: withdrawn, opted out, erased, allocated)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import Any

from sqlalchemy import Connection

from bot.store.events import participant_stream
from bot.store.schema import events
from bot.store.sealing import Sealer
from bot.store.stored_rows import opened_scanned


def rows_of_types(
    conn: Connection, sealer: Sealer, upto: int, types: Collection[str], ids: Sequence[str]
) -> Iterator[Any]:
    """Rows of events of `types` recorded up to `upto`, of the participants `ids` (every
    participant when empty), in seq order, personal fields opened."""
    where: list[Any] = [events.c.seq <= upto, events.c.event_type.in_(list(types))]
    if ids:
        where.append(events.c.stream_id.in_([participant_stream(i) for i in ids]))
    yield from opened_scanned(conn, where, [events.c.seq], sealer)
